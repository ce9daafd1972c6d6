"""Frame-precision dissociation (paper II; METHODS.md section 9): across the checkpoints of a
transformer wind-tunnel run, how far each layer's attention patterns on a fixed probe set are
from the final checkpoint's, against the value-manifold PC1 share and the entropy MAE. Paper II
predicts the attention frame settles well before the value geometry and the calibration do.

Attention distance: the mean over probe sequences, heads and query positions (real tokens only)
of the total-variation distance 0.5 * sum_j |a_j - a*_j| between a checkpoint's attention row and
the final checkpoint's; 0 = identical, 1 = disjoint.

Precision: the last-layer value manifold at each probe's final supervised position (PC1 share,
and |Spearman rho| between PC1 and the exact Bayes entropy there), and the held-out entropy MAE.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from geomprobe.adapters import adapter_for
from geomprobe.analysis.pca import explained_variance_ratios, standardise
from geomprobe.analysis.windtunnel_metrics import entropy_bits
from geomprobe.hooks import capture_final_token

from .checkpoints import iter_checkpoints
from .tasks import make_task
from .train import evaluate


@torch.no_grad()
def _probe(model, tokens: torch.Tensor, final_index: torch.Tensor):
    """Attention [layers, batch, heads, T, T] (eager) and last-layer final-token values [batch, G*d]."""
    model.set_attn_implementation("eager")
    adapter = adapter_for(model)
    last = adapter.shape.n_layers - 1
    with capture_final_token(adapter, [last], final_index) as store:
        out = model(input_ids=tokens, output_attentions=True, use_cache=False)
    attentions = torch.stack([a.float() for a in out.attentions])
    return attentions, store["values"][last].flatten(1).numpy()


def dissociation_curves(run_dir: str | Path, n_probe: int = 128, seed: int = 7, n_eval: int = 512) -> list[dict]:
    run_dir = Path(run_dir)
    from geomprobe.readers import read_metrics
    from geomprobe.windtunnel.checkpoints import _config

    metrics = read_metrics(run_dir / "metrics.json")
    if _config(metrics, run_dir)["arch"] != "transformer":
        raise ValueError("frame-precision curves need a transformer run (attention patterns)")
    task = make_task(metrics["config"]["task"], **metrics["config"]["task_options"])
    batch = task.sample(n_probe, np.random.default_rng(seed))
    tokens = torch.as_tensor(batch.tokens)
    real = tokens != task.pad_id  # [batch, T]
    # read values at a random supervised position of each probe, so the Bayes entropy there varies
    rng = np.random.default_rng(seed + 1)
    final_index = torch.as_tensor([rng.choice(np.flatnonzero(row)) for row in batch.supervised])
    bayes_entropy = np.array([entropy_bits(batch.bayes[row, int(t)]) for row, t in enumerate(final_index)])
    probes = []
    for info, module in iter_checkpoints(run_dir):
        attentions, values = _probe(module.model, tokens, final_index)
        probes.append((info, module, attentions, values))
    final_attn = probes[-1][2]
    weights = real[None, :, None, :].float()  # query rows of real tokens
    curves = []
    for info, module, attentions, values in probes:
        tv = 0.5 * (attentions - final_attn).abs().sum(-1)  # [layers, batch, heads, T]
        per_layer = (tv * weights).sum((1, 2, 3)) / (weights.sum() * attentions.shape[2])
        ratios = explained_variance_ratios(values)
        rho = _abs_rho_pc1(values, bayes_entropy)
        score = evaluate(module, task, n_eval)
        curves.append({"step": info["step"], "elapsed_s": round(info["elapsed_s"], 1),
                       "attention_distance_to_final": [float(x) for x in per_layer],
                       "attention_distance_mean": float(per_layer.mean()),
                       "pc1": float(ratios[0]), "pc12": float(ratios[:2].sum()), "abs_rho_pc1_bayes_entropy": rho,
                       "entropy_mae_bits": score["entropy_mae_bits"], "kl_bits": score["kl_bits"]})
    return curves


def _abs_rho_pc1(values: np.ndarray, target: np.ndarray) -> float | None:
    """|Spearman rho| between the values' PC1 coordinate and `target` (None if either is constant)."""
    from scipy.stats import spearmanr

    z, _ = standardise(values)
    if z.shape[1] == 0 or np.ptp(target) == 0:
        return None
    pc1 = z @ np.linalg.svd(z, full_matrices=False)[2][0]
    rho = spearmanr(pc1, target).statistic
    return None if not np.isfinite(rho) else float(abs(rho))
