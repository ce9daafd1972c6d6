"""Stratified-entropy sampling of a prompt set (METHODS.md section 6). numpy only.

Every candidate's next-token entropy under the probed model is computed first (by a suite);
candidates are split into entropy quantile bins (quintiles by default) and the same number is
drawn from each bin, seeded, so the chosen prompts span low to high predictive entropy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from geomprobe.errors import AnalysisError


@dataclass(frozen=True)
class StratifiedSample:
    indices: list[int]  # into the candidate list, in draw order (bin by bin)
    bins: list[int]  # the bin of each chosen candidate (0 = lowest entropy)
    edges_bits: list[float]  # n_bins + 1 quantile edges of the candidates' entropies
    n_candidates_per_bin: list[int]
    n_per_bin: int
    seed: int

    def to_dict(self) -> dict:
        return asdict(self)


def stratified_sample(entropy_bits, n_per_bin: int = 15, n_bins: int = 5, seed: int = 0) -> StratifiedSample:
    """Draw `n_per_bin` candidates without replacement from each of `n_bins` entropy quantile bins.

    entropy_bits: [n_candidates] next-token entropies. Ties at an edge go to the lower bin. A bin
    with fewer than n_per_bin candidates is an error (ask for fewer, or give more candidates).
    """
    entropy = np.asarray(entropy_bits, dtype=np.float64)
    if entropy.ndim != 1 or len(entropy) == 0:
        raise AnalysisError("stratified sampling needs a 1-D array of candidate entropies")
    if not np.isfinite(entropy).all():
        raise AnalysisError("NaN or infinite entropy among the candidates: check the model's dtype")
    if n_bins < 1 or n_per_bin < 1:
        raise AnalysisError("n_bins and n_per_bin must be at least 1")
    edges = np.quantile(entropy, np.linspace(0, 1, n_bins + 1))
    # rank-based bins so that equal quantile edges (many tied entropies) still split evenly
    ranks = np.argsort(np.argsort(entropy, kind="stable"), kind="stable")
    bins = np.minimum(ranks * n_bins // len(entropy), n_bins - 1)
    rng = np.random.default_rng(seed)
    chosen, chosen_bins, counts = [], [], []
    for b in range(n_bins):
        members = np.flatnonzero(bins == b)
        counts.append(int(len(members)))
        if len(members) < n_per_bin:
            raise AnalysisError(f"entropy bin {b + 1} of {n_bins} has {len(members)} candidates, fewer than the "
                             f"{n_per_bin} to draw: lower --n-per-quintile or give more candidates")
        picks = rng.choice(members, size=n_per_bin, replace=False)
        chosen.extend(int(i) for i in picks)
        chosen_bins.extend([b] * n_per_bin)
    return StratifiedSample(chosen, chosen_bins, [float(e) for e in edges], counts, n_per_bin, seed)
