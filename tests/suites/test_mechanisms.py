"""Mechanism probes: the captured post-rotary q.k rows against the model's own eager
attention, head and layer ablations against plain forwards, the evidence definitions on hand-made
sequences, the statistics on cases with known answers, and the `mechanisms` suite end to end on
windtunnel-sula (20 training steps in tests) and on a tiny language model."""

import copy
import json

import numpy as np
import pytest
import torch

from geomprobe.analysis.mechanism_metrics import frame_orthogonality, head_concentration, settling_step, settling_steps
from geomprobe.analysis.qk_alignment import qk_alignment
from geomprobe.extraction import pad_batch
from geomprobe.mechanisms import (
    TaskLogits,
    ablation_scores,
    head_output_means,
    layer0_token_keys,
    mean_ablate_heads,
    query_rows,
    skip_layers,
)
from geomprobe.windtunnel.evidence import evidence_mask, query_positions_of
from geomprobe.windtunnel.tasks import make_task
from geomprobe.windtunnel.train import evaluate

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


@pytest.fixture(scope="module")
def tunnel(load_tiny):
    """windtunnel-sula as trained in tests (GEOMPROBE_WINDTUNNEL_STEPS=20) and its task."""
    loaded = load_tiny("windtunnel-sula")
    return loaded, make_task("sula")


def _batch(loaded, texts):
    encoded = [loaded.tokenizer(text)["input_ids"] for text in texts]
    return pad_batch(encoded, loaded.tokenizer.pad_token_id or 0)


# ---------------------------------------------------------------------------------------------
# Q-K rows: recomputed from the captured post-rotary q and k, equal to the model's own attention


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-neox", "tiny-gpt2"])
def test_query_rows_reproduce_the_models_own_attention(load_tiny, name):
    # loaded eager, so output_attentions gives the model's own probabilities; query_rows switches to
    # geomprobe's attention function for its pass and back afterwards
    loaded = load_tiny(name, attn_implementation="eager")
    input_ids, attention_mask, final_index = _batch(loaded, ["The cat sat on the mat and looked at the door.",
                                                             "Short one.", "A third prompt of middling size"])
    query_index = torch.stack([torch.tensor([0, 2, int(f) // 2, int(f)]) for f in final_index])
    capture = query_rows(loaded, input_ids, attention_mask, query_index, keep_qk=True)
    assert loaded.model.config._attn_implementation == "eager"
    with torch.no_grad():
        own = loaded.model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True,
                           use_cache=False).attentions
    rows = torch.arange(len(input_ids))[:, None]
    shape = loaded.adapter.shape
    for layer in range(shape.n_layers):
        expected = own[layer][rows, :, query_index].float()  # [batch, n_queries, H, T]
        torch.testing.assert_close(capture.probs[layer], expected, atol=2e-6, rtol=1e-5)
        # the cosines are those of the captured (rotated) q and k, and NaN exactly where the row may not look
        q, k = capture.query[layer], capture.key[layer]  # [b, nq, H, d], [b, H, T, d]
        cosine = torch.einsum("bqhd,bhkd->bqhk", torch.nn.functional.normalize(q, dim=-1),
                              torch.nn.functional.normalize(k, dim=-1))
        visible = capture.visible[layer]
        assert torch.equal(torch.isnan(capture.cosine[layer]), ~visible[:, :, None, :].expand_as(cosine))
        torch.testing.assert_close(capture.cosine[layer][~torch.isnan(capture.cosine[layer])],
                                   cosine[visible[:, :, None, :].expand_as(cosine)])
        assert capture.probs[layer][~visible[:, :, None, :].expand_as(cosine)].abs().max() == 0
    # padding is invisible to every row: the shortest prompt's final query sees only its own tokens
    short = int(torch.argmin(final_index))
    assert int(capture.visible[0][short, -1].sum()) == int(final_index[short]) + 1
    # rotary matters: the unrotated keys of layer 0 do not give the same scores
    if name == "tiny-llama":
        k_proj = loaded.adapter.key_module(0)
        norm = loaded.adapter.attention_input_norm(0)
        with torch.no_grad():
            raw = k_proj(norm(loaded.model.get_input_embeddings()(input_ids))).view(
                *input_ids.shape, shape.n_kv_heads, shape.d_head)
        rotated = capture.key[0][:, :: shape.n_heads // shape.n_kv_heads].transpose(1, 2)  # [b, T, G, d]
        torch.testing.assert_close(rotated[:, 0], raw[:, 0], atol=1e-5, rtol=1e-5)  # position 0: no rotation
        assert not torch.allclose(rotated[:, 5], raw[:, 5], atol=1e-3)


# ---------------------------------------------------------------------------------------------
# ablations


@pytest.mark.slow
def test_ablating_nothing_reproduces_the_baseline_mae_exactly(tunnel):
    loaded, task = tunnel
    adapter = loaded.adapter
    module = TaskLogits(loaded.model)
    baseline = evaluate(module, task, 64, seed=5)
    reference = task.sample(32, np.random.default_rng(1))
    means = head_output_means(loaded, reference.tokens, reference.tokens != task.pad_id)
    with mean_ablate_heads(adapter, {0: [], 1: []}, means), skip_layers(adapter, []):
        unablated = evaluate(module, task, 64, seed=5)
    assert unablated["entropy_mae_bits"] == baseline["entropy_mae_bits"]
    assert unablated["kl_bits"] == baseline["kl_bits"]
    scores = ablation_scores(loaded, task, n_eval=64, n_reference=16, eval_seed=5)
    assert scores["baseline"]["entropy_mae_bits"] == baseline["entropy_mae_bits"]
    assert len(scores["heads"]) == adapter.shape.n_layers and len(scores["heads"][0]) == adapter.shape.n_heads
    for row in scores["heads"]:
        for entry in row:
            assert entry["delta_mae_bits"] == pytest.approx(entry["entropy_mae_bits"] - baseline["entropy_mae_bits"])
    assert scores["skip_layer"][0]["entropy_mae_bits"] != baseline["entropy_mae_bits"]
    # a context-blind predictor sits far above the model
    assert scores["context_blind"]["entropy_mae_bits"] > baseline["entropy_mae_bits"]


@pytest.mark.slow
def test_mean_ablation_with_the_sequence_itself_as_reference_changes_nothing(tunnel):
    """The per-position mean over a reference batch of one sequence is that sequence's own z, so
    ablating every head of every layer with it must leave the logits as they are; with another
    reference it must not."""
    loaded, task = tunnel
    adapter = loaded.adapter
    batch = task.sample(2, np.random.default_rng(3))
    tokens = torch.as_tensor(batch.tokens[:1])
    every = {layer: range(adapter.shape.n_heads) for layer in range(adapter.shape.n_layers)}
    with torch.no_grad():
        plain = loaded.model(input_ids=tokens).logits
        with mean_ablate_heads(adapter, every, head_output_means(loaded, tokens)):
            same = loaded.model(input_ids=tokens).logits
        with mean_ablate_heads(adapter, {0: [1]}, head_output_means(loaded, batch.tokens[1:])):
            other = loaded.model(input_ids=tokens).logits
    torch.testing.assert_close(same, plain, atol=1e-5, rtol=1e-5)
    assert not torch.allclose(other, plain, atol=1e-4)


@pytest.mark.parametrize("name", ["tiny-llama", "tiny-neox"])
def test_skipping_a_layer_equals_the_model_without_it(load_tiny, name):
    loaded = load_tiny(name)
    input_ids, attention_mask, _ = _batch(loaded, ["One prompt that is long enough to matter here.", "Two."])
    with torch.no_grad():
        plain = loaded.model(input_ids=input_ids, attention_mask=attention_mask).logits
        with skip_layers(loaded.adapter, [1]):
            skipped = loaded.model(input_ids=input_ids, attention_mask=attention_mask).logits
        shorter = copy.deepcopy(loaded.model)
        blocks = shorter.base_model.layers
        shorter.base_model.layers = torch.nn.ModuleList([block for i, block in enumerate(blocks) if i != 1])
        shorter.config.num_hidden_layers -= 1
        manual = shorter(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
    real = attention_mask.bool()
    assert not torch.allclose(skipped[real], plain[real], atol=1e-3)
    torch.testing.assert_close(skipped[real], manual[real], atol=1e-5, rtol=1e-5)
    with torch.no_grad():  # hooks are gone after the block
        torch.testing.assert_close(loaded.model(input_ids=input_ids, attention_mask=attention_mask).logits, plain)


# ---------------------------------------------------------------------------------------------
# evidence definitions on hand-made sequences


def _ids(task, words):
    return np.array([[task.token_to_id[w] for w in words.split()]])


def test_evidence_of_a_hand_made_recall_sequence():
    task = make_task("recall", n_pairs=3)
    tokens = _ids(task, "<bos> k3 v7 k5 v1 k9 v2 ? k5")
    mask = evidence_mask(task, tokens, np.array([[8]]))
    assert np.flatnonzero(mask[0, 0]).tolist() == [3, 4]  # k5 and its value v1
    # attention with 0.7 on the matching key, 0.2 on its value: evidence mass 0.9
    probs = np.full((1, 1, 1, 9), 0.1 / 7)
    probs[..., 3], probs[..., 4] = 0.7, 0.2
    visible = np.ones((1, 9), dtype=bool)
    cosine = np.zeros_like(probs)
    cosine[..., 3] = 1.0
    qk = qk_alignment(np.repeat(probs, 2, 0), np.repeat(cosine, 2, 0), np.repeat(visible, 2, 0),
                      evidence=np.repeat(mask[:, 0], 2, 0), n_boot=20)
    assert qk.metrics["evidence_mass"]["value"][0] == pytest.approx(0.9)
    assert qk.evidence_uniform_share == pytest.approx(2 / 9)
    assert qk.metrics["top_weight"]["value"][0] == pytest.approx(0.7)
    assert qk.metrics["cos_evidence_minus_other"]["value"][0] == pytest.approx(0.5)  # (1 + 0)/2 - 0
    # the sampled batches agree with their own info: key of the probed pair, then its value
    batch = task.sample(16, np.random.default_rng(0))
    mask = evidence_mask(task, batch.tokens, query_positions_of(batch.supervised))
    for row in range(16):
        probe = batch.info["probe"][row]
        assert np.flatnonzero(mask[row, 0]).tolist() == [2 * probe + 1, 2 * probe + 2]


def test_evidence_of_bijection_and_sula_sequences():
    bijection = make_task("bijection", n=4)
    tokens = _ids(bijection, "<bos> k1 v3 k0 v2 k3 v0 k2 v1")
    positions = query_positions_of(np.isin(tokens, bijection.key_ids))  # the keys: 1, 3, 5, 7
    assert positions.tolist() == [[1, 3, 5, 7]]
    mask = evidence_mask(bijection, tokens, positions)
    assert [np.flatnonzero(row).tolist() for row in mask[0]] == [[], [2], [2, 4], [2, 4, 6]]
    sula = make_task("sula")
    tokens = _ids(sula, "<bos> apple : dax , river : lug , chair : dax . stone :")
    mask = evidence_mask(sula, tokens, np.array([[2, 6, 10, 14, -1]]))
    assert [np.flatnonzero(row).tolist() for row in mask[0]] == [[], [3], [3, 7], [3, 7, 11], []]
    assert evidence_mask(make_task("hmm"), tokens, np.array([[14]])) is None


# ---------------------------------------------------------------------------------------------
# statistics with known answers


def test_uniform_attention_has_log2_visible_entropy_and_the_uniform_evidence_share():
    rng = np.random.default_rng(0)
    n_rows, T = 12, 10
    lengths = rng.integers(2, T + 1, n_rows)
    visible = np.arange(T)[None] < lengths[:, None]
    probs = np.repeat((visible / visible.sum(1, keepdims=True))[:, None, None], 3, 2).repeat(2, 1)  # [n, 2, 3, T]
    cosine = np.where(visible[:, None, None], rng.uniform(-1, 1, probs.shape), np.nan)
    evidence = visible & (rng.random((n_rows, T)) < 0.5)
    qk = qk_alignment(probs, cosine, visible, evidence=evidence, sequence=np.arange(n_rows) // 3, n_boot=50)
    per_sequence = [np.mean(np.log2(lengths[s * 3:(s + 1) * 3])) for s in range(4)]
    assert qk.metrics["attn_entropy_bits"]["value"] == pytest.approx([np.mean(per_sequence)] * 2)
    assert qk.metrics["attn_entropy_normalised"]["value"] == pytest.approx([1.0, 1.0])
    assert qk.metrics["evidence_mass"]["value"][0] == pytest.approx(qk.evidence_uniform_share)
    assert qk.n_sequences == 4


def test_frame_orthogonality_against_known_cases():
    rng = np.random.default_rng(0)
    gaussian = rng.standard_normal((4, 20, 32))
    result = frame_orthogonality(gaussian, pool_keys=rng.standard_normal((4, 40, 32)), init=[gaussian])
    base = result["baselines"]
    assert base["gaussian"]["p05"] <= result["orth"] <= base["gaussian"]["p95"]
    assert base["shuffled"]["p05"] - 0.02 <= result["orth"] <= base["shuffled"]["p95"] + 0.02
    assert base["init"]["mean"] == pytest.approx(result["orth"])
    # orthonormal keys plus a large shared bias: raw cosines near 1, but the frame is exactly orthogonal
    frame = np.eye(32)[None, :20] * 3.0 + 10.0 * rng.standard_normal(32)[None, None]
    uncentred = frame_orthogonality(np.eye(32)[None, :20], centred=False)
    assert uncentred["orth"] == pytest.approx(0.0)
    shifted = frame_orthogonality(frame)
    assert shifted["raw"] > 0.8
    assert shifted["orth"] == pytest.approx(1 / 19, abs=1e-9)  # centring n orthonormal vectors: |cos| = 1/(n-1)


def test_head_concentration_and_settling_steps():
    assert head_concentration([0.5, 0.05, 0.02, 0.0])["reading"] == "concentrated"
    spread = head_concentration([0.04, 0.05, 0.03, 0.01])
    assert spread["reading"] == "spread" and spread["top_head"] == 1
    assert head_concentration([-0.01, 0.0])["reading"] == "none"
    steps = [10, 20, 40, 80, 160]
    assert settling_step(steps, [1.0, 0.5, 0.05, 0.02, 0.0]) == 40
    assert settling_step(steps, [1.0, 0.5, 0.2, 0.15, 0.0]) == 160
    curves = [{"step": s, "attention_distance_mean": a, "attention_distance_to_final": [a, a], "pc1": p,
               "abs_rho_pc1_bayes_entropy": 0.5, "entropy_mae_bits": m}
              for s, a, p, m in zip(steps, [0.5, 0.04, 0.02, 0.01, 0.0], [0.1, 0.2, 0.4, 0.6, 0.7],
                                    [1.0, 0.5, 0.1, 0.01, 0.001])]
    settled = settling_steps(curves)
    assert settled["settling_step"]["attention_distance_mean"] == 20
    assert settled["settling_step"]["pc1"] == 160 and settled["settling_step"]["entropy_mae_log10"] == 160
    assert settled["attention_settles_before"]["pc1"] is True
    assert settled["attention_settling_step_per_layer"] == [20, 20]


@pytest.mark.slow
def test_layer0_token_keys_are_the_keys_the_model_computes(tunnel):
    loaded, task = tunnel
    ids = task.answer_ids[:3]
    keys = layer0_token_keys(loaded, ids)  # [G, 3, d]
    # a sequence <bos> L0 L1 L2: at position 0 rotary is the identity, so the model's own key of
    # <bos> there equals layer0_token_keys of <bos>; the label keys differ from it only by rotation,
    # which keeps norms
    tokens = torch.as_tensor([[task.bos_id, *ids]])
    capture = query_rows(loaded, tokens, None, torch.tensor([[3]]), keep_qk=True)
    own = capture.key[0][0]  # [H, T, d]
    torch.testing.assert_close(own[:, 0], torch.as_tensor(layer0_token_keys(loaded, [task.bos_id])[:, 0]),
                               atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(own[:, 1:].norm(dim=-1), torch.as_tensor(keys).norm(dim=-1), atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# the suite end to end


@pytest.mark.slow
def test_mechanisms_suite_on_windtunnel_sula(tmp_path, tunnel):
    from geomprobe.report import build_report
    from geomprobe.runner import RunConfig, run
    from geomprobe.suites.mechanisms import MechanismsConfig

    loaded, task = tunnel
    out = tmp_path / "mech"
    run(RunConfig(model="windtunnel-sula", out=str(out)),
        MechanismsConfig(n_sequences=24, n_eval=64, n_reference=16, init_seeds=1, n_boot=50, null="init:3"),
        progress=False)
    results = json.loads((out / "mechanisms" / "results.json").read_text())
    for key in ("qk_alignment", "attention_focusing", "frame", "ablation", "two_timescale", "task", "settings"):
        assert key in results, key
    shape = loaded.adapter.shape
    qk = results["qk_alignment"]
    assert qk["n_sequences"] == 24 and qk["n_layers"] == shape.n_layers
    assert len(qk["metrics"]["evidence_mass"]["per_head"][0]) == shape.n_heads
    assert 0 < qk["evidence_uniform_share"] < 1
    ablation = results["ablation"]
    assert np.shape(ablation["delta_mae_bits"]) == (shape.n_layers, shape.n_heads)
    # the same evaluation, to float rounding (another test module may leave torch on another thread count)
    assert ablation["baseline"]["entropy_mae_bits"] == pytest.approx(
        evaluate(TaskLogits(loaded.model), task, 64)["entropy_mae_bits"], rel=1e-7)
    assert ablation["layer0_heads"]["reading"] in ("concentrated", "spread", "none")
    frame = results["frame"]
    assert frame["headline"] == "labels" and frame["groups"]["labels"]["n_tokens"] == 8
    assert {"analytic_gaussian", "gaussian", "shuffled", "random_tokens", "init"} <= set(
        frame["groups"]["labels"]["baselines"])
    # the trained tunnel against untrained copies read on the same sequences: it attends to the evidence
    nulls = results["untrained_null"]
    assert [m["name"] for m in nulls["models"]] == ["init-1000", "init-1001", "init-1002"]
    # (20 training steps barely move it: the fully trained tunnel is above untrained on all three)
    compared = nulls["comparisons"]
    assert set(compared) == {"evidence_mass", "cos_evidence_minus_other", "focusing"}
    assert compared["evidence_mass"]["model"] == pytest.approx(qk["metrics"]["evidence_mass"]["value"][-1], abs=1e-9)
    assert compared["focusing"]["model"] == pytest.approx(results["attention_focusing"]["focusing"], abs=1e-9)
    for entry in nulls["models"]:  # an untrained copy attends almost uniformly: evidence mass near its uniform share
        assert abs(entry["evidence_mass"] - qk["evidence_uniform_share"]) < 0.05, entry
    assert (out / "mechanisms" / "nulls" / "init-1000" / "qk_rows.npz").exists()
    timescale = results["two_timescale"]
    assert len(timescale["curves"]) >= 2 and timescale["settling"]["final_step"] == 20
    with np.load(out / "mechanisms" / "qk_rows.npz") as rows:
        assert rows["probs"].shape[1:3] == (shape.n_layers, shape.n_heads)
        assert rows["evidence"].shape == rows["visible"].shape
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suites"]["mechanisms"]["status"] == "complete"
    text = build_report([out], tmp_path / "report.html").read_text()
    for title in ("Mechanisms: Q-K alignment and attention on the evidence per layer",
                  "Mechanisms: head and layer ablations", "Mechanisms: ablation table",
                  "Mechanisms: layer-0 hypothesis frame", "Mechanisms: two timescales",
                  "mechanisms: against untrained copies of the same architecture"):
        assert title in text, title
    assert "does not draw it" not in text


@pytest.mark.slow
def test_mechanisms_suite_on_a_language_model(tmp_path, varied_prompts):
    from geomprobe.runner import RunConfig, run
    from geomprobe.suites.mechanisms import MechanismsConfig

    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in varied_prompts))
    out = tmp_path / "llama"
    run(RunConfig(model="tiny-llama", out=str(out), prompts=str(prompts)), MechanismsConfig(n_boot=50),
        progress=False)
    results = json.loads((out / "mechanisms" / "results.json").read_text())
    assert not results["windtunnel"] and "ablation" not in results and "frame" not in results
    qk = results["qk_alignment"]
    assert qk["n_rows"] == len(varied_prompts) and "evidence_mass" not in qk["metrics"]
    assert results["attention_focusing"]["n_prompts"] == len(varied_prompts)
    # a random-init model against other random inits: exchangeable, so its rank is a uniform draw.
    # This one (tiny-llama, seed 0) is a tail draw: rank 2 of 41 against 40 copies of either build
    # (measured), so against 19 copies it is rank 1 or 2 of 20, and the rank rule says what follows
    focusing = results["untrained_null"]["comparisons"]["focusing"]
    rank = 1 + sum(value >= focusing["model"] for value in focusing["nulls"])
    assert focusing["rank"] == rank and focusing["of"] == focusing["n_nulls"] + 1
    assert focusing["status"] == ("above untrained" if focusing["n_nulls"] == 19 and rank == 1 else
                                  "indistinguishable from untrained"), focusing
    assert set(results["untrained_null"]["comparisons"]) == {"focusing"}
    # the final-token attention entropies agree with the extraction engine's
    from geomprobe.extraction import extract
    from geomprobe.models import load_model

    ex = extract(load_model("tiny-llama"), varied_prompts, progress=False)
    np.testing.assert_allclose(qk["metrics"]["attn_entropy_bits"]["value"],
                               ex["attn_entropy_bits"].mean(axis=(0, 2)), atol=1e-4)
