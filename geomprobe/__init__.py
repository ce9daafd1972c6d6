"""geomprobe: the geometry of Bayesian inference in language models.

    from geomprobe import RunConfig, run, load_run
    run_dir = run(RunConfig(model="pythia-410m"), ["geometry", "sula"])
    results = load_run(run_dir)
"""

__version__ = "0.1.0"

_LAZY = {"RunConfig": "geomprobe.config", "run": "geomprobe.runner", "load_run": "geomprobe.results"}


def __getattr__(name):  # the API without importing torch at `import geomprobe`
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'geomprobe' has no attribute {name!r}")


__all__ = ["RunConfig", "__version__", "load_run", "run"]
