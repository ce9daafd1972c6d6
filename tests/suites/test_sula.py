"""SULA (METHODS.md section 7): exact posteriors, prompt generator and controls, label choice,
H_model restriction, and the suite end to end on a tiny model and on windtunnel-sula."""

import json
import math
import re

import numpy as np
import pytest
from scipy.stats import rankdata

from geomprobe.analysis.sula_metrics import binary_kl_bits, restrict_to_labels
from geomprobe.errors import ConfigError
from geomprobe.runner import RunConfig, run
from geomprobe.suites.sula import SulaConfig, print_summary
from geomprobe.sula_task import (
    CARRIER_POOL,
    CONDITIONS,
    WINDTUNNEL_K0_TEMPLATE,
    SulaSpec,
    choose_labels,
    cvc_sweep,
    expected_h_bayes_bits,
    generate,
    h_bayes_bits,
    label_token,
    predictive_l1,
)
from geomprobe.windtunnel.tasks import CARRIER_WORDS, SulaTask, binary_entropy_bits, sula_posterior


def h2(p):
    return -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def analytic_sd_of_mean(k, n, alpha=0.9):
    """Standard error of the mean of n H_bayes draws at k examples, from the exact distribution
    (the count of labels equal to y is Binomial(k, alpha))."""
    j = np.arange(k + 1)
    weights = np.array([math.comb(k, int(i)) for i in j]) * alpha**j * (1 - alpha) ** (k - j)
    h = h_bayes_bits(j, k - j, alpha)
    return math.sqrt(max(weights @ h**2 - (weights @ h) ** 2, 0.0) / n)


# ----------------------------------------------------------------------------------------------
# Exact Bayes


def test_posterior_and_entropy_hand_cases():
    assert sula_posterior(2, 1, 0.9) == pytest.approx(0.9)
    assert h_bayes_bits(2, 1) == pytest.approx(0.4690, abs=1e-4)
    assert h_bayes_bits(1, 2) == pytest.approx(0.4690, abs=1e-4)
    assert h_bayes_bits(3, 3) == pytest.approx(1.0) and h_bayes_bits(0, 0) == pytest.approx(1.0)
    assert sula_posterior(3, 0, 0.9) == pytest.approx(729 / 730)  # odds 9^3
    assert sula_posterior(1, 0, 0.75) == pytest.approx(0.75)
    # predictive of a fresh noisy label: p' = 0.9 * 0.9 + 0.1 * 0.1 = 0.82
    assert predictive_l1(0.9, 0.9) == pytest.approx(0.82)
    assert h_bayes_bits(2, 1, target="predictive") == pytest.approx(h2(0.82))
    assert h_bayes_bits(4, 4, target="predictive") == pytest.approx(1.0)
    # expectation over the generative model: k = 1 always |n1 - n2| = 1; k = 2 ties with prob 2 * 0.9 * 0.1
    assert expected_h_bayes_bits(0) == pytest.approx(1.0)
    assert expected_h_bayes_bits(1) == pytest.approx(h2(0.9))
    assert expected_h_bayes_bits(2) == pytest.approx(0.18 * 1.0 + 0.82 * h2(81 / 82))
    with pytest.raises(ConfigError, match="alpha"):
        h_bayes_bits(1, 0, alpha=1.0)


# ----------------------------------------------------------------------------------------------
# Generator and controls


def test_generator_counts_reproducibility_and_per_k_streams():
    spec = SulaSpec(n_per_k=7, k_values=(0, 1, 2, 4, 8), seed=3)
    prompts = generate(spec)
    assert set(prompts) == set(CONDITIONS)
    for records in prompts.values():
        assert [r.k for r in records] == [k for k in (0, 1, 2, 4, 8) for _ in range(7)]
        assert len({r.id for r in records}) == len(records)
    again = generate(SulaSpec(n_per_k=7, k_values=(0, 1, 2, 4, 8), seed=3))
    assert [r.text for r in again["main"]] == [r.text for r in prompts["main"]]
    other = generate(SulaSpec(n_per_k=7, k_values=(0, 1, 2, 4, 8), seed=4))
    assert [r.text for r in other["main"]] != [r.text for r in prompts["main"]]
    # each k has its own stream: adding a k or more prompts per k keeps the prompts already drawn
    wider = generate(SulaSpec(n_per_k=9, k_values=(0, 1, 2, 3, 4, 8), seed=3), ["main"])["main"]
    by_id = {r.id: r.text for r in wider}
    assert all(by_id[r.id] == r.text for r in prompts["main"])


def test_surface_form_and_bayes_of_each_condition():
    spec = SulaSpec(labels=("dax", "lug"), remap_labels=("wug", "kep"), n_per_k=40, seed=0)
    prompts = generate(spec)
    shape = re.compile(r"^(\w+: (dax|lug), )*\w+: (dax|lug)\. \w+:$")
    for main, remap, shuffled, cmask, lmask in zip(*(prompts[c] for c in CONDITIONS)):
        same = (main.id, main.k, main.y, main.query)
        assert (remap.id, remap.k, remap.y, remap.query) == same == (lmask.id, lmask.k, lmask.y, lmask.query)
        assert (shuffled.id, shuffled.k, shuffled.y, shuffled.query) == same and cmask.y == main.y
        if main.k == 0:
            assert re.fullmatch(r"\w+:", main.text) and main.H_bayes == 1.0
        else:
            assert shape.fullmatch(main.text), main.text
        # counts read back from the text; exact posterior from them
        shown = re.findall(r": (\w+)", main.text)
        assert (main.n1, main.n2) == (shown.count("dax"), shown.count("lug"))
        assert main.posterior_l1 == pytest.approx(sula_posterior(main.n1, main.n2, 0.9))
        assert main.H_bayes == pytest.approx(float(binary_entropy_bits(main.posterior_l1)))
        # lexical_remap: the same examples with the other pair, Bayes unchanged
        assert remap.text == main.text.replace(": dax", ": wug").replace(": lug", ": kep")
        assert remap.labels == ("wug", "kep") and remap.H_bayes == main.H_bayes
        # carrier_mask: every carrier word (query included) masked, labels and Bayes kept
        assert cmask.text == re.sub(r"\b(?!dax\b|lug\b)\w+(?=:)", "___", main.text) and cmask.query == "___"
        assert cmask.H_bayes == main.H_bayes
        # shuffled and label_mask: no evidence, flat posterior
        assert shuffled.posterior_l1 == 0.5 and shuffled.H_bayes == 1.0
        assert [w for w, _ in shuffled.examples] == [w for w, _ in main.examples]
        assert lmask.posterior_l1 == 0.5 and lmask.H_bayes == 1.0 and "dax" not in lmask.text
        assert lmask.text.count("___") == main.k
        assert shuffled.H_apparent == pytest.approx(h_bayes_bits(shuffled.n1, shuffled.n2))
    # shuffled labels are independent of y: about half agree (main: about alpha)
    agree = [label == r.labels[r.y] for r in prompts["shuffled"] for _, label in r.examples]
    agree_main = [label == r.labels[r.y] for r in prompts["main"] for _, label in r.examples]
    assert abs(np.mean(agree) - 0.5) < 0.08 and abs(np.mean(agree_main) - 0.9) < 0.05


@pytest.mark.slow
def test_h_bayes_per_k_matches_the_analytic_expectation():
    spec = SulaSpec(n_per_k=2000, k_values=(1, 2, 4, 8), seed=1)
    records = generate(spec, ["main"])["main"]
    for k in spec.k_values:
        h = np.array([r.H_bayes for r in records if r.k == k])
        assert abs(h.mean() - expected_h_bayes_bits(k)) < 4 * analytic_sd_of_mean(k, len(h)) + 1e-12, k
    assert np.mean([r.y for r in records]) == pytest.approx(0.5, abs=0.03)


def test_target_template_and_validation():
    spec = SulaSpec(n_per_k=3, k_values=(0, 2), target="predictive", template="Examples: {examples}\nQuery {query}:")
    records = generate(spec, ["main", "label_mask"])
    main = records["main"]
    assert main[0].text.startswith("Examples: \nQuery ") and main[3].text.startswith("Examples: ")
    for r in main:
        assert r.target_l1 == pytest.approx(0.9 * r.posterior_l1 + 0.1 * (1 - r.posterior_l1))
        assert r.H_bayes == pytest.approx(h_bayes_bits(r.n1, r.n2, target="predictive"))
    assert all(r.H_bayes == 1.0 for r in records["label_mask"])
    for bad in ("{examples} {word}:", "{examples}", "{query"):
        with pytest.raises(ConfigError, match="template"):
            SulaSpec(template=bad)
    with pytest.raises(ConfigError, match="n-per-k"):
        SulaSpec(n_per_k=1)
    with pytest.raises(ConfigError, match="--k"):
        SulaSpec(k_values=(1, 1))
    with pytest.raises(ConfigError, match="carrier"):
        SulaSpec(k_values=(0, 200))
    with pytest.raises(ConfigError, match="two different words"):
        SulaSpec(labels=("dax", "dax"))
    assert len(set(CARRIER_POOL)) == len(CARRIER_POOL) and CARRIER_POOL[: len(CARRIER_WORDS)] == CARRIER_WORDS


def test_prompts_tokenize_exactly_as_the_wind_tunnel_was_trained():
    from geomprobe.windtunnel.tokenizer import task_tokenizer

    task = SulaTask()
    tokenizer = task_tokenizer(task.vocab)
    batch = task.sample(64, np.random.default_rng(0))
    spec = SulaSpec(carriers=tuple(task.carrier_words), k0_template=WINDTUNNEL_K0_TEMPLATE, k_values=tuple(range(9)))
    seen_k = set()
    for row, k in enumerate(batch.info["k"]):
        pair = task.label_pairs[batch.info["pair"][row]]
        words = [task.vocab[batch.tokens[row, 4 * j + 1]] for j in range(k)]
        labels = [pair[label] for label in batch.info["example_labels"][row, :k]]
        query = task.vocab[batch.tokens[row, batch.info["query_position"][row] - 1]]
        text = spec.render(list(zip(words, labels)), query)
        assert tokenizer(text)["input_ids"] == batch.tokens[row, : batch.info["length"][row]].tolist(), text
        seen_k.add(int(k))
    assert 0 in seen_k and max(seen_k) >= 4


# ----------------------------------------------------------------------------------------------
# Label choice


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tiny-neox", "tiny-llama", "tiny-phi"])
def test_label_choice_on_the_tiny_tokenizers(name):
    from geomprobe.models.builtin import build_tokenizer

    tokenizer = build_tokenizer(name)
    choice = choose_labels(tokenizer, exclude=set(CARRIER_POOL))
    # none of the named candidates is one token in a 512-token BPE: the sweep supplies them, in its order
    assert all(len(tokenizer.encode(" " + w, add_special_tokens=False)) > 1 for w in ("dax", "lug", "wug", "kep"))
    expected = [w for w in cvc_sweep() if len(tokenizer.encode(" " + w, add_special_tokens=False)) == 1][:4]
    assert choice.source == "sweep"
    assert list(choice.main) + list(choice.remap) == expected
    for word in expected:
        assert tokenizer.encode(choice.token_strings[word], add_special_tokens=False) == [choice.token_ids[word]]
        assert tokenizer(f"apple: {word}")["input_ids"][-1] == choice.token_ids[word]
    assert len(set(choice.token_ids.values())) == 4
    # --labels override: validated, and the remap pair is the next qualifying one
    user = choose_labels(tokenizer, labels=expected[2:], exclude=set(CARRIER_POOL))
    assert user.main == tuple(expected[2:]) and user.remap == tuple(expected[:2]) and user.source == "user"
    with pytest.raises(ConfigError, match="'dax' is not a single token"):
        choose_labels(tokenizer, labels=["dax", expected[0]])


def test_label_choice_error_lists_what_was_tried():
    from geomprobe.models.builtin import build_tokenizer
    from geomprobe.windtunnel.tokenizer import task_tokenizer

    # a word-level tokenizer that knows no candidate: every label would be its unknown token
    tokenizer = task_tokenizer(["<bos>", "<pad>", "<unk>", ":", "apple"])
    assert label_token(tokenizer, "dax") is None
    with pytest.raises(ConfigError) as error:
        choose_labels(tokenizer)
    message = str(error.value)
    assert "tried dax, lug, wug" in message and "1280 consonant-vowel-consonant" in message and "--labels" in message
    assert "\n" not in message
    with pytest.raises(ConfigError, match="tried dax, lug, zorb"):
        choose_labels(build_tokenizer("tiny-neox"), candidates=("dax", "lug", "zorb"), sweep=False)


# ----------------------------------------------------------------------------------------------
# Model side


def test_h_model_restricts_and_renormalises():
    probs = np.array([[0.3, 0.1], [0.0, 0.2], [0.25, 0.25], [1e-3, 4e-3]])
    side = restrict_to_labels(probs)
    np.testing.assert_allclose(side["label_mass"], [0.4, 0.2, 0.5, 5e-3])
    np.testing.assert_allclose(side["p_model_l1"], [0.75, 0.0, 0.5, 0.2])
    np.testing.assert_allclose(side["H_model"], [h2(0.75), 0.0, 1.0, h2(0.2)], atol=1e-12)
    assert binary_kl_bits(0.5, 0.5) == pytest.approx(0.0)
    assert binary_kl_bits(0.9, 0.5) == pytest.approx(1 - h2(0.9))


def _read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_sula_suite_on_a_tiny_model(tmp_path, load_tiny, capsys):
    import torch

    out = tmp_path / "run"
    run(RunConfig(model="tiny-neox", out=str(out)), SulaConfig(n_per_k=6, n_boot=50), progress=False)
    work = out / "sula"
    results = json.loads((work / "results.json").read_text())
    assert set(results) >= {"model", "settings", "axis", "conditions", "per_layer", "reference_paper_iii"}
    assert list(results["conditions"]) == list(CONDITIONS)
    labels = results["settings"]["labels"]
    main = results["conditions"]["main"]
    for key in ("mae_bits", "H_bayes", "H_model", "pearson_H_model_H_bayes", "spearman_H_model_H_bayes",
                "rho_pc1_H_bayes", "rho_pc1_H_model", "rho_k_pc1", "per_k", "label_mass", "next_entropy_bits"):
        assert key in main, key
    assert [row["k"] for row in main["per_k"]] == [0, 1, 2, 4, 8] and all(row["n"] == 6 for row in main["per_k"])

    rows = _read_jsonl(work / "prompts-main.jsonl")
    probs = np.load(work / "extraction-main" / "token_probs.npy")
    assert probs.shape == (30, 2)
    # token_probs are the model's own next-token probabilities of " L1", " L2" (independent forward pass)
    loaded = load_tiny("tiny-neox")
    ids = [loaded.tokenizer.encode(" " + w, add_special_tokens=False)[0] for w in labels]
    for i in (5, 29):
        encoded = loaded.tokenizer(rows[i]["text"], return_tensors="pt")
        with torch.no_grad():
            full = loaded.model(**encoded).logits[0, -1].softmax(-1)
        np.testing.assert_allclose(probs[i], full[ids].numpy(), rtol=1e-4)
    # H_model by hand from token_probs; MAE and per-k means from the per-prompt records
    h_model = np.array([h2(p1 / (p1 + p2)) for p1, p2 in probs.astype(np.float64)])
    np.testing.assert_allclose([r["H_model"] for r in rows], h_model, atol=1e-9)
    h_bayes = np.array([r["H_bayes"] for r in rows])
    assert main["mae_bits"]["value"] == pytest.approx(np.mean(np.abs(h_model - h_bayes)))
    for row in main["per_k"]:
        assert row["H_bayes"]["value"] == pytest.approx(np.mean([r["H_bayes"] for r in rows if r["k"] == row["k"]]))
    assert main["per_k"][0]["H_bayes"]["value"] == 1.0
    assert main["per_k"][1]["H_bayes"]["value"] == pytest.approx(h2(0.9))
    assert main["rho_pc1_H_model"]["value"] >= 0  # the axis is oriented
    assert results["conditions"]["shuffled"]["pearson_H_model_H_bayes"]["value"] is None  # H_bayes constant

    # the confound controls: the partial rho(PC1, H_bayes) given k again from the per-prompt rows (Pearson r
    # of the ranks less their per-k means; H_bayes rounded so that +d and -d tie), the lengths from the extraction
    ks, pc1s = np.array([r["k"] for r in rows]), np.array([r["pc1"] for r in rows])

    def demeaned(values):
        ranks = rankdata(values)
        return ranks - np.array([ranks[ks == k].mean() for k in ks])

    given_k = main["rho_pc1_H_bayes_given_k"]
    assert given_k["value"] == pytest.approx(np.corrcoef(demeaned(pc1s), demeaned(np.round(h_bayes, 12)))[0, 1])
    assert "given k" in given_k["method"] and given_k["n"] == 30
    assert "confounded with k" in main["rho_pc1_H_bayes"]["note"]
    assert [r["n_tokens"] for r in rows] == np.load(work / "extraction-main" / "n_tokens.npy").tolist()
    for key in ("rho_pc1_H_bayes_within_k", "rho_pc1_H_bayes_given_n_tokens", "rho_pc1_H_bayes_given_k_n_tokens",
                "rho_n_tokens_pc1"):
        assert {"value", "ci95", "method", "n"} <= set(main[key]), key
    assert main["per_k"][0]["rho_pc1_H_bayes"]["value"] is None  # k = 0: H_bayes = 1 for every prompt
    baselines = main["mae_baselines"]
    assert baselines["split"]["n_fit"] + baselines["split"]["n_score"] == 30
    assert baselines["zero"]["n"] == baselines["model"]["n"] == baselines["split"]["n_score"]
    assert results["conditions"]["shuffled"]["rho_pc1_H_bayes_given_k"]["value"] is None
    assert results["conditions"]["shuffled"]["mae_baselines"]["k_only"]["value"] == 0.0
    print_summary(results)
    summary = capsys.readouterr().out
    assert "rho(PC1, H_bayes) given k" in summary and "(confounded with k)" in summary
    assert "k only (mean H_bayes per k)" in summary and "H = 0" in summary

    # the axis: PC1 of the standardised last-layer values; controls projected with the main basis
    axis = np.load(work / "axis.npz")
    last = int(axis["analysis_layer"])
    column = list(axis["layers"]).index(last)
    u, mean, scale = axis["u"][column], axis["mean"][column], axis["scale"][column]
    values = np.load(work / "extraction-main" / "values.npy")[:, last].reshape(30, -1).astype(np.float64)
    z = (values - values.mean(0)) / values.std(0)
    top = np.linalg.svd(z, full_matrices=False)[2][0]
    assert abs(abs(top @ u) - 1) < 1e-6
    coords = np.array([r["pc1"] for r in rows])
    np.testing.assert_allclose(coords, z @ u, atol=1e-6)
    assert axis["sigma_u"][column] == pytest.approx(coords.std())
    control = np.load(work / "extraction-label_mask" / "values.npy")[:, 0].reshape(30, -1).astype(np.float64)
    np.testing.assert_allclose([r["pc1"] for r in _read_jsonl(work / "prompts-label_mask.jsonl")],
                               ((control - mean) / scale) @ u, atol=1e-6)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["suites"]["sula"]["status"] == "complete"
    suite = manifest["suites"]["sula"]
    assert suite["prompts"]["n"] == 30 and suite["prompts_shuffled"]["n"] == 30


@pytest.mark.slow
def test_sula_suite_on_the_sula_wind_tunnel(tmp_path):
    out = tmp_path / "run"
    run(RunConfig(model="windtunnel-sula", out=str(out)), SulaConfig(n_per_k=10, n_boot=50, null="init:3"),
        progress=False)
    results = json.loads((out / "sula" / "results.json").read_text())
    choice = results["settings"]["label_choice"]
    assert results["settings"]["windtunnel"] and choice["source"] == "windtunnel"
    assert choice["labels"] == ["dax", "lug"] and choice["remap_labels"] == ["wug", "kep"]
    assert list(results["conditions"]) == list(CONDITIONS)
    nulls = results["untrained_null"]  # the main prompts on 3 untrained copies
    mae = nulls["comparisons"]["mae_bits"]
    assert len(mae["nulls"]) == 3 and mae["model"] == pytest.approx(results["conditions"]["main"]["mae_bits"]["value"])
    assert mae["higher_is_better"] is False and mae["status"] in ("above untrained", "indistinguishable from untrained",
                                                                  "below untrained")
    assert (out / "sula" / "nulls" / "init-1000" / "extraction-main" / "meta.json").exists()
    rows = _read_jsonl(out / "sula" / "prompts-main.jsonl")
    assert all(r["text"].startswith(". ") for r in rows if r["k"] == 0)
    assert all(r["query"] in CARRIER_WORDS[:48] for r in rows)
    for r in rows:
        assert r["H_bayes"] == pytest.approx(h_bayes_bits(r["n1"], r["n2"]))
    main = results["conditions"]["main"]
    for row in main["per_k"]:
        h = np.array([r["H_bayes"] for r in rows if r["k"] == row["k"]])
        assert row["H_bayes"]["value"] == pytest.approx(h.mean())
        expected = expected_h_bayes_bits(row["k"])
        assert abs(row["H_bayes"]["value"] - expected) <= 4 * analytic_sd_of_mean(row["k"], len(h)) + 1e-9, row["k"]
    for name in ("shuffled", "label_mask"):
        assert results["conditions"][name]["H_bayes"]["value"] == 1.0
    assert 0 <= main["mae_bits"]["value"] <= 1 and 0 < results["axis"]["pc1_explained"] <= 1


@pytest.mark.slow
def test_sula_cli_options(tmp_path):
    from typer.testing import CliRunner

    from geomprobe.cli import app

    out = tmp_path / "cli"
    base = ["run", "--model", "tiny-llama", "--suite", "sula", "--out", str(out), "--quiet", "--n-boot", "20"]
    bad = CliRunner().invoke(app, [*base, "--controls", "shuffled,bogus"])
    assert bad.exit_code == 2 and "unknown control(s) bogus" in bad.output
    result = CliRunner().invoke(app, [*base, "--n-per-k", "3", "--k", "0,2", "--controls", "shuffled",
                                      "--target", "predictive", "--alpha", "0.8"])
    assert result.exit_code == 0, result.output
    results = json.loads((out / "sula" / "results.json").read_text())
    assert list(results["conditions"]) == ["main", "shuffled"]
    settings = results["settings"]
    assert settings["k_values"] == [0, 2] and settings["target"] == "predictive" and settings["alpha"] == 0.8
    for r in _read_jsonl(out / "sula" / "prompts-main.jsonl"):
        p = sula_posterior(r["n1"], r["n2"], 0.8)
        assert r["target_l1"] == pytest.approx(0.8 * p + 0.2 * (1 - p))
