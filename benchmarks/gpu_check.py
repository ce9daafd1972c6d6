"""GPU check: geomprobe end to end at the published shapes of Pythia-410M, Llama-3.2-1B and
Mistral-7B (random weights), in bfloat16 on one CUDA GPU, within a time budget.

    .venv/bin/python benchmarks/gpu_check.py                      # on a CUDA machine (< 8 min on an H100/H200)
    .venv/bin/python benchmarks/gpu_check.py --budget-s 300       # a tighter budget: later stages are skipped
    .venv/bin/python benchmarks/gpu_check.py --cpu-smoke --out /tmp/smoke.json   # the same code on a CPU,
                                                                  # tiny reduced-width shapes (about 1 minute)

Without a CUDA GPU (and without --cpu-smoke) it prints "no CUDA GPU: nothing to check" and exits 0.

Models. Each is built from its published transformers config (geomprobe.models.published.config_for)
with transformers' own random initialisation (torch seed 0), directly on the GPU
(`with torch.device("cuda")`, AutoModelForCausalLM.from_config(config, dtype=..., attn_implementation=
"geomprobe")), and wrapped in a geomprobe LoadedModel in memory: nothing is saved, so Mistral-7B's
14.5 GB never touches the disk. The tokenizer is geomprobe's built-in byte-level BPE (vocab 512;
tiny-neox's for Pythia, tiny-llama's, which adds <s>, for Llama and Mistral): the models keep their
published vocabularies (max(512, published)), so every shape is exact, and prompts only use the
low token ids.
  - pythia-410m, llama-3.2-1b: built in float32, then a bfloat16 copy of the same weights
    (load_state_dict into a bfloat16 build, so non-persistent buffers such as rotary inv_freq are
    computed in float32 as from_pretrained does); the float32 copy serves the bf16-vs-fp32 check only.
  - mistral-7b: bfloat16 only, full depth (32 layers).
  - mistral-7b-4bit: bitsandbytes nf4 (compute dtype bfloat16) through geomprobe's own loader,
    load_model(dir, quantize="4bit"), i.e. transformers' from_pretrained with a BitsAndBytesConfig:
    transformers 5 quantises while loading a checkpoint, and its in-memory helper
    (integrations.replace_with_bnb_linear) only swaps in empty meta-device layers. So this model is
    Mistral-7B at REDUCED DEPTH (4 of its 32 layers, real width, vocab and heads), saved to a
    temporary directory on local disk (~2.3 GB) and loaded back in 4-bit.

Stages, per model (each timed, with its peak GPU memory, torch.cuda.max_memory_allocated, reset at
the stage's start, and the memory resident before it):
  build          the model(s) above
  bf16_vs_fp32   (pythia-410m, llama-3.2-1b) extraction of the 60 demo prompts (16 with --cpu-smoke)
                 with the fp32 and the bf16 model: relative error of the final-token value vectors
                 (per layer, Frobenius over prompts and kv heads; the worst layer is judged), max
                 |difference| of the attention entropies and of the next-token entropies, in bits.
                 Tolerances: TOL_* below.
  throughput     tokens/s of geomprobe.extraction.extract (all layers, values) against a bare Hugging
                 Face forward, model(input_ids, attention_mask=..., use_cache=False) under no_grad with
                 attn_implementation "sdpa", on the same batches (extraction's tokenisation, order and
                 right-padding); one warm-up call each, then 3 timed calls each, alternating,
                 torch.cuda.synchronize around each; the median is reported. geomprobe's time includes
                 what extract() does besides the forward (tokenising, copying batches to the GPU, the
                 numpy results); the bare forward's batches are tokenised and on the GPU beforehand.
                 64 prompts of 256 tokens, batch 16 (8 x 32, batch 4 with --cpu-smoke). Peak memory of
                 one call of each.
  suite:NAME     geomprobe.runner.run(RunConfig(...), SuiteConfig(...)), i.e. the CLI's code path, one
                 suite per call into one run directory (the in-memory model is handed to run() in place
                 of load_model), at small sizes:
                   extract     the demo prompts
                   geometry    candidates: the first 200 prompts of the mixed corpus (40 with
                               --cpu-smoke), 8 per entropy quintile, 50 null draws, 1 init seed, step0 off
                   domain      the same mixed-corpus pool against the built-in math, code and
                               philosophy corpora (--cpu-smoke: math only), 4 per quintile
                   sula        4 prompts per k, k = 0,1,2,4,8, every control
                   ablation    4 prompts per k, ops cut, 2 random axes
                   mechanisms  Q-K alignment and focusing on the demo prompts, 1 init seed
                 n_boot 100 (20 with --cpu-smoke), --null init:1 wherever a suite has nulls, except on
                 mistral-7b and mistral-7b-4bit (--null off): geomprobe builds an init null with
                 transformers' initialiser from the model's config on the CPU before moving it, minutes
                 for 7B parameters, and a quantised model's null is a float model on the CPU.
                 mistral-7b and mistral-7b-4bit run extract, sula and ablation only (time).
  planner        every throughput and suite stage is also planned by geomprobe.plan.plan, with the
                 stage's own suite options, prompts and batch size, the shape actually built (its
                 config.json in the scratch directory) and the model's tokenizer; this stage lists the
                 planned weights, activation peak and peak beside the measured ones ("planner not
                 available" when geomprobe.plan is missing or its API differs).

Budget (--budget-s, default 450 s, so the whole check ends within 8 minutes): every stage has an
estimated cost; a stage runs only if the time spent so far, its estimate, and the estimates of
the essential stages still to come (each later model's build, throughput and extract) fit in the
budget; otherwise it is skipped with a note. Elapsed time is printed per stage.

Output: every figure as JSON (--out, default benchmarks/gpu_check.json), and a markdown block for
benchmarks/RESULTS.md, printed and written beside it (<out>.md). Exit status 1 when a stage failed
or a tolerance was not met, 0 otherwise (stages skipped for time are not failures).

--cpu-smoke runs the same code on the CPU with tiny shapes: each alias's published config with
3 layers, d_model 64, 4 heads (2 kv heads, head width 16), MLP 128-256, vocabulary 1024; 4-bit
through bitsandbytes' CPU kernels; batch 4, n_boot 20; no memory figures (CUDA only), the planner
is still called. Its figures test the script, not the hardware. tests/project/test_gpu_check.py runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from datetime import date
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # random weights only: nothing is downloaded
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

NO_GPU = "no CUDA GPU: nothing to check"
MIB = 2**20

# Tolerances of the bf16-vs-fp32 check (same weights; bf16 keeps 8 mantissa bits, ~0.4% per rounding,
# and the rounding compounds with depth). Measured with this script's numerics stage at the full
# shapes on a CPU (bf16 matmuls, fp32 accumulation, as on a GPU), 60 demo prompts: Pythia-410M values
# 1.2% (worst layer 23; 12 prompts), attention entropy 0.003 bits, next-token 0.0001 bits;
# Llama-3.2-1B values 2.8% (layer 15, rising steadily from 0.3% at layer 0), attention 0.044 bits,
# next-token 0.0007 bits. So 3% and 0.05 bits would sit at Llama's own rounding noise: the
# tolerances below leave about 2x headroom and still catch a real dtype bug (an entropy or a
# readout computed in bf16 is off by far more).
TOL_VALUES_REL = 0.05  # relative error of the final-token value vectors, the worst layer
TOL_ATTN_BITS = 0.10  # max |H_bf16 - H_fp32| of the attention entropies, bits
TOL_NEXT_BITS = 0.05  # max |H_bf16 - H_fp32| of the next-token entropies, bits

# alias -> the built-in tokenizer style it gets (geomprobe.models.builtin.build_tokenizer)
TOKENIZERS = {"pythia-410m": "tiny-neox", "llama-3.2-1b": "tiny-llama", "mistral-7b": "tiny-llama"}
# --cpu-smoke: tiny reduced-width overrides of the published configs (vocabularies stay published)
SMOKE_SHAPES = {
    "pythia-410m": dict(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, intermediate_size=256),
    "llama-3.2-1b": dict(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                         head_dim=16, intermediate_size=128),
    "mistral-7b": dict(num_hidden_layers=3, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                       head_dim=16, intermediate_size=128),
}
QUANT_DEPTH = 4  # layers of the 4-bit Mistral (real width), saved and loaded back through from_pretrained

FULL_SUITES = ("extract", "geometry", "domain", "sula", "ablation", "mechanisms")
BIG_SUITES = ("extract", "sula", "ablation")
# model key -> (alias, what is built, suites, with the bf16-vs-fp32 check)
MODELS = {
    "pythia-410m": ("pythia-410m", "fp32+bf16", FULL_SUITES, True),
    "llama-3.2-1b": ("llama-3.2-1b", "fp32+bf16", FULL_SUITES, True),
    "mistral-7b": ("mistral-7b", "bf16", BIG_SUITES, False),
    "mistral-7b-4bit": ("mistral-7b", "4bit", BIG_SUITES, False),
}
# Estimated seconds of each stage on one H100/H200 (budgeting only; the JSON has the measured times).
ESTIMATE_S = {
    "pythia-410m": dict(build=10, bf16_vs_fp32=8, throughput=8, auto_batch=20, extract=5, geometry=20, domain=25,
                        sula=15, ablation=10, mechanisms=10, planner=1),
    "llama-3.2-1b": dict(build=15, bf16_vs_fp32=10, throughput=10, extract=6, geometry=25, domain=30, sula=20,
                         ablation=12, mechanisms=12, planner=1),
    "mistral-7b": dict(build=40, throughput=20, extract=10, sula=25, ablation=25, planner=1),
    "mistral-7b-4bit": dict(build=45, throughput=15, extract=8, sula=20, ablation=20, planner=1),
}
ESSENTIAL = ("build", "throughput", "extract")


def log(message: str) -> None:
    print(message, flush=True)


def _quiet_libraries() -> None:
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    try:
        import transformers

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
    except Exception:
        pass


# ---------------------------------------------------------------------------------------------
# settings of the two modes

class Settings:
    """Sizes of every stage: the GPU check, or --cpu-smoke's tiny version of it."""

    def __init__(self, smoke: bool):
        self.smoke = smoke
        self.device = "cpu" if smoke else "cuda"
        self.batch_size = 4 if smoke else 16
        self.throughput_prompts = 8 if smoke else 64
        self.throughput_tokens = 32 if smoke else 256
        self.repeats = 1 if smoke else 3
        self.n_boot = 20 if smoke else 100
        self.n_candidates = 40 if smoke else 200
        self.n_per_quintile = 4 if smoke else 8
        self.n_null_draws = 10 if smoke else 50
        self.domains = ("math",) if smoke else ("math", "code", "philosophy")
        self.n_per_k = 4
        self.n_numerics_prompts = 16 if smoke else 60  # demo prompts of the bf16-vs-fp32 check

    def config(self, alias: str, **overrides):
        from geomprobe.models.builtin import VOCAB_SIZE
        from geomprobe.models.published import config_for, shape_of

        fields = dict(SMOKE_SHAPES[alias]) if self.smoke else {}
        fields.update(overrides)
        # the published vocabulary keeps the shape exact; --cpu-smoke: 1024 (the tokenizer uses ids < 512)
        fields["vocab_size"] = 2 * VOCAB_SIZE if self.smoke else max(VOCAB_SIZE, shape_of(alias)["vocab"])
        return config_for(alias, **fields)


# ---------------------------------------------------------------------------------------------
# device helpers (no-ops on the CPU)

def cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def free_memory() -> None:
    gc.collect()
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def allocated_mib() -> float | None:
    import torch

    return torch.cuda.memory_allocated() / MIB if torch.cuda.is_available() else None


def reset_peak() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def peak_mib() -> float | None:
    import torch

    if not torch.cuda.is_available():
        return None
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / MIB


def _round(value, digits: int = 1):
    return None if value is None else round(float(value), digits)


# ---------------------------------------------------------------------------------------------
# models

def wrap(model, tokenizer, key: str, dtype: str, device: str, quantize: str | None = None, source: str | None = None):
    """A geomprobe LoadedModel around an in-memory model (what load_model returns)."""
    from geomprobe.adapters import family_of
    from geomprobe.attention import ATTN_IMPLEMENTATION
    from geomprobe.models.loading import LoadedModel

    model.eval()
    return LoadedModel(model=model, tokenizer=tokenizer, spec=f"gpu-check-{key}", source=source or f"random-init:{key}",
                       revision=None, commit=None, family=family_of(model.config.model_type), dtype=dtype,
                       device=device, device_map=None, quantize=quantize,
                       attn_implementation=model.config._attn_implementation or ATTN_IMPLEMENTATION)


def build_random(config, dtype, device: str, seed: int = 0):
    """AutoModelForCausalLM.from_config(config) with transformers' initialiser (torch seed `seed`),
    built directly on `device`, with geomprobe's attention function."""
    import copy

    import torch
    import transformers

    import geomprobe.attention as gp_attention

    config = copy.deepcopy(config)  # from_config writes dtype and attn_implementation into it
    torch.manual_seed(seed)
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=dtype,
                                                              attn_implementation=gp_attention.ATTN_IMPLEMENTATION)
    return model.eval()


def count_params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def build_stage(state: dict, key: str, settings: Settings) -> dict:
    import torch

    from geomprobe.models.builtin import build_tokenizer

    alias, kind, _, _ = MODELS[key]
    tokenizer = build_tokenizer(TOKENIZERS[alias])
    device = settings.device
    info: dict = {"alias": alias, "kind": kind, "tokenizer": f"geomprobe built-in BPE ({TOKENIZERS[alias]}), "
                                                            f"vocab {len(tokenizer)}"}
    if kind == "fp32+bf16":
        config = settings.config(alias)
        t0 = time.perf_counter()
        model32 = build_random(config, torch.float32, device)
        sync()
        info["build_fp32_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        model16 = build_random(config, torch.bfloat16, device, seed=1)
        model16.load_state_dict(model32.state_dict())  # the same weights, rounded to bf16
        sync()
        info["build_bf16_copy_s"] = round(time.perf_counter() - t0, 2)
        state["fp32"] = wrap(model32, tokenizer, key + "-fp32", "float32", device)
        state["loaded"] = wrap(model16, tokenizer, key, "bfloat16", device)
    elif kind == "bf16":
        config = settings.config(alias)
        t0 = time.perf_counter()
        model = build_random(config, torch.bfloat16, device)
        sync()
        info["build_bf16_s"] = round(time.perf_counter() - t0, 2)
        state["loaded"] = wrap(model, tokenizer, key, "bfloat16", device)
    elif kind == "4bit":
        from geomprobe.models import load_model

        depth = min(QUANT_DEPTH, settings.config(alias).num_hidden_layers)
        config = settings.config(alias, num_hidden_layers=depth)
        width = "the --cpu-smoke width" if settings.smoke else "the real width"
        info["note"] = (f"reduced depth: {depth} of {_published_layers(alias)} layers at {width}, saved "
                        "and loaded back with load_model(dir, quantize='4bit') (from_pretrained + "
                        "BitsAndBytesConfig nf4, compute dtype bfloat16)")
        t0 = time.perf_counter()
        model = build_random(config, torch.bfloat16, device)
        sync()
        info["build_bf16_s"] = round(time.perf_counter() - t0, 2)
        directory = Path(tempfile.mkdtemp(prefix="gpu-check-mistral-4bit-", dir=state["tmp"]))
        state["plan_dir"] = str(directory)
        t0 = time.perf_counter()
        model.save_pretrained(directory)
        tokenizer.save_pretrained(directory)
        info["save_s"] = round(time.perf_counter() - t0, 2)
        info["saved_gib"] = round(sum(p.stat().st_size for p in directory.iterdir()) / 2**30, 3)
        info["bf16_params"] = count_params(model)
        del model
        free_memory()
        reset_peak()
        t0 = time.perf_counter()
        state["loaded"] = load_model(str(directory), dtype="bfloat16", device=device, quantize="4bit")
        sync()
        info["load_4bit_s"] = round(time.perf_counter() - t0, 2)
        info["load_4bit_peak_mib"] = _round(peak_mib())
        linear = type(state["loaded"].adapter.value_module(0)).__name__
        info["value_projection_class"] = linear
        if "4bit" not in linear:
            raise RuntimeError(f"the 4-bit load left the value projection a {linear}")
    loaded = state["loaded"]
    if "plan_dir" not in state:  # the built shape's config.json, for geomprobe.plan
        state["plan_dir"] = str(Path(tempfile.mkdtemp(prefix=f"config-{key}-", dir=state["tmp"])))
        loaded.model.config.save_pretrained(state["plan_dir"])
    info["n_layers"] = loaded.adapter.shape.n_layers
    info["shape"] = dict(loaded.adapter.shape.__dict__)
    info["n_params"] = count_params(loaded.model)
    info["resident_mib"] = _round(allocated_mib())
    return info


def _published_layers(alias: str) -> int:
    from geomprobe.models.published import shape_of

    return shape_of(alias)["n_layers"]


# ---------------------------------------------------------------------------------------------
# prompts

def demo_prompts():
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.prompts import read_prompts

    return read_prompts(demo_prompts_path())


def throughput_prompts(n: int, tokens: int):
    """n prompts of at least `tokens` tokens under a 512-vocab BPE (demo prompts joined, each from
    another start); extraction keeps the last `tokens` (max_tokens), so the batches are full."""
    from geomprobe.prompts import Prompt

    texts = [p.text for p in demo_prompts()]
    out = []
    for i in range(n):
        parts, length, j = [], 0, i
        while length < 6 * tokens:  # >= 1 char per token for this BPE: 6x is ample
            parts.append(texts[j % len(texts)])
            length += len(parts[-1]) + 1
            j += 1
        out.append(Prompt(f"tp{i:03d}", " ".join(parts)))
    return out


# ---------------------------------------------------------------------------------------------
# bf16 against fp32

def numerics_stage(state: dict, key: str, settings: Settings) -> dict:
    import numpy as np

    from geomprobe.extraction import ExtractionConfig, extract

    prompts = demo_prompts()[: settings.n_numerics_prompts]
    config = ExtractionConfig(batch_size=settings.batch_size)
    try:
        ex32 = extract(state["fp32"], prompts, config, progress=False)
        ex16 = extract(state["loaded"], prompts, config, progress=False)
    finally:
        state.pop("fp32", None)  # only this stage needs it
        free_memory()
    v32, v16 = np.asarray(ex32["values"], np.float64), np.asarray(ex16["values"], np.float64)  # [n, L, G, d]
    n, n_layers = v32.shape[:2]
    diff = (v16 - v32).reshape(n, n_layers, -1)
    ref = v32.reshape(n, n_layers, -1)
    per_layer = np.linalg.norm(diff, axis=(0, 2)) / np.maximum(np.linalg.norm(ref, axis=(0, 2)), 1e-30)
    per_vector = np.linalg.norm(diff, axis=2) / np.maximum(np.linalg.norm(ref, axis=2), 1e-30)
    attn = np.abs(np.asarray(ex16["attn_entropy_bits"], np.float64) - np.asarray(ex32["attn_entropy_bits"], np.float64))
    nxt = np.abs(np.asarray(ex16["next_entropy_bits"], np.float64) - np.asarray(ex32["next_entropy_bits"], np.float64))
    values_rel = float(per_layer.max())
    checks = {"values_rel_error": values_rel < TOL_VALUES_REL, "attn_entropy_bits": float(attn.max()) < TOL_ATTN_BITS,
              "next_entropy_bits": float(nxt.max()) < TOL_NEXT_BITS}
    return {"n_prompts": n, "n_layers": n_layers,
            "values_rel_error_max_layer": values_rel, "values_rel_error_worst_layer": int(per_layer.argmax()),
            "values_rel_error_per_layer": [float(x) for x in per_layer],
            "values_rel_error_per_vector_median": float(np.median(per_vector)),
            "values_rel_error_per_vector_max": float(per_vector.max()),
            "attn_entropy_max_abs_diff_bits": float(attn.max()), "attn_entropy_mean_abs_diff_bits": float(attn.mean()),
            "attn_entropy_fp32_mean_bits": float(np.mean(ex32["attn_entropy_bits"])),
            "next_entropy_max_abs_diff_bits": float(nxt.max()), "next_entropy_mean_abs_diff_bits": float(nxt.mean()),
            "next_entropy_fp32_mean_bits": float(np.mean(ex32["next_entropy_bits"])),
            "tolerances": {"values_rel_error": TOL_VALUES_REL, "attn_entropy_bits": TOL_ATTN_BITS,
                           "next_entropy_bits": TOL_NEXT_BITS},
            "checks": checks, "passed": all(checks.values())}


# ---------------------------------------------------------------------------------------------
# throughput: geomprobe extraction against a bare forward on the same batches

def extraction_batches(tokenizer, prompts, batch_size: int, max_tokens: int):
    """The batches extract() runs: its tokenisation, longest first (stable), right-padded."""
    import numpy as np

    from geomprobe.extraction import pad_batch, tokenize

    encoded = tokenize(tokenizer, prompts, max_tokens)
    lengths = np.array([len(ids) for ids in encoded])
    order = np.argsort(-lengths, kind="stable")
    pad_id = next((v for v in (getattr(tokenizer, name, None) for name in ("pad_token_id", "eos_token_id",
                                                                         "unk_token_id")) if v is not None), 0)
    batches = []
    for start in range(0, len(order), batch_size):
        input_ids, attention_mask, _ = pad_batch([encoded[i] for i in order[start: start + batch_size]], pad_id)
        batches.append((input_ids, attention_mask))
    return batches, int(lengths.sum())


@contextlib.contextmanager
def attention_implementation(model, name: str):
    """The model's attention function switched to `name` (transformers' set_attn_implementation)."""
    before = model.config._attn_implementation
    if name != before:
        model.set_attn_implementation(name)
    try:
        yield model.config._attn_implementation
    finally:
        if model.config._attn_implementation != before:
            model.set_attn_implementation(before)


AUTO_BATCH_MODEL = "pythia-410m"  # --batch-size auto's probe is checked on this model


def auto_batch_stage(state: dict, settings: Settings) -> dict:
    """--batch-size auto on the device (geomprobe.batching.auto_batch_size) at the throughput stage's
    prompt length: the batch it finds, how, and the time the probe took; a second call reads the
    remembered answer (in a temporary cache, so the user's is untouched)."""
    import os

    from geomprobe.batching import auto_batch_size

    previous = os.environ.get("GEOMPROBE_CACHE")
    os.environ["GEOMPROBE_CACHE"] = os.path.join(state["tmp"], "auto-batch-cache")
    try:
        t0 = time.perf_counter()
        batch, how = auto_batch_size(state["loaded"], settings.throughput_tokens, settings.batch_size)
        probe_s = time.perf_counter() - t0
        again, how_again = auto_batch_size(state["loaded"], settings.throughput_tokens, settings.batch_size)
    finally:
        if previous is None:
            os.environ.pop("GEOMPROBE_CACHE", None)
        else:
            os.environ["GEOMPROBE_CACHE"] = previous
    return {"batch_size": batch, "tokens": settings.throughput_tokens, "how": how, "probe_s": round(probe_s, 2),
            "remembered": again == batch and not how_again.startswith("probed"), "how_again": how_again}


def throughput_stage(state: dict, key: str, settings: Settings) -> dict:
    import torch

    from geomprobe.extraction import ExtractionConfig, extract

    loaded = state["loaded"]
    model = loaded.model
    prompts = throughput_prompts(settings.throughput_prompts, settings.throughput_tokens)
    config = ExtractionConfig(batch_size=settings.batch_size, max_tokens=settings.throughput_tokens)
    batches, n_tokens = extraction_batches(loaded.tokenizer, prompts, settings.batch_size, settings.throughput_tokens)
    device = next(model.parameters()).device
    batches = [(ids.to(device), mask.to(device)) for ids, mask in batches]

    def geomprobe_call():
        extract(loaded, prompts, config, progress=False)

    def hf_call():
        with torch.no_grad():
            for input_ids, attention_mask in batches:
                model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)

    def timed(fn):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        return time.perf_counter() - t0

    base = allocated_mib()
    times: dict[str, list[float]] = {"geomprobe": [], "hf": []}
    peaks: dict[str, float | None] = {}
    with attention_implementation(model, "sdpa") as hf_attention:  # fails here, not mid-timing, if unsupported
        pass
    for name, fn in (("geomprobe", geomprobe_call), ("hf", hf_call)):  # warm-up, and the peak of one call
        reset_peak()
        if name == "hf":
            with attention_implementation(model, "sdpa"):
                timed(fn)
        else:
            timed(fn)
        peaks[name] = peak_mib()
    for round_ in range(settings.repeats):
        order = ("geomprobe", "hf") if round_ % 2 == 0 else ("hf", "geomprobe")
        for name in order:
            if name == "hf":
                with attention_implementation(model, "sdpa"):
                    times[name].append(timed(hf_call))
            else:
                times[name].append(timed(geomprobe_call))
    median = {name: statistics.median(values) for name, values in times.items()}
    from geomprobe.config import RunConfig

    prompt_file = Path(state["tmp"]) / f"throughput-{key}.jsonl"
    prompt_file.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in prompts))
    run_config = RunConfig(model=loaded.spec, prompts=str(prompt_file), dtype=loaded.dtype, device=settings.device,
                           batch_size=settings.batch_size, max_tokens=settings.throughput_tokens,
                           quantize=loaded.quantize)
    out = {"n_prompts": len(prompts), "n_batches": len(batches), "batch_size": settings.batch_size,
           "tokens_per_prompt": settings.throughput_tokens, "tokens": n_tokens, "repeats": settings.repeats,
           "geomprobe_s": median["geomprobe"], "hf_s": median["hf"],
           "geomprobe_tokens_per_s": n_tokens / median["geomprobe"], "hf_tokens_per_s": n_tokens / median["hf"],
           "geomprobe_over_hf_time": median["geomprobe"] / median["hf"], "times_s": times,
           "hf_attn_implementation": hf_attention,
           "geomprobe_peak_mib": _round(peaks["geomprobe"]), "hf_peak_mib": _round(peaks["hf"]),
           "resident_mib": _round(base),
           "geomprobe_activation_peak_mib": _round(None if base is None else peaks["geomprobe"] - base),
           "hf_activation_peak_mib": _round(None if base is None else peaks["hf"] - base),
           "geomprobe": "extract(loaded, prompts, ExtractionConfig(batch_size, max_tokens)): all layers, values",
           "hf": "model(input_ids, attention_mask=..., use_cache=False), torch.no_grad, sdpa, the same batches"}
    # the planner's extract suite over the same prompts, against geomprobe's peak
    compare_to_plan(out, planned(state, settings, "extract", run_config), peaks["geomprobe"], base)
    return out


# ---------------------------------------------------------------------------------------------
# suites through geomprobe.runner.run

@contextlib.contextmanager
def serving(loaded):
    """run() loads its model with geomprobe.models.load_model: hand it the in-memory model instead."""
    import geomprobe.models as models

    original = models.load_model

    def load_model(spec, **kwargs):
        return loaded if spec == loaded.spec else original(spec, **kwargs)

    models.load_model = load_model
    try:
        yield
    finally:
        models.load_model = original


def suite_config(name: str, key: str, settings: Settings, candidates: str):
    """The suite's config at small sizes; `candidates`: the small mixed-corpus pool (a prompt file),
    the geometry suite's --prompts and the domain suite's --corpus (its mixed set)."""
    from geomprobe.suites.ablation import AblationConfig
    from geomprobe.suites.domain import DomainConfig
    from geomprobe.suites.extract import ExtractConfig
    from geomprobe.suites.geometry import GeometryConfig
    from geomprobe.suites.mechanisms import MechanismsConfig
    from geomprobe.suites.sula import SulaConfig

    null = "off" if key.startswith("mistral") else "init:1"
    n_boot = settings.n_boot
    if name == "extract":
        return ExtractConfig(n_boot=n_boot)
    if name == "geometry":
        return GeometryConfig(n_per_quintile=settings.n_per_quintile, n_null=settings.n_null_draws, init_seeds=1,
                              step0="off", null=null, n_boot=n_boot, corpus=candidates)
    if name == "domain":
        return DomainConfig(n_per_quintile=settings.n_per_quintile // 2 or 1, n_null=settings.n_null_draws,
                            corpus=candidates, domains=settings.domains, null=null, n_boot=n_boot)
    if name == "sula":
        return SulaConfig(n_per_k=settings.n_per_k, null=null, n_boot=n_boot)
    if name == "ablation":
        return AblationConfig(n_per_k=settings.n_per_k, n_random=2, ops=("cut",), n_boot=n_boot)
    if name == "mechanisms":
        return MechanismsConfig(init_seeds=1, null=null, n_boot=n_boot)
    raise ValueError(name)


def candidates_file(state: dict, settings: Settings) -> str:
    """The geometry suite's small candidate pool: the first prompts of the mixed corpus."""
    path = Path(state["tmp"]) / f"candidates-{settings.n_candidates}.jsonl"
    if not path.exists():
        from geomprobe.corpora import load_corpus

        chosen = load_corpus("mixed")[: settings.n_candidates]
        path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in chosen))
    return str(path)


def suite_stage(state: dict, key: str, settings: Settings, name: str) -> dict:
    from geomprobe.config import RunConfig
    from geomprobe.runner import run

    loaded = state["loaded"]
    options = suite_config(name, key, settings, candidates_file(state, settings))
    prompts = options.corpus if name == "geometry" else None  # the geometry suite's candidates: --prompts
    out = Path(state["tmp"]) / f"run-{key}"
    config = RunConfig(model=loaded.spec, out=str(out), dtype=loaded.dtype, device=settings.device,
                       batch_size=settings.batch_size, prompts=prompts, quantize=loaded.quantize)
    planner = planned(state, settings, [options], config)
    with serving(loaded):
        run(config, options, progress=False)
    results = json.loads((out / name / "results.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    status = manifest["suites"][name]["status"]
    if status != "complete":
        raise RuntimeError(f"the {name} suite ended '{status}'")
    return {"options": options.to_dict(), "prompts": prompts and Path(prompts).name,
            "summary": suite_summary(name, results), "planner": planner}


def suite_summary(name: str, results: dict) -> dict:
    """A few headline figures of a suite's results.json (the run directory is temporary). Random
    weights: these say the suite ran, not that the model has any geometry."""
    def pick(*path):
        value = results
        for part in path:
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        if isinstance(value, dict) and "value" in value:
            value = value["value"]
        return value if isinstance(value, (int, float, str)) or value is None else None

    if name == "extract":
        out = {"n_prompts": pick("n_prompts"), "next_entropy_bits": pick("next_entropy_bits")}
    elif name == "geometry":
        out = {"n_prompts": pick("prompts", "n"), "pc1": pick("value_manifold", "pc1"),
               "key_abs_cos": pick("key_orthogonality", "mean"), "focusing": pick("attention_focusing", "focusing"),
               "verdict": pick("verdict", "label")}
    elif name == "domain":
        out = {f"pc12_{label}": pick("sets", label, "pc12") for label in (results.get("sets") or {})}
    elif name == "sula":
        out = {"mae_bits": pick("conditions", "main", "mae_bits")}
    elif name == "ablation":
        conditions = results.get("conditions") or []
        out = {"baseline_mae_bits": pick("baseline", "mae_bits"), "n_conditions": len(conditions),
               "n_forward_passes": pick("settings", "n_forward_passes")}
    elif name == "mechanisms":
        out = {"n_prompts": pick("prompts", "n"), "focusing": pick("attention_focusing", "focusing")}
    else:
        out = {}
    return out


# ---------------------------------------------------------------------------------------------
# the memory planner (geomprobe.plan, when present)

def planned(state: dict, settings: Settings, suites, run_config) -> dict:
    """geomprobe.plan.plan's figures for `suites` under `run_config` (the stage's own options and
    prompts), on the shape actually built: a directory holding the built model's config.json. The
    model's tokenizer counts the prompt tokens. "planner not available" when the module is missing
    or its API differs."""
    from dataclasses import replace

    try:
        from geomprobe.plan import plan
    except Exception as error:  # ImportError, or anything the module raises on import
        return {"available": False, "why": f"planner not available ({type(error).__name__}: {error})"}
    spec = state.get("plan_dir")
    try:
        try:
            result = plan(spec, suites, run_config=replace(run_config, model=spec), device=settings.device,
                          tokenizer=state["loaded"].tokenizer)
        except TypeError:  # another signature: the documented minimum
            result = plan(spec, suites)
        weights, activations = int(result.weights_bytes), int(result.activation_bytes)
        phases = list(getattr(result, "phases", None) or [])
        peak = max((int(phase.device_bytes) for phase in phases), default=weights + activations)
    except Exception as error:
        text = str(error).splitlines()[0] if str(error) else ""
        return {"available": False, "why": f"planner not available (plan raised {type(error).__name__}: {text})"[:300]}
    time_s = getattr(result, "time_s", None)
    return {"available": True, "weights_mib": weights / MIB, "activation_mib": activations / MIB, "peak_mib": peak / MIB,
            "phases": [getattr(phase, "name", "") for phase in phases], "fits": getattr(result, "fits", None),
            "time_s": list(time_s) if time_s is not None else None,
            "activation_where": getattr(result, "activation_where", None)}


def compare_to_plan(record: dict, planner: dict, peak_mib: float | None, resident_mib: float | None) -> None:
    """Measured against planned memory, into the stage's record."""
    record["planner"] = planner
    record["compared_peak_mib"], record["compared_resident_mib"] = _round(peak_mib), _round(resident_mib)
    if not planner.get("available") or peak_mib is None:
        return
    record["measured_activation_mib"] = _round(peak_mib - (resident_mib or 0))
    record["peak_over_planned"] = round(peak_mib / planner["peak_mib"], 3) if planner["peak_mib"] else None
    if resident_mib:
        record["resident_over_planned_weights"] = round(resident_mib / planner["weights_mib"], 3)


# ---------------------------------------------------------------------------------------------
# stages and budget

class Budget:
    def __init__(self, total_s: float):
        self.total_s = total_s
        self.t0 = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0


def planned_stages(settings: Settings, models: list[str]) -> list[tuple[str, str, str]]:
    """(model key, stage kind, stage name) in running order."""
    stages = []
    for key in models:
        _, _, suites, numerics = MODELS[key]
        kinds = ["build"] + (["bf16_vs_fp32"] if numerics else []) + ["throughput"] + \
            (["auto_batch"] if key == AUTO_BATCH_MODEL else []) + list(suites) + ["planner"]
        for kind in kinds:
            name = f"suite:{kind}" if kind in FULL_SUITES else kind
            stages.append((key, kind, f"{key}/{name}"))
    return stages


def estimate(settings: Settings, key: str, kind: str) -> float:
    return 1.0 if settings.smoke else float(ESTIMATE_S[key].get(kind, 10))


def run_stages(settings: Settings, budget: Budget, models: list[str], tmp: str) -> dict:
    stages = planned_stages(settings, models)
    records: dict[str, dict] = {}
    state: dict = {"tmp": tmp}
    current = None
    for index, (key, kind, name) in enumerate(stages):
        if key != current:  # a new model: free the last one
            state = {"tmp": tmp}
            free_memory()
            current = key
        record: dict = {"model": key, "stage": kind, "status": None}
        records[name] = record
        later = sum(estimate(settings, k, s) for k, s, n in stages[index + 1:]
                    if k != key and s in ESSENTIAL and records.get(f"{k}/build", {}).get("status") != "skipped")
        need = estimate(settings, key, kind)
        build = records.get(f"{key}/build")
        if kind != "build" and (build is None or build["status"] != "ok"):
            record.update(status="skipped", note=f"the model was not built ({build and build['status']})")
        elif kind != "planner" and budget.elapsed() + need + later > budget.total_s:
            record.update(status="skipped", note=f"over budget: {budget.elapsed():.0f} s spent + {need:.0f} s "
                                                 f"estimated + {later:.0f} s kept for later models > "
                                                 f"{budget.total_s:.0f} s")
        if record["status"] == "skipped":
            log(f"[{budget.elapsed():6.1f} s] {name}: skipped ({record['note']})")
            if kind == "bf16_vs_fp32":
                state.pop("fp32", None)
            continue
        free_memory()
        record["resident_before_mib"] = _round(allocated_mib())
        reset_peak()
        t0 = time.perf_counter()
        try:
            if kind == "build":
                data = build_stage(state, key, settings)
            elif kind == "bf16_vs_fp32":
                data = numerics_stage(state, key, settings)
            elif kind == "throughput":
                data = throughput_stage(state, key, settings)
            elif kind == "planner":
                data = planner_stage(records, key, settings)
            elif kind == "auto_batch":
                data = auto_batch_stage(state, settings)
            else:
                data = suite_stage(state, key, settings, kind)
            record.update(status="ok", **data)
            if kind in FULL_SUITES:
                compare_to_plan(record, data["planner"], peak_mib(), record["resident_before_mib"])
            if kind == "bf16_vs_fp32" and not data["passed"]:
                record["status"] = "fail"
        except Exception as error:
            text = str(error).splitlines()[0] if str(error) else ""
            record.update(status="failed", error=f"{type(error).__name__}: {text}"[:500])
            traceback.print_exc()
        record["elapsed_s"] = round(time.perf_counter() - t0, 2)
        record["peak_mib"] = _round(peak_mib())
        record["estimate_s"] = need
        peak = "" if record["peak_mib"] is None else f", peak {record['peak_mib']:.0f} MiB"
        extra = f" ({record['error']})" if record["status"] == "failed" else ""
        log(f"[{budget.elapsed():6.1f} s] {name}: {record['status']} in {record['elapsed_s']:.1f} s{peak}{extra}")
        if kind == "throughput" and record["status"] == "ok":
            log(f"    geomprobe {record['geomprobe_tokens_per_s']:,.0f} tokens/s, bare forward "
                f"{record['hf_tokens_per_s']:,.0f} tokens/s (time ratio {record['geomprobe_over_hf_time']:.3f}); peak "
                f"{_f(record['geomprobe_peak_mib'], '.0f')} vs {_f(record['hf_peak_mib'], '.0f')} MiB")
        if kind == "bf16_vs_fp32" and record["status"] in ("ok", "fail"):
            log(f"    values rel. error {record['values_rel_error_max_layer']:.2%} (worst layer, < "
                f"{TOL_VALUES_REL:.0%}), attention entropy max diff {record['attn_entropy_max_abs_diff_bits']:.4f} "
                f"bits, next-token {record['next_entropy_max_abs_diff_bits']:.4f} bits (< {TOL_ATTN_BITS}, "
                f"{TOL_NEXT_BITS}): {'pass' if record['passed'] else 'FAIL'}")
        if kind == "build" and record["status"] != "ok":
            state = {"tmp": tmp}
        if kind == "bf16_vs_fp32":  # the float32 copy serves this stage only (run or not)
            state.pop("fp32", None)
    free_memory()
    return records


def planner_stage(records: dict, key: str, settings: Settings) -> dict:
    """The planner's figures beside the memory measured in this model's stages (each stage planned
    with its own options: see compare_to_plan)."""
    rows, why = [], None
    for name, record in records.items():
        planner = record.get("planner")
        if record.get("model") != key or planner is None:
            continue
        if not planner.get("available"):
            why = planner["why"]
            continue
        rows.append({"stage": name, "resident_mib": record.get("compared_resident_mib"),
                     "planned_weights_mib": _round(planner["weights_mib"]),
                     "measured_activation_mib": record.get("measured_activation_mib"),
                     "planned_activation_mib": _round(planner["activation_mib"]),
                     "peak_mib": record.get("compared_peak_mib"), "planned_peak_mib": _round(planner["peak_mib"]),
                     "peak_over_planned": record.get("peak_over_planned")})
    if why is not None and not rows:
        log(f"    {key}: {why}")
        return {"available": False, "why": why, "rows": []}
    return {"available": True, "rows": rows,
            "note": None if cuda() else "no GPU: nothing measured to compare (planned figures only)"}


# ---------------------------------------------------------------------------------------------
# report

def environment(settings: Settings) -> dict:
    from importlib.metadata import PackageNotFoundError, version

    import torch

    def v(name):
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    env = {"python": platform.python_version(), "torch": torch.__version__, "transformers": v("transformers"),
           "bitsandbytes": v("bitsandbytes"), "accelerate": v("accelerate"), "cpus": os.cpu_count(),
           "date": date.today().isoformat(), "device": settings.device, "mode": "cpu-smoke" if settings.smoke else "gpu",
           "torch_threads": torch.get_num_threads()}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, gpu_memory_gib=round(props.total_memory / 2**30, 1), cuda=torch.version.cuda,
                   n_gpus=torch.cuda.device_count())
    return env


def _f(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _summary_note(record: dict) -> str:
    parts = []
    for k, v in (record.get("summary") or {}).items():
        if v is None or isinstance(v, (list, dict)):
            continue
        parts.append(f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}")
    return ", ".join(parts)


def markdown(report: dict) -> str:
    env, stages = report["env"], report["stages"]
    smoke = env["mode"] == "cpu-smoke"
    where = (f"{env.get('gpu')} ({env.get('gpu_memory_gib')} GiB), CUDA {env.get('cuda')}" if env.get("gpu")
             else f"CPU only ({env['cpus']} cores)")
    shapes = ("--cpu-smoke: tiny reduced-width shapes (3 layers, d_model 64, vocab 1024) on the CPU; the figures "
              "test the script, not the hardware" if smoke else
              "the published shapes; mistral-7b-4bit is Mistral-7B at 4 of its 32 layers (real width), saved and "
              "loaded back with `load_model(dir, quantize=\"4bit\")` (nf4)")
    lines = ["## GPU check: random weights at published shapes, bfloat16 (`benchmarks/gpu_check.py`)", "",
             f"    {report['command']}", "",
             f"- Date: {env['date']}; total {report['total_s']:.0f} s (budget {report['budget_s']:.0f} s).",
             f"- Machine: {where}.",
             f"- Software: torch {env['torch']}, transformers {env['transformers']}, bitsandbytes "
             f"{env['bitsandbytes']}, Python {env['python']}.",
             "- Models: random init (transformers' initialiser, seed 0) from each alias's published config "
             f"(`geomprobe.models.published.config_for`), built on the device and wrapped in memory; {shapes}. "
             "Tokenizer: geomprobe's built-in 512-token BPE.",
             "- Suites: `geomprobe.runner.run` at small sizes (see the script's docstring); `--null init:1` on "
             "pythia-410m and llama-3.2-1b, off on the Mistral models.", "",
             "| stage | status | s | resident MiB | peak MiB | note |", "|---|---|---:|---:|---:|---|"]
    for name, r in stages.items():
        note = r.get("note") or r.get("error") or ""
        if r["status"] in ("ok", "fail"):
            if r["stage"] == "build":
                note = f"{r['n_params']:,} params, {r['n_layers']} layers" + (f"; {r['note']}" if r.get("note") else "")
            elif r["stage"] in FULL_SUITES:
                note = _summary_note(r)
            elif r["stage"] == "planner":
                note = "see the memory table" if r.get("available") else r.get("why", "")
            elif r["stage"] == "bf16_vs_fp32":
                note = "pass" if r["passed"] else "FAIL: " + ", ".join(k for k, ok in r["checks"].items() if not ok)
        lines.append(f"| {name} | {r['status']} | {_f(r.get('elapsed_s'), '.1f')} | "
                     f"{_f(r.get('resident_before_mib'), '.0f')} | {_f(r.get('peak_mib'), '.0f')} | {note} |")
    numerics = [r for r in stages.values() if r["stage"] == "bf16_vs_fp32" and r["status"] in ("ok", "fail")]
    if numerics:
        lines += ["", f"bf16 against fp32, the same weights, {numerics[0]['n_prompts']} demo prompts. Tolerances: the "
                      f"final-token value vectors' relative error < {TOL_VALUES_REL:.0%} (worst layer; Frobenius over "
                      f"prompts and kv heads), attention and next-token entropies within {TOL_ATTN_BITS} and "
                      f"{TOL_NEXT_BITS} bits (max |difference|).", "",
                  "| model | values rel. error, worst layer | per vector: median, max | attention entropy max diff, "
                  "bits | next-token entropy max diff, bits | verdict |", "|---|---:|---:|---:|---:|---|"]
        for r in numerics:
            lines.append(f"| {r['model']} | {r['values_rel_error_max_layer']:.2%} (layer "
                         f"{r['values_rel_error_worst_layer']}) | {r['values_rel_error_per_vector_median']:.2%}, "
                         f"{r['values_rel_error_per_vector_max']:.2%} | {r['attn_entropy_max_abs_diff_bits']:.4f} | "
                         f"{r['next_entropy_max_abs_diff_bits']:.4f} | {'pass' if r['passed'] else 'FAIL'} |")
    throughput = [r for r in stages.values() if r["stage"] == "throughput" and r["status"] == "ok"]
    if throughput:
        lines += ["", "Throughput: geomprobe extraction (all layers, values) against a bare Hugging Face forward "
                      "(sdpa, full logits) on the same batches; medians of the timed calls after a warm-up; peak "
                      "memory of one call, weights included.", "",
                  "| model | batches x batch x tokens | geomprobe tok/s | HF tok/s | time geomprobe / HF | "
                  "peak MiB geomprobe | peak MiB HF |", "|---|---|---:|---:|---:|---:|---:|"]
        for r in throughput:
            lines.append(f"| {r['model']} | {r['n_batches']} x {r['batch_size']} x {r['tokens_per_prompt']} | "
                         f"{r['geomprobe_tokens_per_s']:,.0f} | {r['hf_tokens_per_s']:,.0f} | "
                         f"{r['geomprobe_over_hf_time']:.3f} | {_f(r['geomprobe_peak_mib'], '.0f')} | "
                         f"{_f(r['hf_peak_mib'], '.0f')} |")
    rows = [row for r in stages.values() if r["stage"] == "planner" and r["status"] == "ok" for row in r.get("rows", [])]
    unavailable = sorted({r.get("why") for r in stages.values() if r["stage"] == "planner" and not r.get("available")
                          and r["status"] == "ok"})
    lines += ["", "Memory: measured (torch.cuda.max_memory_allocated, reset per stage) against `geomprobe.plan.plan` "
                  "for the same suite options and prompts (throughput rows: the geomprobe extraction call)."]
    if rows:
        lines += ["", "| stage | resident MiB | planned weights MiB | activation peak MiB | planned activations MiB "
                      "| peak MiB | planned peak MiB | peak / planned |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for row in rows:
            lines.append(f"| {row['stage']} | {_f(row['resident_mib'], '.0f')} | {_f(row['planned_weights_mib'], '.0f')} "
                         f"| {_f(row['measured_activation_mib'], '.0f')} | {_f(row['planned_activation_mib'], '.0f')} "
                         f"| {_f(row['peak_mib'], '.0f')} | {_f(row['planned_peak_mib'], '.0f')} | "
                         f"{_f(row['peak_over_planned'], '.2f')} |")
    for why in unavailable:
        lines.append(f"\n{why}.")
    lines += ["", f"Verdict: {report['verdict']}."]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "gpu_check.json",
                        help="JSON of every figure (the markdown block is written beside it, .md)")
    parser.add_argument("--budget-s", type=float, default=450.0,
                        help="time budget in seconds: stages that would not fit are skipped with a note")
    parser.add_argument("--cpu-smoke", action="store_true",
                        help="the same code on the CPU with tiny reduced-width shapes (tests the script)")
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"comma-separated subset of {', '.join(MODELS)}")
    parser.add_argument("--tmp", type=Path, default=None,
                        help="scratch directory on local disk (run directories, the 4-bit checkpoint); "
                             "default a new temporary one, removed at the end")
    args = parser.parse_args(argv)
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}: choose from {', '.join(MODELS)}")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    if not args.cpu_smoke and not torch.cuda.is_available():
        print(NO_GPU)
        return 0
    _quiet_libraries()
    settings = Settings(smoke=args.cpu_smoke)
    if settings.smoke:  # tiny matrices: one thread is as fast, and far steadier on a busy machine
        torch.set_num_threads(1)
    budget = Budget(args.budget_s)
    command = " ".join([".venv/bin/python", "benchmarks/gpu_check.py", *(sys.argv[1:] if argv is None else argv)])
    log(f"geomprobe GPU check ({'--cpu-smoke, tiny shapes on the CPU' if settings.smoke else 'CUDA'}), "
        f"budget {args.budget_s:.0f} s, models {', '.join(args.models)}")
    tmp = args.tmp
    made_tmp = tmp is None
    if made_tmp:
        tmp = Path(tempfile.mkdtemp(prefix="geomprobe-gpu-check-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        env = environment(settings)
        log(f"    {env.get('gpu', 'cpu')}, torch {env['torch']}, transformers {env['transformers']}, "
            f"bitsandbytes {env['bitsandbytes']}")
        stages = run_stages(settings, budget, args.models, str(tmp))
    finally:
        if made_tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    failed = [n for n, r in stages.items() if r["status"] in ("failed", "fail")]
    skipped = [n for n, r in stages.items() if r["status"] == "skipped"]
    verdict = ("FAILED: " + ", ".join(failed)) if failed else "every stage that ran passed"
    if skipped:
        verdict += f" ({len(skipped)} skipped: {', '.join(skipped)})"
    report = {"command": command, "env": env, "budget_s": args.budget_s, "total_s": budget.elapsed(),
              "settings": {k: v for k, v in vars(settings).items()},
              "tolerances": {"values_rel_error": TOL_VALUES_REL, "attn_entropy_bits": TOL_ATTN_BITS,
                             "next_entropy_bits": TOL_NEXT_BITS},
              "stages": stages, "failed": failed, "skipped": skipped, "verdict": verdict}
    report["markdown"] = markdown(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=str))
    args.out.with_suffix(".md").write_text(report["markdown"])
    print()
    print(report["markdown"])
    print(f"figures: {args.out}; markdown: {args.out.with_suffix('.md')}; total {budget.elapsed():.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
