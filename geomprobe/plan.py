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
  as the suite runs them (see the suite modules); untrained null models (--null init:N) are built
  from the config at the run's dtype, never quantised, and are resident next to the model while
  they run (on the CPU under --device-map).
- time: FLOPs per sweep = 2 x active matmul parameters x tokens + 2 x vocab x d_model per prompt
  (the final-position unembedding) + the attention's 2 x 2 x heads x d_head x T^2 / 2 per prompt and
  layer; at a device throughput (CUDA: a table of dense bf16 / fp32 TFLOP/s by device name, times
  an efficiency of 0.35; CPU: a ~0.1 s matmul benchmark, times 0.7, calibrated on a
  4-layer Pythia-410M-width model on 2 cores) and, as a lower bound for small
  batches, one read of the weights per forward call at the device's memory bandwidth. The range is
  [max(compute, memory), 2 x (compute + memory) + 1 ms per layer and batch]; loading and building
  models is added at assumed rates.
- fits: weights + activations + max(10%, 1 GiB) against the device's free memory (CUDA
  mem_get_info; CPU: MemAvailable; --device-map: the visible GPUs plus the CPU), in every phase
  (the model alone; with a null model beside it; Pythia's step0 key baseline on the CPU).

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
MAX_BATCH = 64
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
            g["small"] = L * (2 * D + bias + mlp_bias) + D
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
        return ModelTarget(spec, name, "hub", entry.hub_id, arch, pythia=name.startswith("pythia-"),
                           tokenizer_dir=_hf_cached_dir(entry.hub_id))
    path = Path(name).expanduser()
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


def cached_tokenizer(target: ModelTarget):
    """The model's tokenizer when it is at hand without building, training or downloading anything
    (a local directory, a built or trained built-in, the Hugging Face cache), else None. Wind tunnels
    need none: their word-level count is exact."""
    if target.tokenizer_dir is None or target.windtunnel is not None:
        return None
    try:
        from transformers import AutoTokenizer
        from transformers.utils import logging

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
            special = 1 if target.arch.model_type in BOS_TYPES else 2 if target.arch.model_type == "bert" else 0
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
def _corpus_texts(name: str) -> tuple[str, ...]:
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


SULA_SAMPLE = 24  # prompts per k generated to measure lengths (the run's first ones: seeded per k)


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

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SuitePlan:
    name: str
    sweeps: list[Sweep] = field(default_factory=list)
    loads: list[Load] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None

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
                "loads": [ld.to_dict() for ld in self.loads], "notes": self.notes}


class _Context:
    """What the suite planners share: the target, the run configuration, token counting."""

    def __init__(self, target: ModelTarget, run, counter: TokenCounter, tokenizer=None):
        self.target, self.run, self.counter, self.tokenizer = target, run, counter, tokenizer
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
            return self.counter.lengths(_corpus_texts(corpus)), f"corpus:{corpus}"
        return self.counter.lengths(_demo_texts()), "the built-in demo prompts"

    def nulls(self, options, suite: str) -> list:
        """The suite's null models as it will resolve them (NullOptions.null_specs), sized by the
        planner's parameter count."""
        text = options.null
        specs = options.null_specs(n_params=self.arch.n_params)
        if specs:
            from geomprobe.analysis.null_comparison import power_note

            self.null_notes[suite] = power_note(len(specs)) + (f" (--null {text}: chosen from the model's "
                                                               f"{self.arch.n_params / 1e6:.0f}M parameters)"
                                                               if "auto" in text else "")
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
            note = ("built from the config on the CPU, never quantised" if kind == "init"
                    else "loaded from the Hugging Face cache or the hub, never quantised")
            loads.append(Load(what, kind, self.arch.n_params, self.arch.n_params * weights_dtype_bytes, where, note))
        return loads


def _sula_lengths(ctx: _Context, options, conditions: list[str]) -> dict[str, Lengths]:
    """Lengths of each condition's prompts, from the first SULA_SAMPLE prompts of every k (the
    generator is seeded per k, trial by trial, so these are the run's own first prompts)."""
    from geomprobe.sula import (
        CARRIER_POOL,
        K0_TEMPLATE,
        LABEL_CANDIDATES,
        MASK_TOKEN,
        WINDTUNNEL_K0_TEMPLATE,
        SulaSpec,
        choose_labels,
        generate,
    )

    task = ctx.task
    carriers, k0, candidates = CARRIER_POOL, K0_TEMPLATE, LABEL_CANDIDATES
    if task is not None:
        carriers, k0, candidates = tuple(task.carrier_words), WINDTUNNEL_K0_TEMPLATE, tuple(task.label_words)
    if ctx.tokenizer is not None and task is None:
        choice = choose_labels(ctx.tokenizer, labels=None if options.labels is None else list(options.labels),
                               candidates=candidates, exclude=set(carriers) | {MASK_TOKEN}, context=f"{carriers[0]}:")
        main, remap = choice.main, choice.remap
    else:
        words = [w for w in candidates if w not in (options.labels or ())]
        main = tuple(options.labels) if options.labels is not None else tuple(words[:2])
        rest = [w for w in words if w not in main]
        remap = tuple(rest[:2]) if len(rest) >= 2 else None
    spec = SulaSpec(labels=main, remap_labels=remap, k_values=tuple(options.k_values),
                    n_per_k=max(2, min(options.n_per_k, SULA_SAMPLE)), alpha=options.alpha, target=options.target,
                    carriers=carriers, template=options.template, k0_template=k0, seed=ctx.run.seed)
    wanted = [c for c in conditions if c != "lexical_remap" or remap is not None]
    prompts = generate(spec, wanted)
    n = options.n_per_k * len(options.k_values)
    out = {}
    for condition, records in prompts.items():
        per_k: dict[int, list[int]] = {}
        for record in records:
            per_k.setdefault(record.k, []).append(ctx.counter.count(record.text))
        mean = sum(options.n_per_k * sum(v) / len(v) for v in per_k.values()) / n
        out[condition] = Lengths(n, mean, max(max(v) for v in per_k.values()), ctx.counter.how)
    return out


def _sula_unsupported(ctx: _Context, suite: str) -> str | None:
    if ctx.run.prompts:
        return f"the {suite} suite writes its own prompts: drop --prompts"
    if ctx.task is not None and ctx.task.name != "sula":
        return f"the {suite} suite needs a language model or windtunnel-sula; this is a '{ctx.task.name}' wind tunnel"
    if not ctx.arch.causal:
        return f"{ctx.target.spec} is an encoder: the {suite} suite needs next-token probabilities"
    return None


def plan_extract(ctx: _Context, options) -> SuitePlan:
    out = SuitePlan("extract")
    lengths, source = ctx.default_prompts()
    out.sweeps.append(Sweep(f"extraction ({source})", lengths, ctx.batch, layers=ctx.layers(ctx.run.layers),
                            readout_width=ctx.readout_width(ctx.run.readouts)))
    return out


def _manifold_sets(ctx: _Context, options, suite: str, corpus: str, label: str, layers_all: bool) -> tuple:
    """Candidate scoring and the chosen sample of one prompt set (geometry.stratified_prompts)."""
    if suite == "geometry":
        from geomprobe.suites.geometry import N_WINDTUNNEL_CANDIDATES

        candidates, source = ctx.default_prompts(N_WINDTUNNEL_CANDIDATES, corpus)
    else:
        candidates, source = ctx.counter.lengths(_corpus_texts(corpus)), f"corpus:{corpus}"
    sweeps, notes = [], []
    readouts = (*ctx.run.readouts, options.readout)
    layers = ctx.layers(ctx.run.layers) if layers_all else 1
    if options.n_per_quintile == 0:
        chosen = candidates
    else:
        n = min(candidates.n, 5 * options.n_per_quintile)
        if ctx.arch.causal:
            sweeps.append(Sweep(f"{label}candidates ({source}): next-token entropy", candidates, ctx.batch, layers=1,
                                readout_width=ctx.arch.n_heads))
            if candidates.n < 5 * options.n_per_quintile:
                notes.append(f"{source} has {candidates.n} candidates, fewer than 5 x --n-per-quintile "
                             f"{options.n_per_quintile}: the suite will refuse it")
        chosen = Lengths(n, candidates.mean, candidates.max, candidates.how)  # a stratified draw: same lengths
    if options.max_per_final_token:
        notes.append("--max-per-final-token drops candidates before sampling (not counted here)")
    sweeps.append(Sweep(f"{label}chosen sample ({chosen.n} prompts)", chosen, ctx.batch, layers=layers,
                        readout_width=ctx.readout_width(readouts)))
    return sweeps, chosen, notes


def plan_geometry(ctx: _Context, options) -> SuitePlan:
    out = SuitePlan("geometry")
    sweeps, chosen, notes = _manifold_sets(ctx, options, "geometry", options.corpus, "", True)
    out.sweeps += sweeps
    out.notes += notes
    nulls = ctx.nulls(options, "geometry")
    b = DTYPE_BYTES[ctx.run.dtype]
    scoring = [sweep for sweep in sweeps if "next-token entropy" in sweep.what]
    for load in ctx.null_loads(nulls, b):
        out.loads.append(load)
        for sweep in scoring:  # each null draws its own stratified sample: it scores the candidates too
            out.sweeps.append(Sweep(f"{load.what}: {sweep.what}", sweep.lengths, ctx.batch, layers=1,
                                    readout_width=ctx.arch.n_heads, on="null"))
        out.sweeps.append(Sweep(f"{load.what}: its own sample", chosen, ctx.batch, layers=ctx.arch.n_layers,
                                readout_width=ctx.readout_width((*ctx.run.readouts, options.readout)), on="null"))
    if options.init_seeds:
        out.notes.append(f"key baseline: {options.init_seeds} fresh initialisations of 2 layers at a 512-token "
                         "vocabulary (small)")
    if options.step0 != "off" and (options.step0 != "auto" or ctx.target.pythia):
        spec = options.step0 if options.step0 != "auto" else f"{ctx.target.hub_id or ctx.target.name}@step0"
        out.loads.append(Load(f"step0 key baseline ({spec})", "checkpoint", ctx.arch.n_params, ctx.arch.n_params * 4,
                              "cpu", "float32 on the CPU for its W_K; unavailable offline unless cached (then noted, "
                                     "not fatal)"))
    return out


def plan_domain(ctx: _Context, options) -> SuitePlan:
    out = SuitePlan("domain")
    if ctx.task is not None:
        out.skipped = "the domain suite compares natural-language corpora; a wind tunnel only reads its own task"
        return out
    if ctx.run.prompts:
        out.skipped = "the domain suite uses the built-in corpora (--corpus and --domains), not --prompts"
        return out
    chosen = {}
    for label, corpus in {"mixed": options.corpus, **{d: d for d in options.domains}}.items():
        sweeps, chosen[label], notes = _manifold_sets(ctx, options, "domain", corpus, f"{label}: ", False)
        out.sweeps += sweeps
        out.notes += notes
    nulls = ctx.nulls(options, "domain")
    scoring = [sweep for sweep in out.sweeps if "next-token entropy" in sweep.what]
    for load in ctx.null_loads(nulls, DTYPE_BYTES[ctx.run.dtype]):
        out.loads.append(load)
        for sweep in scoring:  # each null draws its own samples: it scores every corpus too
            out.sweeps.append(Sweep(f"{load.what}: {sweep.what}", sweep.lengths, ctx.batch, layers=1,
                                    readout_width=ctx.arch.n_heads, on="null"))
        for label, lengths in chosen.items():
            out.sweeps.append(Sweep(f"{load.what}: {label} sample", lengths, ctx.batch, layers=1,
                                    readout_width=ctx.readout_width((*ctx.run.readouts, options.readout)), on="null"))
    return out


def plan_sula(ctx: _Context, options) -> SuitePlan:
    from geomprobe.sula import CONTROLS

    out = SuitePlan("sula")
    why = _sula_unsupported(ctx, "sula")
    if why:
        out.skipped = why
        return out
    controls = [c for c in CONTROLS if c in options.controls]
    lengths = _sula_lengths(ctx, options, ["main", *controls])
    if "lexical_remap" in controls and "lexical_remap" not in lengths:
        out.notes.append("lexical_remap skipped: only one label pair qualifies")
    if ctx.tokenizer is None and ctx.task is None:
        out.notes.append("labels assumed: the first candidates (dax, lug; remap wug, kep); the run picks single "
                         "tokens of the model's tokenizer")
    width = ctx.readout_width((*ctx.run.readouts, options.readout))
    main_layers = ctx.arch.n_layers if ctx.run.layers is None else len(set(ctx.run.layers) | {ctx.arch.n_layers - 1})
    k = len(options.k_values)
    for condition, length in lengths.items():
        out.sweeps.append(Sweep(f"condition {condition} ({k} k x {options.n_per_k})", length, ctx.batch,
                                layers=main_layers if condition == "main" else 1, readout_width=width))
    for load in ctx.null_loads(ctx.nulls(options, "sula"), DTYPE_BYTES[ctx.run.dtype]):
        out.loads.append(load)
        out.sweeps.append(Sweep(f"{load.what}: condition main", lengths["main"], ctx.batch, layers=1,
                                readout_width=width, on="null"))
    return out


def ablation_layer_sets(ctx: _Context, template: str | None) -> tuple[list, list[str]]:
    """The layer sets the ablation suite will edit (geomprobe.suites.ablation): --layers, else paper
    III's by depth; layer 0 left out where the SULA prompts all end in the same token (the default
    templates end in ':'), since a rotary model's layer-0 values at a fixed final token do not vary
    and so have no axis. Assumes every other layer has one."""
    from geomprobe.suites.ablation import check_depth, default_layer_sets, named_layer_sets, without_layers

    n_layers = ctx.arch.n_layers
    notes = []
    if ctx.run.layers is None:
        sets = default_layer_sets(n_layers)
    else:
        check_depth(n_layers)
        chosen = sorted({layer if layer >= 0 else n_layers + layer for layer in ctx.run.layers})
        if chosen[-1] >= n_layers - 1:
            raise ConfigError(f"ablation suite: --layers includes the last layer ({n_layers - 1}): choose layers "
                              f"from 0 to {n_layers - 2}")
        sets = named_layer_sets(chosen, chosen)
    fixed_final = template is None or not template.rstrip().endswith("{query}")
    if fixed_final and ctx.arch.causal:
        if ctx.run.layers is not None and 0 in ctx.run.layers:
            notes.append("layer 0 has no entropy axis on these prompts (they all end in the same token): the suite "
                         "will refuse --layers with 0")
        sets = without_layers(sets, {0})
        notes.append("layer 0 left out (its final-token values do not vary: every prompt ends in ':'); every other "
                     "layer is assumed to have an axis")
    return [(name, layers) for name, layers in sets if max(layers) < n_layers - 1], notes


def _same_sula_prompts(a, b) -> bool:
    from geomprobe.options import fields_of
    from geomprobe.suites.sula import SulaPromptOptions

    return all(getattr(a, f.name) == getattr(b, f.name) for f, _ in fields_of(SulaPromptOptions) if f.name != "n_boot")


def plan_ablation(ctx: _Context, options, sula_options=None) -> SuitePlan:
    from geomprobe.suites.ablation import measured_layers, parse_ops, resolve_null

    out = SuitePlan("ablation")
    why = _sula_unsupported(ctx, "ablation") or (
        None if ctx.run.backend == "hf" else "the ablation suite edits values through geomprobe's own hooks: "
                                             "use --backend hf")
    if why:
        out.skipped = why
        return out
    operations = parse_ops(options.ops, options.cut_lambda)
    sets, notes = ablation_layer_sets(ctx, options.template)
    out.notes += notes
    if not sets:
        out.skipped = "no layer set below the last layer keeps an entropy axis: the suite cannot run on this model"
        return out
    lengths = _sula_lengths(ctx, options, ["main"])["main"]
    needed = measured_layers(sets, ctx.arch.n_layers)
    width = ctx.readout_width(("values",))
    reused = (sula_options is not None and sula_options.readout == "values" and _same_sula_prompts(options, sula_options)
              and (ctx.run.layers is None or set(needed) <= set(ctx.run.layers) | {ctx.arch.n_layers - 1}))
    if reused:
        out.notes.append("axes reused from the sula suite of this run (same prompt settings)")
    else:
        main_layers = sorted(set(needed) | {ctx.arch.n_layers - 1})
        out.sweeps.append(Sweep(f"axis fit: SULA main condition ({len(options.k_values)} k x {options.n_per_k})",
                                lengths, ctx.batch, layers=len(main_layers), readout_width=width))
        out.notes.append("axis fit skipped when a finished sula suite in the run directory used the same settings")
    n_conditions = len(operations) * len(sets) * (1 + options.n_random)
    blocks, how = ablation_blocks(ctx, sets, len(operations) * (1 + options.n_random), lengths.n)
    out.notes.append(how)
    conditions = (f"conditions: {len(operations)} ops ({', '.join(n for n, _, _ in operations)}) x {len(sets)} layer "
                  f"sets ({', '.join(n for n, _ in sets)}) x (1 true + {options.n_random} "
                  f"{'matched' if getattr(options, 'definitions', 'geomprobe') == 'geomprobe' else 'released'} "
                  f"random axes)")

    edited = sorted({layer for _, layers in sets for layer in layers})
    released = getattr(options, "definitions", "geomprobe") == "paper-code-as-released"
    released_split = released and ctx.arch.model_type == "gpt_neox"

    def passes(prefix: str, on: str) -> list[Sweep]:
        """The controls' attention read (or the released value split's final-token values, one pass per
        edited layer), the baseline and the conditions of one model."""
        setup = [] if released_split else [
            Sweep(f"{prefix}matched controls: the attention read at the edited layers (unedited)", lengths, ctx.batch,
                  layers=len(needed), readout_width=width, on=on)]
        if released:
            setup.append(Sweep(f"{prefix}the released value split at the final token, one pass per edited layer",
                               lengths, ctx.batch, repeat=len(edited), layers=1, readout_width=width, on=on))
        return [*setup,
                Sweep(f"{prefix}baseline (unedited)", lengths, ctx.batch, layers=len(needed), readout_width=width,
                      on=on),
                Sweep(f"{prefix}{conditions}", lengths, ctx.batch, repeat=n_conditions, layers=len(needed),
                      readout_width=width, blocks=blocks, on=on)]

    out.sweeps += passes("", "model")
    main_layers = sorted(set(needed) | {ctx.arch.n_layers - 1})
    for load in ctx.null_loads(ctx.nulls(options, "ablation"), DTYPE_BYTES[ctx.run.dtype]):
        out.loads.append(load)
        out.sweeps.append(Sweep(f"{load.what}: its own axis fit, SULA main condition", lengths, ctx.batch,
                                layers=len(main_layers), readout_width=width, on="null"))
        out.sweeps += passes(f"{load.what}: ", "null")
    null_text = resolve_null(options.null, ctx.arch.n_params)  # how auto reads, for the note
    if null_text != (options.null or "").strip() and null_text:
        out.notes.append(f"--null {options.null}: {null_text} (the ablation's count from the model's "
                         f"{ctx.arch.n_params / 1e6:.0f}M parameters; each copy runs every condition)")
    return out


def ablation_blocks(ctx: _Context, sets, per_set: int, n_prompts: int) -> tuple[float, str]:
    """(the share of the decoder blocks an edited pass runs on average, how): with prefix reuse
    (geomprobe.prefix) the passes whose first edited layer is l0 run blocks l0..L-1, the blocks
    below the highest l0 run once per batch (the state moved up group to group), and each group
    checks its first batch against a full pass; 1.0 where the suite will run full passes."""
    from geomprobe.prefix import PROVEN, enabled

    L = ctx.arch.n_layers
    why = ("turned off (GEOMPROBE_PREFIX_REUSE)" if not enabled() else
           f"not proven for model type '{ctx.arch.model_type}'" if ctx.arch.model_type not in PROVEN else
           "--device-map dispatches the model over devices" if ctx.run.device_map is not None else None)
    if why is not None:
        return 1.0, f"edited passes: full forward passes ({why})"
    starts: dict[int, int] = {}
    for _, layers in sets:
        starts[min(layers)] = starts.get(min(layers), 0) + per_set
    n_passes = sum(starts.values())
    batches = max(1, -(-n_prompts // ctx.batch))
    runs = sum(n * (L - l0) for l0, n in starts.items())  # block runs, in passes
    prefix = max(starts)  # the blocks below the highest first edited layer, once
    checks = sum(L + (L - l0) for l0 in starts) / batches  # one batch of a full pass and of the run from l0
    share = (runs + prefix + checks) / (n_passes * L)
    return share, (f"edited passes: prefix reuse, {share:.3f} of a full pass each on average (first edited layers "
                   f"{', '.join(map(str, sorted(starts)))} of {L}; the blocks below run once per batch)")


def plan_mechanisms(ctx: _Context, options) -> SuitePlan:
    out = SuitePlan("mechanisms")
    a = ctx.arch
    nulls = ctx.null_loads(ctx.nulls(options, "mechanisms"), DTYPE_BYTES[ctx.run.dtype])
    task = ctx.task
    if task is not None:
        sequences = Lengths(options.n_sequences, float(task.seq_len), int(task.seq_len), "exact (task length)")
        rows_batch = max(ctx.batch, 32)
        out.sweeps.append(Sweep(f"Q-K rows: {options.n_sequences} task sequences", sequences, rows_batch, layers=a.n_layers,
                                readout_width=a.n_heads * task.seq_len * 2))
        for load in nulls:
            out.loads.append(load)
            out.sweeps.append(Sweep(f"{load.what}: Q-K rows", sequences, rows_batch, layers=a.n_layers,
                                    readout_width=a.n_heads * task.seq_len * 2, on="null"))
        if options.init_seeds:
            out.notes.append(f"layer-0 frame: {options.init_seeds} fresh copies (layer-0 keys of single tokens; small)")
        reference = Lengths(options.n_reference, float(task.seq_len), int(task.seq_len), "exact (task length)")
        evaluation = Lengths(options.n_eval, float(task.seq_len), int(task.seq_len), "exact (task length)")
        out.sweeps.append(Sweep(f"head means: {options.n_reference} reference sequences", reference, 64))
        n_ablations = a.n_layers * a.n_heads + 2 * a.n_layers
        out.sweeps.append(Sweep(f"ablations: 1 unablated + {a.n_layers} layers x ({a.n_heads} heads + all heads + "
                                f"skip) over {options.n_eval} held-out sequences", evaluation, 256,
                                repeat=1 + n_ablations, full_logits=True))
        wt = ctx.target.windtunnel
        directory = Path(wt["dir"])
        checkpoints = sorted((directory / "checkpoints").glob("step-*.pt")) if wt["cached"] else []
        if options.curves == "off":
            out.notes.append("two timescales: --curves off")
        elif (directory / "curves.json").exists():
            out.notes.append("two timescales: read from curves.json")
        elif len(checkpoints) >= 2:
            probe = Lengths(min(128, options.n_sequences), float(task.seq_len), int(task.seq_len), "exact")
            held = Lengths(min(512, options.n_eval), float(task.seq_len), int(task.seq_len), "exact")
            out.sweeps.append(Sweep(f"two timescales: {len(checkpoints)} checkpoints x probe sequences", probe, 64,
                                    repeat=len(checkpoints)))
            out.sweeps.append(Sweep(f"two timescales: {len(checkpoints)} checkpoints x held-out sequences", held, 256,
                                    repeat=len(checkpoints), full_logits=True))
        else:
            out.notes.append("two timescales: checkpoints counted once the wind tunnel is trained")
    if task is None or ctx.run.prompts:
        lengths, source = ctx.default_prompts()
        if task is not None:
            lengths, source = ctx.user_prompts(), str(ctx.run.prompts)
        out.sweeps.append(Sweep(f"Q-K rows at the final token ({source})", lengths, ctx.batch, layers=a.n_layers,
                                readout_width=a.n_heads * lengths.max * 2))
        if task is None:
            for load in nulls:
                out.loads.append(load)
                out.sweeps.append(Sweep(f"{load.what}: Q-K rows", lengths, ctx.batch, layers=a.n_layers,
                                        readout_width=a.n_heads * lengths.max * 2, on="null"))
    return out


PLANNERS = {"extract": plan_extract, "geometry": plan_geometry, "domain": plan_domain, "sula": plan_sula,
            "ablation": plan_ablation, "mechanisms": plan_mechanisms}


def register_planner(suite: str, planner) -> None:
    """Give a plug-in suite a cost model: planner(ctx, options) -> SuitePlan (ctx: the planning
    context: ctx.arch, ctx.run, ctx.batch, ctx.default_prompts(), ctx.nulls(options, suite); see plan_extract).
    A suite without one is listed as not planned. Registering a name twice is a ValueError."""
    if suite in PLANNERS:
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
    """(matmul FLOP/s in `dtype`, memory bandwidth bytes/s) of this CPU, measured once per process in
    about 0.1-0.2 s: repeated 1024 x 1024 matmuls (smaller ones measure thread start-up more than
    arithmetic: a third of the rate on 2 cores), and a 32 MB tensor copy."""
    import torch

    torch_dtype = getattr(torch, dtype)
    n = 1024
    a = torch.randn(n, n).to(torch_dtype)
    b = torch.randn(n, n).to(torch_dtype)
    torch.mm(a, b)  # warm-up
    reps, start = 0, time.perf_counter()
    while reps < 50 and (reps < 2 or time.perf_counter() - start < 0.1):
        torch.mm(a, b)
        reps += 1
    flops = 2 * n**3 * reps / max(time.perf_counter() - start, 1e-9)
    x = torch.empty(8 * 2**20, dtype=torch.float32)
    y = torch.empty_like(x)
    y.copy_(x)
    reps, start = 0, time.perf_counter()
    while reps < 20 and (reps < 2 or time.perf_counter() - start < 0.04):
        y.copy_(x)
        reps += 1
    bandwidth = 2 * x.numel() * 4 * reps / max(time.perf_counter() - start, 1e-9)  # read + write
    return flops, bandwidth


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
        how = (f"memory: {'given' if device_memory is not None else 'MemAvailable'}; throughput: a {dtype} matmul "
               f"benchmark, {measured_flops / 1e9:.0f} GFLOP/s x {CPU_EFFICIENCY} efficiency, copy bandwidth "
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
                         f"{_fmt_bytes(phase.activation_bytes)} + margin max(10%, 1 GiB)"
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
    ctx = _Context(target, run, counter, tokenizer)
    by_name = {c.suite: c for c in configs}
    suite_plans = []
    for config in configs:
        name = config.suite
        planner = PLANNERS.get(name)
        if planner is None:
            suite_plans.append(SuitePlan(name, skipped="not planned: no cost model (a plug-in suite without "
                                                        "geomprobe.plan.register_planner); its passes are not in the "
                                                        "totals"))
            continue
        if name == "ablation":
            entry = planner(ctx, config, by_name.get("sula"))
        else:
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
    arch = target.arch
    info = device_info(device, run.dtype, run.device_map, device_memory, host_memory, device_name)
    weights, weights_how = weights_bytes(arch, run.dtype, run.quantize)
    if run.backend == "tl":
        weights_how += "; x 2 while the tl backend runs (its own copy of the model)"
    tl_factor = 2 if run.backend == "tl" else 1
    dtype_bytes = DTYPE_BYTES[run.dtype]
    null_weights = arch.n_params * dtype_bytes

    # activation peak over the sweeps of the model (null sweeps share the same shape)
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
    per_prompt = max(per_prompt, 1)

    # phases: the model alone; with each kind of load beside it
    phases = [Phase("the model", weights * tl_factor + peak, 0, weights * tl_factor, peak)]
    loads = [load for suite in suite_plans for load in suite.loads]
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

    fits, why = True, ""
    for phase in phases:
        need = phase.device_bytes
        if info.memory is not None and not _fits(need, info.memory):
            fits = False
            why = (f"{phase.name}: needs {_fmt_bytes(need + _margin(need))} (weights {_fmt_bytes(phase.weights_bytes)} + "
                   f"activations {_fmt_bytes(phase.activation_bytes)} + margin {_fmt_bytes(_margin(need))}) but "
                   f"{info.name} has {_fmt_bytes(info.memory)}")
            break
        host_limit = info.host_memory
        if phase.host_bytes and host_limit is not None and info.kind != "cpu" and \
                phase.host_bytes + MARGIN_MIN > host_limit:
            fits = False
            why = (f"{phase.name}: needs {_fmt_bytes(phase.host_bytes + MARGIN_MIN)} of CPU RAM (the copy is built "
                   f"there, + 1 GiB) but {_fmt_bytes(host_limit)} is available")
            break
    if fits and info.memory is None:
        why = "device memory unknown: not checked (pass the memory to plan for a GPU that is not here)"

    # time
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
    sweeps_low = max(compute_s, memory_s)
    sweeps_high = 2 * (compute_s + memory_s) + overhead_s
    load_low, load_high = weights / DISK_BYTES_PER_S[1], weights / DISK_BYTES_PER_S[0]
    init_rate = _init_rate()
    for load in loads:
        if load.kind == "init":
            build = 2 * load.n_params / init_rate  # torch's default init, then transformers' _init_weights
            move = load.bytes / PCIE_BYTES_PER_S if load.where == "device" and info.kind == "cuda" else 0.0
            load_low, load_high = load_low + build / 2 + move, load_high + build + 2 * move
        else:
            load_low, load_high = load_low + load.bytes / DISK_BYTES_PER_S[1], load_high + load.bytes / DISK_BYTES_PER_S[0]
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
                     f"(about {_fmt_bytes(arch.n_params * dtype_bytes)} in {run.dtype})")
    if info.kind == "cuda" and run.device_map is None and info.host_memory is not None and weights > info.host_memory:
        notes.append(f"without --device-map the weights are loaded through CPU memory first ({_fmt_bytes(weights)}, "
                     f"{_fmt_bytes(info.host_memory)} available): --device-map auto loads them straight to the GPUs")
    if run.dtype == "float32" and info.kind == "cuda":
        notes.append("float32 on a GPU runs at the fp32 rate (TF32 is off by default); --dtype bfloat16 halves the "
                     "weights and is many times faster")
    time_how = (f"sweeps {_fmt_range(sweeps_low, sweeps_high)}: [max(compute {_fmt_time(compute_s)}, "
                f"weight reads {_fmt_time(memory_s)} ({sum(s.n_batches for s in suite_plans):,} forward calls x "
                f"{_fmt_bytes(gpu_weights * tl_factor)} / bandwidth"
                + (" x the share of blocks a call runs" if any(s.blocks < 1 for p in suite_plans for s in p.sweeps)
                   else "")
                + (f", + {_fmt_bytes(offloaded)} offloaded over PCIe each" if offloaded else "")
                + ")), 2 x (compute + reads) + 1 ms per layer and call]"
                + (f" at {QUANT_SLOWDOWN[run.quantize]} x the dense rate for {run.quantize} kernels" if run.quantize else "")
                + f"; + loads {_fmt_range(load_low, load_high)} (weights from disk at 0.5-2 GB/s; null "
                  f"copies initialised on the CPU at a measured {init_rate / 1e6:.0f}M params/s, twice)")
    return Plan(model=target.spec, source=target.arch.source, arch=arch, dtype=run.dtype, quantize=run.quantize,
                device=device, device_map=run.device_map, backend=run.backend, batch_size=run.batch_size,
                device_info=info, weights_bytes=weights, weights_how=weights_how, activation_bytes=peak,
                activation_per_prompt=per_prompt, activation_fixed=fixed, activation_batch=peak_batch,
                activation_how=how, activation_where=where, suites=suite_plans,
                flops=flops_total, time_s=(sweeps_low + load_low, sweeps_high + load_high), load_s=(load_low, load_high),
                time_how=time_how, phases=phases, fits=fits, why=why, notes=notes, tokens_how=counter.how)


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
    never raises: a plan that cannot be made comes back with fits=True and the reason in why."""
    try:
        return plan(model_spec, suite_configs if suite_configs is not None else "extract", run_config=run_config,
                    device=device)
    except Exception as error:  # noqa: BLE001 - a preflight must never stop a run by itself
        text = str(error).splitlines()[0] if str(error) else type(error).__name__
        return Plan.unavailable(str(model_spec), text)


check_fits = preflight  # the name the issue uses


__all__ = ["Architecture", "DeviceInfo", "Lengths", "Load", "Phase", "Plan", "Sweep", "SuitePlan", "TokenCounter",
           "architecture_from_fields", "cached_tokenizer", "check_fits", "cpu_benchmark", "device_info",
           "parameter_groups", "plan", "preflight", "recommend_batch_size", "recommended_batch", "register_planner",
           "resolve_target", "weights_bytes"]
