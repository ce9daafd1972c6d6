"""Prompts and their lengths in tokens: TokenCounter (a tokenizer's count, the wind tunnels' exact
word-level rule, or an estimate) and the prompt sets a planner counts (corpora, the demo prompts,
--prompts)."""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass

from .architecture import BOS_TYPES
from .target import ModelTarget

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
            special = 2 if not target.arch.causal else int(_prepends_bos(target))  # an encoder: [CLS] ... [SEP]
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


def _user_texts(source) -> tuple[str, ...]:
    """The texts of RunConfig.prompts: a file, or prompts given in Python."""
    from geomprobe.prompts import given_prompts

    return tuple(p.text for p in given_prompts(source))
