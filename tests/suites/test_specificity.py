"""What the verdict's criteria can and cannot tell (METHODS.md sections 4, 5 and 5.1).

- Specificity of focusing: a GPT-NeoX of the tiny shape trained for a few hundred steps to copy a
  sequence (the next token is determined: no posterior to track) focuses its attention far more
  than its untrained copies: the criterion detects learned retrieval, and the verdict says so.
- A planted model with all three signatures gets `full`, so `full` is reachable with nulls on.
- Fail closed: a comparison that cannot be computed makes its criterion "not tested", never met.
"""

import json

import numpy as np
import pytest
import torch

from geomprobe.analysis.null_comparison import ABOVE, NOT_TESTED, SAME, not_tested
from geomprobe.analysis.verdict import VerdictThresholds, verdict
from geomprobe.config import RunConfig
from geomprobe.nulls import fresh_copy
from geomprobe.prompts import Prompt
from geomprobe.runner import run
from geomprobe.suites.geometry import GeometryConfig

N_SYMBOLS, HALF = 24, 6


def _copy_task_model(path, steps: int = 300, seed: int = 0):
    """A 2-layer GPT-NeoX (width 64) trained to repeat a random sequence of HALF symbols after a
    separator, saved with its word-level tokenizer; returns (directory, copy accuracy)."""
    from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

    from geomprobe.windtunnel.tokenizer import task_tokenizer

    vocab = ["<pad>", "<bos>", "<unk>", "|"] + [f"s{i}" for i in range(N_SYMBOLS)]
    tokenizer = task_tokenizer(vocab)
    torch.manual_seed(seed)
    config = GPTNeoXConfig(vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=128, max_position_embeddings=32, pad_token_id=0, bos_token_id=1,
                           eos_token_id=1, attn_implementation="eager")
    model = GPTNeoXForCausalLM(config)
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(seed)

    def batch(n):
        symbols = rng.integers(4, len(vocab), size=(n, HALF))
        rows = np.c_[np.ones((n, 1), int), symbols, np.full((n, 1), 3), symbols]
        return torch.as_tensor(rows)

    for _ in range(steps):
        rows = batch(64)
        logits = model(rows).logits[:, HALF + 1:-1]  # predictions of the copied half
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), rows[:, HALF + 2:].reshape(-1))
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.eval()
    with torch.no_grad():
        rows = batch(256)
        accuracy = float((model(rows).logits[:, HALF + 1:-1].argmax(-1) == rows[:, HALF + 2:]).float().mean())
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path), accuracy, vocab


def _copy_prompts(vocab, n: int = 40, seed: int = 1) -> list[Prompt]:
    """Sequences cut inside the copied half, so the next token is determined by the context."""
    rng = np.random.default_rng(seed)
    prompts = []
    for i in range(n):
        symbols = [vocab[j] for j in rng.integers(4, len(vocab), size=HALF)]
        cut = 1 + i % (HALF - 1)
        prompts.append(Prompt(id=f"copy-{i}", text=" ".join(symbols + ["|"] + symbols[:cut]), domain="copy",
                              source="test"))
    return prompts


@pytest.fixture
def shared_copies(tmp_path, monkeypatch):
    """The copy cache on, in tmp_path: every "model" of a calibration meets the same ten copies on
    the same prompts, so the copies' extractions after the first model's come from the cache
    (bit-identical, tests/extraction/test_copy_cache.py), as in a sweep over checkpoints."""
    from geomprobe import copycache

    monkeypatch.setenv("GEOMPROBE_COPY_CACHE_MB", "512")
    monkeypatch.setattr(copycache, "cache_dir", lambda: tmp_path / "copy-cache")


def _untrained_geometry(load_tiny, tmp_path, seed: int, prompts: str, out, sample: str) -> dict:
    """An untrained tiny-Llama "model" (torch seed `seed`) through the geometry suite against 10
    copies (seeds 1000-1009) on `prompts`: its results' untrained_null."""
    loaded = load_tiny("tiny-llama")
    path = tmp_path / f"untrained-{seed}"
    fresh_copy(loaded, seed).model.save_pretrained(path)
    loaded.tokenizer.save_pretrained(path)
    run(RunConfig(model=str(path), prompts=prompts, out=str(out)),
        GeometryConfig(n_per_quintile=3, n_boot=20, n_null=10, init_seeds=0, step0="off", null="init:10",
                       sample=sample), progress=False)
    return json.loads((out / "geometry" / "results.json").read_text())["untrained_null"]


def _prompt_file(path, prompts):
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in prompts))
    return str(path)


@pytest.mark.slow
def test_a_copy_task_model_meets_focusing_so_focusing_is_retrieval_not_inference(tmp_path, one_thread):
    directory, accuracy, vocab = _copy_task_model(tmp_path / "copy")
    assert accuracy > 0.9  # it learned to copy: attention must find the earlier occurrence
    prompts = _prompt_file(tmp_path / "copy.jsonl", _copy_prompts(vocab))
    run(RunConfig(model=directory, prompts=prompts, out=str(tmp_path / "run")),
        GeometryConfig(n_per_quintile=0, n_boot=100, n_null=20, init_seeds=1, null="init:5"), progress=False)
    results = json.loads((tmp_path / "run" / "geometry" / "results.json").read_text())
    focusing = results["untrained_null"]["comparisons"]["focusing"]
    # untrained copies attend almost uniformly; the copy model focuses
    assert abs(focusing["null_mean"]) < 0.1 and focusing["model"] > 0.3
    assert focusing["status"] == ABOVE and results["verdict"]["focusing"]["met"]
    assert "copy task" in results["verdict"]["focusing"]["specificity"]
    assert "learned retrieval" in results["verdict"]["summary"]
    # kept from the top label, evidence of inference: none of the geometry statistics counts (its PC1+PC2
    # sits about 1.4 copy sd above its copies: with these five it is even "better", p 0.015)
    from geomprobe import load_run

    evidence = load_run(tmp_path / "run").evidence()
    assert evidence["state"] == "not tested" and evidence["primary"] is None
    assert set(evidence["left_out"]) == {"geometry focusing", "geometry keys", "geometry PC1, PC1+PC2"}
    assert "geometry alone is not evidence of inference" in results["verdict"]["summary"]


def _planted(loaded, seed: int = 5):
    """Every signature planted in a tiny Llama: W_K rows orthonormal in every layer (|cos| 0), a
    rank-one last-layer W_V (PC1 = 1), layer 0 attending uniformly (W_Q = 0) and every later layer
    attending to the final token itself (W_Q = 40 W_K per query head: the self score is the
    largest, rotary leaves it unrotated)."""
    model = fresh_copy(loaded, seed).model
    config = model.config
    d_model, head_dim = config.hidden_size, config.hidden_size // config.num_attention_heads
    group = config.num_attention_heads // config.num_key_value_heads
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for index, block in enumerate(model.model.layers):
            attention = block.self_attn
            basis, _ = torch.linalg.qr(torch.randn(d_model, d_model, generator=generator))
            attention.k_proj.weight.copy_(basis[:, : attention.k_proj.weight.shape[0]].T)
            keys = attention.k_proj.weight.reshape(config.num_key_value_heads, head_dim, d_model)
            queries = keys.repeat_interleave(group, dim=0).reshape(-1, d_model)
            attention.q_proj.weight.copy_(0 * queries if index == 0 else 40 * queries)
        values = model.model.layers[-1].self_attn.v_proj.weight
        values.copy_(torch.outer(torch.randn(values.shape[0], generator=generator),
                                 torch.randn(d_model, generator=generator)) / d_model ** 0.5)
    return model


@pytest.mark.slow
def test_a_planted_model_gets_full_with_nulls_on(tmp_path, load_tiny, demo_prompts, one_thread):
    loaded = load_tiny("tiny-llama")
    path = tmp_path / "planted"
    _planted(loaded).save_pretrained(path)
    loaded.tokenizer.save_pretrained(path)
    prompts = _prompt_file(tmp_path / "prompts.jsonl", demo_prompts[:40])
    run(RunConfig(model=str(path), prompts=prompts, out=str(tmp_path / "run")),
        GeometryConfig(n_per_quintile=0, n_boot=100, n_null=20, init_seeds=1, null="init:4"), progress=False)
    results = json.loads((tmp_path / "run" / "geometry" / "results.json").read_text())
    comparisons = results["untrained_null"]["comparisons"]
    # every criterion met, and every one of its statistics better than the untrained copies: the
    # value manifold (PC1+PC2, and PC1), the keys (more orthogonal) and focusing
    for name in ("pc12", "pc1", "keys", "focusing"):
        assert comparisons[name]["status"] == ABOVE, (name, comparisons[name])
    assert results["verdict"]["keys"]["non_inferiority"]["met"]
    assert results["verdict"]["label"] == "full", results["verdict"]["summary"]
    assert results["verdict"]["paper_iii"]["label"] == "full"


def _cmp(status, model=0.5, nulls=(0.1, 0.12, 0.09)):
    return {"status": status, "model": model, "nulls": list(nulls), "null_mean": float(np.mean(nulls)),
            "difference": {"value": model - float(np.mean(nulls)), "ci95": [None, None]}}


def test_fail_closed_a_comparison_not_computed_is_never_met():
    everything = {"pc1": _cmp(ABOVE), "pc12": _cmp(ABOVE), "keys": _cmp(SAME, 0.1, (0.1, 0.1, 0.11)),
                  "focusing": _cmp(ABOVE)}
    full = verdict(0.6, 0.7, True, 1.0, 0.8, untrained=everything, null="init:3")
    assert full.label == "full"
    # the same numbers, with the keys and focusing comparisons not computable: not tested, not met
    broken = {**everything, "keys": not_tested("keys", "no null value"), "focusing": not_tested("focusing", "boom")}
    judged = verdict(0.6, 0.7, True, 1.0, 0.8, untrained=broken, null="init:3")
    assert judged.label == "absent" and judged.n_met == 1 and judged.n_not_tested == 2
    assert judged.keys["state"] == NOT_TESTED and judged.focusing["state"] == NOT_TESTED
    assert "[not tested: boom]" in judged.summary()
    # a comparison missing altogether (nulls on) is not tested either
    missing = verdict(0.6, 0.7, True, 1.0, 0.8, untrained={"pc12": _cmp(ABOVE)}, null="init:3")
    assert missing.n_met == 1 and missing.keys["state"] == NOT_TESTED
    # with all comparisons indistinguishable the same numbers give absent, never partial
    same = {**{name: _cmp(SAME) for name in ("pc1", "pc12", "focusing")}, "keys": everything["keys"]}
    assert verdict(0.6, 0.7, True, 1.0, 0.8, untrained=same, null="init:3").n_met == 1  # keys: a level, met


@pytest.mark.parametrize("model, state", [(0.45, "met"), (0.55, "not met"), (0.505, "not resolvable")])
def test_keys_are_a_level_within_a_margin_drawn_from_data(model, state):
    """Untrained copies at 0.0993 (0.0957, 0.1001, 0.1021; their mean's 90% t interval 0.0938-0.1048):
    0.45 is 4.3-4.8x, within the data's margin of 5.1 [5.05, 5.11]; 0.55 is 5.2-5.9x, beyond it; 0.505
    is 4.8-5.4x, which straddles the margin's interval: not resolvable, and not met either."""
    from geomprobe.analysis.verdict import KEYS_MARGIN, KEYS_MARGIN_CI

    keys = _cmp(SAME, model, (0.0957, 0.1001, 0.1021))
    judged = verdict(0.1, 0.2, True, 1.0, 0.1, untrained={"keys": keys}, null="init:3")
    level = judged.keys["non_inferiority"]
    assert judged.keys["state"] == state and judged.keys["met"] is (state == "met")
    assert (level["margin"], tuple(level["margin_ci"])) == (KEYS_MARGIN, KEYS_MARGIN_CI)
    assert level["ratio_ci"][0] < model / 0.0993 < level["ratio_ci"][1]
    assert ("[not resolvable]" in judged.summary()) is (state == "not resolvable")
    # a margin chosen by hand has no interval: the same model at 2x is plainly not within it
    by_hand = verdict(0.1, 0.2, True, 1.0, 0.1, untrained={"keys": keys}, null="init:3",
                      thresholds=VerdictThresholds(keys_margin=2.0))
    assert by_hand.keys["non_inferiority"]["margin_ci"] == [2.0, 2.0] and by_hand.keys["state"] == "not met"


def test_paper_iii_label_and_evidence_of_inference_beside_the_verdict():
    """Paper III's criteria by thresholds alone (an untrained network can meet them), and geomprobe's
    evidence of inference: PC1+PC2 better than untrained, the statistic a copy-task model fails."""
    everything = {"pc1": _cmp(ABOVE), "pc12": _cmp(ABOVE), "keys": _cmp(SAME, 0.1, (0.1, 0.1, 0.11)),
                  "focusing": _cmp(ABOVE)}
    from geomprobe.analysis.verdict import evidence_of_inference

    full = verdict(0.6, 0.7, True, 1.0, 0.8, untrained=everything, null="init:3")
    assert full.paper_iii["label"] == "full" and full.label == "full"
    retrieval = {**everything, "pc1": _cmp(SAME), "pc12": _cmp(SAME)}
    judged = verdict(0.35, 0.45, True, 1.0, 0.9, untrained=retrieval, null="init:3")
    assert judged.paper_iii["label"] == "full" and judged.label == "partial"
    alone = verdict(0.35, 0.45, True, 1.0, 0.9)
    assert alone.paper_iii["n_met"] == 3 and alone.label == "full" and alone.null is None
    # evidence of inference counts sula and the ablation against copies, never the geometry
    geometry_only = {"geometry": {"verdict": full.to_dict(), "untrained_null": {"comparisons": everything}}}
    assert evidence_of_inference(geometry_only)["state"] == "not tested"
    sula = {"untrained_null": {"comparisons": {"mae_bits": _cmp(SAME), "abs_rho_pc1_H_bayes_given_k": _cmp(SAME)}}}
    assert evidence_of_inference({**geometry_only, "sula": sula})["state"] == "none"
    ablation = {"conditions": [{"id": "cut/L2", "primary": {"untrained": _cmp(ABOVE)}},
                               {"id": "cut/multi", "primary": {"untrained": not_tested("x", "no copy ran it")}}]}
    # one pre-declared comparison decides: sula's MAE where the run has it, the ablation's first cut else
    found = evidence_of_inference({"sula": sula, "ablation": ablation})
    assert found["state"] == "none" and found["primary"]["comparison"] == "sula MAE to H_bayes"
    assert found["supporting_better_than_untrained"] == ["ablation cut/L2 (log2 true/random vs copies)"]
    alone = evidence_of_inference({"ablation": ablation})
    assert alone["state"] == "evidence" and alone["better_than_untrained"] == ["ablation cut/L2 (log2 true/random vs copies)"]
    rho_only = {"untrained_null": {"comparisons": {"abs_rho_pc1_H_bayes_given_k": _cmp(ABOVE)}}}
    assert evidence_of_inference({"sula": rho_only})["state"] == "not tested"  # supporting only, never primary


@pytest.mark.slow
def test_untrained_models_sit_at_z_zero_and_each_null_draws_its_own_sample(tmp_path, load_tiny, demo_prompts,
                                                                         one_thread, shared_copies):
    """--sample entropy (paper III's protocol). The same prompts seen the same way: untrained
    tiny-Llama "models" (seeds 20-29), each
    through the geometry suite with 10 untrained copies that draw their own stratified samples by
    their own entropy. Exchangeable by construction, so z = (model - null mean) / null sd averages
    about 0 and "above untrained" is rare (analyses/null_calibration.py measures the same at
    larger sizes); and each copy's sample is the stratified draw of its own candidate entropies."""
    from geomprobe.analysis.stratified import stratified_sample
    from geomprobe.extraction import load_extraction

    prompts = _prompt_file(tmp_path / "prompts.jsonl", demo_prompts[:40])
    z, above = [], 0
    for seed in range(20, 30):
        out = tmp_path / f"run-{seed}"
        cmp = _untrained_geometry(load_tiny, tmp_path, seed, prompts, out, sample="entropy")["comparisons"]["pc1"]
        z.append((cmp["model"] - cmp["null_mean"]) / cmp["null_sd"])
        above += cmp["status"] == ABOVE
    # mean of 10 z's: sd about 0.35 under exchangeability (the issue measured +1.04 with the model's
    # sample reused for the copies, at 75 of 1,448 candidates)
    assert abs(float(np.mean(z))) < 0.8, z
    assert above <= 2, z
    model_ids = json.loads((out / "geometry" / "sample.json").read_text())["ids"]
    candidate_ids = [p.id for p in demo_prompts[:40]]
    differs = 0
    for name in (f"init-{1000 + i}" for i in range(10)):
        null_dir = out / "geometry" / "nulls" / name
        ids = json.loads((null_dir / "sample.json").read_text())["ids"]
        entropy = load_extraction(null_dir / "candidates")["next_entropy_bits"]
        drawn = stratified_sample(entropy, n_per_bin=3, n_bins=5, seed=0).indices
        assert ids == [candidate_ids[i] for i in drawn]
        differs += ids != model_ids
    assert differs >= 5  # the copies' entropies choose other prompts than the model's did


@pytest.mark.slow
def test_a_model_independent_sample_keeps_untrained_models_at_z_zero_without_candidate_passes(
        tmp_path, load_tiny, demo_prompts, one_thread, shared_copies):
    """--sample length (the default): the sample is drawn from the prompts' token counts, so the
    model and its copies read the same prompts and no copy scores a candidate. Untrained tiny-Llama
    "models" (seeds 40-51) with 10 copies each: exchangeable, so z averages about 0 and the model's
    rank among its copies is spread over the ranks, as the entropy-stratified protocol's is."""
    prompts = _prompt_file(tmp_path / "prompts.jsonl", demo_prompts[:40])
    z, above, ranks = [], 0, []
    for seed in range(40, 52):
        out = tmp_path / f"run-{seed}"
        nulls = _untrained_geometry(load_tiny, tmp_path, seed, prompts, out, sample="length")
        cmp = nulls["comparisons"]["pc1"]
        z.append((cmp["model"] - cmp["null_mean"]) / cmp["null_sd"])
        above += cmp["status"] == ABOVE
        copies = [m["pc1"] for m in nulls["models"]]
        ranks.append(sum(value < cmp["model"] for value in copies))
        assert all(m["n_prompts_shared_with_model"] == 15 for m in nulls["models"])
    assert not list((out / "geometry").rglob("candidates*"))  # no model scored the candidates
    sample = json.loads((out / "geometry" / "sample.json").read_text())
    assert sample["by"] == "length" and sample["n"] == 15 and sample["n_candidates_per_quintile"] == [8] * 5
    # 12 models against the same 10 copies: their z's share the copies' mean, so the mean z has sd
    # about 0.42 (not 0.29); the ranks (0-10) must not pile at either end
    assert abs(float(np.mean(z))) < 0.8, z
    assert above <= 2, z
    assert 2 <= np.mean(ranks) <= 8 and sum(r == 10 for r in ranks) <= 3, ranks
