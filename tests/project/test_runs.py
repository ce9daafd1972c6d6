"""Run directories: manifest provenance, atomic resume after an interruption, config mismatch."""

import json

import numpy as np
import pytest

from geomprobe.errors import RunDirectoryError
from geomprobe.extraction import ExtractionConfig, extract
from geomprobe.hooks import edit_values
from geomprobe.runner import RunConfig, run


class Interrupt(Exception):
    pass


@pytest.mark.slow
def test_interrupted_extraction_resumes_and_matches_a_clean_run(load_tiny, demo_prompts, tmp_path):
    loaded = load_tiny("tiny-neox")
    prompts = demo_prompts[:20]
    config = ExtractionConfig(batch_size=4)
    calls = {"n": 0}

    def fail_on_third_batch(layer, v):
        calls["n"] += 1
        if calls["n"] == 3:
            raise Interrupt()
        return v

    out = tmp_path / "extraction"
    with pytest.raises(Interrupt):
        with edit_values(loaded.adapter, [0], fail_on_third_batch):
            extract(loaded, prompts, config, out_dir=out, progress=False)
    assert len(list((out / "shards").glob("shard-*.npz"))) == 2
    assert not (out / "meta.json").exists()

    forwards = {"n": 0}

    def count(layer, v):
        forwards["n"] += 1
        return v

    with edit_values(loaded.adapter, [0], count):
        resumed = extract(loaded, prompts, config, out_dir=out, progress=False)
    assert forwards["n"] == 3  # 20 prompts in batches of 4: 2 were done, 3 remained
    clean = extract(loaded, prompts, config, progress=False)
    for key in clean.arrays:
        np.testing.assert_allclose(resumed[key], clean[key], atol=1e-5, err_msg=key)
    assert not (out / "shards").exists()
    on_disk = np.load(out / "values.npy")
    assert on_disk.dtype == np.float32 and on_disk.shape == clean["values"].shape

    forwards["n"] = 0
    with edit_values(loaded.adapter, [0], count):
        extract(loaded, prompts, config, out_dir=out, progress=False)
    assert forwards["n"] == 0  # a finished extraction is read back, not recomputed


@pytest.mark.slow
def test_run_writes_manifest_and_refuses_a_different_config(tmp_path):
    out = tmp_path / "run"
    run(RunConfig(model="tiny-llama", out=str(out), seed=3, batch_size=16), progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["suites"]["extract"]["status"] == "complete"
    assert manifest["seed"] == 3 and manifest["backend"] == "hf"
    assert manifest["model"]["dtype"] == "float32" and manifest["model"]["family"] == "llama"
    assert "revision" in manifest["model"] and manifest["versions"]["torch"]
    assert manifest["suites"]["extract"]["prompts"]["n"] == 60
    for name in ("values", "attn_entropy_bits", "n_visible_keys", "next_entropy_bits"):
        assert (out / "extraction" / f"{name}.npy").exists()
    results = json.loads((out / "extract" / "results.json").read_text())
    assert len(results["layers"]) == 4 and results["n_prompts"] == 60
    assert len((out / "prompts.jsonl").read_text().splitlines()) == 60

    with pytest.raises(RunDirectoryError, match="differs in: dtype"):
        run(RunConfig(model="tiny-llama", out=str(out), seed=3, dtype="bfloat16"), progress=False)
    run(RunConfig(model="tiny-llama", out=str(out), seed=3, dtype="bfloat16", overwrite=True), progress=False)
    assert json.loads((out / "manifest.json").read_text())["config"]["dtype"] == "bfloat16"
