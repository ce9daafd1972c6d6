"""Paper III's protocol on the real pretrained models geomprobe can load offline (SmolLM2-135M-Instruct
and Gemma 3 270M, from their GGUF packages), one part at a time, resumable.

Each part is one `geomprobe run` (a model and a suite with its options) into its own run directory
under OUT (default runs/paper3); a run directory resumes where it stopped, and a finished part is
skipped. When a part finishes, its suite's results.json is copied to
analyses/results/paper3/<part>.json (small, committed) with the wall time and the command, so a
later session continues from the parts already there. Parts run in the order below (cheapest first,
the untrained copies last): pass --parts to choose, --list to see them.

    .venv/bin/python analyses/paper3_real_models.py --list
    .venv/bin/python analyses/paper3_real_models.py                      # every part not done yet
    .venv/bin/python analyses/paper3_real_models.py --parts smollm2-geometry gemma3-geometry
    .venv/bin/python analyses/paper3_real_models.py --table              # the table of what is done

Budgets (CPU, 2 cores shared): geometry without copies about 10-20 min a model; sula about 20-40;
each untrained copy costs about one more run of its suite (issue: the untrained comparison's cost).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "paper3"
MODELS = {"smollm2": "smollm2-135m", "gemma3": "gemma3-270m"}

# A model-independent sample for the comparisons with untrained copies: 15 prompts from each of the
# mixed corpus's five sources, seeded (written by fixed_prompts(); committed). With it no copy scores
# the 1,448 candidates for its own entropy-stratified sample, and model and copies meet the same
# selection (METHODS.md section 5.1), so 19 copies cost minutes.
ROOT = HERE.parent  # parts run from the repository root, so the commands below hold on any checkout
FIXED = HERE / "data" / "paper3-mixed-75.jsonl"
FIXED_OPTIONS = ["--prompts", str(FIXED.relative_to(ROOT)), "--n-per-quintile", "0"]

# part -> (model key, suite, extra options): the protocol as paper III ran it (stratified by the
# model's own entropy, no copies), then each statistic against untrained copies (--null auto: 19
# copies up to 200M parameters, 10 above)
PARTS: dict[str, tuple[str, str, list[str]]] = {}
for key in MODELS:
    PARTS[f"{key}-geometry"] = (key, "geometry", ["--null", "off", "--definitions", "paper-code", "--sample",
                                                   "entropy"])
for key in MODELS:
    PARTS[f"{key}-geometry-copies"] = (key, "geometry", [*FIXED_OPTIONS, "--null", "auto"])
for key in MODELS:
    PARTS[f"{key}-sula"] = (key, "sula", ["--null", "off"])
for key in MODELS:
    PARTS[f"{key}-sula-copies"] = (key, "sula", ["--n-per-k", "50", "--null", "auto"])
for key in MODELS:
    PARTS[f"{key}-domain"] = (key, "domain", ["--null", "off", "--sample", "entropy"])
for key in MODELS:
    PARTS[f"{key}-mechanisms"] = (key, "mechanisms", ["--prompts", str(FIXED.relative_to(ROOT)), "--null", "auto"])
# Gemma's ablation on 40 prompts per k (200 a pass, SmolLM2's 100 per k): its 241 passes at 500
# prompts took about 35 s each on this machine (2.3 hours), more than a session
PARTS["smollm2-ablation"] = ("smollm2", "ablation", ["--null", "off"])
PARTS["gemma3-ablation"] = ("gemma3", "ablation", ["--n-per-k", "40", "--null", "off"])
# the ablation against untrained copies (--null auto: 3 for the ablation, each rerunning every pass
# on its own axis), paper III's cut only, on 20 prompts per k (100 a pass): model and copies fit a session
PARTS["smollm2-ablation-copies"] = ("smollm2", "ablation", ["--n-per-k", "20", "--ops", "cut", "--null", "auto"])
# the domain suite against untrained copies: samples drawn by prompt length (the default --sample,
# model-independent), so the copies read the model's four samples and score no corpus
for key in MODELS:
    PARTS[f"{key}-domain-copies"] = (key, "domain", ["--null", "auto"])


def fixed_prompts() -> Path:
    """FIXED, written once: the first 15 prompts of each mixed-corpus source after a seeded shuffle."""
    if FIXED.exists():
        return FIXED
    import random

    from geomprobe.corpora import load_corpus

    by_source: dict[str, list] = {}
    for prompt in load_corpus("mixed"):
        by_source.setdefault(prompt.source, []).append(prompt)
    rng = random.Random(38)
    chosen = []
    for source in sorted(by_source):
        group = list(by_source[source])
        rng.shuffle(group)
        chosen += group[:15]
    FIXED.parent.mkdir(parents=True, exist_ok=True)
    FIXED.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in chosen))
    return FIXED


def geomprobe() -> str:
    return str(Path(sys.executable).with_name("geomprobe"))


def run_part(name: str, out: Path) -> dict | None:
    key, suite, options = PARTS[name]
    saved = RESULTS / f"{name}.json"
    if saved.exists():
        print(f"{name}: done before ({saved.relative_to(HERE.parent)})", flush=True)
        return json.loads(saved.read_text())
    run_dir = out / name if out.is_absolute() else ROOT / out / name
    command = [geomprobe(), "run", "--model", MODELS[key], "--suite", suite, "--out", str(run_dir), "--device", "cpu",
               *options]
    print(f"{name}: {' '.join(command[1:])}", flush=True)
    start = time.time()
    finished = subprocess.run(command, cwd=ROOT).returncode == 0
    wall = time.time() - start
    results = run_dir / suite / "results.json"
    if not finished or not results.exists():
        print(f"{name}: stopped after {wall:.0f} s (rerun to continue)", flush=True)
        return None
    manifest = json.loads((run_dir / "manifest.json").read_text())
    record = {"part": name, "model": MODELS[key], "suite": suite, "options": options, "wall_s_this_session": round(wall),
              "command": "geomprobe " + " ".join(command[2:]),
              "model_identity": (manifest.get("config") or {}).get("model_identity"),
              "versions": manifest.get("versions"), "results": json.loads(results.read_text())}
    RESULTS.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(record, indent=1, default=str) + "\n")
    print(f"{name}: finished in {wall:.0f} s -> {saved.relative_to(HERE.parent)}", flush=True)
    return record


# paper III's values (shared protocol's reference values), for comparison only
PAPER = {
    "pc12_mixed": "Pythia-410M 99.7%, Phi-2 60.6%, Llama-3.2-1B 51.4%, Mistral-7B 15-20%",
    "pc12_math": "Pythia 99.9%, Phi-2 63.5%, Llama 73.6%, Mistral ~80%",
    "keys": "claims 0.034-0.18; the released code's 0.0297 (Pythia) is embeddings, not W_K",
    "focusing": "Phi-2 86%, Pythia 82%, Llama 31%, Mistral 20-30% (non-monotone)",
    "sula_mae": "Pythia 0.44, Llama 0.36, Phi-2 0.31 bits",
    "sula_rho": "abs rho(PC1, H_bayes) 0.65-0.80 (over all k)",
    "ablation": "single-layer true cut: axis r to about 0, random cut under 1% change; multi-layer cut: "
                "axis r 0.27 -> 0.07, MAE and correlation under 1%",
}


TABLE_START, TABLE_END = "<!-- paper3 table: written by paper3_real_models.py --readme -->", "<!-- /paper3 table -->"


def fill_identities() -> None:
    """Parts saved before run_part read the identity from the right manifest key hold null: fill it
    from the converted folder (conversions of one GGUF are byte-identical, and the identity hashes
    the GGUF and the converted files), marked as filled in afterwards."""
    from types import SimpleNamespace

    from geomprobe.models.gguf import ensure_packaged
    from geomprobe.rundir import model_identity

    for path in sorted(RESULTS.glob("*.json")):
        record = json.loads(path.read_text())
        if "model" not in record or record.get("model_identity") is not None:
            continue
        source = ensure_packaged(record["model"])
        identity = model_identity(SimpleNamespace(source=source, revision=None, checkpoint=None))
        record["model_identity"] = {**identity, "recorded": "afterwards, from the converted folder (paper3_real_models.py "
                                                             "--fill-identities)"}
        path.write_text(json.dumps(record, indent=1, default=str) + "\n")
        print(f"{path.name}: model identity filled in ({identity.get('sha256')})")


def _load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _vs(comparison: dict | None, spec: str = ".3f", with_model: int | None = None, keys: bool = False) -> str:
    """'copies 0.084 +- 0.009, rank 20/20 (below untrained)' from an untrained_null comparison."""
    if not comparison:
        return "-"
    if with_model:
        return f"{comparison['model']:{spec}} (n {with_model}) vs " + _vs(comparison, spec, keys=keys)
    if comparison.get("rule") == "rank":
        rank = f", rank {comparison['rank']}/{comparison['of']}"
    else:  # the Gaussian t rule (fewer than 19 copies, normality not rejected)
        rank = f", t {comparison['t']:+.2f}, p {comparison['p_value']:.3f}" if comparison.get("t") is not None else ""
    # geomprobe's statuses say "above" for better and "below" for worse, whichever way the statistic
    # points (a lower MAE is "above"): the table says better or worse, and what that means for keys
    status = {"above untrained": "better than untrained", "below untrained": "worse than untrained"}.get(
        comparison["status"], comparison["status"])
    if keys and comparison["status"] in ("above untrained", "below untrained"):
        status += " (more orthogonal)" if comparison["status"] == "above untrained" else " (less orthogonal)"
    return (f"copies {comparison['null_mean']:{spec}} +- {comparison['null_sd']:{spec}} (n {comparison['n_nulls']})"
            f"{rank}: {status}")


def table() -> str:
    """A markdown table of every finished part: each statistic per model, its untrained comparison,
    n, copies and wall time, beside paper III's values."""
    lines = ["| statistic | model | measured (n, wall) | against untrained copies (fixed 75-prompt sample) | "
             "moves under quantisation (max of 3) | paper III |", "|---|---|---|---|---|---|"]
    for key, alias in MODELS.items():
        stratified, fixed = _load(f"{key}-geometry"), _load(f"{key}-geometry-copies")
        bound = (_load(f"quantisation-{key}") or {}).get("rows", {})

        def q(name: str) -> str:
            row = bound.get(name)
            if not row:
                return "-"
            verdict = "" if row["resolvable"] is None else (": resolvable" if row["resolvable"] else ": NOT resolvable")
            return f"{row['max_move']:.4f}{verdict}"

        measured = stratified or fixed  # the fixed sample's own figures until the stratified part is done
        if measured:
            r, wall = measured["results"], measured["wall_s_this_session"]
            vm, keys, focus = r["value_manifold"], r["key_orthogonality"], r["attention_focusing"]
            cmp = ((fixed or {}).get("results", {}).get("untrained_null") or {}).get("comparisons", {})
            fvm = (fixed or {}).get("results", {}).get("value_manifold", {})
            ffocus = (fixed or {}).get("results", {}).get("attention_focusing", {})
            fkeys = (fixed or {}).get("results", {}).get("key_orthogonality", {})
            n = f"n {vm['n_prompts']} {'stratified' if stratified else 'fixed sample'}, {wall} s"
            lines.append(f"| value PC1, mixed | {alias} | {vm['pc1']:.3f} ({n}) | "
                         f"{fvm.get('pc1', float('nan')):.3f} vs {_vs(cmp.get('pc1'))} | {q('pc1')} | - |")
            lines.append(f"| value PC1+PC2, mixed | {alias} | {vm['pc12']:.3f} ({n}) | "
                         f"{fvm.get('pc12', float('nan')):.3f} vs {_vs(cmp.get('pc12'))} | {q('pc12')} | {PAPER['pc12_mixed']} |")
            lines.append(f"| rho(PC1, next-token entropy) | {alias} | {vm['rho_pc1_entropy']:+.3f} "
                         f"(p {vm['rho_pc1_entropy_pvalue']:.2f}) | - | {q('abs_rho_pc1_entropy')} | - |")
            for row in (r.get("paper_code") or {}).get("rows", []):
                if row.get("quantity") in ("value_pc1_fraction", "key_orthogonality") and row.get("paper_code") is not None:
                    label = row["label"].replace("|", "")
                    lines.append(f"| {label}, as the released code defines it ({row['paper_code_how'].split(':')[0]}) "
                                 f"| {alias} | {row['paper_code']:.3f} | - | - | "
                                 f"{'-' if row.get('published') is None else row['published']} |")
            gaussian = keys["analytic_gaussian"]
            lines.append(f"| keys mean abs cos (Gaussian {gaussian:.3f}) | {alias} | {keys['mean']:.3f} | "
                         f"{fkeys.get('mean', float('nan')):.3f} vs {_vs(cmp.get('keys'), keys=True)} | "
                         f"{q('keys_mean_abs_cos')} | {PAPER['keys']} |")
            lines.append(f"| focusing | {alias} | {focus['focusing']:.3f} | {ffocus.get('focusing', float('nan')):.3f} "
                         f"vs {_vs(cmp.get('focusing'))} | {q('focusing')} | {PAPER['focusing']} |")
            kinds = _layer_kinds(alias)
            hbar = focus["hbar_bits"]
            profile = " ".join(f"{h:.2f}" + ("*" if kinds[i] == "global" and len(set(kinds)) > 1 else "")
                               for i, h in enumerate(hbar))
            split = ""
            if len(set(kinds)) > 1:
                local = [h for h, k in zip(hbar, kinds) if k == "sliding"]
                glob = [h for h, k in zip(hbar, kinds) if k == "global"]
                split = (f"; mean over sliding-window layers {sum(local) / len(local):.2f}, over global layers (*) "
                         f"{sum(glob) / len(glob):.2f}")
            copies_hbar = [m["hbar_bits"] for m in ((fixed or {}).get("results", {}).get("untrained_null") or {})
                           .get("models", []) if m.get("hbar_bits")]
            copies_text = "-" if not copies_hbar else (
                f"copies' layer 0 {sum(c[0] for c in copies_hbar) / len(copies_hbar):.2f}, last "
                f"{sum(c[-1] for c in copies_hbar) / len(copies_hbar):.2f} bits")
            lines.append(f"| attention entropy per layer, bits (layer 0 to {len(hbar) - 1}{split}) | {alias} | "
                         f"{profile} | {copies_text} | - | Llama, Mistral: weak, non-monotone focusing |")
            if fixed:
                lines.append(f"| verdict | {alias} | {r['verdict']['label'] if stratified else '-'} (thresholds only) | "
                             f"{fixed['results']['verdict']['label']} ({fixed['wall_s_this_session']} s with copies) | - | - |")
        domain = _load(f"{key}-domain")
        if domain:
            sets = domain["results"]["sets"]
            cells = []
            for label, row in sets.items():
                gain = (row.get("gain_over_mixed") or {}).get("pc12") or {}
                ci = gain.get("ci95") or [None, None]
                gained = "" if not gain or ci[0] is None else f", gain {gain['value']:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}]"
                cells.append(f"{label} {row['pc12']:.3f} (n {row['n']}{gained})")
            lines.append(f"| value PC1+PC2 by domain (stratified, no copies) | {alias} | {'; '.join(cells)} "
                         f"({domain['wall_s_this_session']} s) | - | - | math: {PAPER['pc12_math']} |")
        against = _load(f"{key}-domain-copies")
        if against:
            sets = against["results"]["sets"]
            cells, judged = [], []
            for label, row in sets.items():
                cells.append(f"{label} {row['pc12']:.3f}")
                versus = row.get("gain_vs_untrained") or {}
                if versus.get("status"):
                    judged.append(f"{label} gain {versus['model']:+.3f} vs copies {versus['null_mean']:+.3f}: "
                                  f"{versus['status']} (rank {versus.get('rank')}/{versus.get('of')})"
                                  if versus.get("model") is not None else f"{label}: {versus['status']}")
            copies = (against["results"].get("untrained_null") or {}).get("copies") or {}
            lines.append(f"| value PC1+PC2 by domain, gain against copies (by length) | {alias} | {'; '.join(cells)} | "
                         f"{'; '.join(judged)} ({copies.get('used')} of {copies.get('planned')} copies, "
                         f"{against['wall_s_this_session']} s) | - | math: {PAPER['pc12_math']} |")
        mechanisms = _load(f"{key}-mechanisms")
        if mechanisms:
            focus_m = mechanisms["results"]["attention_focusing"]
            mcmp = (mechanisms["results"].get("untrained_null") or {}).get("comparisons") or {}
            lines.append(f"| mechanisms: focusing; monotonicity rho(layer, Hbar); largest reduction | {alias} | "
                         f"{focus_m['focusing']:.3f}; {focus_m['monotonicity']:+.3f}; {focus_m['largest_reduction']:.3f} "
                         f"at layer {focus_m['largest_reduction_layer']} (n {focus_m['n_prompts']}, "
                         f"{mechanisms['wall_s_this_session']} s) | {_vs(mcmp.get('focusing'))} | - | "
                         f"{PAPER['focusing']} |")
        sula, sula_copies = _load(f"{key}-sula"), _load(f"{key}-sula-copies")
        if sula:
            conditions = sula["results"]["conditions"]
            main = conditions["main"]
            n = f"n {main['n_prompts']}, labels {','.join(main.get('labels') or [])}, {sula['wall_s_this_session']} s"
            ucmp = (((sula_copies or {}).get("results", {}).get("untrained_null") or {}).get("comparisons") or {})
            copies_main = (sula_copies or {}).get("results", {}).get("conditions", {}).get("main", {})
            n_copies_run = copies_main.get("n_prompts")
            base = main["mae_baselines"]
            against = _vs(ucmp.get("mae_bits"), with_model=n_copies_run)
            lines.append(f"| SULA MAE (bits) | {alias} | {_num(main, 'mae_bits')} ({n}) | {against} | - | {PAPER['sula_mae']} |")
            lines.append(f"| SULA MAE on held-out half: model, best function of k alone, constant | {alias} | "
                         f"{_num(base, 'model')}, {_num(base, 'k_only')}, {_num(base, 'constant')} | - | - | "
                         "paper III's 0.31-0.44 is about what a constant scores here |")
            lines.append(f"| SULA label mass (probability on the two labels) | {alias} | {_num(main, 'label_mass')} | - | - "
                         "| - |")
            lines.append(f"| r(H_model, H_bayes) | {alias} | {_num(main, 'pearson_H_model_H_bayes')} | - | - | - |")
            lines.append(f"| abs rho(PC1, H_bayes), all k (confounded) | {alias} | "
                         f"{abs(main['rho_pc1_H_bayes']['value']):.3f}; rho(k, PC1) {_num(main, 'rho_k_pc1')} | - | - | "
                         f"{PAPER['sula_rho']}; rho(k, PC1) Pythia 0.86, Phi-2 0.60, Llama 0.32 |")
            lines.append(f"| rho(PC1, H_bayes) given k; within k | {alias} | {_num(main, 'rho_pc1_H_bayes_given_k')}; "
                         f"{_num(main, 'rho_pc1_H_bayes_within_k')} | "
                         f"abs: {_vs(ucmp.get('abs_rho_pc1_H_bayes_given_k'), with_model=n_copies_run)} | - | - |")
            controls = ", ".join(f"{name} {_num(c, 'mae_bits')}" for name, c in conditions.items() if name != "main")
            lines.append(f"| SULA controls, MAE (bits) | {alias} | {controls} | - | - | - |")
        ablation = _load(f"{key}-ablation")
        if ablation:
            lines += _ablation_rows(alias, ablation)
        ablation_copies = _load(f"{key}-ablation-copies")
        if ablation_copies:
            lines += _ablation_copies_rows(alias, ablation_copies)
    return "\n".join(lines)


def _ablation_rows(alias: str, ablation: dict) -> list[str]:
    """One row per edit (operation x layer set): the true axis's mean |dH| at the output against its
    19 matched random axes (rank, one-sided p), the change of MAE and of r(H_model, H_bayes), and
    the mean |change| of the axis-entropy rho downstream of the edit."""
    r = ablation["results"]
    base = r["baseline"]
    n = base["mae_bits"]["n"]
    rows = [f"| ablation baseline: SULA MAE; r(H_model, H_bayes) | {alias} | {_num(base, 'mae_bits')}; "
            f"{_num(base, 'pearson_H_model_H_bayes')} (n {n}, {ablation['wall_s_this_session']} s, no copies) | "
            "- | - | - |"]
    for condition in r["conditions"]:
        layers = ",".join(str(layer) for layer in condition["layers"])
        primary = condition["primary"]["statistic"]
        behaviour = condition["true"]["behaviour"]
        moved = condition["vs_random"]["axis_r_mean_abs_change_downstream"]
        rows.append(
            f"| ablation {condition['id'].split('/')[0]} at layer {layers}: mean abs dH (bits) vs {primary['n_random']} matched "
            f"random axes; dMAE; dr; mean abs change of downstream axis rho | {alias} | "
            f"{primary['true']:.4f} vs {primary['random_mean']:.4f} +- {primary['random_sd']:.4f}, "
            f"rank {primary['rank']}/{primary['of']} (p {primary['p_value']:.2f}); "
            f"{behaviour['delta_mae_bits']['value']:+.4f}; {behaviour['delta_pearson']['value']:+.4f}; "
            f"{moved['true']:.4f} (rank {moved['rank']}/{moved['of']}) | - | - | "
            f"{PAPER['ablation'] if condition['op'] == 'cut' else '-'} |")
    return rows


def _ablation_copies_rows(alias: str, ablation: dict) -> list[str]:
    """One row per edit run against untrained copies: log2(true / mean matched random) of the mean
    |dH|, the model's against each copy's on its own axis and its own random axes."""
    r = ablation["results"]
    n = r["baseline"]["mae_bits"]["n"]
    rows = []
    for condition in r["conditions"]:
        layers = ",".join(str(layer) for layer in condition["layers"])
        primary = condition["primary"]
        against = primary.get("untrained") or {}
        compared = "-" if "status" not in against or "model" not in against else (
            f"{against['model']:+.3f} vs {_vs(against)}")
        rows.append(f"| ablation {condition['id'].split('/')[0]} at layer {layers} against untrained copies: "
                    f"log2(true / matched random) of mean abs dH | {alias} | {primary['statistic']['log2_ratio']:+.3f} "
                    f"(n {n}, {ablation['wall_s_this_session']} s with copies) | {compared} | - | "
                    f"{PAPER['ablation'] if condition['op'] == 'cut' else '-'} |")
    return rows


def _layer_kinds(alias: str) -> list[str]:
    """sliding | global per layer, from the published config (no weights loaded)."""
    from geomprobe.models.published import config_for

    config = config_for(alias)
    types = getattr(config, "layer_types", None) or []
    n = config.num_hidden_layers
    return ["sliding" if "sliding" in str(t) else "global" for t in types] if len(types) == n else ["global"] * n


def _num(entry: dict, key: str) -> str:
    value = entry.get(key)
    if isinstance(value, dict):
        value = value.get("value")
    return "-" if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="*", default=None, help="parts to run (default: all, in order)")
    parser.add_argument("--out", default="runs/paper3", help="where the run directories go")
    parser.add_argument("--list", action="store_true", help="list the parts and which are done")
    parser.add_argument("--table", action="store_true", help="print the markdown table of the finished parts")
    parser.add_argument("--readme", action="store_true", help="write that table into analyses/README.md")
    parser.add_argument("--fill-identities", action="store_true",
                        help="record the model identity in saved parts that lack it")
    args = parser.parse_args()
    if args.fill_identities:
        fill_identities()
        return
    if args.table:
        print(table())
        return
    if args.readme:
        readme = HERE / "README.md"
        text = readme.read_text()
        start, end = text.index(TABLE_START), text.index(TABLE_END)
        readme.write_text(text[:start + len(TABLE_START)] + "\n" + table() + "\n" + text[end:])
        print(f"wrote the table into {readme.relative_to(ROOT)}")
        return
    if args.list:
        for name, (key, suite, options) in PARTS.items():
            state = "done" if (RESULTS / f"{name}.json").exists() else "to do"
            print(f"{name:28s} {state:6s} geomprobe run --model {MODELS[key]} --suite {suite} {' '.join(options)}")
        return
    unknown = sorted(set(args.parts or []) - set(PARTS))
    if unknown:
        parser.error(f"unknown parts {unknown}; --list shows them")
    fixed_prompts()
    for name in args.parts or list(PARTS):
        run_part(name, Path(args.out))


if __name__ == "__main__":
    main()
