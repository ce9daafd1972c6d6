"""From prompts to token ids: prompts from strings, tokenization (a BOS kept when cutting to
max_tokens), named single tokens, the unknown token, right padding, and the compact int32 store of
many prompts' ids. Apart from the engine because prefix reuse, the mechanisms and paper_code
tokenize and pad as extraction does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from geomprobe.errors import ConfigError
from geomprobe.prompts import Prompt


def resolve_token_ids(tokenizer, tokens: Sequence[str]) -> list[int]:
    """Each named token must be exactly one token of this tokenizer (no special tokens added)."""
    ids = []
    for token in tokens:
        encoded = tokenizer.encode(token, add_special_tokens=False)
        if len(encoded) != 1:
            raise ConfigError(f"token {token!r} is {len(encoded)} tokens under this model's tokenizer "
                              f"({encoded}); name single tokens (a leading space often matters)")
        ids.append(encoded[0])
    return ids


def tokenize(tokenizer, prompts: Sequence[Prompt], max_tokens: int | None) -> list[list[int]]:
    """Each prompt with the tokenizer's default special tokens (a BOS where its post-processor adds
    one), keeping the last max_tokens. A leading BOS stays: a longer prompt keeps its BOS and its
    last max_tokens - 1 tokens (with max_tokens 1, only the last token), since a model trained
    with a BOS reads its first position as an attention sink."""
    texts = [p.text for p in prompts]
    try:  # one call for the whole list: a fast tokenizer encodes it in a batch (no padding, same ids)
        encoded = [list(ids) for ids in tokenizer(texts)["input_ids"]] if texts else []
    except (TypeError, ValueError, AttributeError):  # a tokenizer that takes one text at a time
        encoded = None
    if encoded is None or len(encoded) != len(texts):
        encoded = [tokenizer(text)["input_ids"] for text in texts]
    if max_tokens is not None:
        bos = getattr(tokenizer, "bos_token_id", None)
        encoded = [ids if len(ids) <= max_tokens else
                   [ids[0], *ids[len(ids) - max_tokens + 1:]] if bos is not None and ids[0] == bos and max_tokens > 1
                   else ids[-max_tokens:] for ids in encoded]
    return encoded


def as_prompts(prompts: str | Prompt | Iterable[str | Prompt]) -> list[Prompt]:
    """Prompts from a string, a Prompt, or an iterable of either. A string at position i becomes
    Prompt(id=f"prompt-{i}", text=the string); a Prompt keeps its id."""
    items = [prompts] if isinstance(prompts, (str, Prompt)) else list(prompts)
    given = {item.id for item in items if isinstance(item, Prompt)}
    out = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            item = Prompt(id=f"prompt-{i}", text=item)
            if item.id in given:
                raise ConfigError(f"extract: string {i} would get the id '{item.id}', which a Prompt in the same list "
                                  "already has: give every prompt as a Prompt with its own id")
        elif not isinstance(item, Prompt):
            raise ConfigError(f"extract: prompt {i} is of type {type(item).__name__}; give strings or "
                              "geomprobe.prompts.Prompt objects")
        out.append(item)
    return out


def unknown_token_id(tokenizer) -> int | None:
    """The id of the tokenizer's unknown token, or None when it has none, or when that id is also its
    BOS, EOS or padding token (GPT-2 and GPT-NeoX call <|endoftext|> all four; their byte-level BPE
    never produces an unknown token, and a BOS it adds is not one)."""
    unk = getattr(tokenizer, "unk_token_id", None)
    others = {getattr(tokenizer, name, None) for name in ("bos_token_id", "eos_token_id", "pad_token_id")}
    return None if unk is None or unk in others else int(unk)


def unknown_words(tokenizer, text: str) -> list[str]:
    """The pieces of `text` that the tokenizer writes as its unknown token (by character offsets where
    the tokenizer gives them, else the unknown token's own string), in order."""
    unk = unknown_token_id(tokenizer)
    if unk is None:
        return []
    try:
        encoded = tokenizer(text, return_offsets_mapping=True)
        spans = [text[a:b] or str(tokenizer.unk_token) for t, (a, b) in zip(encoded["input_ids"],
                                                                            encoded["offset_mapping"]) if t == unk]
    except (NotImplementedError, KeyError, TypeError, ValueError):  # a slow tokenizer has no offsets
        spans = [str(tokenizer.unk_token)] * tokenizer(text)["input_ids"].count(unk)
    return spans


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int):
    """Right-pad: (input_ids int64 [batch, T], attention_mask int64 [batch, T], final_index [batch])."""
    import torch

    width = max(len(s) for s in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        input_ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        attention_mask[row, : len(seq)] = 1
    final_index = torch.tensor([len(s) - 1 for s in sequences], dtype=torch.long)
    return input_ids, attention_mask, final_index


def _pad_id(tokenizer) -> int:
    for name in ("pad_token_id", "eos_token_id", "unk_token_id"):
        value = getattr(tokenizer, name, None)
        if value is not None:
            return value
    return 0


class _Encoded:
    """Token ids of many prompts, tokenized `chunk` prompts at a time into flat int32 arrays (4 bytes a
    token rather than a Python list of ints; 100,000 prompts of ~20 tokens hold 9 MB)."""

    def __init__(self, tokenizer, prompts: Sequence[Prompt], max_tokens: int | None, chunk: int = 1024):
        self.chunk = chunk
        self.ids: list[np.ndarray] = []
        self.offsets: list[np.ndarray] = []
        self.lengths = np.zeros(len(prompts), dtype=np.int64)
        for start in range(0, len(prompts), chunk):
            part = tokenize(tokenizer, prompts[start: start + chunk], max_tokens)
            lengths = np.array([len(ids) for ids in part], dtype=np.int64)
            self.lengths[start: start + len(part)] = lengths
            self.ids.append(np.fromiter((t for ids in part for t in ids), dtype=np.int32, count=int(lengths.sum())))
            self.offsets.append(np.concatenate([[0], np.cumsum(lengths)]))

    def __len__(self) -> int:
        return len(self.lengths)

    def count(self, token_id: int) -> np.ndarray:
        """int64 [n_prompts]: how often `token_id` occurs in each prompt's (kept) tokens."""
        counts = [np.diff(np.concatenate([[0], np.cumsum(ids == token_id)])[offsets]) for ids, offsets in
                  zip(self.ids, self.offsets)]
        return np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64)

    def __getitem__(self, index: int) -> list[int]:
        part, row = divmod(index, self.chunk)
        offsets = self.offsets[part]
        return self.ids[part][offsets[row]: offsets[row + 1]].tolist()
