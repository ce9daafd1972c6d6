"""compare orders runs by training step and model size within a family, families as given."""

import random

from geomprobe.compare import RunIdentity, ordered_runs


def _runs(rows):
    return [RunIdentity(f"runs/{m}@{r}", f"{m}@{r}", m, r, step) for m, r, step in rows]


def test_checkpoints_in_training_order_and_models_by_size():
    expected = _runs([("pythia-70m", "step16", 16), ("pythia-160m", "step16", 16), ("pythia-160m", "step378", 378),
                      ("pythia-160m", "step1500", 1500), ("pythia-160m", "main", None), ("pythia-1b", "step16", 16),
                      ("pythia-1.4b", "main", None)])
    for seed in range(5):
        shuffled = expected[:]
        random.Random(seed).shuffle(shuffled)
        assert [shuffled[i] for i in ordered_runs(shuffled)] == expected
    alphabetical = sorted(expected, key=lambda run: run.run_dir)  # what a shell glob gives
    assert [r.revision for r in alphabetical if r.model == "pythia-160m"] == ["main", "step1500", "step16", "step378"]


def test_families_keep_the_order_given():
    runs = _runs([("tiny-neox", "main", None), ("pythia-410m", "step1000", 1000), ("tiny-llama", "main", None),
                  ("pythia-160m", "step1000", 1000)])
    assert [runs[i].model for i in ordered_runs(runs)] == ["tiny-neox", "pythia-160m", "pythia-410m", "tiny-llama"]
