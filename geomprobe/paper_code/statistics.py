"""The released scripts' statistics on the n x p matrix of final-token vectors (METHODS.md section 11):
PCA spectra and coordinates, the participation ratio, correlations, the attention entropy and the SULA
calibration, with MANIFOLD_SCRIPTS saying which script does what; numpy and scipy only, no model.
"""

from __future__ import annotations

import numpy as np


def _prepared(matrix, standardise: bool) -> np.ndarray:
    """Centred columns; divided by their (ddof 0) std if `standardise`, a zero-variance column kept
    as zeros (scikit-learn's StandardScaler; geomprobe drops such columns, with the same spectrum)."""
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"PCA needs a matrix [n >= 2, p], got shape {x.shape}")
    x = x - x.mean(axis=0)
    if standardise:
        std = x.std(axis=0)
        x = x / np.where(std > 10 * np.finfo(np.float64).eps, std, 1.0)
    return x


def pc_eigenvalues(matrix, standardise: bool) -> np.ndarray:
    """Covariance eigenvalues (ddof 1, scikit-learn's explained_variance_), largest first, of a
    matrix [n, p]: min(n, p) of them, of the centred columns (`standardise=False`: the raw PCA of
    `run_sula_main.py`, `visualize_sula_controls.py`) or of the standardised ones
    (`standardise=True`: `analyze_icl_sula.py`, `sula_experiments.py`, `analyze_geometry.py`, and
    geomprobe). Exact SVD; the released scripts' scikit-learn PCA picks the randomised solver,
    unseeded, for their shapes (150-250 x 512-2560 with 2 or 10 components): the same to within
    that solver's error."""
    singular = np.linalg.svd(_prepared(matrix, standardise), compute_uv=False)
    return singular**2 / (np.asarray(matrix).shape[0] - 1)


def pc_variance_fractions(matrix, standardise: bool) -> np.ndarray:
    """Explained-variance fractions [min(n, p)] of `pc_eigenvalues`, largest first: each over the
    whole spectrum (also what scikit-learn's explained_variance_ratio_ gives with n_components=10)."""
    eig = pc_eigenvalues(matrix, standardise)
    return eig / eig.sum()


def pc_coordinates(matrix, standardise: bool, n_components: int = 2, sign: str = "sklearn") -> np.ndarray:
    """Prompt coordinates [n, n_components] on the leading PCs. The sign of a PC is arbitrary, and so
    is the sign of any correlation with it; `sign` fixes it:
      "sklearn": scikit-learn >= 1.5 (its svd_flip on the loadings): each PC's largest-|loading|
                 entry positive; the released scripts' signed figures (rho -0.77) carry this sign
                 (or, with scikit-learn < 1.5, the next one);
      "coordinates": the largest-|coordinate| prompt positive (scikit-learn < 1.5, and geomprobe
                 before it orients PC1 by the entropy)."""
    if sign not in ("sklearn", "coordinates"):
        raise ValueError(f"unknown sign convention '{sign}': choose 'sklearn' or 'coordinates'")
    u, s, vt = np.linalg.svd(_prepared(matrix, standardise), full_matrices=False)
    k = min(n_components, len(s))
    coords = u[:, :k] * s[:k]
    for j in range(k):
        signed = vt[j] if sign == "sklearn" else coords[:, j]
        if signed[np.argmax(np.abs(signed))] < 0:
            coords[:, j] *= -1
    return coords


def participation_ratio(eigenvalues, top: int | None = None) -> float:
    """(sum l)^2 / sum l^2 over the `top` largest eigenvalues, or all of them (top=None, geomprobe's
    `pr`). The released `analyze_icl_sula.py` (`compute_pca_metrics`) keeps PCA(n_components=10),
    so its PR is over the top 10 only (with 1e-12 added to the denominator): at most 10 whatever the
    spectrum, and smaller than the full-spectrum PR when the tail is flat."""
    eig = np.sort(np.asarray(eigenvalues, dtype=np.float64).ravel())[::-1]
    if top is not None:
        eig = eig[:top]
    if eig.size == 0 or eig.sum() <= 0:
        raise ValueError("participation ratio needs at least one positive eigenvalue")
    return float(eig.sum() ** 2 / (eig**2).sum())


def correlation(x, y, method: str = "pearson") -> float:
    """Pearson (np.corrcoef, what `analyze_icl_sula.py`, `run_sula_main.py` and
    `compare_sula_interventions.py` use) or Spearman (scipy, what `sula_experiments.py`,
    `analyze_geometry.py` and geomprobe use) correlation of two vectors."""
    x, y = np.asarray(x, dtype=np.float64).ravel(), np.asarray(y, dtype=np.float64).ravel()
    if method == "pearson":
        return float(np.corrcoef(x, y)[0, 1])
    if method == "spearman":
        from scipy.stats import spearmanr

        return float(spearmanr(x, y)[0])
    raise ValueError(f"unknown correlation method '{method}': choose 'pearson' or 'spearman'")


# Which script does what to the n x p matrix of final-token vectors (one row per prompt).
MANIFOLD_SCRIPTS = {
    "analyze_icl_sula": dict(standardise=True, method="pearson", align_sign=False, pr_top=10,
                             readout="the code's last-layer values (Pythia: neox_split as released)",
                             file="paper3_llm/sula_pipeline/analyze_icl_sula.py"),
    "run_sula_main": dict(standardise=False, method="pearson", align_sign=True, pr_top=None,
                          readout="the code's last-layer values", file="paper3_llm/sula_pipeline/run_sula_main.py"),
    "sula_experiments": dict(standardise=True, method="spearman", align_sign=False, pr_top=None,
                             readout="hidden_states[-1] (post final norm)", file="paper3_llm/sula_experiments.py"),
    "analyze_geometry": dict(standardise=True, method="spearman", align_sign=False, pr_top=None,
                             readout="hidden_states[-1] (post final norm); entropy: full next-token, bits",
                             file="paper3_llm/analyze_geometry.py"),
}


def script_file(script: str) -> str:
    """The released file (relative to the repository root, as DEFINITIONS' released_file) that
    MANIFOLD_SCRIPTS[script] follows, e.g. "experiments/paper3_llm/sula_experiments.py"."""
    return "experiments/" + MANIFOLD_SCRIPTS[script]["file"]


def released_value_manifold(matrix, entropy_bits, script: str = "analyze_icl_sula") -> dict:
    """One released script's value-manifold numbers from an [n, p] matrix (one row per prompt, the
    last layer's final-token vectors flattened) and an entropy per prompt (Bayes entropy for the
    SULA scripts, the model's next-token entropy for `analyze_geometry`). `MANIFOLD_SCRIPTS` says
    what each script standardises, correlates and reads:
      analyze_icl_sula: standardised PCA, Pearson rho(PC1, H_bayes) with scikit-learn's sign, PR over
                        the top 10 eigenvalues;
      run_sula_main:    raw (centred) PCA, Pearson, PC1 flipped so that rho >= 0;
      sula_experiments, analyze_geometry: standardised PCA of post-norm hidden states, Spearman.
    Which script printed the recorded Pythia-410M figures (PC1 26.4%, rho -0.77) is not recorded:
    analyze_icl_sula and sula_experiments both print a signed rho with scikit-learn's sign.
    geomprobe: standardised values with the correct split, Spearman, PC1 oriented rho >= 0, PR over
    the whole spectrum, and for SULA the correlation given k as the headline."""
    try:
        settings = MANIFOLD_SCRIPTS[script]
    except KeyError:
        raise ValueError(f"unknown script '{script}': choose one of {', '.join(MANIFOLD_SCRIPTS)}") from None
    matrix = np.asarray(matrix, dtype=np.float64).reshape(len(matrix), -1)
    eig = pc_eigenvalues(matrix, settings["standardise"])
    fractions = eig / eig.sum()
    pc1 = pc_coordinates(matrix, settings["standardise"], n_components=1)[:, 0]
    rho = correlation(pc1, entropy_bits, settings["method"])
    if settings["align_sign"] and np.isfinite(rho) and rho < 0:
        rho = -rho
    return {"script": script, "pc1": float(fractions[0]), "pc2": float(fractions[1]) if len(fractions) > 1 else 0.0,
            "pc12": float(fractions[:2].sum()), "participation_ratio": participation_ratio(eig, settings["pr_top"]),
            "rho_pc1_entropy": rho, "method": settings["method"], "standardised": settings["standardise"]}


def attention_entropy_by_layer(attention_final_row) -> np.ndarray:
    """attention_final_row [n_prompts, n_layers, n_heads, seq] (the final query's row, zero-padded to
    a common seq) -> [n_layers] bits: per head -sum p log2(p + 1e-12) with p renormalised by
    (sum + 1e-12), then the mean over heads, then over prompts (`analyze_icl_sula.py`,
    `compute_attention_entropy`; probabilities from eager attention's output_attentions). This is
    geomprobe's Hbar(l) (METHODS.md section 4) up to those epsilons, and the two agree on real runs."""
    attn = np.asarray(attention_final_row, dtype=np.float64)
    if attn.ndim != 4:
        raise ValueError(f"attention must be [n_prompts, n_layers, n_heads, seq], got shape {attn.shape}")
    p = attn / (attn.sum(axis=-1, keepdims=True) + 1e-12)
    entropy = -(p * np.log2(p + 1e-12)).sum(axis=-1)
    return entropy.mean(axis=2).mean(axis=0)


def sula_label_entropy_bits(p_l1, p_l2) -> np.ndarray:
    """The released H_model: the full-vocabulary probabilities of the two label tokens, renormalised
    (p / (p1 + p2 + 1e-12)), binary entropy in bits with log2(p + 1e-12)
    (`extract_geometry_sula.py`, `compute_posterior_and_entropy_from_probs`). geomprobe's H_model is
    the same quantity (`geomprobe.analysis.sula_metrics.restrict_to_labels`)."""
    p1, p2 = np.asarray(p_l1, dtype=np.float64), np.asarray(p_l2, dtype=np.float64)
    total = p1 + p2 + 1e-12
    p1, p2 = p1 / total, p2 / total
    return -(p1 * np.log2(p1 + 1e-12) + p2 * np.log2(p2 + 1e-12))


def sula_calibration(model_entropy_bits, bayes_entropy_bits, k) -> dict:
    """The released entropy calibration: {str(k): {"mae_bits", "pearson"}, ..., "all": {...}} with
    MAE = mean |H_model - H_bayes| and Pearson r (NaN where H_bayes is constant or one prompt)
    (`analyze_icl_sula.py`, `compute_entropy_calibration`, per k; `compare_sula_interventions.py`
    adds "all"). geomprobe reports the same MAE with a bootstrap interval, beside baselines that
    read no evidence (a k-only predictor)."""
    model = np.asarray(model_entropy_bits, dtype=np.float64)
    bayes = np.asarray(bayes_entropy_bits, dtype=np.float64)
    k = np.asarray(k)

    def summary(mask) -> dict:
        sub_model, sub_bayes = model[mask], bayes[mask]
        pearson = float(np.corrcoef(sub_model, sub_bayes)[0, 1]) if len(sub_model) > 1 and sub_bayes.std() > 0 \
            else float("nan")
        return {"mae_bits": float(np.mean(np.abs(sub_model - sub_bayes))), "pearson": pearson}

    out = {str(value): summary(k == value) for value in sorted(set(k.tolist()))}
    out["all"] = summary(np.ones(len(model), dtype=bool))
    return out
