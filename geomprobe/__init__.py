"""geomprobe: the geometry of Bayesian inference in language models.

    from geomprobe import RunConfig, run, load_run
    run_dir = run(RunConfig(model="pythia-410m"), ["geometry", "sula"])     # a pathlib.Path
    results = load_run(run_dir)                                            # a geomprobe.results.Run

    from geomprobe import extract, load_extraction, load_model, prompts_for
    loaded = load_model("tiny-neox")                                       # device "auto", as the CLI
    ex = extract(loaded, ["The cat sat on the", "Two plus two is"])
    ex.layer(1)["values"]                                                  # model layer 1
    sula = prompts_for(loaded, n_per_k=20)                                 # the sula suite's prompts

    from geomprobe import run_with_cache
    logits, cache = run_with_cache("tiny-llama", ["The cat sat on the"])   # TransformerLens-style
    cache["blocks.1.attn.hook_pattern"]                                    # [1, n_heads, pos, pos]
"""

__version__ = "0.1.0"

_LAZY = {"RunConfig": "geomprobe.config", "run": "geomprobe.runner", "load_run": "geomprobe.results",
         "Run": "geomprobe.results", "load_model": "geomprobe.models", "extract": "geomprobe.extraction",
         "ExtractionConfig": "geomprobe.extraction", "Extraction": "geomprobe.extraction",
         "load_extraction": "geomprobe.extraction", "Prompt": "geomprobe.prompts", "prompts_for": "geomprobe.suites.sula",
         "run_with_cache": "geomprobe.activation_cache", "ActivationCache": "geomprobe.activation_cache"}


def _quiet_notebook_imports() -> None:
    """In a Jupyter kernel without ipywidgets, tqdm.auto (imported by transformers and datasets)
    warns "IProgress not found" on import; geomprobe draws its own bars there (no widgets), so the
    warning says nothing to a geomprobe user. Nothing is imported to decide."""
    import sys

    if "ipykernel" in sys.modules:
        import warnings

        warnings.filterwarnings("ignore", message="IProgress not found")


_quiet_notebook_imports()


def __getattr__(name):  # the API without importing torch at `import geomprobe`
    if name == "plot":  # the submodule: geomprobe.plot.figures(...) without importing it first
        import importlib

        return importlib.import_module("geomprobe.plot")
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'geomprobe' has no attribute {name!r}")


__all__ = ["ActivationCache", "Extraction", "ExtractionConfig", "Prompt", "Run", "RunConfig", "__version__", "extract",
           "load_extraction", "load_model", "load_run", "plot", "prompts_for", "run", "run_with_cache"]
