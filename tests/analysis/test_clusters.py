"""Cluster counts and purity (geomprobe.analysis.clusters) on cases with known answers, and the
last-layer readout of trained wind tunnels (geomprobe.windtunnel.trained)."""

from __future__ import annotations

import numpy as np
import pytest

from geomprobe.analysis.clusters import cluster_structure, purity
from geomprobe.errors import AnalysisError


def test_purity_by_hand():
    # clusters {0,1,2} -> labels a,a,b (2 right); {3,4} -> b,b (2 right): 4 of 5
    assert purity([0, 0, 0, 1, 1], ["a", "a", "b", "b", "b"]) == pytest.approx(0.8)
    assert purity([0, 1, 2, 3], [0, 0, 1, 1]) == 1.0  # a cluster per point is trivially pure
    assert purity([0, 0, 0, 0], [0, 1, 2, 3]) == 0.25


@pytest.mark.slow
def test_five_separated_clusters_are_counted_and_pure():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(5, 20)) * 6
    labels = rng.integers(5, size=1500)
    X = centres[labels] + rng.normal(size=(1500, 20))
    found = cluster_structure(X, labels, others={"unrelated": rng.integers(5, size=1500), "same": labels})
    assert found.count == 5 and found.n_labels == 5
    assert abs(found.others["unrelated"]["at_labels"].adjusted_rand) < 0.02
    same, primary = found.others["same"]["at_labels"], found.at_labels
    assert (same.purity, same.adjusted_rand, same.k) == (primary.purity, primary.adjusted_rand, primary.k)
    assert found.at_labels.purity > 0.97 and found.at_labels.adjusted_rand > 0.95
    assert found.at_labels.purity_shuffled < 0.35  # the label frequencies alone: about 0.2-0.25
    assert found.silhouettes[5] == max(found.silhouettes.values())


@pytest.mark.slow
def test_a_blob_with_random_labels_has_chance_scores():
    rng = np.random.default_rng(1)
    scores = []
    for seed in range(5):
        X = rng.normal(size=(1000, 16))
        labels = rng.integers(5, size=1000)
        found = cluster_structure(X, labels, seed=seed)
        scores.append(found.at_labels)
        assert abs(found.at_labels.adjusted_rand) < 0.02
        assert abs(found.at_labels.purity - found.at_labels.purity_shuffled) < 0.06
        assert found.at_labels.silhouette < 0.25
    assert abs(np.mean([s.adjusted_rand for s in scores])) < 0.01


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(AnalysisError, match="too few"):
        cluster_structure(np.zeros((20, 3)), np.arange(20) % 2)
    X = np.random.default_rng(0).normal(size=(200, 3))
    X[3, 1] = np.nan
    with pytest.raises(AnalysisError, match="NaN"):
        cluster_structure(X, np.arange(200) % 2)
    with pytest.raises(AnalysisError, match="one label per row"):
        cluster_structure(X[:, :2], np.arange(100))


@pytest.mark.parametrize("arch", [pytest.param("transformer", marks=pytest.mark.slow), "lstm", "mlp"])
def test_last_hidden_is_what_the_head_reads(arch):
    import torch

    from geomprobe.windtunnel.models import TransformerSpec, build
    from geomprobe.windtunnel.trained import last_hidden, output_head

    module, _ = build(arch, vocab_size=30, max_len=12, spec=TransformerSpec(32, 2, 2, 64), seed=0)
    module.eval()
    tokens = torch.randint(0, 30, (3, 12))
    hidden = last_hidden(module, tokens)
    with torch.no_grad():
        logits = module(tokens)
        again = output_head(module)(torch.as_tensor(hidden, dtype=torch.float32))
    assert hidden.shape[:2] == (3, 12)
    assert torch.allclose(logits, again, atol=1e-5)


@pytest.mark.slow
def test_the_shipped_hmm_tunnel_loads_with_its_task_and_scores_as_recorded():
    from geomprobe.windtunnel.reference import shipped_dir
    from geomprobe.windtunnel.train import evaluate
    from geomprobe.windtunnel.trained import load_trained

    module, task, metrics = load_trained(shipped_dir("hmm"))
    assert task.name == "hmm" and task.length == 15
    score = evaluate(module, task, n_sequences=256)
    assert score["entropy_mae_bits"] < 0.07  # the recorded held-out MAE is 0.047 on 1,024 sequences
