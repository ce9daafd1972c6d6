"""How much does geomprobe's extraction cost over a bare Hugging Face forward pass?

    .venv/bin/python benchmarks/extraction_overhead.py            # full run (~6-12 min on 2 CPU cores)
    .venv/bin/python benchmarks/extraction_overhead.py --quick    # smoke run (<2 min): 8x64 only,
                                                                   # hf/geomprobe/tl, 1 counted call each
    .venv/bin/python benchmarks/extraction_overhead.py --profile-only   # where geomprobe's time goes

Model: a randomly initialised GPT-NeoX with Pythia-410M's shape (24 layers, d_model 1024, 16 heads,
d_mlp 4096, vocab 50304, rotary_pct 0.25, parallel residual; float32), built from GPTNeoXConfig,
saved to a temporary directory and loaded from there by every variant.

Variants, each in its own fresh worker process (torch threads = 2):
  hf           bare HF forward, attn_implementation="sdpa":
               model(input_ids, attention_mask=..., use_cache=False) under torch.no_grad  [baseline]
  hf-backbone  reference only: the same model's backbone (model.base_model), i.e. the bare forward
               without the [batch, T, vocab] unembedding; geomprobe runs the backbone and unembeds
               only the final position, so (geomprobe / hf-backbone) isolates the cost of its hooks
               and final-row attention entropies
  geomprobe    geomprobe.models.load_model(path) + HFBackend(loaded, all layers, ("values",), [])
               .run_batch(input_ids, attention_mask, final_index)
  tl           TransformerLens 4: TransformerBridge.boot_transformers(path, hf_model=<eager HF
               model>, tokenizer=...) and run_with_cache(input_ids) with the full cache

Time: wall seconds of one call, median over the calls after the warm-up (the worker process's CPU
seconds alongside: less sensitive to other programs than wall time, but it counts OpenMP spinning).
hf, hf-backbone and geomprobe run in three live worker processes that take turns call by call
(order reversed every round), so load from other programs on the machine falls on all three alike.
The tl worker runs afterwards, taking turns with the hf worker, and its ratios are to those hf
calls. Its full cache at 1x2048 is ~16 GiB (peak +17 GiB); it is skipped, with a note, when the
machine has too little memory available.

Every worker first makes one short call (1 x 32 tokens): lazy set-up, and it pages in the weights
(safetensors are memory-mapped). Per workload, the first full-size call is a warm-up that is not
counted (the first call at a new size pages in the embedding rows of its tokens and leaves lasting
allocator/BLAS buffers behind, ~100-150 MB, no part of any later call's cost). Exception: tl at
1x2048 gets one call only, after the short warm-up.

Memory, measured on every counted call: gc and malloc_trim(0) (memory freed by earlier calls goes
back to the kernel, so it cannot hide this call's use), read VmRSS, reset the peak (writing 5 to
/proc/self/clear_refs resets VmHWM to the current RSS), run the call, read VmHWM. "peak +MiB" is
VmHWM - VmRSS-before, median over the calls: the working memory of the call, its outputs included
(the logits for hf, the cache for tl), the model weights excluded (loaded before, in both numbers).
"peak RSS" is the absolute VmHWM, weights included. Torch's CPU allocations are invisible to
tracemalloc, hence RSS; allocator fragmentation makes it vary by some tens of MiB from call to call.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

THREADS = 2
MARK = "@@BENCH "
PYTHIA_410M_SHAPE = dict(vocab_size=50304, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                         intermediate_size=4096, rotary_pct=0.25, rotary_emb_base=10000,
                         use_parallel_residual=True, max_position_embeddings=2048, hidden_act="gelu",
                         layer_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=0, eos_token_id=0)
# name -> (batch, tokens, padded)
WORKLOADS = {"8x64": (8, 64, False), "1x2048": (1, 2048, False), "8x64-padded": (8, 64, True)}
SDPA_VARIANTS = ("hf", "hf-backbone", "geomprobe")
TARGET_TIME, TARGET_MEM = 1.05, 1.10


# ---------------------------------------------------------------------------------------------
# memory probes (Linux /proc; ru_maxrss as a fallback)

def _status_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _mib(field: str) -> float:
    """A /proc/self/status memory field in MiB; ru_maxrss where /proc is unavailable."""
    kib = _status_kib(field)
    if kib is None:
        import resource

        kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024


def rss_mib() -> float:
    return _mib("VmRSS")


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS; False where the kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_mib() -> float:
    return _mib("VmHWM")


def release_free_memory() -> None:
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def mem_available_mib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------------------------
# model and inputs

def build_model(path: Path) -> None:
    """Random Pythia-410M-shaped GPT-NeoX (normal(0, 0.02) weights, zero biases, unit LayerNorms)
    plus geomprobe's tiny-neox byte-level tokenizer (only TransformerLens and load_model need one;
    inputs are random token ids)."""
    import torch
    import transformers

    from geomprobe.models.builtin import build_tokenizer

    config = transformers.GPTNeoXConfig(**PYTHIA_410M_SHAPE)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model = model.to_empty(device="cpu")  # buffers (rotary inv_freq) are rebuilt when loading
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.ndim >= 2:
                param.normal_(0.0, 0.02, generator=generator)
            elif "norm" in name:
                param.fill_(1.0)
            else:
                param.zero_()
    model.save_pretrained(path)
    build_tokenizer("tiny-neox").save_pretrained(path)


def make_inputs(workload: str):
    """(input_ids int64 [B, T], attention_mask int64 [B, T], final_index [B]): random ids, right-padded."""
    import torch

    batch, tokens, padded = WORKLOADS[workload]
    generator = torch.Generator().manual_seed(1234 + tokens)
    input_ids = torch.randint(0, PYTHIA_410M_SHAPE["vocab_size"], (batch, tokens), generator=generator)
    lengths = torch.full((batch,), tokens, dtype=torch.long)
    if padded:
        lengths = torch.randint(tokens // 4, tokens + 1, (batch,), generator=generator)
        lengths[0] = tokens
    attention_mask = (torch.arange(tokens)[None, :] < lengths[:, None]).long()
    input_ids = input_ids.masked_fill(attention_mask == 0, 0)
    return input_ids, attention_mask, lengths - 1


# ---------------------------------------------------------------------------------------------
# worker process: loads one variant, then runs calls on request (one JSON line in, one out)

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


def load_variant(variant: str, model_dir: str):
    """A zero-argument-per-workload callable: call(input_ids, attention_mask, final_index) -> output."""
    import torch
    import transformers

    if variant in ("hf", "hf-backbone"):
        model = transformers.AutoModelForCausalLM.from_pretrained(
            model_dir, attn_implementation="sdpa", dtype=torch.float32).eval()
        target = model if variant == "hf" else model.base_model

        def call(input_ids, attention_mask, final_index):
            with torch.no_grad():
                return target(input_ids, attention_mask=attention_mask, use_cache=False)

        return call
    if variant == "geomprobe":
        from geomprobe.backends.hf import HFBackend
        from geomprobe.models import load_model

        loaded = load_model(model_dir)
        backend = HFBackend(loaded, list(range(loaded.adapter.shape.n_layers)), ("values",), [])

        def call(input_ids, attention_mask, final_index):
            return backend.run_batch(input_ids, attention_mask, final_index)

        return call
    if variant == "tl":
        from transformer_lens.model_bridge import TransformerBridge

        tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
        hf_model = transformers.AutoModelForCausalLM.from_pretrained(
            model_dir, attn_implementation="eager", dtype=torch.float32).eval()
        bridge = TransformerBridge.boot_transformers(model_dir, hf_model=hf_model, tokenizer=tokenizer,
                                                     device="cpu")

        def call(input_ids, attention_mask, final_index):
            kwargs = {} if bool(attention_mask.all()) else {"attention_mask": attention_mask}
            with torch.no_grad():
                return bridge.run_with_cache(input_ids, **kwargs)

        return call
    raise SystemExit(f"unknown variant {variant}")


def _cache_mib(output) -> float | None:
    """Distinct storage held by a TransformerLens cache (entries may share storage)."""
    if not (isinstance(output, tuple) and len(output) == 2):
        return None
    seen, total = set(), 0
    for value in output[1].values():
        if value is None:
            continue
        storage = value.untyped_storage()
        if storage.data_ptr() not in seen:
            seen.add(storage.data_ptr())
            total += storage.nbytes()
    return total / 2**20


class PartTimer:
    """Wall seconds spent in the parts geomprobe adds to a forward pass (--profile only)."""

    PARTS = ("backbone forward", "attention: final-row entropy", "attention: SDPA", "value hooks",
             "unembed final rows", "next-token entropy")

    def __init__(self):
        self.seconds = dict.fromkeys(self.PARTS, 0.0)
        self.mask_kinds: set[str] = set()

    def wrap(self, part, fn):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - t0

        return timed

    def reset(self):
        self.seconds = dict.fromkeys(self.PARTS, 0.0)


def load_profiled(model_dir: str):
    """geomprobe's run_batch with timers around its parts, and the plain backbone of the same model.

    attention: final-row entropy = time in geomprobe_attention minus the SDPA call inside it;
    value hooks = time in the forward hooks run_batch registers (the only hooks in this process)."""
    import torch
    from transformers import AttentionInterface

    import geomprobe.attention as gp_attention
    import geomprobe.backends.hf as gp_hf
    from geomprobe.backends.hf import HFBackend
    from geomprobe.models import load_model

    timer = PartTimer()
    loaded = load_model(model_dir)
    adapter = loaded.adapter
    plain_backbone = adapter.backbone()
    sdpa_inner = gp_attention.sdpa_attention_forward

    def sdpa_timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return sdpa_inner(*args, **kwargs)
        finally:
            timer.seconds["attention: SDPA"] += time.perf_counter() - t0

    gp_attention.sdpa_attention_forward = sdpa_timed
    original_attention = AttentionInterface._global_mapping[gp_attention.ATTN_IMPLEMENTATION]

    def attention_timed(module, query, key, value, attention_mask, *args, **kwargs):
        kind = "none" if attention_mask is None else f"{attention_mask.dtype}{tuple(attention_mask.shape)}"
        timer.mask_kinds.add(kind)
        sdpa_before = timer.seconds["attention: SDPA"]
        t0 = time.perf_counter()
        try:
            return original_attention(module, query, key, value, attention_mask, *args, **kwargs)
        finally:
            spent = time.perf_counter() - t0 - (timer.seconds["attention: SDPA"] - sdpa_before)
            timer.seconds["attention: final-row entropy"] += spent

    AttentionInterface.register(gp_attention.ATTN_IMPLEMENTATION, attention_timed)
    register = torch.nn.Module.register_forward_hook

    def register_timed(module, hook, *args, **kwargs):
        return register(module, timer.wrap("value hooks", hook), *args, **kwargs)

    torch.nn.Module.register_forward_hook = register_timed
    unembed = adapter.unembed()
    started = []
    unembed.register_forward_pre_hook(lambda module, inputs: started.append(time.perf_counter()))

    def unembed_done(module, inputs, output):
        timer.seconds["unembed final rows"] += time.perf_counter() - started.pop()

    register(unembed, unembed_done)  # the unpatched registration: not counted as a value hook
    adapter.backbone = lambda: timer.wrap("backbone forward", plain_backbone)
    gp_hf.next_token_summary = timer.wrap("next-token entropy", gp_hf.next_token_summary)
    backend = HFBackend(loaded, list(range(adapter.shape.n_layers)), ("values",), [])

    def plain(input_ids, attention_mask, final_index):
        with torch.no_grad():
            return plain_backbone(input_ids, attention_mask=attention_mask, use_cache=False)

    return timer, plain, backend.run_batch


def profile_worker(model_dir: str) -> None:
    """Reply per request: plain backbone seconds, run_batch seconds and run_batch's parts."""
    import torch

    _quiet_libraries()
    torch.set_num_threads(THREADS)
    timer, plain, run_batch = load_profiled(model_dir)
    ids, mask, final = make_inputs("8x64")
    run_batch(ids[:1, :32], mask[:1, :32], torch.tensor([31]))
    plain(ids[:1, :32], mask[:1, :32], torch.tensor([31]))
    print(MARK + json.dumps({"ready": True}), flush=True)
    inputs: dict[str, tuple] = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("cmd") == "quit":
            break
        workload = request["workload"]
        inputs.setdefault(workload, make_inputs(workload))
        ids, mask, final = inputs[workload]
        first = request.get("plain_first", True)
        result = {}
        for name in (("plain", "geomprobe") if first else ("geomprobe", "plain")):
            timer.reset()
            timer.mask_kinds.clear()
            t0 = time.perf_counter()
            if name == "plain":
                plain(ids, mask, final)
            else:
                run_batch(ids, mask, final)
                result["parts"] = dict(timer.seconds)
                result["mask"] = sorted(timer.mask_kinds)
            result[name] = time.perf_counter() - t0
        print(MARK + json.dumps(result), flush=True)


def worker(variant: str, model_dir: str) -> None:
    import torch

    _quiet_libraries()
    torch.set_num_threads(THREADS)
    out = sys.stdout

    def reply(obj):
        out.write(MARK + json.dumps(obj) + "\n")
        out.flush()

    start = time.perf_counter()
    call = load_variant(variant, model_dir)
    load_s = time.perf_counter() - start
    # warm-up: one short call (lazy initialisation, hook registration, kernel selection)
    ids, mask, final = make_inputs("8x64")
    call(ids[:1, :32], mask[:1, :32], torch.zeros(1, dtype=torch.long) + 31)
    release_free_memory()
    reply({"ready": True, "load_s": load_s, "rss_mib": rss_mib(), "threads": torch.get_num_threads()})
    inputs: dict[str, tuple] = {}
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("cmd") == "quit":
            break
        workload = request["workload"]
        if workload not in inputs:
            inputs[workload] = make_inputs(workload)
        ids, mask, final = inputs[workload]
        result = {"warmup": bool(request.get("warmup"))}
        if request.get("memory"):
            release_free_memory()
            before = rss_mib()
            result["peak_reset"] = reset_peak()
        c0, t0 = time.process_time(), time.perf_counter()
        output = call(ids, mask, final)
        result["seconds"] = time.perf_counter() - t0
        result["cpu_seconds"] = time.process_time() - c0
        if request.get("memory"):
            result["peak_mib"] = peak_mib()
            result["rss_before_mib"] = before
            result["peak_increase_mib"] = result["peak_mib"] - before
            result["cache_mib"] = _cache_mib(output)
        del output
        reply(result)


class Worker:
    def __init__(self, variant: str, model_dir: Path):
        """variant: one of SDPA_VARIANTS, "tl", or "profile" (geomprobe with part timers)."""
        env = dict(os.environ, OMP_NUM_THREADS=str(THREADS), MKL_NUM_THREADS=str(THREADS), HF_HUB_OFFLINE="1",
                   TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_PROGRESS_BARS="1", TRANSFORMERS_VERBOSITY="error",
                   TOKENIZERS_PARALLELISM="false")
        self.variant = variant
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker", variant, "--model-dir", str(model_dir)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                     cwd=Path(__file__).resolve().parent.parent)

    def read(self) -> dict:
        for line in self.proc.stdout:
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
        raise RuntimeError(f"worker {self.variant} exited (code {self.proc.wait()})")

    def run(self, workload: str, memory: bool = False, warmup: bool = False) -> dict:
        request = {"cmd": "run", "workload": workload, "memory": memory, "warmup": warmup}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def request(self, **request) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self) -> None:
        try:
            self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
            self.proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        self.proc.wait(timeout=120)


# ---------------------------------------------------------------------------------------------
# controller

def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def tl_cache_estimate_mib(workload: str) -> float:
    """TransformerLens's full cache for this model: hook_attn_scores + hook_pattern, [B, H, T, T] float32
    each per layer, plus per token and layer about 24 d_model + 2 d_mlp floats (measured at 8x64:
    ~2.6 MiB per token in all; this rounds up to 3)."""
    batch, tokens, _ = WORKLOADS[workload]
    c = PYTHIA_410M_SHAPE
    quadratic = 2 * c["num_hidden_layers"] * batch * c["num_attention_heads"] * tokens * tokens * 4
    linear = c["num_hidden_layers"] * batch * tokens * (24 * c["hidden_size"] + 2 * c["intermediate_size"]) * 4
    return (quadratic + linear) / 2**20


def _describe(workload, label, variant, reply) -> str:
    text = f"[{workload} {label}] {variant:12s} {reply['seconds']:7.2f} s wall {reply['cpu_seconds']:7.2f} s cpu"
    if "peak_increase_mib" in reply:
        text += f"  peak +{reply['peak_increase_mib']:.0f} MiB"
    return text


MEMORY_FIELDS = ("peak_increase_mib", "peak_mib", "rss_before_mib", "cache_mib")


def run_benchmark(args) -> dict:
    results: dict = {"variants": {}, "workloads": args.workloads, "load": {}}

    def record(variant, workload, reply):
        entry = results["variants"].setdefault(variant, {}).setdefault(
            workload, {"seconds": [], "cpu_seconds": [], "warmup_seconds": None, **{k: [] for k in MEMORY_FIELDS}})
        if reply["warmup"]:
            entry["warmup_seconds"] = reply["seconds"]
            return
        entry["seconds"].append(reply["seconds"])
        entry["cpu_seconds"].append(reply["cpu_seconds"])
        for key in MEMORY_FIELDS:
            entry[key].append(reply.get(key))
        entry["peak_reset"] = reply.get("peak_reset")

    variants = [v for v in SDPA_VARIANTS if v not in args.skip]
    workers: list[Worker] = []
    hf_worker = None
    try:
        for variant in variants:
            log(f"[load] {variant}")
            workers.append(Worker(variant, args.model_dir))
            results["load"][variant] = workers[-1].read()
        for workload in args.workloads:
            for w in workers:
                reply = w.run(workload, warmup=True)
                record(w.variant, workload, reply)
                log(_describe(workload, "warm-up", w.variant, reply))
            rounds = args.repeats[workload]
            for round_ in range(rounds):
                # calls taken in turn, order reversed every round: other programs' load falls on all alike
                order = workers if round_ % 2 == 0 else workers[::-1]
                for w in order:
                    reply = w.run(workload, memory=True)
                    record(w.variant, workload, reply)
                    log(_describe(workload, f"{round_ + 1}/{rounds}", w.variant, reply))
        if "tl" not in args.skip:
            # the hf worker stays, to take turns with tl: tl's time is compared with hf calls made
            # alongside it, not with the earlier ones (the load from other programs changes)
            hf_worker = next((w for w in workers if w.variant == "hf"), None)
    finally:
        for w in workers:
            if w is not hf_worker:
                w.close()

    if "tl" not in args.skip:
        try:
            run_tl(args, results, record, hf_worker)
        finally:
            if hf_worker is not None:
                hf_worker.close()
    return results


def run_tl(args, results, record, hf_worker) -> None:
    log("[load] tl")
    w = Worker("tl", args.model_dir)
    tl = results["variants"].setdefault("tl", {})

    def hf_alongside(workload, label):
        if hf_worker is None:
            return
        reply = hf_worker.run(workload, memory=True)
        entry = tl.setdefault(workload, {"seconds": [], "cpu_seconds": [], "warmup_seconds": None,
                                         **{k: [] for k in MEMORY_FIELDS}})
        entry.setdefault("hf_alongside_seconds", []).append(reply["seconds"])
        entry.setdefault("hf_alongside_cpu_seconds", []).append(reply["cpu_seconds"])
        log(_describe(workload, label, "hf (with tl)", reply))

    try:
        results["load"]["tl"] = w.read()
        for workload in args.workloads:
            need = tl_cache_estimate_mib(workload) * 1.05 + 1024
            avail = mem_available_mib()
            if avail is not None and avail < need:
                note = f"skipped: needs ~{need / 1024:.1f} GiB, {avail / 1024:.1f} GiB available"
                log(f"[{workload}] tl {note}")
                tl[workload] = {"skipped": note, "seconds": []}
                continue
            rounds = args.tl_repeats[workload]
            try:
                if workload != "1x2048":  # at 1x2048 (a ~16 GiB cache) the one call follows the short warm-up only
                    reply = w.run(workload, warmup=True)
                    record("tl", workload, reply)
                    log(_describe(workload, "warm-up", "tl", reply))
                for round_ in range(rounds):
                    label = f"{round_ + 1}/{rounds}"
                    if round_ % 2 == 0:
                        hf_alongside(workload, label)
                    reply = w.run(workload, memory=True)
                    record("tl", workload, reply)
                    log(_describe(workload, label, "tl", reply))
                    if round_ % 2 == 1 or rounds == 1:
                        hf_alongside(workload, label)
            except RuntimeError as err:  # e.g. killed for memory
                log(f"[{workload}] tl failed: {err}")
                tl[workload] = {"skipped": f"failed: {err}", "seconds": []}
                break
    finally:
        if w.proc.poll() is None:
            w.close()


def run_profile(args) -> dict:
    """Where geomprobe's time goes: run_batch's parts, against the plain backbone forward of the same
    model in the same process, taken in turn (order alternating)."""
    out: dict = {}
    w = Worker("profile", args.model_dir)
    try:
        w.read()
        for workload in args.workloads:
            rows = []
            for index in range(args.profile_repeats[workload] + 1):
                reply = w.request(cmd="run", workload=workload, plain_first=index % 2 == 0)
                label = "warm-up" if index == 0 else f"{index}/{args.profile_repeats[workload]}"
                log(f"[profile {workload} {label}] plain backbone {reply['plain']:.2f} s, "
                    f"run_batch {reply['geomprobe']:.2f} s")
                if index:
                    rows.append(reply)
            out[workload] = rows
    finally:
        w.close()
    return out


def profile_table(profile: dict) -> str:
    rows = ["| workload | part | median s per call | share of run_batch |", "|---|---|---:|---:|"]
    for workload, replies in profile.items():
        total = statistics.median(r["geomprobe"] for r in replies)
        plain = statistics.median(r["plain"] for r in replies)
        parts = {name: statistics.median(r["parts"][name] for r in replies) for name in PartTimer.PARTS}
        backbone = parts["backbone forward"]
        other = statistics.median(r["geomprobe"] - sum(r["parts"][k] for k in ("backbone forward", "unembed final rows",
                                                                              "next-token entropy"))
                                  for r in replies)
        model_only = statistics.median(r["parts"]["backbone forward"] - r["parts"]["attention: final-row entropy"]
                                       - r["parts"]["value hooks"] for r in replies)
        lines = [("run_batch total", total), ("  backbone forward (all below)", backbone),
                 ("    attention: SDPA", parts["attention: SDPA"]),
                 ("    attention: final-row entropy (geomprobe)", parts["attention: final-row entropy"]),
                 ("    value hooks (geomprobe)", parts["value hooks"]),
                 ("    rest of the model (MLP, projections, norms, rotary)", model_only - parts["attention: SDPA"]),
                 ("  unembed final rows", parts["unembed final rows"]),
                 ("  next-token entropy", parts["next-token entropy"]),
                 ("  stacking into numpy, setup", other),
                 ("plain backbone forward, same process (reference)", plain)]
        for name, value in lines:
            rows.append(f"| {workload} | {name} | {value:.4f} | {100 * value / total:.1f}% |")
        rows.append(f"| {workload} | mask passed to attention | {', '.join(replies[0]['mask'])} | |")
    return "\n".join(rows)


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarise(results: dict) -> None:
    """Medians and ratios to the hf baseline, in place."""
    base = results["variants"].get("hf", {})
    for variant, per_workload in results["variants"].items():
        for workload, entry in per_workload.items():
            if not entry.get("seconds"):
                continue
            entry["median_s"] = statistics.median(entry["seconds"])
            entry["median_cpu_s"] = statistics.median(entry["cpu_seconds"])
            entry["median_peak_increase_mib"] = _median(entry["peak_increase_mib"])
            entry["max_peak_mib"] = max(entry["peak_mib"])
            ref = base.get(workload)
            if ref and ref.get("seconds"):
                entry["time_ratio"] = entry["median_s"] / ref["median_s"]
                entry["cpu_ratio"] = entry["median_cpu_s"] / ref["median_cpu_s"]
                if entry.get("hf_alongside_seconds"):  # tl: against the hf calls made alongside it
                    entry["hf_alongside_median_s"] = statistics.median(entry["hf_alongside_seconds"])
                    entry["time_ratio"] = entry["median_s"] / entry["hf_alongside_median_s"]
                    entry["cpu_ratio"] = entry["median_cpu_s"] / statistics.median(entry["hf_alongside_cpu_seconds"])
                entry["mem_ratio"] = entry["median_peak_increase_mib"] / ref["median_peak_increase_mib"]
                if variant in SDPA_VARIANTS and len(ref["seconds"]) == len(entry["seconds"]):
                    entry["paired_ratios"] = [a / b for a, b in zip(entry["seconds"], ref["seconds"])]


def _range(values, digits=0):
    values = [v for v in values if v is not None]
    if len(values) < 2:
        return ""
    return f" [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def _fmt(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def table(results: dict) -> str:
    rows = ["| workload | variant | n | wall s | wall / hf | cpu s | cpu / hf | peak +MiB | peak / hf | peak RSS MiB |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    order = [v for v in ("hf", "hf-backbone", "geomprobe", "tl") if v in results["variants"]]
    for workload in results["workloads"]:
        for variant in order:
            entry = results["variants"][variant].get(workload)
            if entry is None:
                continue
            if entry.get("skipped"):
                rows.append(f"| {workload} | {variant} | 0 | {entry['skipped']} | | | | | | |")
                continue
            base = variant == "hf"
            ratio = "1" if base else f"{_fmt(entry.get('time_ratio'))}{_range(entry.get('paired_ratios', []), 2)}"
            rows.append(f"| {workload} | {variant} | {len(entry['seconds'])} | {entry['median_s']:.2f} | {ratio} "
                        f"| {entry['median_cpu_s']:.2f} | {'1' if base else _fmt(entry.get('cpu_ratio'))} "
                        f"| {entry['median_peak_increase_mib']:.0f}{_range(entry['peak_increase_mib'])} "
                        f"| {'1' if base else _fmt(entry.get('mem_ratio'))} | {entry['max_peak_mib']:.0f} |")
    return "\n".join(rows)


def verdict(results: dict) -> list[str]:
    lines = []
    for workload in results["workloads"]:
        entry = results["variants"].get("geomprobe", {}).get(workload)
        if not entry or "time_ratio" not in entry:
            continue
        ok_t, ok_m = entry["time_ratio"] <= TARGET_TIME, entry["mem_ratio"] <= TARGET_MEM
        lines.append(f"{workload}: geomprobe wall time {entry['time_ratio']:.3f}x hf (target <= {TARGET_TIME}: "
                     f"{'met' if ok_t else 'MISSED'}), peak memory {entry['mem_ratio']:.3f}x hf "
                     f"(target <= {TARGET_MEM}: {'met' if ok_m else 'MISSED'})")
        backbone = results["variants"].get("hf-backbone", {}).get(workload)
        if backbone and backbone.get("seconds") and len(backbone["seconds"]) == len(entry["seconds"]):
            paired = [g / b for g, b in zip(entry["seconds"], backbone["seconds"])]
            lines.append(f"{'':{len(workload)}}  against hf-backbone (same forward, no full unembedding): wall "
                         f"{entry['median_s'] / backbone['median_s']:.3f}x{_range(paired, 2)}, peak memory "
                         f"{entry['median_peak_increase_mib'] / backbone['median_peak_increase_mib']:.2f}x")
    return lines


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 8x64 only, hf / geomprobe / tl, warm-up + 1 measured call each (<2 min)")
    parser.add_argument("--padded", action="store_true", help="also run the right-padded 8x64 workload")
    parser.add_argument("--skip", nargs="*", default=[], choices=[*SDPA_VARIANTS, "tl"],
                        help="variants to leave out")
    parser.add_argument("--profile", action="store_true",
                        help="also time geomprobe's parts (final-row entropy, hooks, unembedding) in a worker "
                             "of its own")
    parser.add_argument("--profile-only", action="store_true", help="only the --profile part")
    parser.add_argument("--model-dir", type=Path,
                        help="reuse (or build into) this directory instead of a temporary one")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.profile_only:
        args.profile = True
        args.skip = [*SDPA_VARIANTS, "tl"]
    if args.quick:
        args.workloads = ["8x64"]
        args.skip = sorted(set(args.skip) | {"hf-backbone"})
        args.repeats = {"8x64": 1}
        args.tl_repeats = {"8x64": 1}
        args.profile_repeats = {"8x64": 2}
    else:
        args.workloads = ["8x64", "1x2048"] + (["8x64-padded"] if args.padded else [])
        # calls after the warm-up (each also measures memory)
        args.repeats = {"8x64": 4, "1x2048": 3, "8x64-padded": 3}
        args.tl_repeats = {"8x64": 3, "1x2048": 1, "8x64-padded": 2}
        args.profile_repeats = {"8x64": 4, "1x2048": 2, "8x64-padded": 2}
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker == "profile":
        profile_worker(str(args.model_dir))
        return 0
    if args.worker:
        worker(args.worker, str(args.model_dir))
        return 0
    started = time.perf_counter()
    temp = None
    if args.model_dir is None:
        temp = tempfile.mkdtemp(prefix="geomprobe-bench-")
        args.model_dir = Path(temp) / "pythia-410m-shaped"
    profile = None
    try:
        if not (args.model_dir / "config.json").exists():
            log(f"[build] random Pythia-410M-shaped GPT-NeoX -> {args.model_dir}")
            t0 = time.perf_counter()
            build_model(args.model_dir)
            log(f"[build] {time.perf_counter() - t0:.1f} s")
        results = run_benchmark(args)
        if args.profile:
            profile = run_profile(args)
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    summarise(results)
    results["profile"] = profile
    from importlib.metadata import version

    results["env"] = {"python": platform.python_version(), "torch": version("torch"),
                      "transformers": version("transformers"), "transformer_lens": version("transformer-lens"),
                      "cpus": os.cpu_count(), "threads": THREADS, "machine": platform.machine(),
                      "date": date.today().isoformat()}
    results["command"] = " ".join([".venv/bin/python", "benchmarks/extraction_overhead.py", *sys.argv[1:]])
    results["total_s"] = time.perf_counter() - started
    env = results["env"]
    print()
    print(f"geomprobe extraction overhead: Pythia-410M-shaped GPT-NeoX (random), float32, CPU, torch threads {THREADS}")
    print(f"torch {env['torch']}, transformers {env['transformers']}, transformer-lens {env['transformer_lens']}, "
          f"{env['cpus']} CPUs")
    print()
    print(table(results))
    print()
    print("n: calls measured after the warm-up. wall s, cpu s (the worker process's CPU time), peak +MiB: medians.")
    print("wall / hf: ratio of medians; [brackets]: range of the per-round ratios. hf, hf-backbone and geomprobe")
    print("  take turns call by call; tl runs afterwards, taking turns with hf, and its ratios are to those hf calls.")
    print("peak +MiB: peak RSS during one call minus RSS just before it (model loaded, warmed up), [range];")
    print("  peak RSS MiB: the largest absolute peak, model weights included.")
    for line in verdict(results):
        print(line)
    if args.quick:
        print("(--quick: one call per variant, a smoke run; on a shared machine a single call can be off by 50%,"
              " so take verdicts from the full run)")
    if profile:
        print()
        print("Where geomprobe's time goes (run_batch, timers around its parts):")
        print(profile_table(profile))
    print(f"\ntotal {results['total_s']:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
