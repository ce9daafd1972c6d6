"""The positive and negative controls, each with its labels (METHODS.md 5): the geometry verdict
(against untrained copies), paper III's thresholds alone, and the run's evidence of inference.

    .venv/bin/python analyses/controls.py --out /tmp/controls                    # resumable, ~15 min
    .venv/bin/python analyses/controls.py --out /tmp/controls --untrained /tmp/copy-levels

Controls (each against 19 untrained copies of its own architecture, the ablation against 3):
- the shipped wind tunnels, which track an exact posterior: windtunnel-sula (geometry, sula,
  ablation), windtunnel-bijection and windtunnel-hmm (geometry; sula and the ablation need the SULA
  task, so their evidence of inference is "not tested");
- a hand-planted tiny Llama with every geometry signature (tests/suites/test_specificity.py's), and a
  tiny Llama with a planted readout of its entropy axis (tests/suites/test_ablation_controls.py's: the
  ablation's positive control);
- a model trained to copy (no posterior to track; tests/suites/test_specificity.py's);
- with --untrained, the runs of analyses/copy_levels.py (untrained tiny Llamas against their own
  copies, geometry and sula), their labels re-derived with this code from their stored results.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "suites"))  # the control models' builders live beside the tests that use them


def labels(run_dirs: list[Path]) -> dict:
    """The geometry verdict re-derived with this code from stored results, paper III's label and the
    evidence of inference over every suite of the given run directories."""
    from geomprobe import load_run
    from geomprobe.analysis.verdict import VerdictThresholds, evidence_of_inference, verdict

    results = {}
    for path in run_dirs:
        results.update(load_run(path).results)
    out = {"verdict": None, "paper_iii": None}
    geometry = results.get("geometry")
    if geometry:
        old = geometry["verdict"]
        thresholds = {k: v for k, v in old["thresholds"].items() if k not in ("keys_margin", "keys_margin_ci")}
        vm, keys, foc = geometry["value_manifold"], geometry["key_orthogonality"], geometry["attention_focusing"]
        judged = verdict(vm["pc1"], vm["pc12"], vm["above_shuffle_null"], keys["fraction_below"], foc["focusing"],
                         thresholds=VerdictThresholds(**thresholds),
                         untrained=(geometry.get("untrained_null") or {}).get("comparisons"), null=old["null"])
        out.update(verdict=f"{judged.label} ({judged.n_met}/3)", paper_iii=judged.paper_iii["label"],
                   keys=judged.keys["state"], ratio=(judged.keys.get("non_inferiority") or {}).get("ratio_to_null"))
    evidence = evidence_of_inference(results)
    out.update(evidence=evidence["state"], better=evidence["better_than_untrained"] + [
        f"({label}, supporting)" for label in evidence["supporting_better_than_untrained"]])
    return out


def run_controls(work: Path) -> list[dict]:
    import torch

    from geomprobe import load_model
    from geomprobe.config import RunConfig
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.runner import run
    from geomprobe.suites.ablation import AblationConfig
    from geomprobe.suites.geometry import GeometryConfig
    from geomprobe.suites.sula import SulaConfig

    torch.set_num_threads(1)
    geometry = GeometryConfig(null="init:19")
    rows = []

    def done(name: str, dirs: list[Path]) -> None:
        rows.append({"model": name, **labels(dirs)})
        print(json.dumps(rows[-1]), flush=True)

    for tunnel in ("windtunnel-sula", "windtunnel-bijection", "windtunnel-hmm"):
        out = work / tunnel
        suites = [geometry] + ([SulaConfig(null="init:19"), AblationConfig(null="init:3")]
                               if tunnel == "windtunnel-sula" else [])
        run(RunConfig(model=tunnel, out=str(out)), suites, progress=False)
        done(tunnel, [out])

    import test_specificity as specificity

    loaded = load_model("tiny-llama", device="cpu")
    planted = work / "planted-geometry-model"
    if not planted.exists():
        specificity._planted(loaded).save_pretrained(planted)
        loaded.tokenizer.save_pretrained(planted)
    prompts = str(demo_prompts_path())
    run(RunConfig(model=str(planted), prompts=prompts, out=str(work / "planted-geometry")),
        GeometryConfig(null="init:19", n_per_quintile=0), progress=False)
    done("planted geometry (tiny Llama)", [work / "planted-geometry"])

    copy_dir = work / "copy-task-model"
    if not copy_dir.exists():
        _, accuracy, vocab = specificity._copy_task_model(copy_dir)
        (work / "copy-task.json").write_text(json.dumps({"accuracy": accuracy, "vocab": vocab}))
    vocab = json.loads((work / "copy-task.json").read_text())["vocab"]
    copy_prompts = specificity._prompt_file(work / "copy.jsonl", specificity._copy_prompts(vocab))
    run(RunConfig(model=str(copy_dir), prompts=copy_prompts, out=str(work / "copy-task")),
        GeometryConfig(null="init:19", n_per_quintile=0), progress=False)
    done("copy task (tiny NeoX)", [work / "copy-task"])

    import test_ablation_controls as ablation

    readout = work / "planted-readout-model"
    untrained = ablation._random_llama(lambda name: load_model(name, device="cpu"), 0, work / "readout-base")
    options = dict(n_per_k=8, n_boot=20, ops="cut", n_random=9, null="init:4")
    base_run = work / "readout-base-run"
    run(RunConfig(model=str(untrained), out=str(base_run), device="cpu"),
        AblationConfig(**options, edit_layers=[ablation.LAYER]), progress=False)
    if not readout.exists():
        ablation._plant_readout(base_run, untrained, readout)
    run(RunConfig(model=str(readout), out=str(work / "planted-readout"), device="cpu"),
        AblationConfig(**options, edit_layers=[ablation.LAYER]), progress=False)
    done("untrained tiny Llama (readout base)", [base_run])
    done("planted entropy-axis readout (tiny Llama)", [work / "planted-readout"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="work directory (runs resume)")
    parser.add_argument("--untrained", default=None, help="an analyses/copy_levels.py work directory")
    args = parser.parse_args()
    work = Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    rows = run_controls(work)
    if args.untrained:
        base = Path(args.untrained)
        untrained = [labels([path, path.with_name(path.name + "-sula")])
                     for path in sorted(base.glob("run-*")) if not path.name.endswith("-sula")]
        for label in ("verdict", "paper_iii", "evidence"):
            counts: dict = {}
            for entry in untrained:
                counts[entry[label]] = counts.get(entry[label], 0) + 1
            print(f"{len(untrained)} untrained tiny Llamas, {label}: {counts}")
    print("\n| control | geometry verdict (vs untrained) | paper III thresholds alone | keys | evidence of inference |")
    print("|---|---|---|---|---|")
    for r in rows:
        keys = "-" if r.get("ratio") is None else f"{r['keys']} ({r['ratio']:.2f}x)"
        print(f"| {r['model']} | {r['verdict'] or '-'} | {r['paper_iii'] or '-'} | {keys} | {r['evidence']}"
              + (f": {', '.join(r['better'])}" if r["better"] else "") + " |")


if __name__ == "__main__":
    main()
