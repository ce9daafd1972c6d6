"""The value-manifold sample the geometry and domain suites share, below both so neither imports the
other: the manifold options, the candidates (a corpus, --prompts or a wind tunnel's task), the
sample drawn from them by prompt length or by next-token entropy (METHODS.md section 6), and the
readout matrix a manifold is fitted on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from geomprobe.analysis.stratified import stratified_sample
from geomprobe.config import Readout
from geomprobe.errors import ConfigError
from geomprobe.extraction import extract

from .base import SuiteConfig, option, suite_prompts

N_WINDTUNNEL_CANDIDATES = 1000


@dataclass
class ManifoldOptions(SuiteConfig):
    """Options of the suites that sample prompts by entropy and read a value manifold (geometry, domain)."""

    n_per_quintile: int = option(15, "prompts drawn per quintile of --sample's variable (0: every candidate)", min=0)
    sample: Literal["length", "entropy"] = option(
        "length", "how the prompts are drawn from the candidates: length (quintiles of the prompt length in tokens, "
                  "model-independent: the untrained copies read the model's sample, no candidate passes) | entropy "
                  "(paper III: quintiles of the model's next-token entropy; each copy scores every candidate and "
                  "draws its own sample by its own entropy), METHODS.md section 6")
    corpus: str = option("mixed", "candidate corpus when --prompts is not given (see `geomprobe prompts list`)")
    readout: Readout = option("values", "what the value-manifold analysis reads")
    n_null: int = option(200, "draws of the shuffle and Gaussian nulls", min=1)
    max_per_final_token: int = option(0, "balance the candidates over the token each prompt ends in: keep at most "
                                         "this many per final token (seeded) before sampling; 0: no cap", min=0)
    manifold_ci: Literal["jackknife", "bootstrap"] = option(
        "jackknife", "intervals of PC1, PC1+PC2 and participation ratio: jackknife (leave-one-out, covers at about "
                     "the nominal rate) | bootstrap (BCa, percentile fallback: with fewer prompts than value columns "
                     "it can exclude its own estimate)")

    def readouts(self) -> tuple[str, ...]:
        return (self.readout,)



def candidate_prompts(ctx, corpus: str | None = None):
    """(candidates, description): the user's prompts, a wind-tunnel model's own task sequences,
    or a named corpus."""
    return suite_prompts(ctx, n_windtunnel=N_WINDTUNNEL_CANDIDATES, corpus=corpus or ctx.options.corpus)


def stratified_prompts(ctx, candidates, work_dir: Path, label: str, loaded=None, who: str = ""):
    """The stratified-entropy sample of `candidates` (METHODS.md section 6) under `loaded` (default:
    the suite's model; an untrained null draws its own sample from the same candidates the same
    way) and what was done. With n_per_quintile 0 every candidate is kept; an encoder (no
    next-token entropy) draws uniformly. who: the copy, for the progress lines ('copy 3/19 (init-1002)')."""
    config, seed = ctx.options, ctx.seed
    loaded = loaded or ctx.loaded
    n_layers = loaded.adapter.shape.n_layers
    balanced = None
    if config.max_per_final_token:
        candidates, balanced = balance_final_tokens(loaded.tokenizer, candidates, config.max_per_final_token,
                                                    ctx.run.max_tokens, seed)
    chosen, record = _stratified(ctx, loaded, candidates, work_dir, label, config, seed, n_layers, who)
    if balanced is not None:
        record["final_token_balance"] = balanced
    return chosen, record


def balance_final_tokens(tokenizer, candidates, cap: int, max_tokens, seed: int):
    """At most `cap` candidates per final token (a seeded draw within each token, original order
    kept), and what was done."""
    from geomprobe.extraction import tokenize

    finals = [ids[-1] if ids else -1 for ids in tokenize(tokenizer, candidates, max_tokens)]
    rng = np.random.default_rng([seed, 17])
    keep = np.zeros(len(candidates), dtype=bool)
    for token in sorted(set(finals)):
        rows = np.flatnonzero(np.asarray(finals) == token)
        keep[rows if len(rows) <= cap else rng.choice(rows, size=cap, replace=False)] = True
    if keep.sum() < 2:
        raise ConfigError(f"--max-per-final-token {cap}: the candidates end in {len(set(finals))} distinct token(s), "
                          "which leaves fewer than 2 prompts; raise the cap or use other prompts")
    kept = [c for c, k in zip(candidates, keep) if k]
    return kept, {"cap": cap, "n_candidates_before": len(candidates), "n_candidates_after": len(kept),
                  "n_distinct_final_tokens": len(set(finals))}


def _stratified(ctx, loaded, candidates, work_dir, label, config, seed, n_layers, who=""):
    if config.n_per_quintile == 0:
        return candidates, {"stratified": False, "why": "--n-per-quintile 0: every candidate", "n": len(candidates)}
    if config.sample == "length":
        return length_stratified(loaded.tokenizer, candidates, config.n_per_quintile, ctx.run.max_tokens, seed, label)
    if not loaded.adapter.has_next_token:  # an encoder: same sample size, drawn uniformly
        n = min(len(candidates), 5 * config.n_per_quintile)
        picks = np.random.default_rng(seed).choice(len(candidates), size=n, replace=False)
        chosen = [candidates[int(i)] for i in picks]
        return chosen, {"stratified": False, "n": n, "n_candidates": len(candidates), "seed": seed,
                        "ids": [p.id for p in chosen],
                        "why": "encoder: no next-token entropy to stratify by; drawn uniformly instead"}
    scores = extract(loaded, candidates, ctx.extraction_config(layers=[n_layers - 1], readouts=(), tokens=[]),
                     out_dir=work_dir / f"candidates-{label}" if label else work_dir / "candidates",
                     progress=ctx.progress, label=f"{ctx.suite}: " + (f"{who}, " if who else "") + "candidates"
                     + (f" ({label})" if label else ""))
    entropy = scores["next_entropy_bits"]
    try:
        sample = stratified_sample(entropy, n_per_bin=config.n_per_quintile, n_bins=5, seed=seed)
    except ValueError as error:
        raise ConfigError(f"{label or 'candidates'}: {error}") from None
    chosen = [candidates[i] for i in sample.indices]
    record = {"stratified": True, "by": "entropy", "n_candidates": len(candidates), "n": len(chosen),
              "ids": [p.id for p in chosen], "quintile": sample.bins, "edges_bits": sample.edges_bits,
              "n_candidates_per_quintile": sample.n_candidates_per_bin, "seed": seed,
              "candidate_entropy_bits": {"min": float(entropy.min()), "median": float(np.median(entropy)),
                                         "max": float(entropy.max())}}
    return chosen, record


def length_stratified(tokenizer, candidates, n_per_quintile: int, max_tokens, seed: int, label: str = ""):
    """(chosen, record): n_per_quintile candidates from each quintile of the prompt length in tokens
    (after --max-tokens), seeded, ties between equal lengths broken by a seeded draw (not by the
    corpus's order, which groups sources). It depends on the tokenizer and the texts only, so the
    model and its untrained copies read one sample and no model scores the candidates (METHODS.md
    section 6)."""
    from geomprobe.extraction import tokenize

    lengths = np.array([len(ids) for ids in tokenize(tokenizer, candidates, max_tokens)], dtype=np.float64)
    jitter = np.random.default_rng([seed, 29]).random(len(lengths)) * 0.5  # orders ties only
    try:
        sample = stratified_sample(lengths + jitter, n_per_bin=n_per_quintile, n_bins=5, seed=seed)
    except ValueError as error:
        raise ConfigError(f"{label or 'candidates'}: {str(error).replace('entropy bin', 'length bin')}") from None
    chosen = [candidates[i] for i in sample.indices]
    edges = np.quantile(lengths, np.linspace(0, 1, 6))
    return chosen, {"stratified": True, "by": "length", "n_candidates": len(candidates), "n": len(chosen),
                    "ids": [p.id for p in chosen], "quintile": sample.bins,
                    "edges_tokens": [float(e) for e in edges],
                    "n_candidates_per_quintile": sample.n_candidates_per_bin, "seed": seed,
                    "candidate_tokens": {"min": int(lengths.min()), "median": float(np.median(lengths)),
                                         "max": int(lengths.max())}}


def shares_sample(config) -> bool:
    """Whether the untrained copies read the model's own sample: a model-independent draw
    (--sample length) or every candidate (--n-per-quintile 0)."""
    return config.sample == "length" or config.n_per_quintile == 0


def readout_matrix(extraction, readout: str) -> np.ndarray:
    """[n_prompts, n_layers, features...] for the value-manifold analysis."""
    if readout not in extraction.arrays:
        raise ConfigError(f"readout '{readout}' was not extracted: add it to --readouts")
    return extraction[readout]
