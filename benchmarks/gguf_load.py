"""Loading a packaged real model (geomprobe.models.gguf) against transformers' own load of the same
weights, in one process run per variant (fresh imports each time, the slower of the two cold runs
not kept: the minimum of --repeat runs).

Variants, each a separate Python process (so every one pays its own imports):
- baseline: `AutoModelForCausalLM.from_pretrained(<converted folder>)` and its tokenizer, nothing else
- geomprobe: `geomprobe.models.load_model(alias, device="cpu")`: locating the package, hashing the
  GGUF (SHA-256 of 98 MB / 253 MB), finding the converted folder, loading it
- gguf: `from_pretrained(<package dir>, gguf_file=...)`: what loading the GGUF directly costs every time
  (the dequantization that geomprobe does once)

Prints seconds and each variant's ratio to the baseline; the conversion itself is timed once into a
temporary cache with --convert.

    .venv/bin/python benchmarks/gguf_load.py --models smollm2-135m gemma3-270m --repeat 3
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

SNIPPETS = {
    "baseline": ("import time, torch, transformers; t = time.perf_counter(); "
                 "transformers.AutoModelForCausalLM.from_pretrained({folder!r}, dtype=torch.float32); "
                 "transformers.AutoTokenizer.from_pretrained({folder!r}); print(time.perf_counter() - t)"),
    "geomprobe": ("import time, torch, transformers; from geomprobe.models import load_model; "
                  "t = time.perf_counter(); load_model({alias!r}, device='cpu'); print(time.perf_counter() - t)"),
    "gguf": ("import time, torch, transformers; t = time.perf_counter(); "
             "transformers.AutoModelForCausalLM.from_pretrained({parent!r}, gguf_file={name!r}, dtype=torch.float32); "
             "print(time.perf_counter() - t)"),
}


def timed(code: str, env=None) -> float:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    from geomprobe.models import gguf

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma3-270m"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--convert", action="store_true", help="also time one conversion into a temporary cache")
    args = parser.parse_args()
    for alias in args.models:
        entry = gguf.PACKAGED[alias]
        files = gguf.packaged_files(entry)
        if files is None:
            raise SystemExit(f"{alias}: {entry.install}")
        folder = str(gguf.ensure_packaged(alias))
        fields = {"folder": folder, "alias": alias}
        if len(files) == 1:
            fields.update(parent=str(files[0].parent), name=files[0].name)
        seconds = {}
        for variant, snippet in SNIPPETS.items():
            if variant == "gguf" and len(files) != 1:
                continue  # a joined file exists only inside a conversion
            seconds[variant] = min(timed(snippet.format(**fields)) for _ in range(args.repeat))
        base = seconds["baseline"]
        print(f"{alias}: " + ", ".join(f"{k} {v:.2f} s ({v / base:.2f}x)" for k, v in seconds.items()), flush=True)
        if args.convert:
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "GEOMPROBE_CACHE": cache}
                start = time.perf_counter()
                subprocess.run([sys.executable, "-c", f"from geomprobe.models.gguf import ensure_packaged; "
                                f"ensure_packaged({alias!r}, progress=None)"], check=True, env=env)
                print(f"{alias}: first conversion (with imports) {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
