"""Which prefix a real model's prompts should get: the mean next-token loss of the mixed corpus's
prompts (geomprobe.corpora "mixed", the first N of each source) with each candidate prefix.

Every condition scores the same tokens: the prompt's own tokens from its second onward (the
first has no context without a prefix), so the losses compare directly. Prints one line per
(model, prefix) and writes analyses/results/real_model_prefix-<date>.jsonl.

    .venv/bin/python analyses/real_model_prefix.py --models smollm2-135m gemma3-270m --n 40
"""

from __future__ import annotations

import argparse
import datetime
import json
import time
from pathlib import Path

import torch

from geomprobe.corpora import load_corpus
from geomprobe.models.loading import load_model


def candidates(tokenizer) -> dict[str, list[int]]:
    """prefix label -> the token ids put before the prompt's own tokens."""
    out = {"none": []}
    for name in ("bos_token", "eos_token"):
        token = getattr(tokenizer, name, None)
        if token:
            out[f"{name} {token}"] = [tokenizer.convert_tokens_to_ids(token)]
    for token in ("<|endoftext|>", "<|im_start|>", "<bos>"):
        ids = tokenizer.convert_tokens_to_ids(token)  # SmolLM2's unknown token is <|endoftext|> itself
        if isinstance(ids, int) and tokenizer.convert_ids_to_tokens(ids) == token and [ids] not in out.values():
            out[token] = [ids]
    return out


@torch.no_grad()
def mean_loss(model, prefix: list[int], texts: list[list[int]]) -> float:
    total, count = 0.0, 0
    for ids in texts:
        seq = torch.tensor([prefix + ids])
        logits = model(seq).logits[0].float()
        start = len(prefix)  # logits at position start predicts the prompt's second token
        logp = torch.log_softmax(logits[start:-1], dim=-1)
        target = seq[0, start + 1:]
        total += float(-logp.gather(1, target[:, None]).sum())
        count += len(target)
    return total / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma3-270m"])
    parser.add_argument("--n", type=int, default=40, help="prompts per source (5 sources)")
    parser.add_argument("--only", nargs="*", default=None, help="measure only these prefix labels")
    args = parser.parse_args()
    torch.set_num_threads(2)
    prompts = load_corpus("mixed")
    by_source: dict[str, list] = {}
    for p in prompts:
        by_source.setdefault(p.source, []).append(p)
    chosen = [p for group in by_source.values() for p in group[: args.n]]
    out = Path(__file__).parent / "results" / f"real_model_prefix-{datetime.date.today()}.jsonl"
    out.parent.mkdir(exist_ok=True)
    for alias in args.models:
        loaded = load_model(alias, device="cpu", attn_implementation="sdpa")
        tok = loaded.tokenizer
        texts = [tok(p.text, add_special_tokens=False)["input_ids"] for p in chosen]
        default = tok("a")["input_ids"][: -len(tok("a", add_special_tokens=False)["input_ids"])]
        for label, prefix in candidates(tok).items():
            if args.only is not None and label not in args.only:
                continue
            start = time.time()
            loss = mean_loss(loaded.model, prefix, texts)
            row = {"model": alias, "prefix": label, "prefix_ids": prefix, "tokenizer_default": prefix == default,
                   "loss_nats_per_token": round(loss, 4), "n_prompts": len(texts),
                   "n_tokens": sum(len(t) - 1 for t in texts), "seconds": round(time.time() - start, 1)}
            print(json.dumps(row), flush=True)
            with out.open("a") as handle:
                handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
