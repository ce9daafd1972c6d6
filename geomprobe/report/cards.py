"""The verdict panel: one card per run, opened by the verdict of the first suite whose card gives
one (else the run's wind-tunnel scores, or what to run), then the run's results in words and each
suite's summary. Each suite's part lives in its folder's card.py (geomprobe/suites/<name>/card.py),
which calls register_card when imported; geomprobe.suites.base.load_faces imports those modules
(cards()), so nothing here names a suite. A card may also give the run's verdict label for its
section heading, notes for what is not drawn and a block of the cross-run section (html.py reads
those). A suite without a card adds nothing here; its numbers are drawn in its run's section as
before (by its figures, or in the table of suites no family draws, figures.other_suite_figures).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from geomprobe.analysis.null_comparison import difference_text

from .figures import fmt
from .page import Page, esc
from .rundata import RunData


@dataclass(frozen=True)
class Card:
    """What one suite says in the page around its figures; every part is optional. The HTML parts
    escape every string they read from a run directory (page.esc)."""

    suite: str
    # (run, title) -> the whole card, '<div class="card">' + title (an open <h3>) + ... + '</div>', where the
    # suite gives this run a verdict, else "": the first card that gives one opens the run's card
    verdict: Callable[[RunData, str], str] | None = None
    rule: str = ""  # how that verdict is reached, for the verdict panel's caption (HTML)
    label: Callable[[RunData], str | None] | None = None  # the verdict's label ("full", ...) by the run's heading
    sentences: Callable[[RunData], list[tuple[object, str]]] | None = None  # (shown?, sentence) for "In words"
    summary: Callable[[RunData], str] | None = None  # HTML added at the end of the card ("" for none)
    gives: str = ""  # what the summary adds, for the verdict panel's caption (HTML)
    missing: Callable[[RunData], list[str]] | None = None  # lines for the run's "not drawn" list
    across_runs: Callable[[list[RunData], Page], str] | None = None  # (runs, page) -> a block of the cross-run section


_CARDS: list[Card] = []  # register_card: suites' card faces and plug-ins


def register_card(suite: str, **parts) -> Card:
    """Give `suite` a card in the report's verdict panel: `parts` are the Card's fields (verdict,
    rule, label, sentences, summary, gives, missing, across_runs). A suite with a card already is a
    ValueError."""
    if any(card.suite == suite for card in _CARDS):
        raise ValueError(f"register_card: the {suite!r} suite already has a card")
    card = Card(suite, **parts)
    _CARDS.append(card)
    return card


def cards() -> list[Card]:
    """Every registered card, after each suite folder's card face is loaded
    (geomprobe.suites.base.load_faces), in suite registry order (a suite that is not registered after
    them)."""
    from geomprobe.suites.base import SUITES, load_faces

    load_faces("card")
    order = {name: rank for rank, name in enumerate(SUITES)}
    return sorted(_CARDS, key=lambda card: order.get(card.suite, len(order)))


# --------------------------------------------------------------------------------------------
# what the suites' cards write with


def versus_untrained(cmp) -> str:
    """'; better than untrained (0.359 vs 0.254)', or '' when none was measured: the project's one
    vocabulary (geomprobe.analysis.null_comparison.status_words), whose "better" is the favourable
    side (for a lower-is-better statistic a lower value; the direction is said: 'lower is better')."""
    if not isinstance(cmp, dict) or cmp.get("status") in (None, "not measured", "not tested"):
        return ""
    from geomprobe.analysis.null_comparison import status_words

    better = "" if cmp.get("higher_is_better", True) else "; lower is better"
    return f"; {status_words(str(cmp['status']))} ({fmt(cmp.get('model'))} vs {fmt(cmp.get('null_mean'))}{better})"


ENTROPY_ORDER = (0.5, 0.3)  # |rho| read as "ordered" and "weakly ordered" in the card's sentences


def entropy_order_words(rho, what: str, reference: str, by: str = "entropy") -> tuple[bool, str] | None:
    if rho is None:
        return None
    strong, weak = ENTROPY_ORDER
    order = "ordered" if abs(rho) >= strong else ("only weakly ordered" if abs(rho) >= weak else "not ordered")
    return abs(rho) >= strong, f"{what} is {order} by {by}: rho {rho:+.2f} against the papers' {reference}"


def untrained_cells(cmp, label: str) -> str:
    """'PC1 0.359 vs 0.307: indistinguishable from untrained (+0.051 [-0.004, +0.108]). ' or '', in
    the one vocabulary (status_words), with 'lower is better' for a lower-is-better statistic."""
    if not cmp:
        return ""
    if cmp.get("status") in ("not measured", "not tested"):
        return f"{label}: not tested ({cmp.get('note')}). "
    from geomprobe.analysis.null_comparison import status_words, test_text

    status = status_words(str(cmp.get("status")))
    if cmp.get("higher_is_better") is False:
        status += ", lower is better"
    test = test_text(cmp)
    return (f"{label} {fmt(cmp.get('model'))} vs {fmt(cmp.get('null_mean'))}: {status} "
            f"({difference_text(cmp)}{'; ' + test if test else ''}). ")


# --------------------------------------------------------------------------------------------
# the card of a run


def verdict_sentences(run: RunData) -> tuple[list[str], list[str]]:
    """What the run's results show and do not show, in words: each card's sentences in turn (each
    criterion of the verdict with its untrained-null comparison, the entropy orderings, the scores
    against their baselines). Returns (shows, does_not_show); read from the results only."""
    shows, lacks = [], []
    for card in cards():
        for held, text in card.sentences(run) if card.sentences else ():
            (shows if held else lacks).append(text)
    return shows, lacks


def in_words(run: RunData) -> str:
    shows, lacks = verdict_sentences(run)
    if not shows and not lacks:
        return ""
    strong, weak = ENTROPY_ORDER
    return ('<div class="words"><p><b>In words.</b> The model shows:</p><ul class="shows">'
            + ("".join(f"<li>{esc(text)}</li>" for text in shows) or "<li>none of the signatures</li>")
            + '</ul><p>It does not show:</p><ul class="lacks">'
            + ("".join(f"<li>{esc(text)}</li>" for text in lacks) or "<li>nothing checked here is missing</li>")
            + f'</ul><p class="summary">"Ordered" means |Spearman rho| >= {strong}, "weakly" >= {weak}; the '
            "comparison with untrained copies of the same architecture is the test of learned geometry.</p></div>")


def verdict_card(run: RunData, anchor: str) -> str:
    card = _opening(run, anchor)
    extra = in_words(run) + "".join(each.summary(run) for each in cards() if each.summary)
    return card[:-len("</div>")] + extra + "</div>" if extra else card


def _opening(run: RunData, anchor: str) -> str:
    """The card up to its summaries: the first verdict a card gives, else the wind tunnel's scores
    or what to run."""
    title = (f'<h3><a href="#{anchor}">{esc(run.label)}</a> <span class="model">{esc(run.name)}'
             f'{"" if run.step is None else f", step {run.step}"}</span>')
    judges = [card for card in cards() if card.verdict]
    for card in judges:
        opened = card.verdict(run, title)
        if opened:
            return opened
    judge = esc(judges[0].suite) if judges else None
    if run.windtunnel is not None:
        rows = "".join(f"<tr><td>{esc(name)}</td><td>{esc(fmt(score.get('entropy_mae_bits'), '.4f'))}</td>"
                       f"<td>{esc(fmt(score.get('kl_bits'), '.4f'))}</td>"
                       f"<td>{esc(fmt(score.get('mass_on_feasible'), '.4f'))}</td></tr>"
                       for name, score in (run.windtunnel.get("eval") or {}).items())
        why = ("" if judge is None else f'<p class="summary">No {judge} verdict: the {judge} suite has not been run '
               f"on this {'run' if run.manifest else 'model'}.</p>")
        return (f'<div class="card">{title}</h3><p>Wind tunnel scored against the exact Bayes predictive '
                f"(held out):</p><table><tr><th>evaluation</th><th>entropy MAE (bits)</th><th>KL (bits)</th>"
                f"<th>mass on feasible</th></tr>{rows}</table>{why}</div>")
    if judge is None:
        return f'<div class="card">{title}</h3></div>'
    return (f'<div class="card">{title}</h3><p class="summary">No verdict: the {judge} suite has not been run '
            f"(<code>geomprobe run --suite {judge} --out {esc(run.path)}</code>).</p></div>")


def verdict_label(run: RunData) -> str | None:
    """The run's verdict label ("full", "partial", ...) from the first card that gives one, else None."""
    for card in cards():
        label = card.label(run) if card.label else None
        if label:
            return label
    return None


def verdict_caption() -> str:
    """The verdict panel's caption (HTML): how each verdict is reached, and what the cards add."""
    rules = " ".join(card.rule for card in cards() if card.rule)
    gives = [card.gives for card in cards() if card.gives]
    if not gives:
        return rules
    listed = " and ".join([", ".join(gives[:-1]), gives[-1]] if len(gives) > 1 else gives)
    return f"{rules} Where a run has them, a card also gives {listed}, each next to paper III's values.".lstrip()
