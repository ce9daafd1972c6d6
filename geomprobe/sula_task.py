"""SULA prompts: in-context Bayesian updating with an exact posterior (METHODS.md section 7).

For a model, take the prompts the sula suite would use (labels, carriers and k = 0 form chosen for
its tokenizer; a wind tunnel's own words; every prompt checked for unknown tokens) with
geomprobe.prompts_for (defined in geomprobe.suites.sula, which reads the model):

    sula = prompts_for(loaded, n_per_k=250, seed=0)           # SulaPromptSet
    sula["main"][5].text, sula["main"][5].H_bayes
    extract(loaded, sula.prompts(), ExtractionConfig(tokens=sula.tokens()))

The parts, without a model (a wind tunnel's vocabulary lacks CARRIER_POOL's extra words and the
default labels: use prompts_for for one):

    choice = choose_labels(loaded.tokenizer)                  # two nonce words, one token each
    spec = SulaSpec(labels=choice.main, remap_labels=choice.remap, n_per_k=250, seed=0)
    prompts = generate(spec)                                  # condition -> list[SulaPrompt]
    prompts["main"][5].text      # e.g. 'apple: dax, river: lug, chair: dax. stone:'
    prompts["main"][5].H_bayes   # bits

Generative model (binary, uniform prior): a latent label y in {L1, L2}; k examples, each a
carrier word and a label equal to y with probability alpha (else the other label); then a query
word whose label is y. Carrier words are decorative: distinct within a prompt, drawn from
`CARRIER_POOL`, they carry no evidence. With n1 examples labelled L1 and n2 labelled L2,

    p(y = L1 | D) = sigmoid((n1 - n2) ln(alpha / (1 - alpha)))     (target "posterior")
    p'            = alpha p + (1 - alpha)(1 - p)                     (target "predictive": the
                                                                     next noisy label)

and H_bayes is the binary entropy of the target, in bits.

Surface form (the papers' code; the SULA wind tunnel's sequences): examples written
"word: label", joined by ", ", then ". " and the query word with ":":
    k = 2:  "apple: dax, river: lug. chair:"
    k = 0:  "chair:"   (wind tunnels: ". chair:", the form they were trained on)
`SulaSpec.template` replaces this with any format string over two placeholders:
    {examples}  the k examples as "word: label" joined by ", " (empty when k = 0)
    {query}     the query word
e.g. "Examples: {examples}\\nQuery {query}:". The model is scored on the token that follows, so a
template should end where a label would follow after a space.

Conditions, all with the same k, latent labels, carrier words and noisy labels (trial by trial):
    main           labels (L1, L2)
    lexical_remap  another nonce pair (L1', L2') in the same places       Bayes unchanged
    shuffled       each example label drawn 50/50, independently of y      H_bayes = 1
    carrier_mask   every carrier word (query included) shown as "___"      Bayes unchanged
    label_mask     every example label shown as "___"                      H_bayes = 1

Prompts are seeded per k (`numpy.random.default_rng([seed, k])`), trial by trial, so adding a k
or raising n_per_k keeps the prompts already drawn. Pure python/numpy, no torch; choose_labels reads
a tokenizer.
"""

from __future__ import annotations

import itertools
import string
from dataclasses import asdict, dataclass, field

import numpy as np

from geomprobe.errors import ConfigError
from geomprobe.prompts import Prompt
from geomprobe.windtunnel.tasks import CARRIER_WORDS, MASK_TOKEN, binary_entropy_bits, sula_posterior

CONDITIONS = ("main", "lexical_remap", "shuffled", "carrier_mask", "label_mask")
CONTROLS = CONDITIONS[1:]
TARGETS = ("posterior", "predictive")
DEFAULT_K_VALUES = (0, 1, 2, 4, 8)

DEFAULT_TEMPLATE = "{examples}. {query}:"
K0_TEMPLATE = "{query}:"  # the default form with no examples
WINDTUNNEL_K0_TEMPLATE = ". {query}:"  # SulaTask's k = 0 sequence: <bos> . q :
EXAMPLE_FORMAT = "{word}: {label}"
EXAMPLE_JOINER = ", "
TEMPLATE_FIELDS = ("examples", "query")

# Carrier words: the wind tunnel's (so a SULA tunnel knows them), then this project's own.
EXTRA_CARRIER_WORDS = (
    "blanket", "bucket", "cabinet", "camera", "canyon", "cherry", "circle", "copper", "cousin", "dinner",
    "doctor", "dragon", "eagle", "elbow", "fabric", "finger", "flower", "fountain", "glacier", "guitar",
    "hollow", "insect", "jungle", "kitchen", "letter", "lizard", "magnet", "marble", "mountain", "muffin",
    "nickel", "ocean", "paddle", "palace", "paper", "pebble", "planet", "puzzle", "quilt", "ribbon",
    "saucer", "shadow", "signal", "sister", "summer", "teapot", "thunder", "timber", "tower", "trumpet",
    "velvet", "village", "wallet", "whistle", "winter", "wizard", "yellow", "zipper", "pirate", "lobster",
    "mitten", "noodle", "pumpkin", "compass",
)
CARRIER_POOL = tuple(CARRIER_WORDS) + EXTRA_CARRIER_WORDS

# Nonce label candidates, tried in this order before the consonant-vowel-consonant sweep.
LABEL_CANDIDATES = (
    "dax", "lug", "wug", "kep", "mip", "tuv", "zorb", "gax", "fep", "blick", "toma", "zup", "wif", "jop",
    "tob", "fid", "pim", "nop", "bix", "sib", "vab", "yok", "rud", "zek", "dof", "gub", "hib", "jav",
)
SWEEP_CONSONANTS = "bdfgjklmnprstvwz"
SWEEP_VOWELS = "aeiou"
SWEEP_SEED = 0  # fixed: the label order must not change with a run's --seed


def cvc_sweep() -> list[str]:
    """Every consonant-vowel-consonant word over SWEEP_CONSONANTS/SWEEP_VOWELS (1,280), in a fixed
    shuffled order (so the first qualifying words do not all start with "b")."""
    words = ["".join(t) for t in itertools.product(SWEEP_CONSONANTS, SWEEP_VOWELS, SWEEP_CONSONANTS)]
    order = np.random.default_rng(SWEEP_SEED).permutation(len(words))
    return [words[i] for i in order]


# ----------------------------------------------------------------------------------------------
# Exact Bayes


def check_alpha(alpha: float) -> float:
    if not 0.0 < float(alpha) < 1.0:
        raise ConfigError(f"--alpha must lie strictly between 0 and 1, got {alpha}")
    return float(alpha)


def predictive_l1(posterior_l1, alpha: float):
    """p(next noisy label = L1 | D) = alpha p + (1 - alpha)(1 - p). Elementwise. Evaluated on the
    larger of p and 1 - p and mirrored, so that posteriors p and 1 - p give predictives that are
    exact complements too (as sula_posterior's are)."""
    p = np.asarray(posterior_l1, dtype=np.float64)
    larger = np.maximum(p, 1.0 - p)
    mirrored = alpha * larger + (1 - alpha) * (1 - larger)
    return np.where(p >= 0.5, mirrored, 1.0 - mirrored)[()]


def target_l1(posterior_l1, alpha: float, target: str = "posterior"):
    """The probability of L1 whose entropy is H_bayes: the posterior, or the posterior predictive."""
    if target == "posterior":
        return np.asarray(posterior_l1, dtype=np.float64)
    if target == "predictive":
        return predictive_l1(posterior_l1, alpha)
    raise ConfigError(f"--target must be one of {', '.join(TARGETS)}, got '{target}'")


def h_bayes_bits(n1, n2, alpha: float = 0.9, target: str = "posterior"):
    """H_bayes in bits for n1 examples labelled L1 and n2 labelled L2 (informative labels).

    The entropy depends on the evidence only through |n1 - n2|, and is computed from it: prompts
    with the same |n1 - n2| get the same float bit for bit (so rank correlations see them as the
    ties they are), whichever label the evidence favours."""
    margin = np.abs(np.asarray(n1, dtype=np.float64) - np.asarray(n2, dtype=np.float64))
    return binary_entropy_bits(target_l1(sula_posterior(margin, 0.0, check_alpha(alpha)), alpha, target))


def expected_h_bayes_bits(k: int, alpha: float = 0.9, target: str = "posterior") -> float:
    """E[H_bayes] over the generative model at k examples: the count of labels equal to y is
    Binomial(k, alpha), and H is symmetric in (n1, n2), so y need not be summed over."""
    from math import comb

    j = np.arange(k + 1)
    weights = np.array([comb(k, int(i)) for i in j], dtype=np.float64) * alpha**j * (1 - alpha) ** (k - j)
    return float(weights @ h_bayes_bits(j, k - j, alpha, target))


# ----------------------------------------------------------------------------------------------
# Prompts


@dataclass(frozen=True)
class SulaPrompt:
    """One SULA prompt and its exact Bayes quantities.

    labels: (L1, L2) of this condition (the pair whose next-token probabilities are scored).
    y: latent label, 0 = L1, 1 = L2 (the query word's label).
    examples: (carrier word, label) as shown in the text ("___" where masked).
    n1, n2: examples shown with label L1 / L2.
    posterior_l1: exact p(y = L1 | D) in this condition (0.5 for shuffled and label_mask).
    target_l1: the probability whose entropy H_bayes is (the posterior, or the predictive).
    H_apparent: the entropy a reader who took the shown labels as evidence would have (differs
    from H_bayes only for `shuffled`, whose labels look like evidence but carry none).
    """

    id: str
    condition: str
    k: int
    text: str
    labels: tuple
    y: int
    examples: tuple
    query: str
    n1: int
    n2: int
    posterior_l1: float
    target_l1: float
    H_bayes: float
    H_apparent: float

    def to_prompt(self) -> Prompt:
        return Prompt(id=self.id, text=self.text, domain="sula", source=self.condition)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["labels"] = list(self.labels)
        out["examples"] = [list(e) for e in self.examples]
        out["y_label"] = self.labels[self.y]
        return out


@dataclass(frozen=True)
class SulaSpec:
    """Everything that determines the prompts. Validated on creation (ConfigError)."""

    labels: tuple = ("dax", "lug")
    remap_labels: tuple | None = ("wug", "kep")  # lexical_remap's pair; None: no lexical_remap
    k_values: tuple = DEFAULT_K_VALUES
    n_per_k: int = 250
    alpha: float = 0.9
    target: str = "posterior"
    carriers: tuple = CARRIER_POOL
    template: str | None = None  # None: DEFAULT_TEMPLATE, and k0_template when k = 0
    k0_template: str = K0_TEMPLATE
    mask: str = MASK_TOKEN
    seed: int = 0

    def __post_init__(self):
        object.__setattr__(self, "labels", _label_pair(self.labels, "--labels"))
        if self.remap_labels is not None:
            object.__setattr__(self, "remap_labels", _label_pair(self.remap_labels, "lexical_remap labels"))
            if set(self.remap_labels) & set(self.labels):
                raise ConfigError(f"lexical_remap labels {self.remap_labels} must differ from the labels {self.labels}")
        try:
            k_values = tuple(int(k) for k in self.k_values)
        except (TypeError, ValueError):
            raise ConfigError(f"--k takes comma-separated integers such as 0,1,2,4,8, not {self.k_values}") from None
        if not k_values or min(k_values) < 0 or len(set(k_values)) != len(k_values):
            raise ConfigError(f"--k must list distinct example counts >= 0, got {list(k_values)}")
        object.__setattr__(self, "k_values", k_values)
        if int(self.n_per_k) < 2:
            raise ConfigError(f"--n-per-k must be at least 2 (confidence intervals per k), got {self.n_per_k}")
        object.__setattr__(self, "n_per_k", int(self.n_per_k))
        object.__setattr__(self, "alpha", check_alpha(self.alpha))
        if self.target not in TARGETS:
            raise ConfigError(f"--target must be one of {', '.join(TARGETS)}, got '{self.target}'")
        taken = set(self.labels) | set(self.remap_labels or ()) | {self.mask}
        carriers = tuple(dict.fromkeys(w for w in self.carriers if w not in taken))
        if len(carriers) < max(k_values) + 1:
            raise ConfigError(f"k = {max(k_values)} needs {max(k_values) + 1} distinct carrier words (examples and "
                              f"query), but only {len(carriers)} are available: lower --k")
        object.__setattr__(self, "carriers", carriers)
        for name in ("template", "k0_template"):
            if getattr(self, name) is not None:
                check_template(getattr(self, name))
        if int(self.seed) < 0:
            raise ConfigError(f"--seed must be >= 0 for SULA prompts, got {self.seed}")

    def pair(self, condition: str) -> tuple:
        return self.remap_labels if condition == "lexical_remap" else self.labels

    def render(self, examples, query: str) -> str:
        """The prompt text for (word, label) examples and a query word."""
        if self.template is None and not examples:
            return self.k0_template.format(query=query)
        joined = EXAMPLE_JOINER.join(EXAMPLE_FORMAT.format(word=w, label=label) for w, label in examples)
        return (self.template or DEFAULT_TEMPLATE).format(examples=joined, query=query)

    def describe(self) -> dict:
        out = asdict(self)
        del out["carriers"]
        out.update(labels=list(self.labels),
                   remap_labels=None if self.remap_labels is None else list(self.remap_labels),
                   k_values=list(self.k_values), n_carriers=len(self.carriers),
                   template_used=self.template or DEFAULT_TEMPLATE,
                   k0_template_used=self.template or self.k0_template)
        return out


def _label_pair(pair, what: str) -> tuple:
    if isinstance(pair, str):
        pair = [part.strip() for part in pair.split(",")]
    pair = tuple(str(w).strip() for w in pair)
    if len(pair) != 2 or pair[0] == pair[1] or any(not w or any(ch.isspace() for ch in w) for w in pair):
        raise ConfigError(f"{what} must be two different words without spaces, such as dax,lug; got {list(pair)}")
    return pair


def check_template(template: str) -> str:
    """A template may use only {examples} and {query}, and must use {query}."""
    try:
        used = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as error:
        raise ConfigError(f"--template {template!r}: {error} (write literal braces as {{{{ and }}}})") from None
    unknown = used - set(TEMPLATE_FIELDS)
    if unknown or "query" not in used:
        raise ConfigError(f"--template {template!r} may use only the placeholders {{examples}} and {{query}}, and must "
                          f"use {{query}}" + (f"; unknown: {', '.join(sorted(unknown))}" if unknown else ""))
    return template


def _record(spec: SulaSpec, condition: str, prompt_id: str, k: int, y: int, words, shown_labels,
            informative: bool) -> SulaPrompt:
    """One prompt: `words` are k + 1 carriers (the last is the query), `shown_labels` 0/1 per example
    or None where labels are masked; `informative` says whether the shown labels are evidence about y."""
    pair = spec.pair(condition)
    carriers = [spec.mask] * len(words) if condition == "carrier_mask" else list(words)
    if shown_labels is None:
        examples = tuple((w, spec.mask) for w in carriers[:k])
        n1 = n2 = 0
    else:
        examples = tuple((w, pair[int(label)]) for w, label in zip(carriers[:k], shown_labels))
        n1 = int(np.sum(np.asarray(shown_labels) == 0))
        n2 = k - n1
    apparent = float(sula_posterior(n1, n2, spec.alpha))
    posterior = apparent if informative else 0.5
    target = float(target_l1(posterior, spec.alpha, spec.target))
    return SulaPrompt(
        id=prompt_id, condition=condition, k=k, text=spec.render(examples, carriers[k]), labels=pair, y=int(y),
        examples=examples, query=carriers[k], n1=n1, n2=n2, posterior_l1=posterior, target_l1=target,
        H_bayes=float(h_bayes_bits(n1, n2, spec.alpha, spec.target) if informative else binary_entropy_bits(target)),
        H_apparent=float(h_bayes_bits(n1, n2, spec.alpha, spec.target)))


def generate(spec: SulaSpec, conditions=CONDITIONS) -> dict[str, list[SulaPrompt]]:
    """condition -> prompts (k-major order, n_per_k per k). Trial i of k has the same latent label,
    carrier words and noisy labels in every condition, and the same id (`k{k}-{i:04d}`)."""
    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown:
        raise ConfigError(f"unknown SULA condition(s) {', '.join(unknown)}: choose from {', '.join(CONDITIONS)}")
    if "lexical_remap" in conditions and spec.remap_labels is None:
        raise ConfigError("lexical_remap needs a second label pair (SulaSpec.remap_labels)")
    out = {c: [] for c in conditions}
    pool = spec.carriers
    for k in spec.k_values:
        trial_rng = np.random.default_rng([spec.seed, k])  # each k its own stream
        shuffle_rng = np.random.default_rng([spec.seed, k, 1])
        for i in range(spec.n_per_k):
            y = int(trial_rng.integers(2))
            words = [pool[j] for j in trial_rng.permutation(len(pool))[: k + 1]]
            flipped = trial_rng.random(k) >= spec.alpha
            noisy = np.where(flipped, 1 - y, y)
            shuffled = shuffle_rng.integers(2, size=k)
            prompt_id = f"k{k}-{i:04d}"
            for condition in conditions:
                if condition == "shuffled":
                    out[condition].append(_record(spec, condition, prompt_id, k, y, words, shuffled, informative=False))
                elif condition == "label_mask":
                    out[condition].append(_record(spec, condition, prompt_id, k, y, words, None, informative=False))
                else:
                    out[condition].append(_record(spec, condition, prompt_id, k, y, words, noisy, informative=True))
    return out


# ----------------------------------------------------------------------------------------------
# Label choice


@dataclass(frozen=True)
class LabelChoice:
    """Two label pairs that the tokenizer writes as one token each where a label stands in a prompt.

    token_strings: word -> the string whose single token is scored (" dax" for byte-level BPE and
    word-level tokenizers, "dax" for SentencePiece ones, which add the word-initial marker themselves).
    token_ids: word -> that token's id. source: user | candidates | sweep | windtunnel.
    """

    main: tuple
    remap: tuple | None
    token_strings: dict = field(default_factory=dict)
    token_ids: dict = field(default_factory=dict)
    source: str = "candidates"
    n_tried: int = 0

    def to_dict(self) -> dict:
        return {"labels": list(self.main), "remap_labels": None if self.remap is None else list(self.remap),
                "token_strings": self.token_strings, "token_ids": self.token_ids, "source": self.source,
                "n_tried": self.n_tried}


def label_token(tokenizer, word: str, context: str = "apple:"):
    """(token string, token id) if `word`, written after a space at the end of `context`, adds exactly
    one token to the tokenization and that token is the single token of " word" (or of "word");
    None otherwise (several tokens, the tokenizer's unknown token, or a merge with the context)."""
    prefix = tokenizer.encode(context, add_special_tokens=False)
    full = tokenizer.encode(f"{context} {word}", add_special_tokens=False)
    if len(full) != len(prefix) + 1 or list(full[: len(prefix)]) != list(prefix):
        return None
    token_id = int(full[-1])
    if token_id == getattr(tokenizer, "unk_token_id", None):
        return None
    for text in (" " + word, word):
        if list(tokenizer.encode(text, add_special_tokens=False)) == [token_id]:
            return text, token_id
    return None


def choose_labels(tokenizer, labels=None, candidates=LABEL_CANDIDATES, sweep: bool = True, exclude=(),
                  context: str = "apple:", source: str | None = None) -> LabelChoice:
    """The main label pair (`labels` if given, after checking them; else the first two qualifying
    words) and the lexical_remap pair (the next two), each a single token in a prompt (`label_token`).
    Tries `candidates`, then (if `sweep`) every consonant-vowel-consonant word in a fixed order; words
    in `exclude` (carrier words, the mask) are skipped. Raises ConfigError listing what was tried when
    fewer than two qualify. remap is None when only one pair qualifies."""
    exclude = set(exclude)
    pool = list(dict.fromkeys(list(candidates) + (cvc_sweep() if sweep else [])))
    n_candidates = len(dict.fromkeys(candidates))

    def qualifying(skip):
        tried = 0
        for position, word in enumerate(pool):
            if word in exclude or word in skip:
                continue
            tried += 1
            token = label_token(tokenizer, word, context)
            if token is not None:
                yield word, token, tried, position >= n_candidates

    strings, ids = {}, {}
    if labels is not None:
        labels = _label_pair(labels, "--labels")
        for word in labels:
            token = label_token(tokenizer, word, context)
            if token is None:
                suggestion = [w for w, *_ in itertools.islice(qualifying(set(labels)), 4)]
                raise ConfigError(f"--labels: {word!r} is not a single token of this model's tokenizer after a space "
                                  f"(or is its unknown token); choose words that are"
                                  + (f", e.g. {','.join(suggestion[:2])}" if suggestion else ""))
            strings[word], ids[word] = token
        if ids[labels[0]] == ids[labels[1]]:
            raise ConfigError(f"--labels {labels[0]},{labels[1]} are the same token for this tokenizer")
        main = labels
    found, n_tried = [], 0  # (word, (token string, id), from the sweep)
    need = 2 if labels is not None else 4
    for word, token, n_tried, swept in qualifying(set(labels or ())):
        if token[1] in ids.values() or token[1] in [t[1] for _, t, _ in found]:
            continue
        found.append((word, token, swept))
        if len(found) == need:
            break
    if labels is None:
        if len(found) < 2:
            shown = ", ".join(w for w in dict.fromkeys(candidates) if w not in exclude)
            swept = (f" and all {len(cvc_sweep())} consonant-vowel-consonant words ({SWEEP_CONSONANTS} x "
                     f"{SWEEP_VOWELS} x {SWEEP_CONSONANTS})") if sweep else ""
            raise ConfigError(f"no two label words are single tokens of this model's tokenizer after a space: tried "
                              f"{shown}{swept}; pass --labels A,B with two words it encodes as one token each")
        main = (found[0][0], found[1][0])
        if source is None:
            source = "sweep" if found[0][2] or found[1][2] else "candidates"
        remaining = found[2:]
    else:
        source = source or "user"
        remaining = found
    for word, token, _ in found:
        strings[word], ids[word] = token
    remap = (remaining[0][0], remaining[1][0]) if len(remaining) >= 2 else None
    keep = set(main) | set(remap or ())
    return LabelChoice(main=tuple(main), remap=remap, token_strings={w: s for w, s in strings.items() if w in keep},
                       token_ids={w: i for w, i in ids.items() if w in keep}, source=source, n_tried=n_tried)


def __getattr__(name: str):
    if name in ("prompts_for", "SulaPromptSet"):  # they read a model through the sula suite, a layer above
        raise AttributeError(f"geomprobe.sula_task.{name} moved to geomprobe.suites.sula: use `from geomprobe import "
                             f"{name}` (or from geomprobe.suites.sula)")
    raise AttributeError(f"module 'geomprobe.sula_task' has no attribute {name!r}")
