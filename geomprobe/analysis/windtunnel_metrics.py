"""Scoring a model's predictive distribution against the exact Bayes predictive (METHODS.md
section 9). Pure numpy: arrays in, a small result object out.

Inputs, for N sequences of length T and K answer tokens:
    model_probs  [N, T, K]  the model's full-vocabulary next-token probabilities at the answer tokens
                            (not renormalised: their sum is the mass the model puts on answers)
    bayes        [N, T, K]  exact predictive over the answers (rows sum to 1 where supervised)
    supervised   [N, T]     bool
Entropies and KL are computed on the model's distribution restricted to the answers and
renormalised; the mass on answers and on feasible answers (Bayes > 0) is reported separately, so
a model that spreads mass over impossible tokens cannot hide.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from geomprobe.errors import AnalysisError

TINY = 1e-12


def entropy_bits(p, axis: int = -1) -> np.ndarray:
    """Shannon entropy in bits along `axis`, with 0 log 0 = 0 (an all-zero row gives 0)."""
    p = np.asarray(p, dtype=np.float64)
    logs = np.log2(np.where(p > 0, p, 1.0))
    return 0.0 - (p * logs).sum(axis=axis)  # 0.0 - x turns -0.0 into 0.0


@dataclass
class BayesScore:
    entropy_mae_bits: float  # per sequence mean over its supervised positions, then mean over sequences
    kl_bits: float  # KL(Bayes || model), same averaging
    mass_on_answers: float  # mean full-vocabulary mass on the answer tokens
    mass_on_feasible: float  # mean full-vocabulary mass on answers Bayes allows
    accuracy_determined: float | None  # argmax accuracy where Bayes is one-hot (None if never)
    n_sequences: int
    per_position: dict = field(default_factory=dict)  # position -> metrics averaged over sequences

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def score_against_bayes(model_probs, bayes, supervised) -> BayesScore:
    model_probs = np.asarray(model_probs, dtype=np.float64)
    bayes = np.asarray(bayes, dtype=np.float64)
    supervised = np.asarray(supervised, dtype=bool)
    if not supervised.any():
        raise AnalysisError("no supervised positions to score")
    mass = model_probs.sum(-1)
    renorm = model_probs / np.maximum(mass, TINY)[..., None]
    h_model = entropy_bits(renorm)
    h_bayes = entropy_bits(bayes)
    abs_err = np.abs(h_model - h_bayes)
    kl = (bayes * (np.log2(np.maximum(bayes, TINY)) - np.log2(np.maximum(renorm, TINY)))).sum(-1)
    feasible_mass = (model_probs * (bayes > 0)).sum(-1)
    determined = supervised & (bayes.max(-1) > 1 - 1e-9)
    correct = renorm.argmax(-1) == bayes.argmax(-1)

    def per_sequence_mean(values):
        sums = (values * supervised).sum(1)
        counts = supervised.sum(1)
        keep = counts > 0
        return float((sums[keep] / counts[keep]).mean())

    per_position = {}
    for t in np.flatnonzero(supervised.any(0)):
        rows = supervised[:, t]
        per_position[int(t)] = {
            "n": int(rows.sum()),
            "H_bayes_bits": float(h_bayes[rows, t].mean()),
            "H_model_bits": float(h_model[rows, t].mean()),
            "entropy_mae_bits": float(abs_err[rows, t].mean()),
            "kl_bits": float(kl[rows, t].mean()),
            "mass_on_feasible": float(feasible_mass[rows, t].mean()),
        }
    return BayesScore(
        entropy_mae_bits=per_sequence_mean(abs_err),
        kl_bits=per_sequence_mean(kl),
        mass_on_answers=float(mass[supervised].mean()),
        mass_on_feasible=float(feasible_mass[supervised].mean()),
        accuracy_determined=float(correct[determined].mean()) if determined.any() else None,
        n_sequences=int(supervised.any(1).sum()),
        per_position=per_position,
    )
