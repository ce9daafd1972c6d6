"""Paper III's Table 2 layout (geometry and domain) with the paper's reference values, the cross-model
basis over runs' shared prompts, and compare(), which returns and writes either layout (table2 here,
tidy from geomprobe.compare.tidy).
"""

from __future__ import annotations

import math
from pathlib import Path

from geomprobe.console import table_console
from geomprobe.errors import ConfigError, RunDirectoryError
from geomprobe.rundir import atomic_write_json, atomic_write_text

from .runs import _read, identify, identities
from .tidy import aggregate, write_tidy

# Paper III (METHODS.md sections 2, 4): value manifold PC1+PC2 (mixed / mathematics-only) and
# attention focusing. Keys: substrings of a hub id.
PAPER_III = {
    "pythia-410m": {"pc12_mixed": "99.7%", "pc12_math": "99.9%", "focusing": "82%"},
    "phi-2": {"pc12_mixed": "60.6%", "pc12_math": "63.5%", "focusing": "86%"},
    "llama-3.2-1b": {"pc12_mixed": "51.4%", "pc12_math": "73.6%", "focusing": "31%"},
    "mistral-7b": {"pc12_mixed": "15-20%", "pc12_math": "~80%", "focusing": "20-30% (non-monotone)"},
}

EARLY_FRACTION = 1 / 3  # "early layers": the first third of the depth, at least one layer
LAYOUTS = ("tidy", "table2")


def paper_reference(model: str) -> dict | None:
    lowered = model.lower()
    for key, values in PAPER_III.items():
        if key in lowered:
            return values
    return None


def row_for(run_dir: str | Path, label: str | None = None) -> dict:
    from geomprobe.suites.reading import say_changed

    run_dir = Path(run_dir)
    manifest = _read(run_dir / "manifest.json")
    geometry = _read(run_dir / "geometry" / "results.json")
    if manifest is None or geometry is None:
        raise RunDirectoryError(f"{run_dir} has no finished geometry suite (geometry/results.json): run "
                                f"`geomprobe run --suite geometry --out {run_dir}` first, or use the tidy layout "
                                "(`geomprobe compare` without --layout table2), which reads every suite")
    domain = _read(run_dir / "domain" / "results.json")
    for suite in ("geometry", "domain") if domain is not None else ("geometry",):
        say_changed(run_dir / suite / "results.json", manifest)
    model = manifest.get("model") or {}
    shape = geometry.get("shape") or model.get("shape") or {}
    keys = geometry["key_orthogonality"]
    layer_means = keys["layer_mean"]
    n_early = max(1, math.ceil(len(layer_means) * EARLY_FRACTION))
    row = {
        "run": str(run_dir),
        "label": label or identify(run_dir, manifest).label,
        "model": model.get("spec") or model.get("source"),
        "source": model.get("source"),
        "architecture": model.get("family"),
        "shape": shape,
        "pc12_mixed": geometry["value_manifold"]["pc12"],
        "pc12_mixed_ci95": geometry["value_manifold"]["pc12_ci95"],
        "pc12_restricted": None,
        "keys_early_mean_abs_cos": sum(layer_means[:n_early]) / n_early,
        "keys_early_layers": list(range(n_early)),
        "keys_fraction_below": keys["fraction_below"],
        "keys_analytic_gaussian": keys["analytic_gaussian"],
        "focusing": geometry["attention_focusing"]["focusing"],
        "verdict": geometry["verdict"]["label"],
        "verdict_summary": geometry["verdict"]["summary"],
        "paper_iii": paper_reference(f"{model.get('spec')} {model.get('source')}"),
    }
    if domain is not None:
        row["pc12_restricted"] = {label: entry["pc12"] for label, entry in domain["sets"].items() if label != "mixed"}
        row["pc12_mixed_domain_suite"] = domain["sets"]["mixed"]["pc12"]
    return row


def shared_basis(run_dirs: list[str | Path], readout: str = "values") -> dict:
    """One PCA over several models' last-layer vectors for the prompts their geometry suites share
    (METHODS.md section 2.7): each model standardised separately, columns concatenated."""

    from geomprobe.analysis.value_manifold import cross_model_basis
    from geomprobe.extraction.storage import load_extraction

    extractions = {}
    for run_dir in run_dirs:
        path = Path(run_dir) / "geometry" / "extraction"
        if not (path / "meta.json").exists():
            raise RunDirectoryError(f"{run_dir} has no finished geometry extraction ({path})")
        extractions[str(run_dir)] = load_extraction(path)
    shared = set.intersection(*(set(e.prompt_ids) for e in extractions.values()))
    if len(shared) < 3:
        raise RunDirectoryError(f"the runs share {len(shared)} prompts; a cross-model basis needs at least 3: run "
                                "their geometry suites with the same --prompts and --n-per-quintile 0")
    order = sorted(shared)
    matrices, entropy = {}, None
    for name, extraction in extractions.items():
        rows = [extraction.prompt_ids.index(i) for i in order]
        if readout not in extraction.arrays:
            raise RunDirectoryError(f"{name}: readout '{readout}' was not extracted")
        matrices[name] = extraction[readout][rows, -1].reshape(len(rows), -1)
        if entropy is None and "next_entropy_bits" in extraction.arrays:
            entropy = extraction["next_entropy_bits"][rows]
    basis = cross_model_basis(matrices, entropy_bits=entropy)
    return {"n_shared_prompts": len(order), "prompt_ids": order, "readout": readout, **basis.to_dict()}


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def markdown_table(rows: list[dict]) -> str:
    header = ("| run | architecture | value manifold PC1+PC2 mixed | restricted | keys early layers mean abs cos "
              "(Gaussian) | attention focusing | verdict | paper III (mixed / math / focusing) |")
    lines = [header, "|" + "---|" * 8]
    for row in rows:
        restricted = ("-" if not row["pc12_restricted"] else
                      ", ".join(f"{k} {_pct(v)}" for k, v in row["pc12_restricted"].items()))
        paper = row["paper_iii"]
        paper_text = "-" if paper is None else f"{paper['pc12_mixed']} / {paper['pc12_math']} / {paper['focusing']}"
        lines.append(f"| {row.get('label') or row['model']} | {row['architecture']} | {_pct(row['pc12_mixed'])} | "
                     f"{restricted} | {row['keys_early_mean_abs_cos']:.3f} ({row['keys_analytic_gaussian']:.3f}) | "
                     f"{_pct(row['focusing'])} | {row['verdict']} | {paper_text} |")
    return "\n".join(lines) + "\n"


def table2(run_dirs: list[str | Path]) -> list[dict]:
    """Paper III's Table 2 rows, labelled by run (model@revision, unique among the runs)."""
    runs = identities(run_dirs)
    return [row_for(run_dir, run.label) for run_dir, run in zip(run_dirs, runs)]


def compare(run_dirs: list[str | Path], out: str | Path | None = None, basis: dict | None = None,
            layout: str = "table2") -> CompareRows:
    """Rows of the cross-run table: a list of dicts whose .frame() is the same table as a pandas
    DataFrame. layout "table2" (this function's default, as before): paper III's Table 2 rows,
    with `out` also OUT.json and OUT.md (and `basis`, a `shared_basis(run_dirs)` result, in
    OUT.json). layout "tidy" (the CLI's default): the tidy rows of `aggregate`, with
    `out` also OUT.csv, OUT.json and OUT.parquet (pyarrow)."""
    if layout not in LAYOUTS:
        raise ConfigError(f"--layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if layout == "tidy":
        table = aggregate(run_dirs)
        if out is not None:
            write_tidy(table, out, basis)
        return CompareRows(table.rows)
    rows = CompareRows(table2(run_dirs))
    if out is not None:
        out = Path(out)
        payload = {"rows": rows, "early_layers": "first third of the depth"}
        if basis is not None:
            payload["cross_model_basis"] = basis
        atomic_write_json(out.with_suffix(".json"), payload)
        atomic_write_text(out.with_suffix(".md"), markdown_table(rows))
    return rows


class CompareRows(list):
    """A list of row dicts (what compare returns) whose frame() is the same table as a pandas DataFrame."""

    def frame(self):
        from geomprobe.suites.reading import data_frame

        return data_frame(list(self), "compare(...).frame()")


def print_table(rows: list[dict]) -> None:
    from rich.table import Table

    table = Table(title="cross-model geometry (paper III Table 2 layout)")
    for column in ("run", "arch", "PC1+PC2 mixed", "restricted", "keys early |cos| (Gauss)", "focusing",
                   "verdict", "paper III mixed/math/focus"):
        table.add_column(column)
    for row in rows:
        restricted = ("-" if not row["pc12_restricted"] else
                      ", ".join(f"{k} {_pct(v)}" for k, v in row["pc12_restricted"].items()))
        paper = row["paper_iii"]
        table.add_row(row.get("label") or row["model"], row["architecture"] or "-", _pct(row["pc12_mixed"]),
                      restricted, f"{row['keys_early_mean_abs_cos']:.3f} ({row['keys_analytic_gaussian']:.3f})",
                      _pct(row["focusing"]), row["verdict"],
                      "-" if paper is None else f"{paper['pc12_mixed']} / {paper['pc12_math']} / {paper['focusing']}")
    table_console().print(table)
