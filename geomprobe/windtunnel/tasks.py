"""Wind-tunnel tasks: seeded sequence generators with the exact Bayes predictive (METHODS.md section 9).

    task = make_task("bijection")                      # or HMMTask(levels=10), SulaTask(alpha=0.9), ...
    batch = task.sample(64, np.random.default_rng(0))  # TaskBatch of numpy arrays
    h_bayes = entropy_bits(batch.bayes)[batch.supervised]

Every task has its own word-level vocabulary (token id = index into `task.vocab`, `vocab[0]` is
"<bos>"). A model reads `tokens[:, :t+1]` and predicts at position t; at supervised positions its
distribution restricted to `task.answer_ids` (renormalised) is scored against `bayes[:, t]`. The
training target at t is a sampled answer, which need not be the next input token (the HMM target is
the hidden state, never shown).

Pure numpy: no torch here, randomness only through the `np.random.Generator` passed to `sample`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from geomprobe.analysis.windtunnel_metrics import entropy_bits  # noqa: F401 (geomprobe.windtunnel exports it)
from geomprobe.errors import ConfigError

IGNORE_INDEX = -100  # targets at unsupervised positions (torch cross_entropy's default ignore_index)

BOS, PAD, UNK = "<bos>", "<pad>", "<unk>"
SPECIAL_TOKENS = (BOS, PAD, UNK)


# ----------------------------------------------------------------------------------------------
# Entropies and the SULA posterior


def binary_entropy_bits(p):
    """Entropy in bits of a Bernoulli(p); p may be an array (elementwise).

    Computed from the smaller side q = min(p, 1 - p), so that binary_entropy_bits(p) and
    binary_entropy_bits(1 - p) are the same float bit for bit whenever 1 - p is exact (every p in
    [0.5, 1], and so every pair that sula_posterior gives to evidence +d and -d); h(p) and h(1 - p)
    evaluated as written round differently, and equal evidence would then rank as unequal."""
    p = np.asarray(p, dtype=np.float64)
    q = np.where(p > 0.5, 1.0 - p, p)  # exact for p in (0.5, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        nats = np.where(q > 0, q * np.log(np.where(q > 0, q, 1.0)), 0.0) + (1.0 - q) * np.log1p(-q)
    return 0.0 - nats / np.log(2.0)  # 0.0 - x turns -0.0 into 0.0


def sula_posterior(n1, n2, alpha: float = 0.9):
    """p(y = L1 | D) = sigmoid((n1 - n2) ln(alpha / (1 - alpha))) for n1 examples labelled L1 and
    n2 labelled L2, uniform prior, label noise 1 - alpha (METHODS.md section 7). Elementwise.

    The sigmoid is evaluated at |n1 - n2| only and mirrored, so that sula_posterior(n2, n1) is
    exactly 1 - sula_posterior(n1, n2): equal evidence for either label gives the same numbers."""
    _check_alpha(alpha)
    log_odds = (np.asarray(n1, dtype=np.float64) - np.asarray(n2, dtype=np.float64)) * np.log(alpha / (1 - alpha))
    larger = 0.5 * (1.0 + np.tanh(0.5 * np.abs(log_odds)))  # the sigmoid, without overflow for large |n1 - n2|
    return np.where(log_odds >= 0, larger, 1.0 - larger)[()]  # 1 - larger is exact: larger is in [0.5, 1]


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must lie strictly between 0 and 1, got {alpha}")


# ----------------------------------------------------------------------------------------------
# Shared interface


@dataclass
class TaskBatch:
    """One batch of a wind-tunnel task.

    tokens:     int64 [batch, seq_len], input token ids (right-padded with "<pad>" where lengths vary).
    targets:    int64 [batch, seq_len], the sampled answer token id at supervised positions, -100 elsewhere.
    bayes:      float64 [batch, seq_len, n_answers], exact Bayes predictive over `task.answer_ids` at
                supervised positions (rows sum to 1), 0 elsewhere.
    supervised: bool [batch, seq_len].
    info:       per-task extras, arrays with batch first (see each task's docstring).
    """

    tokens: np.ndarray
    targets: np.ndarray
    bayes: np.ndarray
    supervised: np.ndarray
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.tokens)


class Task:
    """Base class. Subclasses set `name`, build `vocab` via `_set_vocab`, set `answer_ids` and
    `seq_len` (token length of a default sample; the longest one where lengths vary) and implement
    `sample`."""

    name: str = ""
    # where a prompt in the task's language is cut for suites that read one next-token distribution:
    # "last" (the query, the probe, the final key) or "random" (a uniformly chosen supervised position,
    # so prompts span early and late evidence)
    prompt_position: str = "last"
    vocab: list[str]
    answer_ids: np.ndarray
    seq_len: int

    def _set_vocab(self, words: list[str]) -> None:
        vocab = list(SPECIAL_TOKENS) + list(words)
        for word in vocab:
            if not isinstance(word, str) or not word or any(ch.isspace() for ch in word):
                raise ConfigError(f"{self.name}: token {word!r} must be a non-empty string without whitespace")
        if len(set(vocab)) != len(vocab):
            repeated = sorted({w for w in vocab if vocab.count(w) > 1})
            raise ConfigError(f"{self.name}: tokens {repeated} appear twice in the vocabulary; choose distinct words")
        self.vocab = vocab
        self.token_to_id = {word: i for i, word in enumerate(vocab)}
        self.bos_id = self.token_to_id[BOS]
        self.pad_id = self.token_to_id[PAD]
        self.unk_id = self.token_to_id[UNK]

    def _ids(self, words) -> np.ndarray:
        return np.array([self.token_to_id[w] for w in words], dtype=np.int64)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def n_answers(self) -> int:
        return len(self.answer_ids)

    def sample(self, batch_size: int, rng: np.random.Generator, seq_len: int | None = None) -> TaskBatch:
        raise NotImplementedError

    def max_tokens(self, seq_len: int | None = None) -> int:
        """Longest token sequence `sample(..., seq_len=seq_len)` can return (to size a model's positions)."""
        return self.seq_len if seq_len is None else int(seq_len)

    def to_text(self, tokens_row) -> str:
        """The space-joined token strings of one row, without padding."""
        return " ".join(self.vocab[int(i)] for i in tokens_row if int(i) != self.pad_id)

    def encode(self, text: str) -> np.ndarray:
        """Word-level tokenisation of `text` (split on whitespace); unknown words map to "<unk>"."""
        return np.array([self.token_to_id.get(w, self.unk_id) for w in text.split()], dtype=np.int64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size}, n_answers={self.n_answers}, seq_len={self.seq_len})"


def _empty_batch(batch_size: int, seq_len: int, n_answers: int, pad_id: int):
    tokens = np.full((batch_size, seq_len), pad_id, dtype=np.int64)
    targets = np.full((batch_size, seq_len), IGNORE_INDEX, dtype=np.int64)
    bayes = np.zeros((batch_size, seq_len, n_answers), dtype=np.float64)
    supervised = np.zeros((batch_size, seq_len), dtype=bool)
    return tokens, targets, bayes, supervised


def _check_batch_size(batch_size: int) -> int:
    if int(batch_size) < 1:
        raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
    return int(batch_size)


def _permutations(rng: np.random.Generator, batch_size: int, n: int) -> np.ndarray:
    """[batch, n] int64: an independent uniform permutation of range(n) per row."""
    return rng.permuted(np.tile(np.arange(n, dtype=np.int64), (batch_size, 1)), axis=1)


# ----------------------------------------------------------------------------------------------
# 1. Bijection


class BijectionTask(Task):
    """A uniformly random bijection from n keys to n values per sequence (METHODS.md section 9).

    Tokens: `<bos> k_a1 v_f(a1) k_a2 v_f(a2) ... ` over all n keys in a random order; seq_len = 2n + 1.
    Supervised at every key position: target = that key's value; Bayes = uniform over the values
    not revealed earlier in the sequence, so H = log2(n - t) bits after t revealed pairs.
    Vocabulary: <bos> <pad> <unk> k0..k{n-1} v0..v{n-1}; answer_ids = the value tokens.

    `sample(..., seq_len=L)` returns the first L tokens (2 <= L <= 2n + 1).
    info: "bijection" [batch, n] (value index of key i), "key_order" [batch, n] (key index shown i-th;
    the i-th key sits at position 2i + 1 with i pairs revealed before it).
    """

    name = "bijection"
    prompt_position = "random"

    def __init__(self, n: int = 20):
        if int(n) < 2:
            raise ConfigError(f"bijection: n must be at least 2, got {n}")
        self.n = int(n)
        self._set_vocab([f"k{i}" for i in range(self.n)] + [f"v{i}" for i in range(self.n)])
        self.key_ids = self._ids(f"k{i}" for i in range(self.n))
        self.value_ids = self._ids(f"v{i}" for i in range(self.n))
        self.answer_ids = self.value_ids
        self.seq_len = 2 * self.n + 1

    def sample(self, batch_size: int, rng: np.random.Generator, seq_len: int | None = None) -> TaskBatch:
        batch_size = _check_batch_size(batch_size)
        length = self.seq_len if seq_len is None else int(seq_len)
        if not 2 <= length <= self.seq_len:
            raise ConfigError(f"bijection: seq_len must be between 2 and {self.seq_len} (2n + 1), got {seq_len}")
        n, full = self.n, self.seq_len
        bijection = _permutations(rng, batch_size, n)
        key_order = _permutations(rng, batch_size, n)
        shown_values = np.take_along_axis(bijection, key_order, axis=1)  # [batch, n]

        tokens, targets, bayes, supervised = _empty_batch(batch_size, full, n, self.pad_id)
        tokens[:, 0] = self.bos_id
        tokens[:, 1::2] = self.key_ids[key_order]
        tokens[:, 2::2] = self.value_ids[shown_values]
        targets[:, 1::2] = self.value_ids[shown_values]
        supervised[:, 1::2] = True
        shown_onehot = np.eye(n)[shown_values]  # [batch, pair, value]
        revealed_before = np.cumsum(shown_onehot, axis=1) - shown_onehot
        n_unseen = n - np.arange(n, dtype=np.float64)
        bayes[:, 1::2] = (1.0 - revealed_before) / n_unseen[None, :, None]

        info = {"bijection": bijection, "key_order": key_order}
        return TaskBatch(tokens[:, :length], targets[:, :length], bayes[:, :length], supervised[:, :length], info)


# ----------------------------------------------------------------------------------------------
# 2. HMM filtering


def quantise_rows(probs, levels: int) -> np.ndarray:
    """Largest-remainder rounding of `levels * probs` along the last axis: int64 counts that sum to
    `levels` exactly in every row (zeros allowed). The quantised distribution is counts / levels."""
    scaled = np.asarray(probs, dtype=np.float64) * levels
    counts = np.floor(scaled).astype(np.int64)
    missing = levels - counts.sum(axis=-1, keepdims=True)
    remainders = scaled - counts
    # rank 0 = largest remainder; the `missing` largest get one more level each
    rank = np.argsort(np.argsort(-remainders, axis=-1, kind="stable"), axis=-1, kind="stable")
    counts = counts + (rank < missing)
    assert (counts.sum(axis=-1) == levels).all()
    return counts


def _sample_from_counts(counts: np.ndarray, levels: int, rng: np.random.Generator) -> np.ndarray:
    """[batch, m] integer weights summing to `levels` -> [batch] category drawn with p = counts / levels.
    Exact: a uniform integer u in [0, levels) falls in category j iff cum[j-1] <= u < cum[j]."""
    u = rng.integers(levels, size=len(counts))
    return (np.cumsum(counts, axis=-1) <= u[:, None]).sum(axis=-1)


class HMMTask(Task):
    """HMM filtering with the parameters written into the context (METHODS.md section 9).

    Per sequence, transition rows [S, S] and emission rows [S, O] are drawn Dirichlet(1) and
    quantised to multiples of 1/Q (`quantise_rows`); the quantised matrices are the generating
    parameters, so the model is shown exactly what the posterior uses. Initial state uniform.
    `floor` (a probability, default 0) gives every entry at least round(floor * Q) levels: the
    row is that floor plus a Dirichlet(1) draw of the remaining levels (the papers' released HMM
    task writes its matrices to 2 decimals with a 0.05 floor: `levels=100, floor=0.05`).

    Tokens: `<bos> T[0,0] ... T[S-1,S-1] | E[0,0] ... E[S-1,O-1] | o_1 ... o_L`, matrices row-major
    as level tokens p0..pQ (p_j means j/Q); header_len = S*S + S*O + 3 tokens, then L observations.
    Supervised at every observation position t: target = the true hidden state s_t (tokens
    s0..s{S-1}, never in the input), Bayes = the forward-algorithm filter p(s_t | o_1..o_t).
    Vocabulary: <bos> <pad> <unk> | p0..pQ o0..o{O-1} s0..s{S-1}; answer_ids = the state tokens.

    `sample(..., seq_len=L)` sets the NUMBER OF OBSERVATIONS (default `length`, e.g. 30 or 50 to
    test length generalisation); the token length is header_len + L (`max_tokens(L)`).
    info: "transition" [batch, S, S] and "emission" [batch, S, O] (float, j/Q), "states" and
    "observations" [batch, L] (indices).
    """

    name = "hmm"
    prompt_position = "random"

    def __init__(self, n_states: int = 5, n_symbols: int = 5, length: int = 20, levels: int = 10,
                 floor: float = 0.0):
        for option, value, low in (("n_states", n_states, 2), ("n_symbols", n_symbols, 2),
                                   ("length", length, 1), ("levels", levels, 1)):
            if int(value) < low:
                raise ConfigError(f"hmm: {option} must be at least {low}, got {value}")
        self.n_states, self.n_symbols = int(n_states), int(n_symbols)
        self.length, self.levels = int(length), int(levels)
        self.floor = float(floor)
        self.floor_levels = int(round(self.floor * self.levels))
        if not 0 <= self.floor_levels * max(self.n_states, self.n_symbols) <= self.levels:
            raise ConfigError(f"hmm: floor {floor} leaves no room in a row of {max(self.n_states, self.n_symbols)} "
                              f"entries at {self.levels} levels: it must lie in [0, 1 / row length]")
        self.level_tokens = [f"p{j}" for j in range(self.levels + 1)]
        self.symbol_tokens = [f"o{i}" for i in range(self.n_symbols)]
        self.state_tokens = [f"s{i}" for i in range(self.n_states)]
        self._set_vocab(["|"] + self.level_tokens + self.symbol_tokens + self.state_tokens)
        self.sep_id = self.token_to_id["|"]
        self.level_ids = self._ids(self.level_tokens)
        self.symbol_ids = self._ids(self.symbol_tokens)
        self.state_ids = self._ids(self.state_tokens)
        self.answer_ids = self.state_ids
        self.header_len = self.n_states**2 + self.n_states * self.n_symbols + 3
        self.seq_len = self.header_len + self.length

    def max_tokens(self, seq_len: int | None = None) -> int:
        return self.header_len + (self.length if seq_len is None else int(seq_len))

    def sample(self, batch_size: int, rng: np.random.Generator, seq_len: int | None = None) -> TaskBatch:
        batch_size = _check_batch_size(batch_size)
        n_obs = self.length if seq_len is None else int(seq_len)
        if n_obs < 1:
            raise ConfigError(f"hmm: seq_len (the number of observations) must be at least 1, got {seq_len}")
        S, O, Q = self.n_states, self.n_symbols, self.levels
        F = self.floor_levels
        trans_counts = F + quantise_rows(rng.dirichlet(np.ones(S), size=(batch_size, S)), Q - S * F)  # [batch, S, S]
        emit_counts = F + quantise_rows(rng.dirichlet(np.ones(O), size=(batch_size, S)), Q - O * F)   # [batch, S, O]
        transition, emission = trans_counts / Q, emit_counts / Q

        rows = np.arange(batch_size)
        states = np.empty((batch_size, n_obs), dtype=np.int64)
        observations = np.empty((batch_size, n_obs), dtype=np.int64)
        states[:, 0] = rng.integers(S, size=batch_size)
        for t in range(n_obs):
            if t > 0:
                states[:, t] = _sample_from_counts(trans_counts[rows, states[:, t - 1]], Q, rng)
            observations[:, t] = _sample_from_counts(emit_counts[rows, states[:, t]], Q, rng)

        # Forward filter. The evidence z_t is positive: the observations were generated by these
        # very parameters, so the true path keeps positive probability even where the
        # quantisation put zeros in the matrices.
        filtered = np.empty((batch_size, n_obs, S), dtype=np.float64)
        belief = np.full((batch_size, S), 1.0 / S)
        for t in range(n_obs):
            predicted = belief if t == 0 else np.einsum("bi,bij->bj", belief, transition)
            joint = predicted * emission[rows, :, observations[:, t]]
            evidence = joint.sum(axis=-1, keepdims=True)
            assert (evidence > 0).all(), "an observation with zero probability under its own generating HMM"
            belief = joint / evidence
            filtered[:, t] = belief

        H = self.header_len
        tokens, targets, bayes, supervised = _empty_batch(batch_size, H + n_obs, S, self.pad_id)
        tokens[:, 0] = self.bos_id
        tokens[:, 1 : 1 + S * S] = self.level_ids[trans_counts.reshape(batch_size, -1)]
        tokens[:, 1 + S * S] = self.sep_id
        tokens[:, 2 + S * S : H - 1] = self.level_ids[emit_counts.reshape(batch_size, -1)]
        tokens[:, H - 1] = self.sep_id
        tokens[:, H:] = self.symbol_ids[observations]
        targets[:, H:] = self.state_ids[states]
        bayes[:, H:] = filtered
        supervised[:, H:] = True
        info = {"transition": transition, "emission": emission, "states": states, "observations": observations}
        return TaskBatch(tokens, targets, bayes, supervised, info)

    def decode_parameters(self, tokens_row) -> tuple[np.ndarray, np.ndarray]:
        """(transition [S, S], emission [S, O]) read back from the header of one token row."""
        S, O = self.n_states, self.n_symbols
        row = np.asarray(tokens_row)
        level_of = {int(tok): j for j, tok in enumerate(self.level_ids)}
        try:
            trans = [level_of[int(tok)] for tok in row[1 : 1 + S * S]]
            emit = [level_of[int(tok)] for tok in row[2 + S * S : self.header_len - 1]]
        except KeyError as err:
            raise ValueError(f"hmm: token {self.vocab[err.args[0]]!r} where the header expects a level token") from None
        transition = np.array(trans, dtype=np.float64).reshape(S, S) / self.levels
        emission = np.array(emit, dtype=np.float64).reshape(S, O) / self.levels
        return transition, emission


# ----------------------------------------------------------------------------------------------
# 3. Associative recall


class AssociativeRecallTask(Task):
    """Key-value pairs in context, then a probe key; the answer is its value (METHODS.md section 9).

    Tokens: `<bos> k v k v ... ? k_probe`: n_pairs distinct keys from n_keys key tokens, values
    uniform with replacement from n_values value tokens, the probe uniform over the pairs shown;
    seq_len = 2 n_pairs + 3. Supervised only at the final (probe) position: target = the probe's
    value, Bayes = one-hot on it. Vocabulary: <bos> <pad> <unk> ? k0.. v0..; answer_ids = values.

    `sample(..., seq_len=L)` with odd L = 2m + 3 shows m pairs instead (1 <= m <= n_keys).
    `min_pairs` (a curriculum over lengths): `sample(...)` without seq_len then draws each
    sequence's number of pairs uniformly from min_pairs..n_pairs, right-padded with "<pad>" to
    2 n_pairs + 3 tokens, the probe right after its own pairs; with seq_len, every sequence has
    that many, as without it (so held-out scores at seq_len 2 n_pairs + 3 are the full task's).
    info: "keys", "values" [batch, m] (indices; -1 past a sequence's own pairs), "probe" [batch]
    (index of the probed pair), "n_pairs" [batch].
    """

    name = "recall"

    def __init__(self, n_pairs: int = 8, n_keys: int = 32, n_values: int = 32, min_pairs: int | None = None):
        if int(n_pairs) < 1 or int(n_values) < 2:
            raise ConfigError(f"recall: need n_pairs >= 1 and n_values >= 2, got {n_pairs} and {n_values}")
        if int(n_keys) < int(n_pairs):
            raise ConfigError(f"recall: keys are distinct, so n_keys ({n_keys}) must be at least n_pairs ({n_pairs})")
        if min_pairs is not None and not 1 <= int(min_pairs) <= int(n_pairs):
            raise ConfigError(f"recall: min_pairs must lie in 1..n_pairs ({n_pairs}), got {min_pairs}")
        self.min_pairs = None if min_pairs is None else int(min_pairs)
        self.n_pairs, self.n_keys, self.n_values = int(n_pairs), int(n_keys), int(n_values)
        self._set_vocab(["?"] + [f"k{i}" for i in range(self.n_keys)] + [f"v{i}" for i in range(self.n_values)])
        self.query_id = self.token_to_id["?"]
        self.key_ids = self._ids(f"k{i}" for i in range(self.n_keys))
        self.value_ids = self._ids(f"v{i}" for i in range(self.n_values))
        self.answer_ids = self.value_ids
        self.seq_len = 2 * self.n_pairs + 3

    def sample(self, batch_size: int, rng: np.random.Generator, seq_len: int | None = None) -> TaskBatch:
        batch_size = _check_batch_size(batch_size)
        length = self.seq_len if seq_len is None else int(seq_len)
        n_pairs = (length - 3) // 2
        if length % 2 == 0 or not 1 <= n_pairs <= self.n_keys:
            raise ConfigError(f"recall: seq_len must be 2m + 3 with 1 <= m <= n_keys ({self.n_keys}), got {seq_len}")
        if seq_len is None and self.min_pairs is not None:
            return self._sample_mixed(batch_size, rng)
        keys = _permutations(rng, batch_size, self.n_keys)[:, :n_pairs]
        values = rng.integers(self.n_values, size=(batch_size, n_pairs))
        probe = rng.integers(n_pairs, size=batch_size)
        rows = np.arange(batch_size)
        answer = values[rows, probe]

        tokens, targets, bayes, supervised = _empty_batch(batch_size, length, self.n_values, self.pad_id)
        tokens[:, 0] = self.bos_id
        tokens[:, 1 : 2 * n_pairs : 2] = self.key_ids[keys]
        tokens[:, 2 : 2 * n_pairs + 1 : 2] = self.value_ids[values]
        tokens[:, -2] = self.query_id
        tokens[:, -1] = self.key_ids[keys[rows, probe]]
        targets[:, -1] = self.value_ids[answer]
        bayes[rows, -1, answer] = 1.0
        supervised[:, -1] = True
        return TaskBatch(tokens, targets, bayes, supervised, {"keys": keys, "values": values, "probe": probe,
                                                              "n_pairs": np.full(batch_size, n_pairs)})

    def _sample_mixed(self, batch_size: int, rng: np.random.Generator) -> TaskBatch:
        counts = rng.integers(self.min_pairs, self.n_pairs + 1, size=batch_size)
        keys = _permutations(rng, batch_size, self.n_keys)[:, : self.n_pairs]
        values = rng.integers(self.n_values, size=(batch_size, self.n_pairs))
        probe = (rng.random(batch_size) * counts).astype(np.int64)  # uniform over each sequence's own pairs
        rows = np.arange(batch_size)
        answer = values[rows, probe]
        shown = np.arange(self.n_pairs)[None, :] < counts[:, None]
        tokens, targets, bayes, supervised = _empty_batch(batch_size, self.seq_len, self.n_values, self.pad_id)
        tokens[:, 0] = self.bos_id
        tokens[:, 1 : 2 * self.n_pairs : 2] = np.where(shown, self.key_ids[keys], self.pad_id)
        tokens[:, 2 : 2 * self.n_pairs + 1 : 2] = np.where(shown, self.value_ids[values], self.pad_id)
        last = 2 * counts + 2  # the probe key's position
        tokens[rows, last - 1] = self.query_id
        tokens[rows, last] = self.key_ids[keys[rows, probe]]
        targets[rows, last] = self.value_ids[answer]
        bayes[rows, last, answer] = 1.0
        supervised[rows, last] = True
        info = {"keys": np.where(shown, keys, -1), "values": np.where(shown, values, -1), "probe": probe,
                "n_pairs": counts}
        return TaskBatch(tokens, targets, bayes, supervised, info)


# ----------------------------------------------------------------------------------------------
# 4. SULA


DEFAULT_LABEL_PAIRS = (("dax", "lug"), ("wug", "kep"), ("mip", "tuv"), ("zorb", "gax"))

CARRIER_WORDS = (
    "apple", "river", "chair", "table", "stone", "cloud", "horse", "garden", "window", "bottle",
    "candle", "mirror", "pencil", "basket", "bridge", "forest", "island", "ladder", "engine", "jacket",
    "kettle", "lemon", "market", "needle", "orange", "pocket", "rabbit", "saddle", "tunnel", "violin",
    "wagon", "anchor", "barrel", "button", "carpet", "castle", "cotton", "desert", "falcon", "feather",
    "ginger", "hammer", "harbor", "helmet", "lantern", "meadow", "monkey", "napkin", "oyster", "parrot",
    "pepper", "pillow", "rocket", "salmon", "shovel", "silver", "spider", "statue", "sugar", "ticket",
    "tomato", "turtle", "valley", "walnut",
)

MASK_TOKEN = "___"


class SulaTask(Task):
    """METHODS.md section 7's generative model as token sequences (section 9, SULA tunnel).

    Per sequence: a label pair (L1, L2) from `label_pairs`, latent y uniform on {L1, L2}, k uniform
    on `k_values`, k examples with distinct carrier words, each labelled y with probability alpha
    (else the other label), then a query carrier word (distinct from the examples') whose label is y.

    Tokens: `<bos> w1 : L1 , w2 : L2 , ... , wk : Lk . q :`, i.e. max(4k, 1) + 3 tokens (k = 0 gives
    `<bos> . q :`), right-padded with "<pad>" to the batch's longest row (or to `seq_len`).
    Supervised at the final ":" (target y, Bayes p(y | D) = `sula_posterior(n1, n2, alpha)` over
    (L1, L2)) and, if `supervise_examples`, at every example's ":" (target = its noisy label, Bayes
    = the predictive of a fresh noisy label given the examples before it, alpha p + (1 - alpha)(1 - p)).
    answer_ids = every label token, pair by pair (pair c's L1, L2 at answer indices 2c, 2c + 1). Once
    a label has been shown the pair is known and Bayes puts zero mass on other pairs' labels; before
    any label (the first example's ":", and the query when k = 0) the pair is itself unknown, so the
    exact predictive is uniform over all 2 * len(label_pairs) labels. Restricted to (L1, L2) and
    renormalised it is always the section-7 quantity. The mask token "___" is in the vocabulary for
    control conditions and never sampled.
    Vocabulary: <bos> <pad> <unk> : , . ___ labels... carriers...

    info: "k", "n1", "n2" [batch]; "y" [batch] (0 = L1, 1 = L2); "y_token" [batch]; "pair" [batch]
    (index into label_pairs); "posterior_l1" [batch] (p(y = L1 | D), section 7);
    "example_labels" [batch, max(k_values)] (0/1, -1 past k);
    "length" [batch] (unpadded token count); "query_position" [batch] (the final ":").
    """

    name = "sula"

    def __init__(self, alpha: float = 0.9, k_values=tuple(range(9)), n_carriers: int = 48,
                 label_pairs=DEFAULT_LABEL_PAIRS, supervise_examples: bool = True):
        _check_alpha(alpha)
        self.alpha = float(alpha)
        k_values = tuple(int(k) for k in np.atleast_1d(k_values))
        if not k_values or min(k_values) < 0:
            raise ConfigError(f"sula: k_values must be a non-empty list of counts >= 0, got {k_values}")
        self.k_values = k_values
        self.max_k = max(k_values)
        if isinstance(label_pairs, (int, np.integer)):
            if not 1 <= label_pairs <= len(DEFAULT_LABEL_PAIRS):
                raise ConfigError(f"sula: label_pairs must be 1..{len(DEFAULT_LABEL_PAIRS)} or a list of (L1, L2) words")
            label_pairs = DEFAULT_LABEL_PAIRS[: int(label_pairs)]
        label_pairs = tuple(tuple(pair) for pair in label_pairs)
        if not label_pairs or any(len(pair) != 2 for pair in label_pairs):
            raise ConfigError(f"sula: label_pairs must be a non-empty list of (L1, L2) word pairs, got {label_pairs}")
        self.label_pairs = label_pairs
        if not self.max_k + 1 <= int(n_carriers) <= len(CARRIER_WORDS):
            raise ConfigError(f"sula: n_carriers must be between max(k_values) + 1 = {self.max_k + 1} (distinct "
                              f"examples and query) and {len(CARRIER_WORDS)}, got {n_carriers}")
        self.n_carriers = int(n_carriers)
        self.supervise_examples = bool(supervise_examples)

        self.carrier_words = list(CARRIER_WORDS[: self.n_carriers])
        self.label_words = [word for pair in label_pairs for word in pair]
        self._set_vocab([":", ",", ".", MASK_TOKEN] + self.label_words + self.carrier_words)
        self.colon_id, self.comma_id, self.period_id = self._ids([":", ",", "."])
        self.mask_id = self.token_to_id[MASK_TOKEN]
        self.label_ids = self._ids(self.label_words).reshape(-1, 2)  # [n_pairs, 2]
        self.carrier_ids = self._ids(self.carrier_words)
        self.answer_ids = self.label_ids.reshape(-1)
        self.seq_len = self.n_tokens(self.max_k)

    @staticmethod
    def n_tokens(k):
        """Unpadded token count of a sequence with k examples: max(4k, 1) + 3."""
        return np.maximum(4 * np.asarray(k), 1) + 3

    def max_tokens(self, seq_len: int | None = None) -> int:
        return int(self.seq_len if seq_len is None else seq_len)

    @staticmethod
    def _set_bayes(bayes, rows, position, pair, p_l1, pair_known) -> None:
        """Write p(L1) = p_l1 on each row's pair; where no label has been shown yet (pair_known
        False) the pair is unknown and p_l1 = 1/2, so the predictive is uniform over all labels."""
        pair_known = np.broadcast_to(pair_known, rows.shape)
        position = np.broadcast_to(position, rows.shape)
        bayes[rows[~pair_known], position[~pair_known]] = 1.0 / bayes.shape[-1]
        rows, position, pair = rows[pair_known], position[pair_known], pair[pair_known]
        p_l1 = np.asarray(p_l1)[pair_known]
        bayes[rows, position, 2 * pair] = p_l1
        bayes[rows, position, 2 * pair + 1] = 1 - p_l1

    def sample(self, batch_size: int, rng: np.random.Generator, seq_len: int | None = None) -> TaskBatch:
        batch_size = _check_batch_size(batch_size)
        if seq_len is not None and int(seq_len) < self.seq_len:
            raise ConfigError(f"sula: seq_len pads every row, so it must be at least {self.seq_len} "
                              f"(k = {self.max_k}), got {seq_len}")
        alpha, max_k = self.alpha, self.max_k
        rows = np.arange(batch_size)
        pair = rng.integers(len(self.label_pairs), size=batch_size)
        y = rng.integers(2, size=batch_size)
        k = np.asarray(self.k_values, dtype=np.int64)[rng.integers(len(self.k_values), size=batch_size)]
        carriers = _permutations(rng, batch_size, self.n_carriers)[:, : max_k + 1]
        flipped = rng.random((batch_size, max_k)) >= alpha
        present = np.arange(max_k)[None, :] < k[:, None]  # [batch, max_k]
        labels = np.where(present, np.where(flipped, 1 - y[:, None], y[:, None]), -1)

        lengths = self.n_tokens(k)
        width = int(lengths.max()) if seq_len is None else int(seq_len)
        tokens, targets, bayes, supervised = _empty_batch(batch_size, width, len(self.answer_ids), self.pad_id)
        tokens[:, 0] = self.bos_id

        # Example j occupies positions 4j+1 (carrier), 4j+2 (":"), 4j+3 (label), 4j+4 ("," unless last).
        n1_before = np.zeros(batch_size, dtype=np.int64)
        n2_before = np.zeros(batch_size, dtype=np.int64)
        for j in range(int(k.max())):
            on = rows[present[:, j]]
            label = labels[on, j]
            tokens[on, 4 * j + 1] = self.carrier_ids[carriers[on, j]]
            tokens[on, 4 * j + 2] = self.colon_id
            tokens[on, 4 * j + 3] = self.label_ids[pair[on], label]
            tokens[rows[j < k - 1], 4 * j + 4] = self.comma_id
            if self.supervise_examples:
                p_l1 = sula_posterior(n1_before[on], n2_before[on], alpha)
                p_next_l1 = alpha * p_l1 + (1 - alpha) * (1 - p_l1)
                targets[on, 4 * j + 2] = self.label_ids[pair[on], label]
                self._set_bayes(bayes, on, 4 * j + 2, pair[on], p_next_l1, pair_known=j > 0)
                supervised[on, 4 * j + 2] = True
            n1_before[on] += label == 0
            n2_before[on] += label == 1

        query = lengths - 1  # the final ":"
        tokens[rows, query - 2] = self.period_id
        tokens[rows, query - 1] = self.carrier_ids[carriers[rows, k]]
        tokens[rows, query] = self.colon_id
        p_l1 = sula_posterior(n1_before, n2_before, alpha)
        targets[rows, query] = self.label_ids[pair, y]
        self._set_bayes(bayes, rows, query, pair, p_l1, pair_known=k > 0)
        supervised[rows, query] = True

        info = {
            "k": k, "n1": n1_before, "n2": n2_before, "y": y, "y_token": self.label_ids[pair, y],
            "pair": pair, "posterior_l1": p_l1, "example_labels": labels, "length": lengths, "query_position": query,
        }
        return TaskBatch(tokens, targets, bayes, supervised, info)


# ----------------------------------------------------------------------------------------------
# Registry


TASKS = {
    "bijection": BijectionTask,
    "hmm": HMMTask,
    "recall": AssociativeRecallTask,
    "sula": SulaTask,
}


def make_task(name: str, **options) -> Task:
    """Build a registered task: `make_task("bijection", n=10)`, `make_task("hmm", levels=10)`."""
    if name not in TASKS:
        raise ConfigError(f"unknown wind-tunnel task {name!r}; choose one of {', '.join(TASKS)}")
    try:
        return TASKS[name](**options)
    except TypeError as err:
        raise ConfigError(f"{name}: bad options {sorted(options)} ({err})") from None
