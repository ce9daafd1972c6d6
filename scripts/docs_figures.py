"""Recompute the measured numbers README.md quotes that are cheap on a CPU, into docs/figures.json.

    .venv/bin/python scripts/docs_figures.py          # or: make docs-figures

Each figure comes from a `geomprobe run` written under --runs (default runs/docs-figures; a rerun
resumes and reads finished suites back). The JSON records the date, the command, the geomprobe
commands it ran, the package versions and the numbers; the README sentences cite it. The
built-in wind tunnels are trained on first use (about 3 and 8 minutes on 2 CPU cores), then cached.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEOMPROBE = Path(sys.executable).parent / "geomprobe"

# (name, suite, geomprobe arguments without --out): the README sentences that quote them
RUNS = [
    # "mechanisms" section, the "Measured" sentence
    ("mech-sula", "mechanisms", ["run", "--model", "windtunnel-sula", "--suite", "mechanisms"]),
    ("mech-bijection", "mechanisms", ["run", "--model", "windtunnel-bijection", "--suite", "mechanisms"]),
    # "mechanisms" section: "Fully trained `windtunnel-sula`, 48 sequences: ..."
    ("mech-sula-48", "mechanisms", ["run", "--model", "windtunnel-sula", "--suite", "mechanisms", "--n-sequences", "48"]),
    # "sula" section: "(windtunnel-sula, 100 prompts: MAE ... against ...)"
    ("sula-100", "sula", ["run", "--model", "windtunnel-sula", "--suite", "sula", "--n-per-k", "20"]),
    # "ablation" section: "On windtunnel-sula only L1 runs ..."
    ("ablation-sula", "ablation", ["run", "--model", "windtunnel-sula", "--suite", "ablation"]),
]


def run_geomprobe(args: list[str], out: Path, suite: str) -> dict:
    """Run one geomprobe command into out (resuming), return the suite's results."""
    command = [str(GEOMPROBE), *args, "--out", str(out), "--quiet"]
    subprocess.run(command, check=True, cwd=ROOT)
    return json.loads((out / suite / "results.json").read_text())


def null_comparisons(results: dict) -> dict:
    """Each statistic compared with the untrained copies: model, null values, status."""
    return {name: {"model": round(c["model"], 3), "nulls": rounded(c["nulls"], 3), "status": c["status"]}
            for name, c in results["untrained_null"]["comparisons"].items()}


def sula_figures(results: dict) -> dict:
    main = results["conditions"]["main"]
    baselines = main["mae_baselines"]
    return {
        "n_prompts": main["n_prompts"],
        "mae_bits": round(main["mae_bits"]["value"], 4),
        "mae_baselines_bits": {name: round(baselines[name]["value"], 3)
                               for name in ("model", "constant", "k_only", "k_only_median", "zero")},
        "untrained_null": null_comparisons(results),
    }


def rounded(values, digits: int = 3):
    return [round(float(v), digits) for v in values]


def mechanisms_figures(results: dict) -> dict:
    """The numbers the README's mechanisms paragraph quotes, from one mechanisms results.json."""
    metrics = results["qk_alignment"]["metrics"]
    frame = results["frame"]
    headline = frame["groups"][frame["headline"]]
    ablation = results["ablation"]
    settling = results.get("two_timescale", {}).get("settling", {})
    return {
        "attn_entropy_bits_per_layer": rounded(metrics["attn_entropy_bits"]["value"], 2),
        "evidence_mass_per_layer": rounded(metrics["evidence_mass"]["value"], 2),
        "evidence_uniform_share": round(results["qk_alignment"]["evidence_uniform_share"], 2),
        "frame_group": frame["headline"],
        "frame_orth": round(headline["orth"], 3),
        "frame_gaussian": round(headline["baselines"]["gaussian"]["mean"], 3),
        "frame_init": round(headline["baselines"]["init"]["mean"], 3),
        "layer0_top_head_share": round(ablation["layer0_heads"]["share_of_total"], 2),
        "layer0_reading": ablation["layer0_heads"]["reading"],
        "skip_layer_delta_mae_bits": rounded(ablation["skip_layer_delta_mae_bits"], 3),
        "baseline_entropy_mae_bits": round(ablation["baseline"]["entropy_mae_bits"], 4),
        "attention_settles_before": settling.get("attention_settles_before"),
        "untrained_null": null_comparisons(results),
    }


def ablation_figures(results: dict) -> dict:
    """The cut at each single layer: axis-entropy rho downstream, MAE, Pearson, against the random cuts."""
    found = {"baseline_mae_bits": round(results["baseline"]["mae_bits"]["value"], 4)}
    for condition in results["conditions"]:
        if condition["op"] != "cut":
            continue
        behaviour = condition["true"]["behaviour"]
        versus = condition["vs_random"]["delta_mae_bits"]
        found[condition["id"]] = {
            "downstream_rho": {layer: {"before": round(r["before"], 3), "after": round(r["after"], 3)}
                               for layer, r in condition["true"]["axis_entropy"]["downstream"].items()},
            "mae_bits": round(behaviour["mae_bits"]["value"], 4),
            "delta_mae_bits": round(behaviour["delta_mae_bits"]["value"], 4),
            "random_delta_mae_bits_mean": round(versus["random_mean"], 4),
            "delta_pearson": round(behaviour["delta_pearson"]["value"], 4),
            "delta_mae_bits_rank": versus["rank"],
            "primary": _primary_figures(condition.get("primary") or {}),
            "reading": condition["reading"],
        }
    return found


def _primary_figures(primary: dict) -> dict:
    """The primary statistic: the true axis's mean |dH| among the matched random axes, and its log2
    ratio against the untrained copies."""
    stat, against = primary.get("statistic") or {}, primary.get("untrained") or {}
    out = {"rank": stat.get("rank"), "of": stat.get("of"),
           "log2_ratio": None if stat.get("log2_ratio") is None else round(stat["log2_ratio"], 2)}
    if "n_nulls" in against:
        out["untrained"] = {"nulls": [round(v, 2) for v in against["nulls"]], "status": against["status"],
                            "rule": against["rule"], "p_value": round(against["p_value"], 3)}
    elif against:
        out["untrained"] = {"status": against.get("status"), "note": against.get("note")}
    return out


SUMMARIES = {"mechanisms": mechanisms_figures, "sula": sula_figures, "ablation": ablation_figures}


def versions() -> dict:
    found = {"python": platform.python_version()}
    for package in ("geomprobe", "torch", "transformers", "numpy", "scipy"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures.json")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs" / "docs-figures")
    args = parser.parse_args()
    figures, commands = {}, {}
    for name, suite, geomprobe_args in RUNS:
        out = args.runs / name
        commands[name] = " ".join(["geomprobe", *geomprobe_args, "--out", str(out.relative_to(ROOT)
                                                                             if out.is_relative_to(ROOT) else out)])
        results = run_geomprobe(geomprobe_args, out, suite)
        figures[name] = SUMMARIES[suite](results)
    record = {
        "date": datetime.date.today().isoformat(),
        "command": "make docs-figures  (.venv/bin/python scripts/docs_figures.py)",
        "geomprobe_commands": commands,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores",
        "versions": versions(),
        "figures": figures,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
