"""Does stacking conditions save time on a CPU?

    .venv/bin/python benchmarks/stacked_conditions.py                 # ~1-2 min on 2 CPU cores
    .venv/bin/python benchmarks/stacked_conditions.py --rounds 3      # quicker
    .venv/bin/python benchmarks/stacked_conditions.py --json out.json # also keep the raw figures

Model: the random Pythia-410M-shaped GPT-NeoX of benchmarks/suite_cost.py (`build_model`: 24
layers, d_model 1024, float32, vocabulary --vocab 1024), loaded through geomprobe.models.

Workload: one batch of --batch 8 prompts of random tokens, lengths --tokens - 4 to --tokens + 4
(default about 20), right-padded. Its prefix state below layer --start 12 is computed once
(geomprobe.prefix.PrefixBackend.prefix); then --conditions 4 cuts at layer 12, each along its own
random unit axis, run blocks 12..23 from that state (PrefixBackend.run_from: the value captures,
final-row attention entropies, final norm and final-position unembedding included) in two ways:

  unstacked  one call per condition, the batch's 8 rows each (what the ablation suite does today)
  stacked    one call of 4 x 8 = 32 rows, the state repeated along the batch (repeat_state) and
             each chunk of 8 rows edited by its own condition (stacked_editor)

The two are timed alternately (--rounds rounds after a warm-up), and the least time of each is
kept (a shared machine only adds time). Reported: seconds per condition both ways and their ratio
stacked / unstacked (< 1: stacking saves time), and the largest difference between the arrays
of the two (they must agree within prefix.CHECK_RTOL / CHECK_ATOL).
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path


def run(args) -> dict:
    import numpy as np
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from suite_cost import build_model

    from geomprobe.extraction import _pad_id, pad_batch
    from geomprobe.hooks import edit_values
    from geomprobe.interventions import InterventionAxis, make_editor
    from geomprobe.models import load_model
    from geomprobe.prefix import CHECK_ATOL, CHECK_RTOL, PrefixBackend, max_difference, repeat_state, stacked_editor

    warnings.filterwarnings("ignore")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as directory:
        shape = build_model(Path(directory), args.vocab)
        loaded = load_model(directory)
    adapter = loaded.adapter
    n_layers = adapter.shape.n_layers
    generator = np.random.default_rng(0)
    lengths = generator.integers(args.tokens - 4, args.tokens + 5, size=args.batch)
    encoded = [generator.integers(3, args.vocab, size=int(n)).tolist() for n in lengths]
    input_ids, attention_mask, final_index = pad_batch(encoded, _pad_id(loaded.tokenizer))
    layers = list(range(args.start, n_layers))
    backend = PrefixBackend(loaded, layers, ("values",), [5, 7])
    state = backend.prefix(input_ids, attention_mask, final_index, args.start)
    width = adapter.shape.n_kv_heads * adapter.shape.d_head
    axes = []
    for _ in range(args.conditions):
        u = generator.standard_normal(width)
        axes.append(InterventionAxis(mean=np.zeros(width), scale=np.ones(width), kept=np.ones(width, bool),
                                     u=u / np.linalg.norm(u), sigma_u=1.0))
    editors = [make_editor({args.start: axis}, "cut", "all", final_index) for axis in axes]

    def unstacked():
        out = []
        for editor in editors:
            with edit_values(adapter, [args.start], editor):
                out.append(backend.run_from(state))
        return out

    def stacked():
        rows = args.batch
        with edit_values(adapter, [args.start], stacked_editor(editors, rows)):
            result = backend.run_from(repeat_state(state, len(editors)))
        return [{name: array[j * rows: (j + 1) * rows] for name, array in result.items()} for j in range(len(editors))]

    def timed(fn):
        start = time.perf_counter()
        with torch.no_grad():
            out = fn()
        return time.perf_counter() - start, out

    timed(unstacked), timed(stacked)  # warm-up
    times = {"unstacked": [], "stacked": []}
    largest, close, per_array = 0.0, True, {}
    for _ in range(args.rounds):
        seconds, alone = timed(unstacked)
        times["unstacked"].append(seconds)
        seconds, together = timed(stacked)
        times["stacked"].append(seconds)
        for a, b in zip(alone, together):
            difference, same = max_difference(a, b)
            largest, close = max(largest, difference), close and same
            for name in a:
                diff = float(np.abs(a[name].astype(np.float64) - b[name].astype(np.float64)).max())
                per_array[name] = max(per_array.get(name, 0.0), diff)
    per_condition = {k: min(v) / args.conditions for k, v in times.items()}
    medians = {k: statistics.median(v) / args.conditions for k, v in times.items()}
    return {"model": shape, "threads": args.threads, "batch": args.batch, "tokens": lengths.tolist(),
            "padded_tokens": int(input_ids.shape[1]), "start": args.start, "blocks": f"{args.start}..{n_layers - 1}",
            "conditions": args.conditions, "rounds": args.rounds, "seconds": times,
            "per_condition_s": per_condition, "median_per_condition_s": medians,
            "ratio": per_condition["stacked"] / per_condition["unstacked"],
            "median_ratio": medians["stacked"] / medians["unstacked"],
            "max_abs_diff": largest, "max_abs_diff_per_array": per_array, "within_check": close,
            "rtol": CHECK_RTOL, "atol": CHECK_ATOL,
            "torch": torch.__version__, "machine": platform.processor() or platform.machine()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=8, help="prompts per batch (rows of an unstacked call)")
    parser.add_argument("--tokens", type=int, default=20, help="about this many tokens a prompt (+-4)")
    parser.add_argument("--start", type=int, default=12, help="the first edited layer: blocks start..L-1 run")
    parser.add_argument("--conditions", type=int, default=4, help="conditions stacked in one call")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", help="write the raw figures here")
    args = parser.parse_args(argv)
    out = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    unstacked, stacked = out["per_condition_s"]["unstacked"], out["per_condition_s"]["stacked"]
    print(f"blocks {out['blocks']} of a random Pythia-410M-shaped GPT-NeoX, {out['batch']} prompts x "
          f"{out['padded_tokens']} tokens (padded), {out['threads']} threads, least of {out['rounds']} rounds:")
    print(f"  unstacked ({out['conditions']} calls of {out['batch']} rows): {unstacked * 1e3:.1f} ms per condition")
    print(f"  stacked (1 call of {out['conditions'] * out['batch']} rows):   {stacked * 1e3:.1f} ms per condition")
    print(f"  ratio stacked / unstacked: {out['ratio']:.3f} (medians: {out['median_ratio']:.3f}); largest "
          f"difference {out['max_abs_diff']:.3g} ({'within' if out['within_check'] else 'OUTSIDE'} the check's "
          f"rtol {out['rtol']}, atol {out['atol']})")
    print("  largest difference per array: " + ", ".join(f"{name} {diff:.3g}"
                                                        for name, diff in out["max_abs_diff_per_array"].items()))
    return 0 if out["within_check"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
