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
from pathlib import Path

from geomprobe.paths import cache_dir

BUILD_VERSION = "1"
VOCAB_SIZE = 512
SPECIAL_TOKENS = ["<|endoftext|>", "<s>", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]

_COMMON = dict(hidden_size=128, num_hidden_layers=4, num_attention_heads=8, max_position_embeddings=4096,
               initializer_range=0.1, vocab_size=VOCAB_SIZE)

# name -> (transformers config class name, overrides)
BUILTIN_CONFIGS: dict[str, tuple[str, dict]] = {
    "tiny-neox": ("GPTNeoXConfig", dict(intermediate_size=512, rotary_pct=0.25, use_parallel_residual=True,
                                        tie_word_embeddings=False, bos_token_id=0, eos_token_id=0)),
    "tiny-llama": ("LlamaConfig", dict(intermediate_size=256, num_key_value_heads=2, bos_token_id=1,
                                       eos_token_id=0, pad_token_id=None)),
    "tiny-mistral": ("MistralConfig", dict(intermediate_size=256, num_key_value_heads=2, sliding_window=8,
                                           bos_token_id=1, eos_token_id=0)),
    "tiny-mixtral": ("MixtralConfig", dict(intermediate_size=128, num_key_value_heads=2, num_local_experts=4,
                                           num_experts_per_tok=2, sliding_window=None, bos_token_id=1,
                                           eos_token_id=0)),
    "tiny-phi": ("PhiConfig", dict(intermediate_size=512, partial_rotary_factor=0.4, bos_token_id=0,
                                   eos_token_id=0)),
    "tiny-bert": ("BertConfig", dict(intermediate_size=512, max_position_embeddings=512, pad_token_id=4)),
}


def demo_prompts_path() -> Path:
    return Path(__file__).resolve().parent.parent / "data" / "demo_prompts.jsonl"


def _tokenizer_corpus() -> list[str]:
    texts = [json.loads(line)["text"] for line in demo_prompts_path().read_text().splitlines() if line.strip()]
    return texts + ["".join(chr(c) for c in range(32, 127))]


def build_tokenizer(name: str):
    """A byte-level BPE tokenizer (vocab 512). tiny-llama/-mistral/-mixtral add a BOS like Llama;
    tiny-bert wraps text in [CLS] ... [SEP]; the others add nothing, like Pythia."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_tokenizer_corpus(), trainer=trainer)
    special = {}
    if name in ("tiny-llama", "tiny-mistral", "tiny-mixtral"):
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                           special_tokens=[("<s>", tok.token_to_id("<s>"))])
        special = dict(bos_token="<s>", eos_token="<|endoftext|>")
    elif name == "tiny-bert":
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
    if name == "tiny-bert":
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
    try:
        os.replace(staging, path)
    except OSError:  # another process built it first
        shutil.rmtree(staging, ignore_errors=True)
    return path
