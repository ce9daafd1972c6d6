"""Wind-tunnel tasks: every `bayes` checked against brute-force enumeration of its generative model,
parsed back from the tokens (METHODS.md sections 7 and 9)."""

import itertools

import numpy as np
import pytest

from geomprobe.errors import ConfigError
from geomprobe.windtunnel import (
    TASKS,
    AssociativeRecallTask,
    BijectionTask,
    HMMTask,
    SulaTask,
    binary_entropy_bits,
    entropy_bits,
    make_task,
    quantise_rows,
    sula_posterior,
)

SMALL_TASKS = {
    "bijection": dict(n=4),
    "hmm": dict(length=6, levels=4),
    "recall": dict(n_pairs=3, n_keys=6, n_values=5),
    "sula": dict(k_values=(0, 1, 3), n_carriers=8, label_pairs=2),
}


def rng(seed=0):
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------------------------
# Shared contract, every task at defaults and small


@pytest.fixture(params=[(name, opts) for name in TASKS for opts in ({}, SMALL_TASKS[name])],
                ids=lambda p: f"{p[0]}-{'small' if p[1] else 'default'}")
def task(request):
    name, options = request.param
    return make_task(name, **options)


def test_vocab_contract(task):
    assert task.vocab[0] == "<bos>" and "<pad>" in task.vocab and "<unk>" in task.vocab
    assert len(set(task.vocab)) == len(task.vocab)
    assert all(word and not any(ch.isspace() for ch in word) for word in task.vocab)
    assert task.answer_ids.dtype == np.int64 and len(set(task.answer_ids.tolist())) == len(task.answer_ids)
    assert task.answer_ids.min() >= 0 and task.answer_ids.max() < len(task.vocab)


def test_batch_contract(task):
    batch = task.sample(64, rng(1))
    B, T = batch.tokens.shape
    assert B == 64 and T <= task.max_tokens()
    assert batch.tokens.dtype == np.int64 and batch.targets.dtype == np.int64
    assert batch.bayes.dtype == np.float64 and batch.supervised.dtype == bool
    assert batch.targets.shape == batch.supervised.shape == (B, T)
    assert batch.bayes.shape == (B, T, len(task.answer_ids))
    assert (batch.tokens[:, 0] == task.bos_id).all()
    # -100 exactly where unsupervised; targets always answers; Bayes rows distributions or zero
    assert ((batch.targets == -100) == ~batch.supervised).all()
    assert np.isin(batch.targets[batch.supervised], task.answer_ids).all()
    assert np.allclose(batch.bayes[batch.supervised].sum(-1), 1.0)
    assert (batch.bayes >= 0).all() and (batch.bayes[~batch.supervised] == 0).all()
    # the sampled target always has positive Bayes probability
    answer_index = {int(a): i for i, a in enumerate(task.answer_ids)}
    b_idx, t_idx = np.nonzero(batch.supervised)
    target_idx = np.array([answer_index[int(a)] for a in batch.targets[b_idx, t_idx]])
    assert (batch.bayes[b_idx, t_idx, target_idx] > 0).all()
    for key, value in batch.info.items():
        assert len(value) == B, key
    # text round trip (padding dropped)
    for row in batch.tokens[:4]:
        unpadded = row[row != task.pad_id]
        assert (task.encode(task.to_text(row)) == unpadded).all()


def test_seeded(task):
    a, b = task.sample(16, rng(7)), task.sample(16, rng(7))
    c = task.sample(16, rng(8))
    for field in ("tokens", "targets", "bayes", "supervised"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert a.info.keys() == b.info.keys()
    for key in a.info:
        assert np.array_equal(a.info[key], b.info[key])
    assert not np.array_equal(a.tokens, c.tokens)


def test_registry_and_errors():
    assert set(TASKS) == {"bijection", "hmm", "recall", "sula"}
    assert isinstance(make_task("bijection", n=10), BijectionTask) and make_task("bijection", n=10).seq_len == 21
    with pytest.raises(ConfigError, match="unknown wind-tunnel task"):
        make_task("parity")
    with pytest.raises(ConfigError, match="bad options"):
        make_task("hmm", n_hidden=3)
    with pytest.raises(ConfigError, match="n_carriers"):
        SulaTask(k_values=(0, 8), n_carriers=8)
    with pytest.raises(ConfigError, match="alpha"):
        SulaTask(alpha=1.0)
    with pytest.raises(ConfigError, match="seq_len"):
        BijectionTask(n=4).sample(2, rng(), seq_len=10)


def test_entropy_helpers():
    assert entropy_bits([0.5, 0.5, 0.0]) == pytest.approx(1.0)
    assert entropy_bits(np.zeros(3)) == 0.0
    assert entropy_bits(np.full((2, 8), 1 / 8)).tolist() == pytest.approx([3.0, 3.0])
    assert binary_entropy_bits(0.0) == 0.0 and binary_entropy_bits(0.5) == pytest.approx(1.0)
    assert binary_entropy_bits(np.array([0.1, 0.9])) == pytest.approx([0.4689955936] * 2)


# ----------------------------------------------------------------------------------------------
# Bijection


@pytest.mark.parametrize("n", [3, 4])
def test_bijection_brute_force(n):
    task = BijectionTask(n=n)
    batch = task.sample(20, rng(n))
    value_index = {int(v): i for i, v in enumerate(task.value_ids)}
    key_index = {int(k): i for i, k in enumerate(task.key_ids)}
    all_bijections = list(itertools.permutations(range(n)))  # f[key] = value
    for row in range(len(batch)):
        tokens = batch.tokens[row]
        revealed = {}
        for t in range(1, len(tokens), 2):
            key = key_index[int(tokens[t])]
            consistent = [f for f in all_bijections if all(f[k] == v for k, v in revealed.items())]
            predictive = np.bincount([f[key] for f in consistent], minlength=n) / len(consistent)
            assert np.allclose(batch.bayes[row, t], predictive)
            assert entropy_bits(batch.bayes[row, t]) == pytest.approx(np.log2(n - len(revealed)))
            assert batch.targets[row, t] == tokens[t + 1]
            # already-revealed values are impossible
            assert all(batch.bayes[row, t, v] == 0 for v in revealed.values())
            revealed[key] = value_index[int(tokens[t + 1])]


def test_bijection_layout_and_prefix():
    task = BijectionTask()  # n = 20
    batch = task.sample(8, rng())
    assert batch.tokens.shape == (8, 41) and len(task.vocab) == 43
    assert batch.supervised[:, 1::2].all() and not batch.supervised[:, 0::2].any()
    # every key and every value exactly once
    assert all(sorted(row[1::2]) == sorted(task.key_ids) for row in batch.tokens)
    assert all(sorted(row[2::2]) == sorted(task.value_ids) for row in batch.tokens)
    h = entropy_bits(batch.bayes[:, 1::2])
    assert np.allclose(h, np.log2(20 - np.arange(20))[None, :])
    prefix = task.sample(8, rng(), seq_len=11)
    assert np.array_equal(prefix.tokens, batch.tokens[:, :11]) and np.array_equal(prefix.bayes, batch.bayes[:, :11])


# ----------------------------------------------------------------------------------------------
# HMM


def test_quantise_rows():
    probs = rng().dirichlet(np.ones(5), size=(1000, 5))
    counts = quantise_rows(probs, 10)
    assert (counts.sum(-1) == 10).all() and (counts >= 0).all()
    assert np.abs(counts / 10 - probs).max() < 0.1 + 1e-12  # within one level of the true value
    assert quantise_rows(np.array([[0.26, 0.26, 0.48]]), 4).tolist() == [[1, 1, 2]]
    assert quantise_rows(np.array([[0.35, 0.34, 0.31]]), 2).tolist() == [[1, 1, 0]]


def brute_force_filter(transition, emission, observations):
    """p(s_t | o_1..o_t) for every t, summing the joint over all S^t hidden paths."""
    S = len(transition)
    out = []
    for t in range(1, len(observations) + 1):
        marginal = np.zeros(S)
        for path in itertools.product(range(S), repeat=t):
            p = emission[path[0], observations[0]] / S
            for i in range(1, t):
                p *= transition[path[i - 1], path[i]] * emission[path[i], observations[i]]
            marginal[path[-1]] += p
        out.append(marginal / marginal.sum())
    return np.array(out)


@pytest.mark.parametrize("levels", [3, 10])
def test_hmm_brute_force_from_tokens(levels):
    task = HMMTask(n_states=3, n_symbols=3, length=5, levels=levels)
    batch = task.sample(6, rng(levels))
    H = task.header_len
    assert H == 1 + 9 + 1 + 9 + 1 and batch.tokens.shape == (6, H + 5)
    symbol_index = {int(o): i for i, o in enumerate(task.symbol_ids)}
    n_zero_entries = 0
    for row in range(len(batch)):
        transition, emission = task.decode_parameters(batch.tokens[row])  # the model's view
        assert np.array_equal(transition, batch.info["transition"][row])
        assert np.array_equal(emission, batch.info["emission"][row])
        assert np.allclose(transition.sum(1), 1.0) and np.allclose(emission.sum(1), 1.0)
        n_zero_entries += (transition == 0).sum() + (emission == 0).sum()
        observations = [symbol_index[int(o)] for o in batch.tokens[row, H:]]
        expected = brute_force_filter(transition, emission, observations)
        assert np.allclose(batch.bayes[row, H:], expected, atol=1e-12)
    assert n_zero_entries > 0  # zero-probability transitions / emissions were exercised


def test_hmm_layout_and_lengths():
    task = HMMTask()
    assert task.header_len == 53 and task.seq_len == 73 and len(task.vocab) == 25
    batch = task.sample(32, rng())
    H = task.header_len
    assert not np.isin(batch.tokens, task.state_ids).any()  # states are never shown
    assert (batch.tokens[:, 26] == task.sep_id).all() and (batch.tokens[:, 52] == task.sep_id).all()
    assert np.isin(batch.tokens[:, 1:26], task.level_ids).all() and np.isin(batch.tokens[:, H:], task.symbol_ids).all()
    assert batch.supervised[:, H:].all() and not batch.supervised[:, :H].any()
    assert np.array_equal(batch.targets[:, H:], task.state_ids[batch.info["states"]])
    for n_obs in (30, 50):
        long = task.sample(4, rng(), seq_len=n_obs)
        assert long.tokens.shape == (4, H + n_obs) == (4, task.max_tokens(n_obs))
        assert np.allclose(long.bayes[:, H:].sum(-1), 1.0)


def test_hmm_filter_is_calibrated():
    """The sampler and the filter agree: for the true posterior b_t and the true state s_t,
    E[onehot(s_t) - b_t] = 0 and E[(onehot(s_t) - b_t) * b_t(j)] = 0 for every state j and step t
    (any function of the observations is orthogonal to the residual)."""
    task = HMMTask(length=10)
    batch = task.sample(4000, rng(3))
    bayes = batch.bayes[:, task.header_len :]  # [batch, t, state]
    residual = np.eye(task.n_states)[batch.info["states"]] - bayes
    for weighted in (residual, residual[..., :, None] * bayes[..., None, :]):
        mean = weighted.mean(axis=0)
        se = weighted.std(axis=0) / np.sqrt(len(batch))
        assert (np.abs(mean) < 5 * se + 1e-12).all()


# ----------------------------------------------------------------------------------------------
# Associative recall


def test_recall_target_is_probe_value():
    task = AssociativeRecallTask()
    assert task.seq_len == 19 and len(task.vocab) == 68
    batch = task.sample(200, rng())
    assert batch.supervised[:, -1].all() and batch.supervised.sum() == 200
    value_index = {int(v): i for i, v in enumerate(task.value_ids)}
    for row in batch.tokens[:50]:
        pairs = dict(zip(row[1:-2:2].tolist(), row[2:-2:2].tolist()))
        assert len(pairs) == task.n_pairs  # keys distinct
        assert row[-2] == task.query_id and int(row[-1]) in pairs
    for b in range(len(batch)):
        row = batch.tokens[b]
        pairs = dict(zip(row[1:-2:2].tolist(), row[2:-2:2].tolist()))
        answer = pairs[int(row[-1])]
        assert batch.targets[b, -1] == answer
        assert batch.bayes[b, -1, value_index[answer]] == 1.0
    more = task.sample(4, rng(), seq_len=2 * 20 + 3)
    assert more.tokens.shape == (4, 43) and more.info["keys"].shape == (4, 20)


def test_recall_curriculum_draws_each_length_and_keeps_the_answer_right():
    task = AssociativeRecallTask(min_pairs=1)
    batch = task.sample(2000, rng())
    counts = batch.info["n_pairs"]
    assert set(counts.tolist()) == set(range(1, 9)) and batch.tokens.shape == (2000, 19)
    assert np.bincount(counts)[1:].min() > 180  # uniform over 1..8: 250 expected each
    value_index = {int(v): i for i, v in enumerate(task.value_ids)}
    for b in range(len(batch)):
        m, row = int(counts[b]), batch.tokens[b]
        where = np.flatnonzero(batch.supervised[b])
        assert where.tolist() == [2 * m + 2]  # the probe, right after the sequence's own pairs
        assert row[2 * m + 1] == task.query_id and (row[2 * m + 3:] == task.pad_id).all()
        pairs = dict(zip(row[1:2 * m:2].tolist(), row[2:2 * m + 1:2].tolist()))
        assert len(pairs) == m and pad_free(pairs, task)
        answer = pairs[int(row[2 * m + 2])]
        assert batch.targets[b, 2 * m + 2] == answer and batch.bayes[b, 2 * m + 2, value_index[answer]] == 1.0
    # given a length, every sequence has it, exactly as without the curriculum (held-out scores)
    fixed, plain = task.sample(8, rng(), seq_len=19), AssociativeRecallTask().sample(8, rng())
    assert (fixed.tokens == plain.tokens).all() and (fixed.info["n_pairs"] == 8).all()
    with pytest.raises(ConfigError, match="min_pairs"):
        AssociativeRecallTask(min_pairs=9)


def pad_free(pairs, task) -> bool:
    return task.pad_id not in pairs and task.pad_id not in pairs.values()


# ----------------------------------------------------------------------------------------------
# SULA


def test_sula_hand_cases():
    p = sula_posterior(2, 1, 0.9)
    assert p == pytest.approx(0.9)
    assert round(float(binary_entropy_bits(p)), 3) == 0.469
    assert sula_posterior(3, 3, 0.9) == 0.5 and binary_entropy_bits(sula_posterior(4, 4)) == pytest.approx(1.0)
    assert sula_posterior(0, 2, 0.9) == pytest.approx(0.01 / 0.82)
    assert np.isfinite(sula_posterior(2000, 0, 0.9)) and sula_posterior(0, 2000, 0.9) == pytest.approx(0.0)


def parse_sula(task, row):
    """([(colon position, label word)], query colon position) from the tokens alone."""
    words = [task.vocab[int(i)] for i in row if int(i) != task.pad_id]
    assert words[0] == "<bos>" and words[-1] == ":" and words[-3] == "." and words[-2] in task.carrier_words
    examples = [(pos, words[pos + 1]) for pos in range(1, len(words) - 3) if words[pos] == ":"]
    assert all(word in task.label_words for _, word in examples)
    carriers = [words[pos - 1] for pos, _ in examples] + [words[-2]]
    assert all(word in task.carrier_words for word in carriers)
    assert len(set(carriers)) == len(carriers)  # distinct carriers, query included
    return examples, len(words) - 1


def brute_force_sula(task, shown):
    """Exact predictive over task.label_words for y and for a fresh noisy label, given the label
    words shown, by enumerating the hypotheses (pair c, y) with prior 1 / (2 * n_pairs)."""
    alpha, words = task.alpha, task.label_words
    hypotheses = [(c, y) for c in range(len(task.label_pairs)) for y in (0, 1)]

    def label_likelihood(word, c, y):  # p(shown label word | pair c, latent y)
        if word not in task.label_pairs[c]:
            return 0.0
        return alpha if word == task.label_pairs[c][y] else 1 - alpha

    joint = np.array([np.prod([label_likelihood(w, c, y) for w in shown]) / len(hypotheses) for c, y in hypotheses])
    posterior = joint / joint.sum()
    y_predictive = np.array([posterior[hypotheses.index(divmod(i, 2))] for i in range(len(words))])
    label_predictive = np.array([sum(post * label_likelihood(w, c, y) for post, (c, y) in zip(posterior, hypotheses))
                                 for w in words])
    return y_predictive, label_predictive


@pytest.mark.slow
@pytest.mark.parametrize("alpha,pairs", [(0.9, 4), (0.7, 2), (0.8, 1)])
def test_sula_brute_force(alpha, pairs):
    task = SulaTask(alpha=alpha, label_pairs=pairs)
    batch = task.sample(300, rng(11))
    for b in range(len(batch)):
        examples, query = parse_sula(task, batch.tokens[b])
        shown = [word for _, word in examples]
        pair = batch.info["pair"][b]
        assert all(word in task.label_pairs[pair] for word in shown)  # one pair per sequence
        n1, n2 = shown.count(task.label_pairs[pair][0]), shown.count(task.label_pairs[pair][1])
        assert (batch.info["k"][b], batch.info["n1"][b], batch.info["n2"][b]) == (len(shown), n1, n2)
        # final ":": predictive of y
        y_predictive, _ = brute_force_sula(task, shown)
        assert np.allclose(batch.bayes[b, query], y_predictive, atol=1e-12)
        p = sula_posterior(n1, n2, alpha)
        assert batch.info["posterior_l1"][b] == pytest.approx(p)
        if shown:  # pair known: the section-7 posterior on (L1, L2), zero on other pairs' labels
            assert batch.bayes[b, query, 2 * pair] == pytest.approx(p)
            assert batch.bayes[b, query, 2 * pair + 1] == pytest.approx(1 - p)
            assert np.count_nonzero(batch.bayes[b, query]) <= 2
        else:  # no label seen: the pair is unknown too
            assert np.allclose(batch.bayes[b, query], 1 / len(task.label_words))
        assert batch.targets[b, query] == batch.info["y_token"][b] == task.label_ids[pair, batch.info["y"][b]]
        # each example ":": predictive of a fresh noisy label given the labels before it
        for i, (pos, word) in enumerate(examples):
            _, label_predictive = brute_force_sula(task, shown[:i])
            assert np.allclose(batch.bayes[b, pos], label_predictive, atol=1e-12)
            if i > 0:
                before = shown[:i]
                p_before = sula_posterior(before.count(task.label_pairs[pair][0]),
                                          before.count(task.label_pairs[pair][1]), alpha)
                assert batch.bayes[b, pos, 2 * pair] == pytest.approx(alpha * p_before + (1 - alpha) * (1 - p_before))
            assert task.vocab[batch.targets[b, pos]] == word
        assert batch.supervised[b].sum() == len(examples) + 1


def test_sula_padding_and_layout():
    task = SulaTask()
    assert task.seq_len == 35 and len(task.vocab) == 63 and len(task.answer_ids) == 8
    assert "___" in task.vocab
    batch = task.sample(200, rng(2))
    assert batch.tokens.shape[1] == batch.info["length"].max()
    assert not (batch.tokens == task.mask_id).any()
    for b in range(len(batch)):
        length = batch.info["length"][b]
        assert length == max(4 * batch.info["k"][b], 1) + 3
        assert (batch.tokens[b, length:] == task.pad_id).all() and (batch.tokens[b, :length] != task.pad_id).all()
        assert (batch.targets[b, length:] == -100).all() and not batch.supervised[b, length:].any()
        assert batch.info["query_position"][b] == length - 1
    assert batch.info["k"].min() == 0 and batch.info["k"].max() == 8
    fixed = task.sample(4, rng(2), seq_len=40)
    assert fixed.tokens.shape == (4, 40)
    quiet = SulaTask(supervise_examples=False).sample(50, rng(2))
    assert (quiet.supervised.sum(1) == 1).all()
    empty = SulaTask(k_values=(0,))
    assert all(empty.to_text(row).split() == ["<bos>", ".", empty.vocab[row[2]], ":"] for row in empty.sample(3, rng()).tokens)


def test_sula_monte_carlo_frequencies():
    """With k = 3 fixed, the frequency of y = L1 given (n1, n2) matches the posterior."""
    alpha = 0.9
    task = SulaTask(alpha=alpha, k_values=(3,), label_pairs=1)
    batch = task.sample(40000, rng(5))
    y_is_l1 = batch.info["y"] == 0
    for n1 in range(4):
        chosen = batch.info["n1"] == n1
        p = sula_posterior(n1, 3 - n1, alpha)
        freq = y_is_l1[chosen].mean()
        assert chosen.sum() > 1000
        assert abs(freq - p) < 4 * np.sqrt(p * (1 - p) / chosen.sum()) + 1e-9, (n1, freq, p)
    # second example's label given the first: alpha p + (1 - alpha)(1 - p) with p = 0.9 -> 0.82
    labels = batch.info["example_labels"]
    first_l1 = labels[:, 0] == 0
    freq = (labels[first_l1, 1] == 0).mean()
    assert abs(freq - 0.82) < 4 * np.sqrt(0.82 * 0.18 / first_l1.sum())
    assert np.allclose(batch.bayes[first_l1, 6, 0], 0.82)
