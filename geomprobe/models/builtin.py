"""Built-in models made from configs, with no model hub: the demo default and the test models.

Each is a small random-initialised model of one architecture family, paired with a byte-level
BPE tokenizer trained on geomprobe's own demo prompts (so any text tokenizes). They are built
deterministically (fixed seed) on first use and cached as ordinary Hugging Face model
directories under `cache_dir()/models/<name>-<fingerprint>`; delete the folder to rebuild.

They carry no learned structure: they exercise every code path, not the science. The trained
wind-tunnel models are the scientific ground truth.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from geomprobe.families import FAMILY_ROWS
from geomprobe.paths import cache_dir

BUILD_VERSION = "1"
VOCAB_SIZE = 512
SPECIAL_TOKENS = ["<|endoftext|>", "<s>", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]

_COMMON = dict(hidden_size=128, num_hidden_layers=4, num_attention_heads=8, max_position_embeddings=4096,
               initializer_range=0.1, vocab_size=VOCAB_SIZE)

@dataclass(frozen=True)
class TinyModel:
    """A built-in test model of one architecture family: random init from a transformers config."""

    config_class: str  # transformers config class name
    overrides: dict  # config fields beyond _COMMON
    family: str  # the adapter family (geomprobe.adapters)
    note: str  # what `geomprobe models` says about it
    special_tokens: str = "none"  # "bos": add <s> like Llama; "cls": [CLS] ... [SEP] like BERT; "none": like Pythia
    encoder: bool = False  # built as a bare encoder (no LM head)


# One per model type of the family table (geomprobe.families: its tiny model's config and note);
# tests run every code path on each.
TINY_MODELS: dict[str, TinyModel] = {
    row.tiny: TinyModel(row.config_class, row.tiny_overrides, row.layout, row.tiny_note, row.special_tokens,
                        encoder=row.encoder)
    for row in FAMILY_ROWS}
BUILTIN_CONFIGS: dict[str, tuple[str, dict]] = {name: (m.config_class, m.overrides) for name, m in TINY_MODELS.items()}


def tiny_shape(name: str) -> dict:
    """n_layers, n_heads, n_kv_heads, d_model of a built-in, from its config fields (no torch)."""
    fields = {**_COMMON, **TINY_MODELS[name].overrides}
    return {"n_layers": fields["num_hidden_layers"], "n_heads": fields["num_attention_heads"],
            "n_kv_heads": fields.get("num_key_value_heads", fields["num_attention_heads"]),
            "d_model": fields["hidden_size"]}


def demo_prompts_path() -> Path:
    return Path(__file__).resolve().parent.parent / "data" / "demo_prompts.jsonl"


def _tokenizer_corpus() -> list[str]:
    texts = [json.loads(line)["text"] for line in demo_prompts_path().read_text().splitlines() if line.strip()]
    return texts + ["".join(chr(c) for c in range(32, 127))]


def build_tokenizer(name: str):
    """A byte-level BPE tokenizer (vocab 512) with the model's special-token style: "bos" adds <s>
    like Llama, "cls" wraps text in [CLS] ... [SEP] like BERT, "none" adds nothing, like Pythia."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_tokenizer_corpus(), trainer=trainer)
    special = {}
    style = TINY_MODELS[name].special_tokens
    if style == "bos":
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                           special_tokens=[("<s>", tok.token_to_id("<s>"))])
        special = dict(bos_token="<s>", eos_token="<|endoftext|>")
    elif style == "cls":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
        special = dict(cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")
    else:
        special = dict(bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    return PreTrainedTokenizerFast(tokenizer_object=tok, **special)


def _fingerprint(name: str) -> str:
    blob = json.dumps([BUILD_VERSION, BUILTIN_CONFIGS[name], _COMMON]).encode() + demo_prompts_path().read_bytes()
    return hashlib.sha256(blob).hexdigest()[:10]


def build_model(name: str, seed: int = 0):
    """(model, tokenizer) of a built-in, freshly initialised with `seed`."""
    import torch
    import transformers

    class_name, overrides = BUILTIN_CONFIGS[name]
    config = getattr(transformers, class_name)(**{**_COMMON, **overrides})
    torch.manual_seed(seed)
    if TINY_MODELS[name].encoder:
        model = transformers.BertModel(config)
    else:
        model = transformers.AutoModelForCausalLM.from_config(config)
    return model.eval(), build_tokenizer(name)


def ensure_builtin(name: str) -> Path:
    """Path of the built-in model directory, building it first if it is not cached."""
    path = cache_dir() / "models" / f"{name}-{_fingerprint(name)}"
    if (path / "config.json").exists():
        return path
    model, tokenizer = build_model(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=path.parent))
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    from geomprobe.windtunnel.train import share_modes

    share_modes(staging)  # mkdtemp makes 0700 and save_pretrained 0600: readable by other users instead
    try:
        os.replace(staging, path)
    except OSError:  # another process built it first
        shutil.rmtree(staging, ignore_errors=True)
    return path
