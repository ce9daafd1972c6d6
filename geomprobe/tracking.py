"""Experiment tracking: a finished run sent to Weights & Biases (`geomprobe run --wandb PROJECT`,
RunConfig(wandb="PROJECT")).

    log_run("runs/pythia-410m", "my-entity/geometry")    # after the suites, as --wandb does

What is logged is read from the run directory (RUN/run.json, never recomputed): the configuration,
versions, model identity and seeds as the W&B run's config; every suite's headline figures as its
summary (`sula/mae_bits`, with `sula/mae_bits/vs_untrained` = better / worse / indistinguishable);
the run's tidy table and every per-layer table of its results (lists of records with a "layer") as
W&B tables; run.json and report.html as one artifact. W&B's own files go under RUN/wandb (its
staging and cache there too unless WANDB_DATA_DIR / WANDB_CACHE_DIR are set), so nothing is
written outside the run. `WANDB_MODE=offline` keeps everything local (`wandb sync` sends it later).
wandb is optional: `pip install 'geomprobe[wandb]'`.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from geomprobe.config import check_project


@contextlib.contextmanager
def _staging_inside(directory: Path):
    """W&B's staging and cache folders under `directory` while logging, where the user set none."""
    previous = {name: os.environ.get(name) for name in ("WANDB_DATA_DIR", "WANDB_CACHE_DIR")}
    for name, sub in (("WANDB_DATA_DIR", "data"), ("WANDB_CACHE_DIR", "cache")):
        if previous[name] is None:
            os.environ[name] = str(directory / sub)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)


def layer_tables(results, prefix: str = "", depth: int = 0) -> dict[str, tuple[list[str], list[list]]]:
    """{name: (columns, rows)} for every list of records with a "layer" key in a results dict (two
    levels of nesting at most), each record's scalar fields as columns."""
    found = {}
    if depth > 3 or not isinstance(results, dict):
        return found
    for key, value in results.items():
        name = f"{prefix}{key}"
        if isinstance(value, list) and value and all(isinstance(v, dict) and "layer" in v for v in value):
            columns = [c for c in dict.fromkeys(k for v in value for k in v)
                       if all(isinstance(v.get(c), (int, float, str, bool, type(None))) for v in value)]
            found[name] = (columns, [[v.get(c) for c in columns] for v in value])
        elif isinstance(value, dict):
            found.update(layer_tables(value, f"{name}/", depth + 1))
    return found


def log_run(run_dir, project: str, quiet: bool = False) -> dict:
    """Log a run directory to W&B project `project` (see the module docstring); returns {"id", "url",
    "dir"} (url None offline). quiet: W&B prints nothing either."""
    import wandb

    from geomprobe.analysis.null_comparison import short_words
    from geomprobe.results import load_run

    check_project(project)
    run = load_run(run_dir)
    document = run.document()
    entity, _, name = project.rpartition("/")
    config = {key: document.get(key) for key in ("config", "versions", "geomprobe_commit", "model", "backend",
                                                  "dtype", "seed", "command", "fingerprint")}
    config["suites"] = {suite: entry.get("options") for suite, entry in document["suites"].items()}
    with _staging_inside(run.path / "wandb"):
        tracked = wandb.init(project=name, entity=entity or None, name=f"{run.model} ({run.path.name})",
                             dir=str(run.path), config=config, job_type="geomprobe-run",
                             tags=["geomprobe", *document["suites"]],
                             settings=wandb.Settings(silent=True) if quiet else None)
        try:
            for suite, entry in document["suites"].items():
                tracked.summary[f"{suite}/status"] = entry["status"]
                for figure in entry.get("headlines") or []:
                    key = f"{suite}/{figure['statistic']}"
                    value = figure["value"]
                    tracked.summary[key] = figure["text"] if value is None else value
                    if figure.get("vs_untrained"):
                        tracked.summary[f"{key}/vs_untrained"] = short_words(figure["vs_untrained"])
                for table, (columns, rows) in layer_tables(entry.get("results") or {}).items():
                    tracked.log({f"{suite}/{table}": wandb.Table(columns=columns, data=rows)})
            if document.get("verdict"):
                tracked.summary["geometry/verdict"] = document["verdict"]["label"]
            tracked.summary["evidence"] = (document.get("evidence") or {}).get("state")
            tidy = run.frame()
            tracked.log({"tidy": wandb.Table(dataframe=tidy.astype({c: str for c in tidy.columns
                                                                      if tidy[c].dtype == object}))})
            artifact = wandb.Artifact(re.sub(r"[^A-Za-z0-9_.-]", "-", f"geomprobe-{run.model}-{run.path.name}"),
                                      type="geomprobe-run", description=f"geomprobe run of {run.model}")
            artifact.add_file(str(run.path / "run.json"))
            if (run.path / "report.html").is_file():
                artifact.add_file(str(run.path / "report.html"))
            tracked.log_artifact(artifact)
            out = {"id": tracked.id, "url": None if tracked.offline else tracked.url,
                   "dir": str(Path(tracked.dir).parent)}
        finally:
            tracked.finish()
    return out


__all__ = ["layer_tables", "log_run"]
