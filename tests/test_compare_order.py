"""compare orders runs by model family, size and training step, not by the directories' names."""

import random

from geomprobe.compare import RunIdentity, run_order


def test_checkpoints_in_training_order_and_models_by_size():
    expected = [("pythia-70m", "step16", 16), ("pythia-160m", "step16", 16), ("pythia-160m", "step378", 378),
                ("pythia-160m", "step1500", 1500), ("pythia-160m", "main", None), ("pythia-1b", "step16", 16),
                ("pythia-1.4b", "main", None), ("tiny-neox", "main", None)]
    runs = [RunIdentity(f"runs/{m}@{r}", f"{m}@{r}", m, r, step) for m, r, step in expected]
    shuffled = runs[:]
    random.Random(0).shuffle(shuffled)
    assert sorted(shuffled, key=run_order) == runs
    alphabetical = sorted(runs, key=lambda run: run.run_dir)  # what a shell glob gives
    assert [r.revision for r in alphabetical if r.model == "pythia-160m"] == ["main", "step1500", "step16", "step378"]
