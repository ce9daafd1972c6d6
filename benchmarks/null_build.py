"""Building an untrained copy: one draw per weight (`--null init-once:N`) against the default
from_config build (`--null init:N`: torch's default init, then the model's own).

    .venv/bin/python benchmarks/null_build.py                 # 6 and 24 layers of the 410M shape
    .venv/bin/python benchmarks/null_build.py --layers 24 --rounds 5

Model: a random GPT-NeoX of Pythia-410M's published shape (d_model 1024, 16 heads, d_mlp 4096) with
a 1,024-token vocabulary at the given depth, saved to a temporary directory and loaded as a run
loads it. Each round builds one copy of each kind with geomprobe.nulls.fresh_copy (seed 1000), in
turn, on 1 torch thread; reported: the least CPU seconds (time.process_time) of each over the
rounds, and their ratio.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path


def build(path: Path, layers: int) -> int:
    import torch
    import transformers

    from geomprobe.models.builtin import build_tokenizer
    from geomprobe.models.published import config_for

    config = config_for("pythia-410m", vocab_size=1024, bos_token_id=0, eos_token_id=0, num_hidden_layers=layers)
    model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.save_pretrained(path)
    build_tokenizer("tiny-neox").save_pretrained(path)
    return sum(p.numel() for p in model.parameters())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", type=lambda s: [int(x) for x in s.split(",")], default=[6, 24])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import logging
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    from geomprobe.models import load_model
    from geomprobe.nulls import fresh_copy

    print("| layers | params | own-init CPU s | legacy CPU s | own-init / legacy |")
    print("|---:|---:|---:|---:|---:|")
    for layers in args.layers:
        with tempfile.TemporaryDirectory(prefix="gp-null-build-") as work:
            n = build(Path(work) / "model", layers)
            loaded = load_model(str(Path(work) / "model"), device="cpu")
            fresh_copy(loaded, 999)  # warm-up: the first build pays imports and page faults
            best = {"own-init": float("inf"), "legacy": float("inf")}
            for _ in range(args.rounds):
                for kind in best:
                    gc.collect()
                    start = time.process_time()
                    copy = fresh_copy(loaded, 1000, kind)
                    best[kind] = min(best[kind], time.process_time() - start)
                    del copy
            print(f"| {layers} | {n / 1e6:.1f}M | {best['own-init']:.2f} | {best['legacy']:.2f} | "
                  f"{best['own-init'] / best['legacy']:.3f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
