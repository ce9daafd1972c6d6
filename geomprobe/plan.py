"""Memory and time planning: what a run will cost, before any weights are loaded.

    from geomprobe.plan import plan, preflight, recommend_batch_size
    p = plan("mistral-7b", "sula", dtype="bfloat16", device="cuda", device_memory=80 * 2**30,
             device_name="NVIDIA H100 80GB HBM3")
    print("\\n".join(p.lines()))          # every figure with how it was computed
    p.weights_bytes, p.activation_bytes, p.n_passes, p.time_s, p.fits, p.why
    recommend_batch_size(p)               # the largest power of two <= 64 that fits (CUDA; 8 on a CPU)

Everything is offline and cheap: no weights are read and nothing is downloaded. The shapes come
from geomprobe.models.published (hub aliases: config.json fields and the published parameter
count), the built-in tiny models' and wind tunnels' own configs, a local directory's config.json,
or a hub id's config.json in the local Hugging Face cache. Parameters are counted in groups by
formula (embeddings, the untied unembedding, linear weights, fused expert weights, norms and
biases); the formulas reproduce every alias's published total exactly (tests/test_plan.py) and the
meta-device count of the built-in models.

What is estimated, and how (each figure carries its formula in `Plan.lines()`):

- weights: parameters x bytes of the dtype (float32 4, bfloat16/float16 2). --quantize 8bit
  (bitsandbytes LLM.int8): the nn.Linear weights of the blocks 1 byte each plus a float32 scale per
  output row, everything else in the dtype. 4bit (nf4, as geomprobe.models.loading asks for it:
  blocks of 64, no double quantisation): 0.5 byte per linear weight plus a float32 absmax per block
  (1/16 byte a weight; double quantisation would make it about 1/64), everything else in the dtype.
  The unembedding is never quantised. transformers >= 5 keeps Mixtral's experts as fused 3-D
  parameters, which bitsandbytes does not quantise (it replaces nn.Linear modules only), so there
  the experts, 97% of Mixtral's weights, stay in the dtype; all experts are resident.
- activations (one batch): geomprobe's forward runs SDPA plus a recomputed final query row and never
  forms [batch, T, vocab] logits (the unembedding reads the final position only), so per prompt of
  T tokens about T x (4 d_model + (2 heads + 2 kv_heads) d_head + 3 d_ff (gated) or 2 d_ff) in the
  dtype, plus the mask T^2 bytes; on a CPU the math SDPA kernel also forms the [heads, T, T] scores
  and probabilities (2 heads T^2 in the dtype); plus the final-row capture of a layer (the keys
  repeated per query head in float32, heads x T x d_head x 4), the per-layer final-token readouts
  (layers x readout width x 4 bytes) and the final position's logits (3 x vocab x 4). The longest
  batch sets the peak (extraction runs the longest prompts first).
- passes: one pass is one sweep over a prompt set; each suite's sweeps are counted from its options
  as the suite runs them, by the suite's cost model (below); untrained null models (--null init:N) are built
  from the config at the run's dtype, never quantised, and are resident next to the model while
  they run (on the CPU under --device-map).
- time: FLOPs per sweep = 2 x active matmul parameters x tokens + 2 x vocab x d_model per prompt
  (the final-position unembedding) + the attention's 2 x 2 x heads x d_head x T^2 / 2 per prompt and
  layer; at a device throughput (CUDA: a table of dense bf16 / fp32 TFLOP/s by device name, times
  an efficiency of 0.35; CPU: the machine's recorded matmul rate (geomprobe.timing, measured once
  for about a second), times 0.7, calibrated on a
  4-layer Pythia-410M-width model on 2 cores) and, as a lower bound for small
  batches, one read of the weights per forward call at the device's memory bandwidth. The range is
  [max(compute, memory), 2 x (compute + memory) + 1 ms per layer and batch]; loading and building
  models is added at assumed rates. That is each suite's estimate before calibration; where this
  machine has finished runs of a suite on a model within 10x the size (geomprobe.timing), the
  suite's time is its upper estimate times their median measured / estimated ratio, / and x 1.5.
- fits: weights + activations (+ on a CPU the process itself, PROCESS_BYTES: Python, torch and
  transformers, about 450 MiB) + max(10%, 1 GiB) against the device's free memory (CUDA
  mem_get_info; CPU: MemAvailable; --device-map: the visible GPUs plus the CPU), in every phase
  (the model alone; with a null model beside it; Pythia's step0 key baseline on the CPU).

A suite's cost model is a planner(ctx, options) -> SuitePlan, looked up in PLANNERS by suite name.
A built-in suite's lives in its folder, geomprobe/suites/<name>/plan.py (a "plan" face), which
ends with register_planner("<name>", plan_<name>); the faces are imported, through
geomprobe.suites.base.load_faces("plan"), the first time anything here reads PLANNERS
(planners()), so this module never imports them itself. A plug-in suite calls register_planner
itself, or, if it is a package, gives itself a plan.py as the built-ins do; a suite without a
planner is listed as not planned. This module holds the machinery the planners share: the
architecture, token counting (TokenCounter, corpus_texts), Sweep / Load / SuitePlan and the
PlanContext (ctx) a planner reads; config_of lets one suite's planner read another's options
when they are planned together (the ablation reuses the sula suite's axes).

`preflight(model_spec, run_config, suite_configs, device)` is the runner's cheap check (it never
raises); `geomprobe plan` prints the same Plan.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from geomprobe import families
from geomprobe.errors import ConfigError

GiB = 2**30
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
CUDA_EFFICIENCY = 0.35  # achieved / peak dense throughput of a forward pass on a GPU
CPU_EFFICIENCY = 0.7  # achieved / measured big-matmul rate of a forward pass on a CPU
QUANT_SLOWDOWN = {None: 1.0, "4bit": 0.5, "8bit": 0.25}  # bitsandbytes kernels against dense ones (assumed)
MARGIN_FRACTION, MARGIN_MIN = 0.10, 1 * GiB
BLOCK_4BIT = 64  # bitsandbytes nf4 block size; one float32 absmax per block (no double quantisation)
DISK_BYTES_PER_S = (0.5e9, 2e9)  # loading weights from local disk (assumed range)
PCIE_BYTES_PER_S = 10e9  # host -> GPU copies (offloaded layers, null models built on the CPU)
OVERHEAD_S_PER_LAYER_BATCH = 1e-3  # python, hooks and small kernels, per layer and forward call (upper end)
# A run's fixed start before its first forward: Python, torch, transformers and geomprobe imported,
# the preflight plan, the run directory and manifest written. The imports alone took 5.8-6.7 s of
# wall time on this project's 2-core machine under load (4.0-4.4 s of CPU); benchmarks/RESULTS.md
STARTUP_S = (3.0, 10.0)
MAX_BATCH = 64
# The process itself on a CPU run: Python 3.11, torch 2.13, transformers 5.24 with the model's
# modeling code imported, the tokenizer and geomprobe: 439-456 MiB of RSS on Linux x86-64 before any
# weight is read (benchmarks/null_memory.py measures it as its baseline)
PROCESS_BYTES = 450 * 2**20
CPU_DEFAULT_BATCH = 8

# name fragment (lowercase, first match wins) -> (dense bf16 TFLOP/s, fp32 TFLOP/s, fp16 TFLOP/s, memory GB/s).
# PyTorch keeps TF32 off for float32 matmuls by default, so float32 runs at the fp32 rate. Cards without
# bfloat16 tensor cores (T4, V100) run bfloat16 at about their fp32 rate.
GPU_TABLE = (
    ("h200", 989.0, 67.0, 989.0, 4800.0),
    ("h100 pcie", 756.0, 51.0, 756.0, 2000.0),
    ("h100", 989.0, 67.0, 989.0, 3350.0),  # SXM (H100 80GB HBM3)
    ("a100-sxm4-80gb", 312.0, 19.5, 312.0, 2039.0),
    ("a100 80gb", 312.0, 19.5, 312.0, 1935.0),
    ("a100", 312.0, 19.5, 312.0, 1555.0),
    ("l40s", 362.0, 91.6, 362.0, 864.0),
    ("a10g", 125.0, 31.2, 125.0, 600.0),
    ("a10", 125.0, 31.2, 125.0, 600.0),
    ("4090", 165.0, 82.6, 165.0, 1008.0),
    ("3090", 71.0, 35.6, 71.0, 936.0),
    ("a6000", 155.0, 38.7, 155.0, 768.0),
    ("l4", 121.0, 30.3, 121.0, 300.0),
    ("t4", 8.1, 8.1, 65.0, 320.0),
    ("v100", 15.7, 15.7, 125.0, 900.0),
)
UNKNOWN_GPU = (100.0, 20.0, 100.0, 1000.0)


# ----------------------------------------------------------------------------------------------
# The architecture: shapes and parameter groups from config.json fields (no torch, no transformers)

# from the family table (geomprobe.families): config class -> model type, the llama layout's types,
# tokenizers that prepend a BOS token
CONFIG_CLASS_TYPES, LLAMA_LIKE, BOS_TYPES = families.CONFIG_CLASS_TYPES, families.LLAMA_LIKE, families.BOS_TYPES


@dataclass(frozen=True)
class Architecture:
    """What planning needs of a model: its shape and its parameters in groups."""

    model_type: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_model: int
    d_ff: int
    vocab: int
    context: int | None
    n_experts: int | None
    experts_per_token: int | None
    gated: bool  # SwiGLU MLP (gate and up projections)
    causal: bool  # a language model (False: a BERT-style encoder, no unembedding)
    embedding: int  # input embeddings (token, and position / type for BERT)
    lm_head: int  # the unembedding when it is not tied to the input embedding (with its bias)
    linear: int  # nn.Linear weights of the blocks (quantisable)
    linear_rows: int  # their output rows (8-bit scales)
    experts: int  # fused 3-D expert weights (Mixtral under transformers >= 5)
    small: int  # norms, biases, routers
    n_params: int  # the total: published where known, else the sum of the groups
    source: str  # where the shape comes from

    @property
    def counted(self) -> int:
        return self.embedding + self.lm_head + self.linear + self.experts + self.small

    @property
    def n_params_active(self) -> int:
        """Parameters a token passes through: for a mixture of experts, top-k of the experts."""
        if not self.n_experts:
            return self.n_params
        return self.n_params - round(self.experts * (self.n_experts - self.experts_per_token) / self.n_experts)

    @property
    def matmul_params(self) -> int:
        """Active weights multiplied at every position (embeddings and the unembedding excluded)."""
        experts = self.experts if not self.n_experts else self.experts * self.experts_per_token / self.n_experts
        return int(self.linear + experts)

    def shape(self) -> dict:
        return {"n_layers": self.n_layers, "n_heads": self.n_heads, "n_kv_heads": self.n_kv_heads,
                "d_head": self.d_head, "d_model": self.d_model, "d_ff": self.d_ff, "vocab": self.vocab,
                "context": self.context, "n_experts": self.n_experts, "experts_per_token": self.experts_per_token}


def parameter_groups(fields: dict) -> dict:
    """config.json fields -> the parameter groups of the transformers model built from them (the
    defaults of the transformers config classes where a field is absent)."""
    c = fields
    t = c["model_type"]
    D, L, H, V = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["vocab_size"]
    F = c.get("intermediate_size") or 4 * D
    KV = c.get("num_key_value_heads") or H
    dh = c.get("head_dim") or D // H
    tied = bool(c.get("tie_word_embeddings", False))
    g = {"embedding": V * D, "lm_head": 0 if tied else V * D, "linear": 0, "linear_rows": 0, "experts": 0, "small": 0,
         "gated": False, "causal": True, "d_ff": F, "n_kv_heads": KV, "d_head": dh, "n_experts": None,
         "experts_per_token": None}
    if t == "gpt_neox":
        bias = bool(c.get("attention_bias", True))
        g["linear"] = L * (4 * D * D + 2 * D * F)
        g["linear_rows"] = L * (5 * D + F)
        g["small"] = L * (4 * D + (4 * D if bias else 0) + F + D) + 2 * D
    elif t in LLAMA_LIKE:
        g["gated"] = True
        attn, attn_rows = D * dh * (2 * H + 2 * KV), dh * (H + 2 * KV) + D
        row = families.FAMILIES[t]
        if row.qkv_bias:
            bias = dh * (H + 2 * KV)
        elif c.get("attention_bias", False):  # q, k, v and o biases (Llama, Qwen3)
            bias = dh * (H + 2 * KV) + D
        else:
            bias = 0
        bias += 2 * dh if row.key_norm else 0  # the query and key RMSNorm weights (per head, shared)
        mlp_bias = 2 * F + D if t == "llama" and c.get("mlp_bias", False) else 0
        g["linear"], g["linear_rows"] = L * attn, L * attn_rows
        if t == "mixtral":
            E = c.get("num_local_experts", 8)
            g.update(n_experts=E, experts_per_token=c.get("num_experts_per_tok", 2))
            g["experts"] = L * E * 3 * D * F
            g["small"] = L * (2 * D + bias + D * E) + D
        else:
            g["linear"] += L * 3 * D * F
            g["linear_rows"] += L * (2 * F + D)
            g["small"] = L * (row.block_norms * D + bias + mlp_bias) + D
    elif t == "phi":
        attn = D * dh * (2 * H + 2 * KV)
        g["linear"] = L * (attn + 2 * D * F)
        g["linear_rows"] = L * (dh * (H + 2 * KV) + D + F + D)
        qk_norm = 4 * dh if c.get("qk_layernorm", False) else 0
        g["small"] = L * (dh * (H + 2 * KV) + D + F + D + 2 * D + qk_norm) + 2 * D
        g["lm_head"] += V  # the unembedding's bias
    elif t == "bert":
        g["causal"], g["lm_head"] = False, 0
        g["embedding"] = (V + c.get("max_position_embeddings", 512) + c.get("type_vocab_size", 2)) * D
        g["linear"] = L * (4 * D * D + 2 * D * F) + D * D  # the pooler is a linear layer too
        g["linear_rows"] = L * (5 * D + F) + D
        g["small"] = 2 * D + L * (4 * D + F + D + 4 * D) + D
    else:
        raise ConfigError(f"planning knows no parameter layout for model type '{t}'")
    return g


def architecture_from_fields(fields: dict, n_params: int | None = None, source: str = "") -> Architecture:
    g = parameter_groups(fields)
    counted = g["embedding"] + g["lm_head"] + g["linear"] + g["experts"] + g["small"]
    return Architecture(
        model_type=fields["model_type"], n_layers=fields["num_hidden_layers"], n_heads=fields["num_attention_heads"],
        n_kv_heads=g["n_kv_heads"], d_head=g["d_head"], d_model=fields["hidden_size"], d_ff=g["d_ff"],
        vocab=fields["vocab_size"], context=fields.get("max_position_embeddings"), n_experts=g["n_experts"],
        experts_per_token=g["experts_per_token"], gated=g["gated"], causal=g["causal"], embedding=g["embedding"],
        lm_head=g["lm_head"], linear=g["linear"], linear_rows=g["linear_rows"], experts=g["experts"],
        small=g["small"], n_params=n_params if n_params is not None else counted, source=source)


@dataclass(frozen=True)
class ModelTarget:
    """A model spec resolved for planning, without loading anything."""

    spec: str
    name: str
    kind: str  # hub | builtin | windtunnel | local
    hub_id: str | None
    arch: Architecture
    windtunnel: dict | None = None  # {"task", "task_options", "cached", "dir"} of a wind-tunnel model
    pythia: bool = False  # the family publishes step0 (Pythia)
    tokenizer_dir: str | None = None  # where a tokenizer is at hand without downloading

    @property
    def family(self) -> str:
        from geomprobe.models.registry import FAMILY_OF_TYPE

        return FAMILY_OF_TYPE.get(self.arch.model_type, self.arch.model_type)


def _read_config(path: Path) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ConfigError(f"{path} cannot be read as a model configuration ({error})") from None


def _fields_of_config_json(config: dict, where: str) -> dict:
    if "model_type" not in config:
        raise ConfigError(f"{where} has no model_type")
    if config["model_type"] not in CONFIG_CLASS_TYPES.values():
        raise ConfigError(f"{where}: model type '{config['model_type']}' is not one geomprobe plans for "
                          f"({', '.join(CONFIG_CLASS_TYPES.values())})")
    return config


def _meta_count(config_dir: Path) -> int | None:
    """The parameter count of the model built on the meta device from a local config.json (exact,
    for architectures the formulas may not cover); None when transformers cannot build it."""
    try:
        import transformers

        from geomprobe.models.published import build_on_meta, count_parameters

        config = transformers.AutoConfig.from_pretrained(str(config_dir), local_files_only=True)
        return count_parameters(build_on_meta(config))
    except Exception:  # noqa: BLE001 - a cross-check only: the formulas stand without it
        return None


def _windtunnel_fields(task: str) -> tuple[dict, dict]:
    """(config fields, wind-tunnel info) of a built-in wind tunnel: its cached config.json, or the
    recipe's GPT-NeoX (geomprobe.windtunnel.models.gpt_neox) when it is not trained yet."""
    from geomprobe.windtunnel.builtin import RECIPES, recipe, windtunnel_dir, windtunnel_info

    directory = windtunnel_dir(task)
    config = recipe(task)
    cached = (directory / "config.json").exists() and (directory / "windtunnel.json").exists()
    if cached:
        info = windtunnel_info(directory)
        fields = _read_config(directory / "config.json")
    else:
        from geomprobe.windtunnel.tasks import make_task

        info = {"task": task, "task_options": config.task_options}
        made = make_task(task, **config.task_options)
        spec = config.spec
        fields = {"model_type": "gpt_neox", "hidden_size": spec.d_model, "num_hidden_layers": spec.n_layers,
                  "num_attention_heads": spec.n_heads, "intermediate_size": spec.d_mlp, "vocab_size": made.vocab_size,
                  "max_position_embeddings": max(2048, made.max_tokens()), "tie_word_embeddings": False,
                  "attention_bias": True}
    steps_per_s = RECIPES[task][1]
    return fields, {"task": info["task"], "task_options": info.get("task_options", {}), "cached": cached,
                    "dir": str(directory), "train_s": None if cached else (config.steps or 0) / steps_per_s}


def resolve_target(spec: str) -> ModelTarget:
    """An alias, alias@revision, a local model directory, or a hub id whose config.json is in the
    local Hugging Face cache -> its shape, without loading or downloading anything."""
    from geomprobe.models.gguf import PACKAGED, cached_packaged, ensure_gguf, is_gguf_path
    from geomprobe.models.published import PUBLISHED
    from geomprobe.models.registry import MODELS, closest_aliases, parse_model_spec

    name, _ = parse_model_spec(str(spec))
    info = MODELS.get(name)
    if info is not None:
        if info.kind == "builtin":
            from geomprobe.models.builtin import _COMMON, TINY_MODELS, _fingerprint
            from geomprobe.paths import cache_dir

            tiny = TINY_MODELS[name]
            fields = {"model_type": CONFIG_CLASS_TYPES[tiny.config_class], **_COMMON, **tiny.overrides}
            directory = cache_dir() / "models" / f"{name}-{_fingerprint(name)}"
            return ModelTarget(spec, name, "builtin", None,
                               architecture_from_fields(fields, source=f"built-in {tiny.config_class} fields"),
                               tokenizer_dir=str(directory) if (directory / "config.json").exists() else None)
        if info.kind == "windtunnel":
            task = info.hub_id.split(":", 1)[1]
            fields, wt = _windtunnel_fields(task)
            source = f"{wt['dir']}/config.json" if wt["cached"] else f"the {task} wind tunnel's training recipe"
            return ModelTarget(spec, name, "windtunnel", None, architecture_from_fields(fields, source=source),
                               windtunnel=wt, tokenizer_dir=wt["dir"] if wt["cached"] else None)
        entry = PUBLISHED[name]
        arch = architecture_from_fields(entry.config, entry.n_params,
                                        source=f"published config.json of {entry.hub_id}, published parameter count")
        tokenizer_dir = _hf_cached_dir(entry.hub_id)
        if tokenizer_dir is None and name in PACKAGED:  # a packaged GGUF already dequantized into the cache
            converted = cached_packaged(name)
            tokenizer_dir = None if converted is None else str(converted)
        return ModelTarget(spec, name, "hub", entry.hub_id, arch, pythia=name.startswith("pythia-"),
                           tokenizer_dir=tokenizer_dir)
    path = Path(name).expanduser()
    if is_gguf_path(name):  # planned on its dequantized folder (converted once, on first use)
        path = ensure_gguf(path)
    if path.is_dir():
        if not (path / "config.json").exists():
            raise ConfigError(f"'{name}' is a directory but has no config.json: point --model at a Hugging Face "
                              "model directory (save_pretrained output)")
        fields = _fields_of_config_json(_read_config(path / "config.json"), f"{path}/config.json")
        counted = _meta_count(path)  # exact, whatever the formulas cover
        source = f"{path.resolve()}/config.json" + (", parameters counted on the meta device" if counted else "")
        arch = architecture_from_fields(fields, n_params=counted, source=source)
        from geomprobe.windtunnel.builtin import windtunnel_info

        wt_info = windtunnel_info(path)
        wt = None if wt_info is None else {"task": wt_info["task"], "task_options": wt_info.get("task_options", {}),
                                           "cached": True, "dir": str(path.resolve()), "train_s": None}
        return ModelTarget(spec, name, "local", None, arch, windtunnel=wt, tokenizer_dir=str(path.resolve()))
    if name.count("/") == 1 and not name.startswith((".", "/", "~")):
        directory = _hf_cached_dir(name)
        if directory is None:
            raise ConfigError(f"{name}: no shape known offline (its config.json is not in the local Hugging Face "
                              "cache): plan with an alias from `geomprobe models` or a local model directory")
        fields = _fields_of_config_json(_read_config(Path(directory) / "config.json"), f"{name} config.json")
        return ModelTarget(spec, name, "hub", name,
                           architecture_from_fields(fields, source=f"{name} config.json (Hugging Face cache)"),
                           pythia="pythia" in name.lower() and fields["model_type"] == "gpt_neox",
                           tokenizer_dir=directory)
    hint = closest_aliases(name)
    raise ConfigError(f"unknown model '{name}'" + (f" (did you mean {', '.join(hint)}?)" if hint else "")
                      + ": use an alias from `geomprobe models`, a local model directory, or a hub id whose "
                        "config.json is in the local cache")


def _hf_cached_dir(hub_id: str) -> str | None:
    """The snapshot folder holding hub_id's config.json in the local Hugging Face cache, or None
    (a cache lookup only: never a download)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(hub_id, "config.json")
    except Exception:  # noqa: BLE001 - an absent or unreadable cache is simply no cache
        return None
    return str(Path(found).parent) if isinstance(found, str) else None


def cached_tokenizer(target: ModelTarget, quiet: bool = True):
    """The model's tokenizer when it is at hand without building, training or downloading anything
    (a local directory, a built or trained built-in, the Hugging Face cache), else None. Wind tunnels
    need none: their word-level count is exact. quiet: set transformers' logging to errors only
    (the command line's choice; the runner's preflight leaves the caller's logging alone)."""
    if target.tokenizer_dir is None or target.windtunnel is not None:
        return None
    try:
        from transformers import AutoTokenizer
        from transformers.utils import logging

        if quiet:
            logging.set_verbosity_error()
        return AutoTokenizer.from_pretrained(target.tokenizer_dir, local_files_only=True)
    except Exception:  # noqa: BLE001 - without one the lengths are estimated
        return None


# ----------------------------------------------------------------------------------------------
# Weights


def _experts_quantised() -> bool:
    """bitsandbytes replaces nn.Linear modules only: transformers >= 5 stores a mixture's experts as
    fused 3-D parameters, which stay unquantised; transformers 4 kept them as nn.Linear."""
    try:
        from importlib.metadata import version

        return int(version("transformers").split(".")[0]) < 5
    except Exception:  # noqa: BLE001
        return False


def weights_bytes(arch: Architecture, dtype: str, quantize: str | None = None) -> tuple[int, str]:
    """(bytes of the resident weights, how they were computed)."""
    b = DTYPE_BYTES[dtype]
    if quantize is None:
        return arch.n_params * b, f"{arch.n_params:,} params x {b} bytes ({dtype})"
    quantised, rows = arch.linear, arch.linear_rows
    experts_note = ""
    if arch.experts:
        if _experts_quantised():
            quantised += arch.experts
            rows += arch.experts // arch.d_model  # about one row per d_model weights
        else:
            experts_note = f"; the {arch.experts:,} fused expert weights stay in {dtype} (transformers >= 5)"
    rest = arch.n_params - quantised
    if quantize == "8bit":
        total = quantised + 4 * rows + rest * b
        how = (f"{quantised:,} linear weights x 1 byte + {rows:,} float32 row scales + {rest:,} other params "
               f"(embeddings, unembedding, norms, biases) x {b} bytes ({dtype}){experts_note}")
    else:
        blocks = -(-quantised // BLOCK_4BIT)
        total = quantised // 2 + 4 * blocks + rest * b
        how = (f"{quantised:,} linear weights x 0.5 byte (nf4) + one float32 absmax per {BLOCK_4BIT} weights "
               f"(1/16 byte each; no double quantisation, as geomprobe loads it) + {rest:,} other params x {b} bytes "
               f"({dtype}){experts_note}")
    return int(total), how


# ----------------------------------------------------------------------------------------------
# Prompts and their lengths in tokens

_WORDS = re.compile(r"\w+")
_PUNCT = re.compile(r"[^\w\s]")
_WT_PIECES = re.compile(r"[^\s:,.?;]+|[:,.?;]")


@dataclass(frozen=True)
class Lengths:
    n: int
    mean: float
    max: int
    how: str  # "exact" | "tokenizer" | "estimated (...)"

    @property
    def total(self) -> float:
        return self.n * self.mean


def _prepends_bos(target: ModelTarget) -> bool:
    """Whether the target's tokenizer puts a BOS before every prompt, when the tokenizer is not at hand:
    a packaged model's measured fact (SmolLM2's GGUF tokenizer adds none, though Llama's do), else
    the family's (geomprobe.families Family.bos)."""
    from geomprobe.models.gguf import PACKAGED

    packaged = PACKAGED.get(target.name)
    return packaged.prepends_bos if packaged is not None else target.arch.model_type in BOS_TYPES


class TokenCounter:
    """Prompt lengths in tokens: a tokenizer's when one is at hand, the wind tunnels' word-level
    rule exactly, else an estimate: 1.3 tokens per word + 1 per punctuation mark + special tokens."""

    def __init__(self, target: ModelTarget, tokenizer=None, max_tokens: int | None = None):
        self.target, self.tokenizer, self.max_tokens = target, tokenizer, max_tokens
        if target.windtunnel is not None:
            self.how = "exact (word-level wind-tunnel tokenizer, with <bos>)"
        elif tokenizer is not None:
            self.how = "the model's tokenizer"
        else:
            special = 2 if target.arch.model_type == "bert" else int(_prepends_bos(target))
            self.special = special
            self.how = ("estimated: 1.3 tokens per word + 1 per punctuation mark" +
                        (f" + {special} special" if special else ""))

    @property
    def estimated(self) -> bool:
        return self.how.startswith("estimated")

    def count(self, text: str) -> int:
        if self.target.windtunnel is not None:
            n = len(_WT_PIECES.findall(text)) + 1
        elif self.tokenizer is not None:
            n = len(self.tokenizer(text)["input_ids"])
        else:
            n = math.ceil(1.3 * len(_WORDS.findall(text)) + len(_PUNCT.findall(text))) + self.special
        return max(1, n if self.max_tokens is None else min(n, self.max_tokens))

    def lengths(self, texts, n: int | None = None) -> Lengths:
        """Lengths of `texts`; n: the number of prompts they stand for (a sample of a larger set)."""
        counts = [self.count(t) for t in texts]
        if not counts:
            return Lengths(n or 0, 0.0, 0, self.how)
        return Lengths(n if n is not None else len(counts), sum(counts) / len(counts), max(counts), self.how)


@functools.cache
def corpus_texts(name: str) -> tuple[str, ...]:
    from geomprobe.corpora import corpus_path

    path = corpus_path(name)
    return tuple(json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip())


@functools.cache
def _demo_texts() -> tuple[str, ...]:
    from geomprobe.models.builtin import demo_prompts_path

    return tuple(json.loads(line)["text"] for line in demo_prompts_path().read_text().splitlines() if line.strip())


def _user_texts(path) -> tuple[str, ...]:
    from geomprobe.prompts import read_prompts

    return tuple(p.text for p in read_prompts(path))


# ----------------------------------------------------------------------------------------------
# Sweeps, loads and suites


@dataclass
class Sweep:
    """One pass over a prompt set (repeat: identical passes, e.g. the ablation's conditions)."""

    what: str
    lengths: Lengths
    batch_size: int
    repeat: int = 1
    layers: int = 0  # layers whose final-token readouts are kept
    readout_width: int = 0  # floats per layer kept
    on: str = "model"  # "model" | "null" (an untrained copy: unquantised, on the CPU under --device-map)
    full_logits: bool = False  # the module computes [batch, T, vocab] logits (wind-tunnel scoring)
    blocks: float = 1.0  # the share of the decoder blocks a pass runs (prefix reuse: < 1)

    @property
    def n_prompts(self) -> int:
        return self.lengths.n * self.repeat

    @property
    def n_batches(self) -> int:
        return -(-self.lengths.n // self.batch_size) * self.repeat if self.lengths.n else 0

    @property
    def tokens(self) -> float:
        return self.lengths.total * self.repeat

    def to_dict(self) -> dict:
        return {"what": self.what, "n_prompts_per_pass": self.lengths.n, "passes": self.repeat,
                "n_prompts": self.n_prompts, "batch_size": self.batch_size, "n_batches": self.n_batches,
                "tokens_mean": round(self.lengths.mean, 2), "tokens_max": self.lengths.max,
                "tokens": round(self.tokens), "tokens_how": self.lengths.how, "on": self.on,
                "blocks": round(self.blocks, 4)}


@dataclass
class Load:
    """A model built or loaded beside the main one while a suite runs."""

    what: str
    kind: str  # "init" (built from the config) | "checkpoint" (read from disk or the hub)
    n_params: int
    bytes: int
    where: str  # "device" | "cpu"
    note: str = ""
    draws: int = 1  # init: times each weight is drawn (1 for --null init:N, 2 for init-legacy:N)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SuitePlan:
    name: str
    sweeps: list[Sweep] = field(default_factory=list)
    loads: list[Load] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None
    estimate_s: tuple[float, float] = (0.0, 0.0)  # (low, high) of its sweeps and loads, before calibration
    calibrated: dict | None = None  # geomprobe.timing.calibration + "time_s": its calibrated (low, high)

    @property
    def n_passes(self) -> int:
        return sum(s.repeat for s in self.sweeps)

    @property
    def n_prompts(self) -> int:
        return sum(s.n_prompts for s in self.sweeps)

    @property
    def n_batches(self) -> int:
        return sum(s.n_batches for s in self.sweeps)

    @property
    def tokens(self) -> float:
        return sum(s.tokens for s in self.sweeps)

    def passes(self, what: str) -> int:
        """Passes of the sweeps whose description starts with `what`."""
        return sum(s.repeat for s in self.sweeps if s.what.startswith(what))

    def to_dict(self) -> dict:
        return {"name": self.name, "skipped": self.skipped, "n_passes": self.n_passes, "n_prompts": self.n_prompts,
                "n_batches": self.n_batches, "tokens": round(self.tokens), "sweeps": [s.to_dict() for s in self.sweeps],
                "loads": [ld.to_dict() for ld in self.loads], "notes": self.notes, "estimate_s": list(self.estimate_s),
                "calibrated": self.calibrated}


class PlanContext:
    """What the suite planners share: the target, the run configuration, token counting, and the
    configs of every suite in the plan (config_of)."""

    def __init__(self, target: ModelTarget, run, counter: TokenCounter, tokenizer=None, configs=()):
        self.target, self.run, self.counter, self.tokenizer = target, run, counter, tokenizer
        self.configs = {c.suite: c for c in configs}  # the suites planned together, by name
        self.null_notes: dict[str, str] = {}  # suite -> what its untrained copies can decide
        self.arch = target.arch
        self._task = None

    @property
    def task(self):
        if self.target.windtunnel is None:
            return None
        if self._task is None:
            from geomprobe.windtunnel.tasks import make_task

            wt = self.target.windtunnel
            self._task = make_task(wt["task"], **wt.get("task_options", {}))
        return self._task

    @property
    def batch(self) -> int:
        return self.run.batch_size

    def config_of(self, suite: str):
        """The config of `suite` when it is planned together with the one being planned, else None
        (the ablation planner reuses the sula suite's axes)."""
        return self.configs.get(suite)

    def readout_width(self, readouts) -> int:
        a = self.arch
        widths = {"values": a.n_kv_heads * a.d_head, "z": a.n_heads * a.d_head, "resid": a.d_model,
                  "hidden": a.d_model}
        return sum(widths[r] for r in dict.fromkeys(readouts)) + a.n_heads  # + the attention entropies

    def layers(self, layers=None) -> int:
        return self.arch.n_layers if layers is None else len(layers)

    def user_prompts(self) -> Lengths | None:
        if not self.run.prompts:
            return None
        return self.counter.lengths(_user_texts(self.run.prompts))

    def windtunnel_prompts(self, n: int) -> Lengths:
        from geomprobe.windtunnel.prompts import task_prompts

        sample = task_prompts(self.task, n=min(n, 200), seed=self.run.seed)
        return self.counter.lengths([p.text for p in sample], n=n)

    def default_prompts(self, n_windtunnel: int = 200, corpus: str | None = None) -> tuple[Lengths, str]:
        """suite_prompts' choice: --prompts, a wind tunnel's task, a corpus, or the demo prompts."""
        user = self.user_prompts()
        if user is not None:
            return user, str(self.run.prompts)
        if self.task is not None:
            return self.windtunnel_prompts(n_windtunnel), f"windtunnel:{self.task.name} ({n_windtunnel} sequences)"
        if corpus is not None:
            return self.counter.lengths(corpus_texts(corpus)), f"corpus:{corpus}"
        return self.counter.lengths(_demo_texts()), "the built-in demo prompts"

    def nulls(self, options, suite: str) -> list:
        """The suite's null models as it will resolve them (NullOptions.null_specs), sized by the
        planner's parameter count."""
        text = options.null
        specs = options.null_specs(n_params=self.arch.n_params, run_seed=self.run.seed)
        if specs:
            from geomprobe.analysis.null_comparison import RANK_RULE_MIN, power_note

            stops = (getattr(options, "null_stop", False) and len(specs) >= RANK_RULE_MIN
                     and all(spec.kind == "init" for spec in specs) and suite != "ablation")
            self.null_notes[suite] = power_note(len(specs)) + (f" (--null {text}: chosen from the model's "
                                                               f"{self.arch.n_params / 1e6:.0f}M parameters)"
                                                               if "auto" in text else "") + (
                "; the copies stop once no decision can change (--null-stop: as few as 2 where the model is "
                "indistinguishable from them, all where it differs), so the figures here are the most they cost"
                if stops else "")
        for spec in specs:
            if spec.kind == "checkpoint" and spec.spec == "step0" and not self.target.pythia:
                raise ConfigError(f"{suite} suite: --null step0: {self.target.spec} has no published untrained "
                                  "checkpoint; use --null init:N or a checkpoint spec")
        return specs

    def null_loads(self, specs, weights_dtype_bytes: int) -> list[Load]:
        where = "cpu" if self.run.device_map is not None else "device"
        loads = []
        for spec in specs:
            kind = "init" if spec.kind == "init" else "checkpoint"
            what = f"null {spec.name}" + (f" ({spec.spec})" if spec.spec else "")
            legacy = kind == "init" and getattr(spec, "build", "legacy") == "legacy"
            note = ("loaded from the Hugging Face cache or the hub, never quantised" if kind != "init"
                    else "built from the config on the CPU, never quantised"
                    + ("; legacy build: every weight drawn twice" if legacy else ""))
            loads.append(Load(what, kind, self.arch.n_params, self.arch.n_params * weights_dtype_bytes, where, note,
                              draws=2 if legacy else 1))
        return loads


PLANNERS: dict = {}  # suite -> planner(ctx, options) -> SuitePlan; filled by the plan faces (planners())
_loading_faces = False


def planners() -> dict:
    """PLANNERS, after every suite folder's plan face is imported (geomprobe.suites.base.load_faces:
    each registers its planner)."""
    global _loading_faces
    if not _loading_faces:  # a face registering itself while the faces load does not load them again
        from geomprobe.suites.base import load_faces

        _loading_faces = True
        try:
            load_faces("plan")
        finally:
            _loading_faces = False
    return PLANNERS


def register_planner(suite: str, planner) -> None:
    """Give a suite a cost model: planner(ctx, options) -> SuitePlan (ctx: the PlanContext: ctx.arch,
    ctx.run, ctx.batch, ctx.default_prompts(), ctx.nulls(options, suite), ctx.config_of(other suite);
    see geomprobe.suites.extract.plan). A built-in suite's folder registers its own in plan.py; a
    suite without one is listed as not planned. Registering a name twice is a ValueError."""
    if suite in planners():
        raise ValueError(f"register_planner: the {suite} suite already has a planner")
    PLANNERS[suite] = planner


# ----------------------------------------------------------------------------------------------
# The device


@dataclass
class DeviceInfo:
    kind: str  # cpu | cuda | mps
    name: str
    memory: int | None  # bytes the model may use (free GPU memory, or available RAM; a device map: both)
    host_memory: int | None  # available CPU RAM
    flops: float  # achievable FLOP/s in the run's dtype (efficiency applied)
    bandwidth: float  # bytes/s
    how: str  # how memory and throughput were found
    gpu_memory: int | None = None  # the GPUs' share of `memory` under a device map


def host_memory_available() -> int | None:
    """Available RAM in bytes: /proc/meminfo MemAvailable, else psutil when installed, else None."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # noqa: BLE001 - psutil is optional
        return None


@functools.cache
def cpu_benchmark(dtype: str = "float32") -> tuple[float, float]:
    """(matmul FLOP/s in `dtype`, memory bandwidth bytes/s) of this CPU: the machine's recorded
    figures (geomprobe.timing: measured once, about a second, the first time a plan needs them, and
    read from the cache from then on), not a momentary benchmark that moves with the load."""
    from geomprobe.timing import cpu_rates

    rates = cpu_rates(dtype)
    return rates["flops"], rates["bandwidth"]


def cpu_rates_how(dtype: str = "float32") -> str:
    """Where the CPU figures came from, for the plan's 'how'."""
    from geomprobe.timing import cpu_rates

    rates = cpu_rates(dtype)
    when = "measured now" if rates.get("new") else f"recorded {rates['measured'][:10]}"
    return (f"this machine's {dtype} matmul rate ({when}; `geomprobe plan --recalibrate` measures again), "
            f"{rates['flops'] / 1e9:.0f} GFLOP/s")


def gpu_rates(name: str, dtype: str) -> tuple[float, float, str]:
    """(peak TFLOP/s in dtype, memory GB/s, which table row) for a CUDA device name."""
    lower = name.lower()
    for fragment, bf16, fp32, fp16, bandwidth in GPU_TABLE:
        if fragment in lower:
            peak = {"bfloat16": bf16, "float16": fp16, "float32": fp32}[dtype]
            return peak, bandwidth, f"'{fragment}' in the table"
    bf16, fp32, fp16, bandwidth = UNKNOWN_GPU
    return ({"bfloat16": bf16, "float16": fp16, "float32": fp32}[dtype], bandwidth,
            "not in the table: assumed")


def device_info(device: str, dtype: str, device_map: str | None = None, device_memory: int | None = None,
                host_memory: int | None = None, device_name: str | None = None) -> DeviceInfo:
    """The device's memory and throughput. CUDA figures come from torch unless device_memory and
    device_name are given (planning another machine); a CPU's throughput is measured."""
    host = host_memory if host_memory is not None else host_memory_available()
    kind = "cuda" if device.startswith("cuda") else "mps" if device == "mps" else "cpu"
    if kind == "cpu":
        measured_flops, bandwidth = cpu_benchmark(dtype)
        threads = _cpu_threads()
        memory = device_memory if device_memory is not None else host
        how = (f"memory: {'given' if device_memory is not None else 'MemAvailable'}; throughput: "
               f"{cpu_rates_how(dtype)} x {CPU_EFFICIENCY} efficiency, copy bandwidth "
               f"{bandwidth / 1e9:.0f} GB/s")
        return DeviceInfo("cpu", device_name or f"cpu ({threads} threads)", memory, host,
                          measured_flops * CPU_EFFICIENCY, bandwidth, how)
    if kind == "mps":
        bf16, fp32, fp16, bandwidth = 10.0, 5.0, 10.0, 200.0
        peak = {"bfloat16": bf16, "float16": fp16, "float32": fp32}[dtype]
        return DeviceInfo("mps", device_name or "mps", device_memory if device_memory is not None else host, host,
                          peak * 1e12 * CUDA_EFFICIENCY, bandwidth * 1e9,
                          "Apple GPU: unified memory (MemAvailable), throughput assumed")
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    names, free = [], []
    if device_name is None or device_memory is None:
        try:
            import torch

            if torch.cuda.is_available():
                visible = range(torch.cuda.device_count()) if device_map is not None else [index]
                for i in visible:
                    names.append(torch.cuda.get_device_name(i))
                    free.append(torch.cuda.mem_get_info(i)[0])
        except Exception:  # noqa: BLE001 - no usable CUDA: the figures stay unknown
            names, free = [], []
    name = device_name or (names[0] if names else "unknown GPU")
    peak, bandwidth, row = gpu_rates(name, dtype)
    if device_memory is not None:
        gpu_memory, memory_how = int(device_memory), "given"
    elif free:
        gpu_memory = int(sum(free))
        memory_how = f"free memory of {len(free)} GPU{'s' if len(free) > 1 else ''} (torch.cuda.mem_get_info)"
    else:
        gpu_memory, memory_how = None, "unknown (no CUDA device here: pass the memory to plan for one)"
    memory = gpu_memory
    if device_map is not None and gpu_memory is not None and host is not None:
        memory = gpu_memory + host
        memory_how += " + available CPU RAM (--device-map offloads to the CPU)"
    how = (f"memory: {memory_how}; throughput: {name}: {peak:g} TFLOP/s dense {dtype} ({row}) x {CUDA_EFFICIENCY} "
           f"efficiency, memory bandwidth {bandwidth:g} GB/s")
    return DeviceInfo("cuda", name, memory, host, peak * 1e12 * CUDA_EFFICIENCY, bandwidth * 1e9, how,
                      gpu_memory=gpu_memory)


def _cpu_threads() -> int:
    try:
        import torch

        return torch.get_num_threads()
    except Exception:  # noqa: BLE001
        return os.cpu_count() or 1


# ----------------------------------------------------------------------------------------------
# Activations and time


def activation_per_prompt(arch: Architecture, T: int, dtype: str, device_kind: str, layers: int, width: int,
                          backend: str = "hf", full_logits: bool = False) -> tuple[int, str]:
    """Peak activation bytes of one prompt of T tokens in a batch, and the formula."""
    b = DTYPE_BYTES[dtype]
    a = arch
    mlp = (3 if a.gated else 2) * a.d_ff
    per_token = 4 * a.d_model + (2 * a.n_heads + 2 * a.n_kv_heads) * a.d_head + mlp
    stream = T * per_token * b
    eager = backend == "tl"
    mask = T * T
    scores = 2 * a.n_heads * T * T * max(b, 4 if eager else b) if (device_kind == "cpu" or eager) else 0
    capture = a.n_heads * T * a.d_head * 4 + 3 * a.n_heads * T * 4
    readouts = layers * width * 4
    logit_positions = T if (eager or full_logits) else 1
    logits = 3 * a.vocab * 4 * logit_positions if a.causal else 0
    router = T * a.n_experts * 4 if a.n_experts else 0
    total = stream + mask + scores + capture + readouts + logits + router
    how = (f"T x (4 d_model + (2 heads + 2 kv heads) d_head + {'3' if a.gated else '2'} d_ff) x {b} bytes = {T} x "
           f"{per_token:,} x {b}" + (" + scores and probabilities 2 heads T^2" if scores else "")
           + " + mask T^2 + final-row capture heads x T x d_head x 4"
           + (f" + readouts {layers} layers x {width} floats x 4" if layers else "")
           + (f" + logits 3 x vocab x 4{' x T' if logit_positions > 1 else ''}" if logits else ""))
    return int(total), how


def sweep_flops(arch: Architecture, sweep: Sweep) -> float:
    """2 x active matmul params x tokens + the final-position unembedding + causal attention."""
    a = arch
    dense = 2.0 * a.matmul_params * sweep.tokens * sweep.blocks
    positions = sweep.tokens if sweep.full_logits else sweep.n_prompts
    unembed = 2.0 * a.vocab * a.d_model * positions if a.causal else 0.0
    T = sweep.lengths.mean
    attention = 2.0 * a.n_layers * a.n_heads * a.d_head * T * T * sweep.n_prompts * sweep.blocks  # 2 x 2 x H dh T^2 / 2
    return dense + unembed + attention


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "unknown"
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    return f"{n / 1024:.1f} KiB"


def _fmt_range(low: float, high: float) -> str:
    return "under 1 s" if high < 1 else f"{_fmt_time(low)} - {_fmt_time(high)}"


def _fmt_time(seconds: float) -> str:
    if seconds < 1:
        return "under 1 s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _fmt_n(n: float) -> str:
    return f"{round(n):,}"


# ----------------------------------------------------------------------------------------------
# The plan


@dataclass
class Phase:
    name: str
    device_bytes: int  # weights + activations resident on the device (or the pool under a device map)
    host_bytes: int  # CPU RAM needed beside it, when the device is a GPU
    weights_bytes: int
    activation_bytes: int
    process_bytes: int = 0  # on a CPU: the Python process itself (PROCESS_BYTES), in device_bytes


@dataclass
class Plan:
    model: str
    source: str
    arch: Architecture | None
    dtype: str = "float32"
    quantize: str | None = None
    device: str = "cpu"
    device_map: str | None = None
    backend: str = "hf"
    batch_size: int = 8
    device_info: DeviceInfo | None = None
    weights_bytes: int = 0
    weights_how: str = ""
    activation_bytes: int = 0  # peak of one batch, the largest over the sweeps
    activation_per_prompt: int = 0  # per prompt, over the sweeps that run at the run's batch size (they scale with it)
    activation_fixed: int = 0  # the peak of sweeps with a batch size of their own (wind-tunnel scoring)
    activation_batch: int = 8  # the batch size of the peak sweep
    activation_how: str = ""
    activation_where: str = ""
    suites: list[SuitePlan] = field(default_factory=list)
    flops: float = 0.0
    time_s: tuple[float, float] = (0.0, 0.0)
    load_s: tuple[float, float] = (0.0, 0.0)
    time_how: str = ""
    phases: list[Phase] = field(default_factory=list)
    fits: bool = True
    why: str = ""
    notes: list[str] = field(default_factory=list)
    tokens_how: str = ""

    @property
    def n_params(self) -> int:
        return self.arch.n_params if self.arch else 0

    @property
    def n_params_active(self) -> int:
        return self.arch.n_params_active if self.arch else 0

    @property
    def n_passes(self) -> int:
        return sum(s.n_passes for s in self.suites)

    @property
    def n_prompts(self) -> int:
        return sum(s.n_prompts for s in self.suites)

    @property
    def n_batches(self) -> int:
        return sum(s.n_batches for s in self.suites)

    @property
    def tokens(self) -> float:
        return sum(s.tokens for s in self.suites)

    @property
    def n_loads(self) -> int:
        return 1 + sum(len(s.loads) for s in self.suites)

    def suite(self, name: str) -> SuitePlan:
        for entry in self.suites:
            if entry.name == name:
                return entry
        raise KeyError(name)

    @classmethod
    def unavailable(cls, model: str, error: str) -> Plan:
        """A plan that could not be made (preflight never raises): it claims to fit, and says why not known."""
        return cls(model=model, source="", arch=None, fits=True, why=f"no plan: {error}")

    def to_dict(self) -> dict:
        info = self.device_info
        return {
            "model": self.model, "source": self.source, "shape": self.arch.shape() if self.arch else None,
            "n_params": self.n_params, "n_params_active": self.n_params_active, "dtype": self.dtype,
            "quantize": self.quantize, "device": self.device, "device_map": self.device_map, "backend": self.backend,
            "batch_size": self.batch_size,
            "device_info": None if info is None else {"kind": info.kind, "name": info.name, "memory": info.memory,
                                                      "host_memory": info.host_memory, "flops": info.flops,
                                                      "bandwidth": info.bandwidth, "how": info.how},
            "weights_bytes": self.weights_bytes, "weights_how": self.weights_how,
            "activation_bytes": self.activation_bytes, "activation_per_prompt": self.activation_per_prompt,
            "activation_fixed": self.activation_fixed,
            "activation_how": self.activation_how, "activation_where": self.activation_where,
            "suites": [s.to_dict() for s in self.suites], "n_passes": self.n_passes, "n_prompts": self.n_prompts,
            "n_batches": self.n_batches, "tokens": round(self.tokens), "tokens_how": self.tokens_how,
            "n_loads": self.n_loads, "flops": self.flops, "time_s": list(self.time_s), "load_s": list(self.load_s),
            "time_how": self.time_how, "phases": [asdict(p) for p in self.phases], "fits": self.fits, "why": self.why,
            "recommended_batch_size": recommend_batch_size(self) if self.arch else None, "notes": self.notes,
        }

    def lines(self) -> list[str]:
        """The plan as aligned lines: label, figure, how it was computed."""
        if self.arch is None:
            return [f"plan      {self.model}: {self.why}"]
        a, info = self.arch, self.device_info
        rows: list[tuple[str, str, str]] = []
        quant = f", --quantize {self.quantize}" if self.quantize else ""
        dmap = f", --device-map {self.device_map}" if self.device_map else ""
        rows.append(("model", self.model, f"{a.model_type}: {a.n_layers} layers, {a.n_heads} heads ({a.n_kv_heads} kv) "
                     f"x {a.d_head}, width {a.d_model}, MLP {a.d_ff}{' gated' if a.gated else ''}, vocab {a.vocab}"
                     + (f", {a.n_experts} experts ({a.experts_per_token} per token)" if a.n_experts else "")
                     + f"; from the {self.source}"))
        active = (f"; {self.n_params_active:,} active per token ({a.experts_per_token} of {a.n_experts} experts)"
                  if a.n_experts else "")
        rows.append(("params", f"{self.n_params / 1e9:.3g}B" if self.n_params >= 1e9 else f"{self.n_params / 1e6:.3g}M",
                     f"{self.n_params:,}{active}"))
        rows.append(("device", info.name if info else self.device,
                     f"{self.device}, {self.dtype}{quant}{dmap}, backend {self.backend}, batch {self.batch_size}; "
                     + (info.how if info else "")))
        rows.append(("weights", _fmt_bytes(self.weights_bytes), self.weights_how))
        rows.append(("activations", _fmt_bytes(self.activation_bytes),
                     f"one batch at the peak ({self.activation_where}): {self.activation_batch} x ({self.activation_how})"))
        for suite in self.suites:
            if suite.skipped:
                rows.append((suite.name, "skipped", suite.skipped))
                continue
            rows.append((suite.name, f"{suite.n_passes:,} pass{'' if suite.n_passes == 1 else 'es'}",
                         f"{_fmt_n(suite.n_prompts)} prompts x passes, {suite.n_batches:,} forward calls, "
                         f"{_fmt_n(suite.tokens)} tokens"
                         + (f"; {len(suite.loads)} extra model load{'s' if len(suite.loads) > 1 else ''}"
                            if suite.loads else "")))
            for sweep in suite.sweeps:
                times = f"{sweep.repeat} x " if sweep.repeat > 1 else ""
                rows.append(("", f"{times}{sweep.lengths.n:,}",
                             f"{sweep.what}: {sweep.lengths.mean:.0f} tokens mean, {sweep.lengths.max} max, batch "
                             f"{sweep.batch_size}" + (" [untrained copy]" if sweep.on == "null" else "")))
            for load in suite.loads:
                rows.append(("", "load", f"{load.what}: {_fmt_bytes(load.bytes)} on the {load.where} ({load.note})"))
            for note in suite.notes:
                rows.append(("", "note", note))
        rows.append(("total", f"{self.n_passes:,} passes",
                     f"{_fmt_n(self.n_prompts)} prompts x passes, {self.n_batches:,} forward calls, "
                     f"{_fmt_n(self.tokens)} tokens ({self.tokens_how}); {self.n_loads} model load"
                     f"{'s' if self.n_loads > 1 else ''}"))
        rows.append(("compute", f"{self.flops:.3g} FLOP",
                     "2 x active matmul params x tokens + 2 x vocab x d_model per prompt + attention"))
        low, high = self.time_s
        rows.append(("time", _fmt_range(low, high), self.time_how))
        for phase in self.phases:
            rows.append(("memory", _fmt_bytes(phase.device_bytes + _margin(phase.device_bytes)),
                         f"{phase.name}: weights {_fmt_bytes(phase.weights_bytes)} + activations "
                         f"{_fmt_bytes(phase.activation_bytes)}"
                         + (f" + the process {_fmt_bytes(phase.process_bytes)} (Python, torch, transformers)"
                            if phase.process_bytes else "") + " + margin max(10%, 1 GiB)"
                         + (f"; CPU RAM {_fmt_bytes(phase.host_bytes)}" if phase.host_bytes else "")))
        memory = info.memory if info else None
        rows.append(("fits", "yes" if self.fits else "NO", self.why or f"{_fmt_bytes(memory)} available"))
        if self.fits and info is not None and info.memory is not None:
            rows.append(("batch size", str(recommend_batch_size(self)),
                         "recommended: the largest power of two <= 64 whose activations fit beside the weights"
                         if info.kind == "cuda" else "on a CPU: 8 (the default)"))
        for note in self.notes:
            rows.append(("note", "", note))
        width = max(len(r[0]) for r in rows)
        figure = max(len(r[1]) for r in rows)
        return [f"{label:<{width}}  {value:>{figure}}  {how}".rstrip() for label, value, how in rows]


def _margin(need: float) -> int:
    return int(max(MARGIN_FRACTION * need, MARGIN_MIN))


def _phase_need(phase: Phase, batch: int, per_prompt: int, fixed: int = 0) -> int:
    return phase.device_bytes - phase.activation_bytes + max(batch * per_prompt, fixed)


def recommend_batch_size(p: Plan) -> int:
    """The largest power of two <= 64 whose activation peak fits in the memory left after the weights
    (with the margin) in every phase, on CUDA; 8 on a CPU (today's default). 1 when none fits."""
    info = p.device_info
    if info is None or info.kind != "cuda" or info.memory is None:
        return CPU_DEFAULT_BATCH
    batch = MAX_BATCH
    while batch > 1:
        if all(_fits(_phase_need(phase, batch, p.activation_per_prompt, p.activation_fixed), info.memory)
               for phase in p.phases):
            return batch
        batch //= 2
    return 1


def _fits(need: int, memory: int | None) -> bool:
    return memory is None or need + _margin(need) <= memory


def _configs(suites, suite_options: dict):
    """Suite configs from names / configs, with the options that each one has applied to those built
    from names; an option no chosen suite has is an error."""
    from geomprobe.options import fields_of
    from geomprobe.suites import SUITES, SuiteConfig, get_suite, parse_suites

    items = [suites] if isinstance(suites, (str, SuiteConfig)) else list(suites)
    configs, explicit_all = {}, False
    used = set()
    for item in items:
        if isinstance(item, SuiteConfig):
            configs[item.suite] = item
        elif isinstance(item, str):
            explicit_all = explicit_all or "all" in [s.strip() for s in item.split(",")]
            for name in parse_suites(item):
                cls = get_suite(name).config
                names = {f.name for f, _ in fields_of(cls)}
                given = {k: v for k, v in suite_options.items() if k in names}
                used |= set(given)
                configs.setdefault(name, cls(**given))
        else:
            raise ConfigError(f"a suite is a name or a suite config, not {type(item).__name__}")
    for name in sorted(set(suite_options) - used):
        owners = [s for s, spec in SUITES.items() if name in {f.name for f, _ in fields_of(spec.config)}]
        flag = "--" + name.replace("_", "-")
        if not owners:
            raise ConfigError(f"{flag} is not an option of any suite")
        raise ConfigError(f"{flag} is an option of the {', '.join(owners)} suite{'s' if len(owners) > 1 else ''}, "
                          f"not of {', '.join(configs) or '(none)'}")
    if not configs:
        raise ConfigError("no suite to plan: give a suite name, e.g. 'sula'")
    return [configs[name] for name in SUITES if name in configs], explicit_all


def recommended_batch(**plan_arguments) -> int:
    """recommend_batch_size(plan(**plan_arguments)): the planner as the runner hands it to a suite
    (SuiteContext.batch_planner), for the ablation suite's stacked conditions on CUDA."""
    return recommend_batch_size(plan(**plan_arguments))


def plan(model_spec: str | None = None, suites="sula", run_config=None, device: str | None = None,
         batch_size: int | None = None, *, dtype: str | None = None, quantize: str | None = None,
         device_map: str | None = None, backend: str | None = None, device_memory: int | None = None,
         host_memory: int | None = None, device_name: str | None = None, tokenizer=None,
         **suite_options) -> Plan:
    """The memory and time plan of running `suites` on `model_spec` (see the module docstring).

    suites: a name, "a,b", "all", suite configs, or a list of these; suite_options (n_per_k=100,
    n_random=5, ...) apply to the suites built from names that have them. run_config: a RunConfig
    (dtype, quantisation, device map, batch size, layers, prompts, ...); the keyword arguments
    override it. device: auto | cpu | cuda[:N] | mps (default: the run config's, auto = cuda when
    torch sees one). device_memory / host_memory (bytes) and device_name plan for another machine
    (e.g. device="cuda", device_name="NVIDIA A100-SXM4-80GB", device_memory=80 * 2**30).
    tokenizer: count prompt tokens with it (else estimated; wind tunnels are exact).
    Raises ConfigError for an unknown model, suite or option."""
    from geomprobe.config import RunConfig

    run = run_config if run_config is not None else RunConfig(model=model_spec or RunConfig().model)
    if not isinstance(run, RunConfig):
        raise ConfigError(f"run_config must be a RunConfig, not {type(run).__name__}")
    overrides = {k: v for k, v in dict(dtype=dtype, quantize=quantize, device_map=device_map, backend=backend,
                                       batch_size=batch_size, device=device).items() if v is not None}
    if model_spec is not None:
        overrides["model"] = model_spec
    if overrides:
        run = replace(run, **overrides)  # validated again: a bad value is a one-line ConfigError
    if run.batch_size is None:  # not given: planned at the CPU default; `recommend_batch_size` gives a GPU's
        run = replace(run, batch_size=CPU_DEFAULT_BATCH)
    configs, explicit_all = _configs(suites, suite_options)
    target = resolve_target(run.model)
    device = run.device
    if device == "auto":
        device = _auto_device()
    counter = TokenCounter(target, tokenizer, run.max_tokens)
    ctx = PlanContext(target, run, counter, tokenizer, configs)
    registry, suite_plans = planners(), []
    for config in configs:
        name = config.suite
        planner = registry.get(name)
        if planner is None:
            suite_plans.append(SuitePlan(name, skipped="not planned: no cost model (a plug-in suite without "
                                                        "geomprobe.plan.register_planner); its passes are not in the "
                                                        "totals"))
            continue
        entry = planner(ctx, config)
        if entry.skipped and not explicit_all:
            entry.skipped += " (named on its own the run refuses it; --suite all skips it)"
        elif name in ctx.null_notes:
            entry.notes.append(ctx.null_notes[name])
        suite_plans.append(entry)
    return _assemble(target, run, device, suite_plans, device_memory, host_memory, device_name, counter)


def _auto_device() -> str:
    try:
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    except Exception:  # noqa: BLE001
        return "cpu"


def _assemble(target: ModelTarget, run, device: str, suite_plans: list[SuitePlan], device_memory, host_memory,
              device_name, counter: TokenCounter) -> Plan:
    """The Plan of these suite plans: the weights, the activation peak, the memory phases and
    whether each fits, the time of the sweeps and the loads, and the notes."""
    arch = target.arch
    info = device_info(device, run.dtype, run.device_map, device_memory, host_memory, device_name)
    weights, weights_how = weights_bytes(arch, run.dtype, run.quantize)
    if run.backend == "tl":
        weights_how += "; x 2 while the tl backend runs (its own copy of the model)"
    peak = _activation_peak(arch, run, info, suite_plans)
    loads = [load for suite in suite_plans for load in suite.loads]
    phases = _phases(arch, run, info, weights, peak.bytes, loads)
    fits, why = _check_fits(phases, info)
    sweeps = _sweep_time(arch, run, info, suite_plans, weights)
    init_rate = _init_rate()
    load_low, load_high = _load_time(weights, loads, info, init_rate)
    load_low, load_high = load_low + STARTUP_S[0], load_high + STARTUP_S[1]
    time_how = _time_how(run, suite_plans, sweeps, (load_low, load_high), init_rate)
    time_s = (sweeps.low + load_low, sweeps.high + load_high)
    if arch is not None:
        calibrated = _calibrate(arch, run, info, suite_plans, weights, init_rate)
        if calibrated is not None:
            model_load = _load_time(weights, [], info, init_rate)
            time_s = (calibrated[0] + model_load[0] + STARTUP_S[0], calibrated[1] + model_load[1] + STARTUP_S[1])
            time_how = calibrated[2] + "; before calibration: " + time_how
        else:
            time_how = ("uncalibrated: no run of these suites on a model of about this size has finished on this "
                        "machine yet (each finished suite is recorded and calibrates the next plan); " + time_how)
    return Plan(model=target.spec, source=target.arch.source, arch=arch, dtype=run.dtype, quantize=run.quantize,
                device=device, device_map=run.device_map, backend=run.backend, batch_size=run.batch_size,
                device_info=info, weights_bytes=weights, weights_how=weights_how, activation_bytes=peak.bytes,
                activation_per_prompt=peak.per_prompt, activation_fixed=peak.fixed, activation_batch=peak.batch,
                activation_how=peak.how, activation_where=peak.where, suites=suite_plans, flops=sweeps.flops,
                time_s=time_s, load_s=(load_low, load_high),
                time_how=time_how, phases=phases, fits=fits, why=why, notes=_plan_notes(target, run, info, weights),
                tokens_how=counter.how)


class _Peak(NamedTuple):
    """The activation peak of one batch over the model's sweeps (null sweeps share the same shape)."""

    bytes: int  # the largest batch x per-prompt activations
    per_prompt: int  # per prompt, over the sweeps at the run's batch size (recommend_batch_size scales it)
    fixed: int  # the largest batch of the sweeps at a batch size of their own
    how: str  # the peak's formula
    where: str  # the suite, sweep and length that set it
    batch: int  # its batch


def _activation_peak(arch: Architecture, run, info: DeviceInfo, suite_plans: list[SuitePlan]) -> _Peak:
    peak, per_prompt, fixed, how, where, peak_batch = 0, 0, 0, "", "no sweep", run.batch_size
    for suite in suite_plans:
        for sweep in suite.sweeps:
            if not sweep.lengths.n:
                continue
            kind = info.kind if sweep.on == "model" or run.device_map is None else "cpu"
            one, formula = activation_per_prompt(arch, sweep.lengths.max, run.dtype, kind, sweep.layers,
                                                 sweep.readout_width, run.backend, sweep.full_logits)
            batch = min(sweep.batch_size, sweep.lengths.n)
            if sweep.batch_size == run.batch_size:
                per_prompt = max(per_prompt, one)
            else:
                fixed = max(fixed, batch * one)
            if batch * one > peak:
                peak, how, peak_batch = batch * one, formula, batch
                where = f"{suite.name}, {sweep.what.split(':')[0]}, {sweep.lengths.max} tokens"
    return _Peak(peak, max(per_prompt, 1), fixed, how, where, peak_batch)


def _phases(arch: Architecture, run, info: DeviceInfo, weights: int, peak: int, loads: list[Load]) -> list[Phase]:
    """The memory phases: the model alone; with each kind of load beside it. On a CPU each phase
    also holds the process itself (PROCESS_BYTES): the run's RAM is all of it."""
    phases = _device_phases(arch, run, info, weights, peak, loads)
    if info.kind != "cpu":
        return phases
    return [replace(phase, device_bytes=phase.device_bytes + PROCESS_BYTES, process_bytes=PROCESS_BYTES)
            for phase in phases]


def _device_phases(arch: Architecture, run, info: DeviceInfo, weights: int, peak: int,
                   loads: list[Load]) -> list[Phase]:
    tl_factor = 2 if run.backend == "tl" else 1
    null_weights = arch.n_params * DTYPE_BYTES[run.dtype]
    phases = [Phase("the model", weights * tl_factor + peak, 0, weights * tl_factor, peak)]
    if any(load.kind in ("init", "checkpoint") and load.what.startswith("null") for load in loads):
        if run.device_map is None:
            host = null_weights if info.kind == "cuda" else 0
            phases.append(Phase("with an untrained null copy beside it (unquantised, one at a time)",
                                weights + null_weights + peak, host, weights + null_weights, peak))
        else:
            phases.append(Phase("with an untrained null copy on the CPU (--device-map)", weights + null_weights + peak,
                                null_weights + peak, weights + null_weights, peak))
    step0 = [load for load in loads if load.what.startswith("step0")]
    if step0:
        if info.kind == "cpu":
            phases.append(Phase("with the step0 key baseline (float32)", weights + step0[0].bytes + peak, 0,
                                weights + step0[0].bytes, peak))
        else:
            phases.append(Phase("with the step0 key baseline (float32, CPU)", weights + peak, step0[0].bytes,
                                weights, peak))
    return phases


def _check_fits(phases: list[Phase], info: DeviceInfo) -> tuple[bool, str]:
    """(fits, why): the first phase that does not fit the device's memory, or the CPU RAM a copy is
    built in, says why."""
    for phase in phases:
        need = phase.device_bytes
        if info.memory is not None and not _fits(need, info.memory):
            return False, (f"{phase.name}: needs {_fmt_bytes(need + _margin(need))} (weights "
                           f"{_fmt_bytes(phase.weights_bytes)} + activations {_fmt_bytes(phase.activation_bytes)} + "
                           + (f"the process {_fmt_bytes(phase.process_bytes)} + " if phase.process_bytes else "")
                           + f"margin {_fmt_bytes(_margin(need))}) but {info.name} has {_fmt_bytes(info.memory)}")
        host_limit = info.host_memory
        if phase.host_bytes and host_limit is not None and info.kind != "cpu" and \
                phase.host_bytes + MARGIN_MIN > host_limit:
            return False, (f"{phase.name}: needs {_fmt_bytes(phase.host_bytes + MARGIN_MIN)} of CPU RAM (the copy is "
                           f"built there, + 1 GiB) but {_fmt_bytes(host_limit)} is available")
    if info.memory is None:
        return True, "device memory unknown: not checked (pass the memory to plan for a GPU that is not here)"
    return True, ""


@dataclass
class _SweepTime:
    """The time of the sweeps: compute, weight reads and per-call overhead, in seconds."""

    flops: float
    compute_s: float
    memory_s: float
    overhead_s: float
    streamed: int  # the model's weights read per forward call (on the GPUs, x 2 under the tl backend)
    offloaded: int  # weights offloaded to the CPU under --device-map, copied over PCIe per call

    @property
    def low(self) -> float:
        return max(self.compute_s, self.memory_s)

    @property
    def high(self) -> float:
        return 2 * (self.compute_s + self.memory_s) + self.overhead_s


def _sweep_time(arch: Architecture, run, info: DeviceInfo, suite_plans: list[SuitePlan], weights: int) -> _SweepTime:
    tl_factor = 2 if run.backend == "tl" else 1
    null_weights = arch.n_params * DTYPE_BYTES[run.dtype]
    gpu_weights = weights
    offloaded = 0
    if run.device_map is not None and info.kind == "cuda" and info.gpu_memory is not None:
        offloaded = max(0, weights - info.gpu_memory)
        gpu_weights = weights - offloaded
    cpu_rate = None
    slow = QUANT_SLOWDOWN.get(run.quantize, 1.0)
    flops_total, compute_s, memory_s, overhead_s = 0.0, 0.0, 0.0, 0.0
    for suite in suite_plans:
        for sweep in suite.sweeps:
            flops = sweep_flops(arch, sweep)
            flops_total += flops
            on_cpu_null = sweep.on == "null" and run.device_map is not None
            if on_cpu_null or info.kind == "cpu":
                if cpu_rate is None:
                    rate, bandwidth = cpu_benchmark(run.dtype)
                    cpu_rate = (rate * CPU_EFFICIENCY, bandwidth)
                rate, bandwidth = cpu_rate if on_cpu_null else (info.flops, info.bandwidth)
            else:
                rate, bandwidth = info.flops, info.bandwidth
            streamed = null_weights if sweep.on == "null" else gpu_weights * tl_factor
            quant = 1.0 if sweep.on == "null" else slow
            compute_s += flops / (rate * quant)
            memory_s += sweep.n_batches * streamed * sweep.blocks / bandwidth
            if sweep.on == "model" and offloaded:
                memory_s += sweep.n_batches * offloaded / PCIE_BYTES_PER_S
            overhead_s += sweep.n_batches * arch.n_layers * sweep.blocks * OVERHEAD_S_PER_LAYER_BATCH
    return _SweepTime(flops_total, compute_s, memory_s, overhead_s, gpu_weights * tl_factor, offloaded)


def _calibrate(arch: Architecture, run, info: DeviceInfo, suite_plans: list[SuitePlan], weights: int,
               init_rate: float) -> tuple[float, float, str] | None:
    """Each suite's own estimate, and where this machine has finished runs of it on a model of about
    this size (geomprobe.timing), the estimate times their median measured / estimated ratio. Returns
    (low, high, how) of the suites' time, None when no suite is calibrated."""
    from geomprobe.timing import SPREAD, calibration

    device_name = info.name if info.kind != "cpu" else None
    low = high = 0.0
    said, uncalibrated = [], []
    for suite in suite_plans:
        if suite.skipped:
            continue
        sweeps = _sweep_time(arch, run, info, [suite], weights)
        loads = _load_time(0, suite.loads, info, init_rate)
        suite.estimate_s = (sweeps.low + loads[0], sweeps.high + loads[1])
        found = calibration(suite.name, arch.n_params, device_name)
        if found is None:
            uncalibrated.append(suite.name)
            low, high = low + suite.estimate_s[0], high + suite.estimate_s[1]
            continue
        middle = found["ratio"] * suite.estimate_s[1]
        suite.calibrated = {**found, "time_s": (middle / SPREAD, middle * SPREAD)}
        low, high = low + middle / SPREAD, high + middle * SPREAD
        said.append(f"{suite.name} {found['ratio']:.2g} x ({found['n_runs']} run{'s' if found['n_runs'] > 1 else ''}, "
                    f"last {found['last'][:10]})")
    if not said:
        return None
    how = ("calibrated on this machine's finished runs of models within 10x this size: each suite's estimate (its "
           f"upper bound below) times its median measured / estimated ratio, / and x {SPREAD}: " + ", ".join(said))
    if uncalibrated:
        how += f"; not calibrated yet (uncalibrated range): {', '.join(uncalibrated)}"
    return low, high, how


def _load_time(weights: int, loads: list[Load], info: DeviceInfo, init_rate: float) -> tuple[float, float]:
    """(low, high) seconds to load the model from disk and build or load each model beside it."""
    load_low, load_high = weights / DISK_BYTES_PER_S[1], weights / DISK_BYTES_PER_S[0]
    for load in loads:
        if load.kind == "init":
            build = 2 * load.draws * load.n_params / init_rate  # high end: twice normal_'s rate per draw
            move = load.bytes / PCIE_BYTES_PER_S if load.where == "device" and info.kind == "cuda" else 0.0
            load_low, load_high = load_low + build / 2 + move, load_high + build + 2 * move
        else:
            load_low, load_high = load_low + load.bytes / DISK_BYTES_PER_S[1], load_high + load.bytes / DISK_BYTES_PER_S[0]
    return load_low, load_high


def _time_how(run, suite_plans: list[SuitePlan], sweeps: _SweepTime, load_s: tuple[float, float],
              init_rate: float) -> str:
    return (f"sweeps {_fmt_range(sweeps.low, sweeps.high)}: [max(compute {_fmt_time(sweeps.compute_s)}, "
            f"weight reads {_fmt_time(sweeps.memory_s)} ({sum(s.n_batches for s in suite_plans):,} forward calls x "
            f"{_fmt_bytes(sweeps.streamed)} / bandwidth"
            + (" x the share of blocks a call runs" if any(s.blocks < 1 for p in suite_plans for s in p.sweeps)
               else "")
            + (f", + {_fmt_bytes(sweeps.offloaded)} offloaded over PCIe each" if sweeps.offloaded else "")
            + ")), 2 x (compute + reads) + 1 ms per layer and call]"
            + (f" at {QUANT_SLOWDOWN[run.quantize]} x the dense rate for {run.quantize} kernels" if run.quantize else "")
            + f"; + start-up and loads {_fmt_range(*load_s)} (imports and the run directory "
              f"{_fmt_range(*STARTUP_S)}; weights from disk at 0.5-2 GB/s; null "
              f"copies initialised on the CPU at a measured {init_rate / 1e6:.0f}M params/s per draw)")


def _plan_notes(target: ModelTarget, run, info: DeviceInfo, weights: int) -> list[str]:
    """What the figures leave out or the run should know: training, quantisation, downloads, dtype."""
    arch = target.arch
    notes = []
    if target.windtunnel is not None and target.windtunnel.get("train_s"):
        train = target.windtunnel["train_s"]
        notes.append(f"{target.name} is not trained yet: first use trains it (about {_fmt_time(train)} on 2 CPU "
                     "cores), not counted above")
    if run.quantize and arch.experts and not _experts_quantised():
        notes.append(f"--quantize {run.quantize} leaves Mixtral's fused expert weights in {run.dtype} under "
                     "transformers >= 5: use --device-map auto (GPUs + CPU) rather than counting on 4-bit experts")
    if target.kind == "hub" and target.tokenizer_dir is None:
        notes.append(f"{target.hub_id} is not in the local Hugging Face cache: the run needs it downloaded first "
                     f"(about {_fmt_bytes(arch.n_params * DTYPE_BYTES[run.dtype])} in {run.dtype})")
    if info.kind == "cuda" and run.device_map is None and info.host_memory is not None and weights > info.host_memory:
        notes.append(f"without --device-map the weights are loaded through CPU memory first ({_fmt_bytes(weights)}, "
                     f"{_fmt_bytes(info.host_memory)} available): --device-map auto loads them straight to the GPUs")
    if run.dtype == "float32" and info.kind == "cuda":
        notes.append("float32 on a GPU runs at the fp32 rate (TF32 is off by default); --dtype bfloat16 halves the "
                     "weights and is many times faster")
    return notes


@functools.cache
def _init_rate() -> float:
    """Parameters per second torch's normal_ initialises on this CPU (measured once, ~10 ms)."""
    try:
        import torch

        x = torch.empty(2**21)
        x.normal_()
        start = time.perf_counter()
        for _ in range(3):
            x.normal_()
        return 3 * x.numel() / max(time.perf_counter() - start, 1e-9)
    except Exception:  # noqa: BLE001
        return 2e8


def preflight(model_spec: str, run_config=None, suite_configs=None, device: str | None = None) -> Plan:
    """The runner's check before it loads a model: the plan of these suites (refuse the run when
    `not plan.fits`; plan.why says why). Cheap (no weights, no download, no meta-device build) and
    never raises: a plan that cannot be made comes back with fits=True and the reason in why. The
    prompts are counted with the model's tokenizer when it is at hand (cached_tokenizer), as
    `geomprobe plan` counts them: an estimate from characters misses the longest prompt, which sets
    the activation peak, by up to 2x on byte-level tokenizers."""
    try:
        spec = model_spec if model_spec is not None else getattr(run_config, "model", None)
        tokenizer = cached_tokenizer(resolve_target(spec), quiet=False) if spec is not None else None
        return plan(model_spec, suite_configs if suite_configs is not None else "extract", run_config=run_config,
                    device=device, tokenizer=tokenizer)
    except Exception as error:  # noqa: BLE001 - a preflight must never stop a run by itself
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        return Plan.unavailable(str(model_spec), text)


check_fits = preflight  # the name the issue uses


__all__ = ["Architecture", "DeviceInfo", "Lengths", "Load", "Phase", "Plan", "PlanContext", "Sweep", "SuitePlan",
           "TokenCounter", "architecture_from_fields", "cached_tokenizer", "check_fits", "corpus_texts", "cpu_benchmark",
           "device_info", "parameter_groups", "plan", "planners", "preflight", "recommend_batch_size",
           "recommended_batch", "register_planner", "resolve_target", "weights_bytes"]
