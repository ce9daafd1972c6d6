"""`build_report(run_dirs, out)`: one self-contained HTML file drawing what the run directories hold.

    from geomprobe.report import build_report
    build_report([Path("runs/pythia-410m"), Path("runs/phi-2")], Path("reports/compare.html"))

plotly.js is inlined once in the page head, so the file opens offline and makes no network request
(no CDN, fonts or MathJax). Each figure is a div and its figure JSON in a
`<script type="application/json">` tag (floats rounded to what the plot can show, the plotly
template stored once); one small inline script calls Plotly.newPlot for the figures in view at
load, and for a collapsed `<details>` section's figures when it is first opened. Every string read
from a run directory is HTML-escaped. Runs are labelled model@revision (geomprobe.compare.identities,
unique per run). Layout: a verdict panel; with several runs, the cross-run section (a summary row
per run, paper III's Table 2 and its chart, and the statistics against training step for models
run at several checkpoints, and for suites run with --definitions paper-code one row per run of
their PC1 and rho under both definitions) and each run's figures collapsed, drawn when opened and
without their per-prompt detail; with one run, its figures open; what is missing; the provenance of
every run. A section whose suite ran with --definitions paper-code says so under its heading and
holds the side-by-side table (figures.paper_code_table).
"""

from __future__ import annotations

import base64
import functools
import html
import json
import math
from pathlib import Path

import numpy as np
import plotly.offline

from geomprobe.analysis.null_comparison import difference_text
from geomprobe.compare import STATUS_WORD, identities, suite_rows, summary_cell, summary_columns
from geomprobe.errors import ConfigError
from geomprobe.rundir import atomic_write_text, now

from .figures import (
    PAPER_CODE_TITLE,
    REF_ABLATION,
    REPORT_TEMPLATE,
    Cell,
    Figure,
    Table,
    ablation_summary,
    deferred_template,
    estimate,
    fmt,
    paper_code_across_runs,
    pct,
    run_figure_families,
    signature_chart,
    trajectory_figures,
    with_ci,
)
from .rundata import RunData, load_run

MANY_RUNS = 4  # above this many runs the verdict cards are collapsed too

# Nothing that would fetch: no plotly.com link, no MathJax typesetting, no topojson.
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "showSendToCloud": False, "typesetMath": False,
                 "toImageButtonOptions": {"format": "png"}}


def esc(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


# --------------------------------------------------------------------------------------------
# figure JSON: rounded, template apart, safe inside a <script> tag

SCALAR_DIGITS = 6  # significant digits of a lone number (a range end, a line's position)
ARRAY_DIGITS = 4  # at least this many in an array; more when its values sit close together


def _significant(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


def _round_array(values: list) -> list:
    """Round an array's floats to what a plot of it can show: ARRAY_DIGITS significant digits, or
    enough to resolve a thousandth of the array's own spread (0.99955 and 0.99971 stay apart)."""
    finite = [v for v in values if isinstance(v, float) and math.isfinite(v)]
    if not finite:
        return [None if isinstance(v, float) else v for v in values]
    top, span = max(abs(v) for v in finite), max(finite) - min(finite)
    digits = ARRAY_DIGITS
    if top > 0 and span > 0:
        digits = min(15, max(ARRAY_DIGITS, math.ceil(math.log10(top / span * 1000))))
    return [(_significant(v, digits) if math.isfinite(v) else None) if isinstance(v, float) else v for v in values]


def _typed_array(entry: dict):
    """plotly's base64 typed array {"dtype", "bdata"[, "shape"]} back to (nested) lists."""
    try:
        array = np.frombuffer(base64.b64decode(entry["bdata"]), dtype=np.dtype(entry["dtype"]))
        if entry.get("shape"):
            array = array.reshape([int(n) for n in str(entry["shape"]).split(",")])
    except (KeyError, TypeError, ValueError):
        return entry
    return array.tolist()


def compact_json(obj):
    """Figure JSON with floats rounded (_round_array per array, SCALAR_DIGITS otherwise), numpy and
    typed arrays as lists, non-finite numbers as null."""
    if isinstance(obj, np.ndarray):
        obj = obj.tolist()
    elif isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            return compact_json(_typed_array(obj))
        return {key: compact_json(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        items = [compact_json(value) for value in obj]
        if any(isinstance(v, float) for v in items) and all(v is None or isinstance(v, (int, float, str))
                                                            for v in items):
            return _round_array(items)
        return items
    if isinstance(obj, float):
        return _significant(obj, SCALAR_DIGITS) if math.isfinite(obj) else None
    return obj


def script_json(obj) -> str:
    """JSON for a <script type="application/json"> tag: '</' and '<!--' cannot end or open anything."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, default=str)
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


@functools.lru_cache(maxsize=1)
def _report_template() -> dict:
    import plotly.io as pio

    return pio.templates[REPORT_TEMPLATE].to_plotly_json()


def _cell(cell: str | Cell) -> str:
    """One <td>: plain text, or a Cell's text, mark, second line and tooltip, each escaped."""
    if not isinstance(cell, Cell):
        return f"<td>{esc(cell)}</td>"
    attributes = (f' class="{esc(cell.css)}"' if cell.css else "") + (f' title="{esc(cell.title)}"' if cell.title else "")
    mark = f' <span class="mark">{esc(cell.mark)}</span>' if cell.mark else ""
    detail = f'<br><small class="how">{esc(cell.detail)}</small>' if cell.detail else ""
    return f"<td{attributes}>{esc(cell.text)}{mark}{detail}</td>"


class _Page:
    """Collects figures and tables and numbers them; ids are deterministic (fig-N, plot-N, table-N).
    Each distinct plotly template is written once (gp-template-N)."""

    def __init__(self):
        self.n_figures = 0
        self.n_tables = 0
        self.templates: dict[str, str] = {}  # template JSON -> element id

    def item(self, item: Figure | Table) -> str:
        return self.table(item) if isinstance(item, Table) else self.figure(item)

    def table(self, table: Table) -> str:
        self.n_tables += 1
        n = self.n_tables
        header = "".join(f"<th>{esc(h)}</th>" for h in table.header)
        rows = "".join("<tr>" + "".join(_cell(c) for c in row) + "</tr>" for row in table.rows)
        if table.reference:
            rows += "<tr>" + "".join(f'<td class="paper">{esc(c)}</td>' for c in table.reference) + "</tr>"
        notes = "".join(f"<li>{esc(note)}</li>" for note in table.notes)
        lead = f'<p class="caption lead">{esc(table.lead)}</p>' if table.lead else ""
        return (f'<figure class="gp-table" id="table-{n}">\n{lead}<table class="wide"><tr>{header}</tr>{rows}</table>\n'
                f"<figcaption><b>Table {n}. {esc(table.title)}.</b> {esc(table.caption)} "
                f'<a class="gp-data" href="#table-{n}" data-table="table-{n}" data-name="table-{n}">data (CSV)</a>'
                f'{f"<ul class=notes>{notes}</ul>" if notes else ""}</figcaption>\n</figure>')

    def figure(self, figure: Figure) -> str:
        self.n_figures += 1
        n = self.n_figures
        spec = figure.fig.to_plotly_json()
        layout = dict(spec.get("layout") or {})
        template = layout.pop("template", None)
        if not isinstance(template, dict) or "layout" not in template:  # built under deferred_template()
            template = _report_template()
        text = script_json(compact_json(template))
        template_id = self.templates.setdefault(text, f"gp-template-{len(self.templates) + 1}")
        data = script_json({"data": compact_json(spec.get("data") or []), "layout": compact_json(layout)})
        height = figure.fig.layout.height or 420
        notes = "".join(f"<li>{esc(note)}</li>" for note in figure.notes)
        return (f'<figure class="gp-figure" id="fig-{n}">\n<div class="gp-plot"><div id="plot-{n}" class="gp-lazy" '
                f'data-figure="plot-{n}-data" data-template="{template_id}" style="height:{height}px; width:100%;">'
                f'</div><script type="application/json" id="plot-{n}-data">{data}</script></div>\n'
                f"<figcaption><b>Figure {n}. {esc(figure.title)}.</b> {esc(figure.caption)} "
                f'<a class="gp-data" href="#fig-{n}" data-source="plot-{n}-data" data-name="figure-{n}" '
                f'data-title="Figure {n}. {esc(figure.title)}">data (JSON)</a>'
                f'{f"<ul class=notes>{notes}</ul>" if notes else ""}</figcaption>\n</figure>')

    def template_scripts(self) -> str:
        return "".join(f'<script type="application/json" id="{tid}">{text}</script>\n'
                       for text, tid in self.templates.items())


# Draws the figures in view at load and a <details> section's when it is opened (once each);
# following a link to a run opens its section.
DRAW_SCRIPT = """(function () {
  var config = %s;
  function draw(root) {
    var plots = root.querySelectorAll('div.gp-lazy');
    for (var i = 0; i < plots.length; i++) {
      var div = plots[i];
      if (div.getAttribute('data-drawn') || div.closest('details:not([open])')) continue;
      div.setAttribute('data-drawn', '1');
      var spec = JSON.parse(document.getElementById(div.getAttribute('data-figure')).textContent);
      var template = div.getAttribute('data-template');
      if (template) spec.layout.template = JSON.parse(document.getElementById(template).textContent);
      Plotly.newPlot(div, spec.data, spec.layout, config);
    }
  }
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    for (var node = id && document.getElementById(id); node; node = node.parentElement) {
      if (node.tagName === 'DETAILS') node.open = true;
    }
  }
  var sections = document.querySelectorAll('details');
  for (var j = 0; j < sections.length; j++) {
    sections[j].addEventListener('toggle', function (event) { if (event.target.open) draw(event.target); });
  }
  // a figure's "data" link: its traces' values, from the JSON embedded in the page, saved as a file;
  // a table's: its cells
  var FIELDS = ['type', 'name', 'x', 'y', 'z', 'customdata', 'text', 'xaxis', 'yaxis'];
  document.addEventListener('click', function (event) {
    var link = event.target.closest && event.target.closest('a.gp-data');
    if (!link) return;
    event.preventDefault();
    var blob, name = link.getAttribute('data-name');
    if (link.getAttribute('data-table')) {  // a table: its cells as CSV, the reference row included
      var rows = document.getElementById(link.getAttribute('data-table')).querySelectorAll('table tr');
      var csv = Array.prototype.map.call(rows, function (row) {
        return Array.prototype.map.call(row.children, function (cell) {
          return '"' + cell.textContent.replace(/"/g, '""') + '"';
        }).join(',');
      }).join('\\r\\n');
      blob = new Blob([csv + '\\r\\n'], {type: 'text/csv'});
      name += '.csv';
    } else {
      var spec = JSON.parse(document.getElementById(link.getAttribute('data-source')).textContent);
      var traces = spec.data.map(function (trace) {
        var out = {};
        FIELDS.forEach(function (key) { if (trace[key] !== undefined) out[key] = trace[key]; });
        return out;
      });
      blob = new Blob([JSON.stringify({figure: link.getAttribute('data-title'), source: location.pathname,
                                       traces: traces}, null, 1)], {type: 'application/json'});
      name += '.json';
    }
    var save = document.createElement('a');
    save.href = URL.createObjectURL(blob);
    save.download = name;
    document.body.appendChild(save);
    save.click();
    setTimeout(function () { URL.revokeObjectURL(save.href); save.remove(); }, 1000);
  });
  window.addEventListener('hashchange', openTarget);
  openTarget();
  draw(document);
})();"""


def _unique_names(paths: list[Path]) -> list[str]:
    names = [p.name or str(p) for p in paths]
    return [str(Path(p.parent.name) / p.name) if names.count(p.name) > 1 else name
            for p, name in zip(paths, names)]


# --------------------------------------------------------------------------------------------
# verdict panel


def _mark(met) -> str:
    """met: a criterion's state ("met" | "not met" | "not tested" | "not resolvable") or, from older
    results, a bool."""
    if met is None:
        return '<span class="na">n/a</span>'
    if met in ("not tested", "not resolvable"):
        return f'<span class="na">{met}</span>'
    return '<span class="yes">met</span>' if met in (True, "met") else '<span class="no">not met</span>'


def _versus_untrained(cmp) -> str:
    """'; better than untrained copies (0.359 vs 0.254)', or '' when none was measured. The status
    (geomprobe.analysis.null_comparison) is on the favourable side: "below untrained" of a
    lower-is-better statistic is a model value above the copies'."""
    if not isinstance(cmp, dict) or cmp.get("status") in (None, "not measured", "not tested"):
        return ""
    words = UNTRAINED_WORDS.get(cmp["status"], str(cmp["status"]))
    if not cmp.get("higher_is_better", True):
        from geomprobe.analysis.verdict import _key_words

        words = _key_words(cmp["status"])
    better = "" if cmp.get("higher_is_better", True) else "; lower is better"
    return f"; {words} ({fmt(cmp.get('model'))} vs {fmt(cmp.get('null_mean'))}{better})"


UNTRAINED_WORDS = {"above untrained": "better than untrained copies", "below untrained": "worse than untrained copies",
                   "indistinguishable from untrained": "indistinguishable from untrained copies"}


ENTROPY_ORDER = (0.5, 0.3)  # |rho| read as "ordered" and "weakly ordered" in the card's sentences


def _entropy_order_words(rho, what: str, reference: str, by: str = "entropy") -> tuple[bool, str] | None:
    if rho is None:
        return None
    strong, weak = ENTROPY_ORDER
    order = "ordered" if abs(rho) >= strong else ("only weakly ordered" if abs(rho) >= weak else "not ordered")
    return abs(rho) >= strong, f"{what} is {order} by {by}: rho {rho:+.2f} against the papers' {reference}"


def verdict_sentences(run: RunData) -> tuple[list[str], list[str]]:
    """What the run's results show and do not show, in words: each criterion of the geometry
    verdict with its untrained-null comparison, the entropy ordering of PC1, and the SULA scores
    against their k-only baseline. Returns (shows, does_not_show); read from the results only."""
    shows, lacks = [], []

    def say(held, text):
        (shows if held else lacks).append(text)

    geometry = run.results.get("geometry") or {}
    verdict = geometry.get("verdict") or {}
    vm, keys, focus = verdict.get("value_manifold") or {}, verdict.get("keys") or {}, verdict.get("focusing") or {}
    if vm:
        above = vm.get("above_shuffle_null") or {}
        say(vm.get("met"), f"a value manifold: PC1 {pct(vm.get('pc1'))}, PC1+PC2 {pct(vm.get('pc12'))} of variance "
            f"(threshold {pct(vm.get('pc_threshold'))}; above the shuffle null: PC1 {_yes(above.get('pc1'))}, "
            f"PC1+PC2 {_yes(above.get('pc12'))})"
            + _versus_untrained((vm.get("vs_untrained") or {}).get((vm.get("passed_by") or ["pc12"])[0])))
    order = _entropy_order_words((geometry.get("value_manifold") or {}).get("rho_pc1_entropy_raw"),
                                 "value PC1", "0.65-0.80")
    if order:
        say(*order)
    if keys:
        level = keys.get("non_inferiority") or {}
        where = {"met": "within", "not met": "not within"}.get(
            level.get("state") or ("met" if level.get("met") else "not met"), "not resolvable against")
        within = "" if not level else (f"; {where} {fmt(level.get('margin'), 'g')}x untrained (a level random "
                                       "networks have)")
        say(keys.get("met"), f"near-orthogonal keys: {pct(keys.get('fraction_below'))} of layers with mean |cos| below "
            f"{fmt(keys.get('orth_threshold'), '.2f')} (needed {pct(keys.get('orth_layer_fraction'))}){within}"
            + _versus_untrained(keys.get("vs_untrained")))
    if focus:
        say(focus.get("met"), f"attention focusing (learned retrieval; a copy-task model shows it too): 1 - "
            f"H(L-1)/H(0) = {pct(focus.get('focusing'))} (threshold {pct(focus.get('focusing_threshold'))})"
            + _versus_untrained(focus.get("vs_untrained")))
    sula = run.results.get("sula") or {}
    main = (sula.get("conditions") or {}).get("main")
    if isinstance(main, dict):
        baselines = main.get("mae_baselines") or {}  # the model and the baseline scored on the same held-out half
        mae, k_only = estimate(baselines.get("model", main.get("mae_bits"))), estimate(baselines.get("k_only"))
        cmp = ((sula.get("untrained_null") or {}).get("comparisons") or {}).get("mae_bits")
        if mae is not None and k_only is not None:
            say(mae < k_only, f"Bayesian updating beyond counting examples: SULA MAE {mae:.3g} bits "
                f"{'below' if mae < k_only else 'not below'} the k-only baseline's {k_only:.3g}"
                + _versus_untrained(cmp))
        order = _entropy_order_words(estimate(main.get("rho_pc1_H_bayes_given_k")), "SULA PC1 (given k)",
                                     "|rho| 0.65-0.80 (raw)", "H_bayes")
        if order:
            say(*order)
    return shows, lacks


def _in_words(run: RunData) -> str:
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


def _verdict_card(run: RunData, anchor: str) -> str:
    card = _verdict_body(run, anchor)
    extra = _in_words(run) + _sula_summary(run) + _ablation_summary(run)
    return card[:-len("</div>")] + extra + "</div>" if extra else card


def _sula_summary(run: RunData) -> str:
    """The SULA headline of a card: the main condition's MAE beside its trivial baselines, and the
    entropy axis's rho given k (the controlled figure) beside the raw one (sula/results.json)."""
    main = ((run.results.get("sula") or {}).get("conditions") or {}).get("main")
    if not isinstance(main, dict):
        return ""
    baselines = main.get("mae_baselines") or {}
    rows = [("MAE |H_model - H_bayes|", f"{with_ci(main.get('mae_bits'), '.3g')} bits",
             "0.31-0.44 bits (Phi-2 0.31, Llama-3.2-1B 0.36, Pythia-410M 0.44)")]
    if baselines:
        rows.append(("trivial baselines, held-out half: model / k only / constant / H = 0",
                     " / ".join(fmt(estimate(baselines.get(key)), ".3g") for key in ("model", "k_only", "constant",
                                                                                     "zero")) + " bits",
                     "not reported (H = 0 scores about the Llama-3.2-1B figure)"))
    rows.append(("Pearson(H_model, H_bayes)", with_ci(main.get("pearson_H_model_H_bayes"), ".4f"), "-"))
    if "rho_pc1_H_bayes_given_k" in main:
        within = main.get("rho_pc1_H_bayes_within_k") or {}
        pvalue = within.get("pvalue")
        rows += [("rho(PC1, H_bayes) given k (controlled)", with_ci(main.get("rho_pc1_H_bayes_given_k"), "+.2f"),
                  "not reported"),
                 ("rho(PC1, H_bayes) within k, pooled", with_ci(within, "+.2f")
                  + ("" if pvalue is None else f" (permutation p = {pvalue:.3g})"), "not reported")]
    rows += [("rho(PC1, H_bayes), raw (confounded with k)", with_ci(main.get("rho_pc1_H_bayes"), "+.2f"),
              "|rho| 0.65-0.80"),
             ("rho(k, PC1) (the confound)", with_ci(main.get("rho_k_pc1"), "+.2f"),
              "0.86 Pythia-410M, 0.60 Phi-2, 0.32 Llama-3.2-1B")]
    nulls = (run.results.get("sula") or {}).get("untrained_null") or {}
    for name, label in (("mae_bits", "MAE"), ("abs_rho_pc1_H_bayes_given_k", "|rho given k|")):
        cmp = (nulls.get("comparisons") or {}).get(name)
        if cmp and cmp.get("status") not in ("not measured", "not tested"):
            rows.append((f"{label} vs untrained copies ({nulls.get('description')})",
                         _untrained_cells(cmp, label).strip(), "not reported"))
    body = "".join(f'<tr><td>{esc(a)}</td><td>{esc(b)}</td><td class="paper">{esc(c)}</td></tr>' for a, b, c in rows)
    return (f'<p><b>SULA</b> (main condition, {esc(main.get("n_prompts"))} prompts; 95% CIs):</p>'
            f'<table><tr><th>score</th><th>measured</th><th class="paper">paper III, LLMs (reference)</th></tr>'
            f"{body}</table>")


def _ablation_summary(run: RunData) -> str:
    """The interventions' headline of a card: the true cut on the largest layer set against the
    random axes, read at the first layer after the edit and at the output, and its one-line
    reading (ablation/results.json)."""
    ablation = run.results.get("ablation")
    headline = ablation_summary(ablation) if isinstance(ablation, dict) else None
    if headline is None:
        return ""
    geometry = (headline.get("true") or {}).get("axis_entropy") or {}
    behaviour = (headline.get("true") or {}).get("behaviour") or {}
    versus = headline.get("vs_random") or {}
    first = geometry.get("first_downstream_layer")
    layer_entry = (geometry.get("downstream") or {}).get(str(first)) or {}
    where = (versus.get("axis_r_downstream_change") or {}).get(str(first)) or {}
    mae_random = (versus.get("delta_mae_bits") or {}).get("random_mean")
    n_random = (versus.get("delta_mae_bits") or {}).get("n_random")
    text = (f"true axis, {headline.get('id')} (layers {', '.join(map(str, headline.get('layers') or []))}): "
            f"axis-entropy Spearman rho at layer {first} (the first after the edit) "
            f"{fmt(layer_entry.get('before'), '+.2f')} -> {fmt(layer_entry.get('after'), '+.2f')}; output: change "
            f"in MAE {fmt(estimate(behaviour.get('delta_mae_bits')), '+.3g')} bits, change in Pearson "
            f"{fmt(estimate(behaviour.get('delta_pearson')), '+.3g')}")
    if n_random:
        rank = "" if where.get("rank") is None else f" (|change| rank {where['rank']}/{where['of']}, p " \
                                                    f"{fmt(where.get('p_value'), '.2f')})"
        text += (f"; {n_random} random axes: rho change {fmt(where.get('random_mean'), '+.3f')}{rank}, MAE change "
                 f"{fmt(mae_random, '+.3g')} bits on average")
    return (f"<p><b>Interventions</b>: {esc(text)}.<br><i>{esc(headline.get('reading'))}</i></p>"
            f'<p class="summary">{esc(REF_ABLATION)}.</p>')


def _evidence_line(run: RunData) -> str:
    """The run's evidence of inference (geomprobe.analysis.verdict.evidence_of_inference), one paragraph."""
    from geomprobe.analysis.null_comparison import status_words
    from geomprobe.analysis.verdict import evidence_of_inference

    evidence = evidence_of_inference(run.results)
    primary = evidence["primary"]
    detail = ("no sula or ablation comparison with untrained copies in this run" if primary is None else
              f"{primary['comparison']}: {status_words(primary['status'])}, p {fmt(primary['p_value'], '.3f')}")
    if evidence["supporting_better_than_untrained"]:
        detail += "; also better than untrained: " + ", ".join(evidence["supporting_better_than_untrained"])
    return (f'<p class="summary"><b>{esc(evidence["words"])}</b> ({esc(detail)}). Geometry alone does not count: '
            + esc("; ".join(f"{name}: {why}" for name, why in evidence["left_out"].items())) + ".</p>")


def _verdict_body(run: RunData, anchor: str) -> str:
    verdict = (run.results.get("geometry") or {}).get("verdict")
    title = (f'<h3><a href="#{anchor}">{esc(run.label)}</a> <span class="model">{esc(run.name)}'
             f'{"" if run.step is None else f", step {run.step}"}</span>')
    if verdict:
        label = str(verdict.get("label", "?"))
        vm, keys, focus = verdict.get("value_manifold", {}), verdict.get("keys", {}), verdict.get("focusing", {})
        above = vm.get("above_shuffle_null") or {}
        rows = [
            ("value manifold", f"PC1 {pct(vm.get('pc1'))}, PC1+PC2 {pct(vm.get('pc12'))}; above shuffle null: PC1 "
                               f"{_yes(above.get('pc1'))}, PC1+PC2 {_yes(above.get('pc12'))}",
             _untrained_cells((vm.get("vs_untrained") or {}).get("pc1"), "PC1")
             + _untrained_cells((vm.get("vs_untrained") or {}).get("pc12"), "PC1+PC2"),
             f"PC1+PC2 (>= PC1) > {pct(vm.get('pc_threshold'))}, above its shuffle null and above untrained",
             vm.get("state") or vm.get("met")),
            ("key orthogonality", f"{pct(keys.get('fraction_below'))} of layers with mean |cos| < "
                                  f"{fmt(keys.get('orth_threshold'), '.2f')}",
             _untrained_cells(keys.get("vs_untrained"), "mean |cos|"),
             f">= {pct(keys.get('orth_layer_fraction'))} of layers, and within "
             f"{fmt((keys.get('non_inferiority') or {}).get('margin', 2), 'g')}x the untrained value (a level random "
             "networks have; from the wind tunnels' largest ratio)", keys.get("state") or keys.get("met")),
            ("attention focusing", f"1 - H(L-1)/H(0) = {pct(focus.get('focusing'))}",
             _untrained_cells(focus.get("vs_untrained"), "focusing"),
             f"> {pct(focus.get('focusing_threshold'))}, above untrained (learned retrieval, not specific to "
             "inference)", focus.get("state") or focus.get("met")),
        ]
        body = "".join(f"<tr><td>{esc(name)}</td><td>{esc(measured)}</td><td>{esc(null) or 'no null'}</td>"
                       f"<td>{esc(rule)}</td><td>{_mark(met)}</td></tr>"
                       for name, measured, null, rule, met in rows)
        nulls = verdict.get("null")
        body += ("" if nulls else '<tr><td colspan="5"><b>No untrained null</b> (--null off): these criteria are '
                 "thresholds only and cannot tell learned geometry from the architecture.</td></tr>")
        css = label if label in ("full", "partial", "absent") else "unknown"
        return (f'<div class="card">{title} <span class="badge {css}">{esc(label)} '
                f'({esc(verdict.get("n_met"))}/{esc(verdict.get("n_criteria"))})</span></h3>'
                f"<table><tr><th>criterion</th><th>measured</th><th>vs untrained copies"
                f"{' (' + esc(verdict.get('null')) + ')' if verdict.get('null') else ''}</th><th>rule</th><th></th>"
                f"</tr>{body}</table>{_evidence_line(run)}"
                f'<p class="summary">{esc(verdict.get("summary"))}</p></div>')
    if run.windtunnel is not None:
        rows = "".join(f"<tr><td>{esc(name)}</td><td>{esc(fmt(score.get('entropy_mae_bits'), '.4f'))}</td>"
                       f"<td>{esc(fmt(score.get('kl_bits'), '.4f'))}</td>"
                       f"<td>{esc(fmt(score.get('mass_on_feasible'), '.4f'))}</td></tr>"
                       for name, score in (run.windtunnel.get("eval") or {}).items())
        return (f'<div class="card">{title}</h3><p>Wind tunnel scored against the exact Bayes predictive '
                f"(held out):</p><table><tr><th>evaluation</th><th>entropy MAE (bits)</th><th>KL (bits)</th>"
                f"<th>mass on feasible</th></tr>{rows}</table>"
                f'<p class="summary">No geometry verdict: the geometry suite has not been run on this '
                f"{'run' if run.manifest else 'model'}.</p></div>")
    return (f'<div class="card">{title}</h3><p class="summary">No verdict: the geometry suite has not been run '
            f"(<code>geomprobe run --suite geometry --out {esc(run.path)}</code>).</p></div>")


def _untrained_cells(cmp, label: str) -> str:
    """'PC1 0.359 vs 0.307: indistinguishable from untrained (+0.051 [-0.004, +0.108]). ' or ''."""
    if not cmp:
        return ""
    if cmp.get("status") in ("not measured", "not tested"):
        return f"{label}: not tested ({cmp.get('note')}). "
    from geomprobe.analysis.null_comparison import test_text
    from geomprobe.analysis.verdict import _key_words

    status = cmp.get("status") if cmp.get("higher_is_better", True) else _key_words(cmp.get("status"))
    test = test_text(cmp)
    return (f"{label} {fmt(cmp.get('model'))} vs {fmt(cmp.get('null_mean'))}: {status} "
            f"({difference_text(cmp)}{'; ' + test if test else ''}). ")


def _yes(value) -> str:
    return "n/a" if value is None else ("yes" if value else "no")


# --------------------------------------------------------------------------------------------
# cross-model table (paper III Table 2 layout, fields of geomprobe.compare.row_for)


def _cross_model(runs: list[RunData], page: _Page) -> str:
    """Paper III's Table 2 layout and the signature chart, one row and one bar per run (labelled
    model@revision), for the runs with a geometry suite."""
    from geomprobe.compare import row_for

    with_geometry = [run for run in runs if "geometry" in run.results]
    if len(runs) < 2 or not with_geometry:  # the verdict panel already says that no run has a geometry suite
        return ""
    rows = [row_for(run.path, run.label) for run in with_geometry]
    body = []
    for row, run in zip(rows, with_geometry):
        restricted = ("-" if not row["pc12_restricted"] else
                      ", ".join(f"{k} {pct(v)}" for k, v in row["pc12_restricted"].items()))
        ci = row.get("pc12_mixed_ci95") or [None, None]
        paper = row["paper_iii"]
        paper_text = "-" if paper is None else f"{paper['pc12_mixed']} / {paper['pc12_math']} / {paper['focusing']}"
        cells = [row["architecture"] or "-", f"{pct(row['pc12_mixed'])} [{pct(ci[0])}, {pct(ci[1])}]",
                 restricted, f"{fmt(row['keys_early_mean_abs_cos'])} ({fmt(row['keys_analytic_gaussian'])})",
                 pct(row["focusing"]), row["verdict"]]
        body.append(f'<tr><td><a href="#{run.anchor}">{esc(row["label"])}</a></td>'
                    + "".join(f"<td>{esc(c)}</td>" for c in cells) + f'<td class="paper">{esc(paper_text)}</td></tr>')
    header = ("<tr><th>run (model@revision)</th><th>architecture</th><th>value manifold PC1+PC2, mixed [95% CI]</th>"
              "<th>PC1+PC2, restricted</th><th>keys: early-layer mean |cos| (analytic Gaussian)</th>"
              "<th>attention focusing</th><th>verdict</th><th class=\"paper\">paper III reference: mixed / math / "
              "focusing</th></tr>")
    thresholds = (with_geometry[0].results["geometry"].get("verdict") or {}).get("thresholds") or {}
    chart = signature_chart(rows, thresholds)
    missing = [run.label for run in runs if "geometry" not in run.results]
    note = (f'<p class="missing">Not in the table (no geometry suite): {esc(", ".join(missing))}.</p>'
            if missing else "")
    return (f'<div id="cross-model"><h3>Paper III Table 2 layout</h3>'
            f'<table class="wide">{header}{"".join(body)}</table>'
            f'<p class="caption">Early layers: the first third of the depth. The paper\'s values are references in '
            f"their own column, matched by model name, never results.</p>{note}{page.figure(chart)}</div>")


def _summary_table(runs: list[RunData], rows: list[dict]) -> str:
    """One row per run: its label, step, suites and headline statistics (geomprobe.compare.summary_columns())."""
    present = [(suite, statistic, header) for suite, statistic, header in summary_columns()
               if any(summary_cell(rows, run.label, suite, statistic) for run in runs)]
    head = "".join(f"<th>{esc(h)}</th>" for h in ("run (model@revision)", "model", "revision", "step", "suites",
                                                   *(header for _, _, header in present)))
    body = []
    for run in runs:
        cells = [run.model_name, run.revision, "-" if run.step is None else str(run.step),
                 ", ".join(run.results) or "-",
                 *(summary_cell(rows, run.label, suite, statistic, with_ci=True, marks=STATUS_WORD) or "-"
                   for suite, statistic, _ in present)]
        body.append(f'<tr><td><a href="#{run.anchor}">{esc(run.label)}</a></td>'
                    + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    return (f'<div class="scroll"><table class="wide summary-table"><tr>{head}</tr>{"".join(body)}</table></div>'
            '<p class="caption">Headline statistics with their 95% CIs as each suite computed them; above / below / '
            "same: against untrained copies of the same architecture on the same inputs (the suite's paired "
            "bootstrap and prediction interval); verdict: criteria met of 3; cut dMAE: the change in SULA MAE under "
            "the true entropy-axis cut of the headline condition. Every statistic of every suite, one row per run x "
            "suite x statistic: <code>geomprobe compare RUN_DIR ... -o NAME</code> writes NAME.csv and NAME.json."
            "</p>")


def _cross_run(runs: list[RunData], rows: list[dict], page: _Page) -> str:
    """With several runs: the summary table, paper III's Table 2 and the signature chart, and the
    statistics against training step for models run at several checkpoints."""
    if len(runs) < 2:
        return ""
    parts = [f'<section id="cross-run"><h2>Across runs ({len(runs)})</h2>', _summary_table(runs, rows),
             _cross_model(runs, page)]
    definitions = paper_code_across_runs([(run.label, suite, results) for run in runs
                                          for suite, results in run.results.items()])
    if definitions is not None:
        parts.append(f'<div id="cross-definitions"><h3>{esc(PAPER_CODE_TITLE)}</h3>'
                     f"{page.table(definitions)}</div>")
    trajectories = trajectory_figures(rows)
    if trajectories:
        parts.append('<div id="trajectories"><h3>Against training step</h3>'
                     + "".join(page.figure(figure) for figure in trajectories) + "</div>")
    parts.append("</section>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# one run's figures and what is missing


def _missing(run: RunData) -> list[str]:
    notes = list(run.notes)
    if run.manifest is not None and "geometry" not in run.results:
        notes.append(f"no geometry suite: no value manifold, key orthogonality, focusing ratio or verdict "
                     f"(run `geomprobe run --suite geometry --out {run.path}`)")
    if run.manifest is None and run.windtunnel is not None and run.windtunnel.get("arch") == "transformer":
        notes.append(f"a wind-tunnel training run: probe its geometry with `geomprobe run --model {run.path} "
                     "--suite geometry --out runs/NAME`")
    suite_curves = ((run.results.get("mechanisms") or {}).get("two_timescale") or {}).get("curves")
    if (run.windtunnel is not None and run.windtunnel.get("arch") == "transformer" and run.curves is None
            and not suite_curves):
        # a run's own directory gets the suggestion; the model's (often a cache) is not the reader's to write into
        notes.append("frame-precision curves: not computed "
                     + (f"(run `geomprobe windtunnel curves {run.path}`)" if run.manifest is None else
                        f"(run `geomprobe run --model {run.model} --suite mechanisms --out {run.path}`)"))
    return notes


def _run_section(run: RunData, page: _Page, collapsed: bool) -> str:
    """A run's figures by family; collapsed (several runs): a <details> drawn when opened."""
    drawn = []
    for family in run_figure_families():
        items = family.draw(run)
        if items:
            drawn.append(f"<h3>{esc(family.section)}</h3>")
            meta = family.meta(run) if family.meta else ""
            if meta:
                drawn.append(f'<p class="meta">{esc(meta)}</p>')
            drawn += [page.item(item) for item in items]
    verdict = ((run.results.get("geometry") or {}).get("verdict") or {}).get("label")
    tag = (f' <span class="tag {esc(verdict if verdict in ("full", "partial", "absent") else "unknown")}">'
           f"{esc(verdict)}</span>" if verdict else "")
    heading = (f'<h2>{esc(run.label)} <span class="model">{esc(run.name)} &middot; {esc(run.model)}'
               f'{"" if run.step is None else f" &middot; step {run.step}"}</span>{tag}</h2>')
    parts = [f'<details class="run" id="{run.anchor}"><summary>{heading}</summary>' if collapsed
             else f'<section class="run" id="{run.anchor}">{heading}']
    missing = _missing(run)  # after drawing: a per-prompt file that could not be read is said too
    if missing:
        parts.append('<div class="missing"><b>Not drawn, missing or unfinished:</b><ul>'
                     + "".join(f"<li>{esc(m)}</li>" for m in missing) + "</ul></div>")
    parts += drawn
    parts.append("</details>" if collapsed else "</section>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# provenance


def _text(value) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    return str(value)


def _rows(pairs) -> str:
    """Key-value pairs two to a row; a long value takes a whole row."""
    pairs = [(k, _text(v)) for k, v in pairs if v not in (None, "", {}, [])]
    cells, row = [], []
    for key, value in pairs:
        if len(value) > 48:
            cells.append(f'<tr><th>{esc(key)}</th><td colspan="3">{esc(value)}</td></tr>')
            continue
        row.append(f"<th>{esc(key)}</th><td>{esc(value)}</td>")
        if len(row) == 2:
            cells.append("<tr>" + "".join(row) + "</tr>")
            row = []
    if row:
        cells.append("<tr>" + row[0] + "<td></td><td></td></tr>")
    return "".join(cells)


def _versions(versions: dict | None) -> str | None:
    return ", ".join(f"{k} {v}" for k, v in (versions or {}).items() if v) or None


def _prompts_text(prompts) -> str | None:
    if not isinstance(prompts, dict):
        return None
    return f"{prompts.get('source')} (n {prompts.get('n')}, sha256 {str(prompts.get('sha256'))[:12]})"


def _provenance(run: RunData, collapsed: bool = False) -> str:
    body = _provenance_body(run)
    if collapsed:
        return (f'<details class="prov"><summary><b>{esc(run.label)}</b> <span class="model">{esc(run.name)}</span>'
                f"</summary>{body}</details>")
    return f"<h3>{esc(run.label)}</h3>\n{body}"


def _provenance_body(run: RunData) -> str:
    parts = []
    manifest = run.manifest
    if manifest:
        model = manifest.get("model") or {}
        shape = model.get("shape") or (run.results.get("geometry") or {}).get("shape")
        parts.append('<table class="prov wide">' + _rows([
            ("run directory", run.path),
            ("model", model.get("spec")), ("source", model.get("source")),
            ("revision", model.get("revision")), ("commit", model.get("commit")), ("family", model.get("family")),
            ("shape", shape), ("dtype", manifest.get("dtype") or model.get("dtype")),
            ("device", model.get("device")), ("device map", model.get("device_map")),
            ("quantisation", model.get("quantize")), ("attention", model.get("attn_implementation")),
            ("backend", manifest.get("backend")), ("seed", manifest.get("seed")),
            ("status", manifest.get("status")), ("created", manifest.get("created")),
            ("started", manifest.get("started")), ("ended", manifest.get("ended")),
            ("command", manifest.get("command")), ("geomprobe commit", manifest.get("geomprobe_commit")),
            ("fingerprint", manifest.get("fingerprint")), ("versions", _versions(manifest.get("versions"))),
            ("prompts", _prompts_text(manifest.get("prompts"))),
        ]) + "</table>")
        suites = manifest.get("suites") or {}
        if suites:
            rows = []
            for suite, entry in suites.items():
                entry = entry if isinstance(entry, dict) else {}
                prompts = "; ".join(f"{key}: {_prompts_text(value)}" for key, value in entry.items()
                                    if key.startswith("prompts") and isinstance(value, dict))
                rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in (
                    suite, entry.get("status"), entry.get("started"), entry.get("ended"), prompts or "-")) + "</tr>")
            parts.append('<table class="wide"><tr><th>suite</th><th>status</th><th>started</th><th>ended</th>'
                         f'<th>prompts</th></tr>{"".join(rows)}</table>')
    metrics = run.windtunnel
    if metrics:
        config = metrics.get("config") or {}
        parts.append(f"<p>Wind-tunnel training ({esc(run.windtunnel_dir / 'metrics.json')}):</p>"
                     '<table class="prov wide">' + _rows([
                         ("task", metrics.get("task")), ("task options", metrics.get("task_options")),
                         ("architecture", metrics.get("arch")), ("parameters", metrics.get("n_params")),
                         ("transformer spec", metrics.get("transformer_spec")), ("steps", metrics.get("steps")),
                         ("train seconds", metrics.get("train_seconds")), ("target", config.get("target")),
                         ("batch size", config.get("batch_size")), ("lr", config.get("lr")),
                         ("seed", config.get("seed")), ("threads", metrics.get("threads")),
                         ("finished", metrics.get("finished")), ("versions", _versions(metrics.get("versions"))),
                     ]) + "</table>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:0;color:#1d2733;
background:#f6f7f9;line-height:1.45}
main{max-width:1280px;margin:0 auto;padding:0 24px 48px}
header{background:#1d2733;color:#fff;padding:18px 24px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;color:#c9d1db;font-size:13px}
nav{font-size:13px;margin:12px 0}nav a{margin-right:14px}
h2{border-bottom:2px solid #d5dae1;padding-bottom:4px;margin-top:36px}h3{margin:24px 0 8px}
.model{font-weight:normal;color:#5b6675;font-size:0.8em}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}
.card{background:#fff;border:1px solid #d5dae1;border-radius:8px;padding:12px 16px}
.card h3{margin:0 0 8px}.card p{font-size:13px;margin:6px 0}
.badge{display:inline-block;border-radius:12px;padding:1px 10px;font-size:0.8em;color:#fff;background:#7f7f7f}
.badge.full{background:#2e7d32}.badge.partial{background:#c77c02}.badge.absent{background:#b23b3b}
table{border-collapse:collapse;font-size:13px;background:#fff}
th,td{border:1px solid #d5dae1;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5}table.wide{width:100%}table.prov th{width:130px}
td.paper,th.paper{background:#fdf3f2}
.yes{color:#2e7d32;font-weight:bold}.no{color:#b23b3b;font-weight:bold}.na{color:#7f7f7f}
.summary{font-size:12px;color:#5b6675}
.words ul{font-size:13px;margin:2px 0 6px;padding-left:20px}
.words ul.shows li::marker{content:'+ ';color:#1b7a1b}.words ul.lacks li::marker{content:'- ';color:#b23b3b}
figure.gp-table{margin:12px 0 20px}figure.gp-table table{font-size:12px}
figure.gp-figure{background:#fff;border:1px solid #d5dae1;border-radius:8px;margin:12px 0 20px;padding:8px 12px}
figcaption{font-size:13px;margin-top:6px}a.gp-data{font-size:11px;white-space:nowrap}
figcaption ul.notes{margin:4px 0 0;color:#5b6675;font-size:12px}
.missing{background:#fff8e1;border:1px solid #f0d48a;border-radius:6px;padding:6px 12px;font-size:13px}
.caption{font-size:13px;color:#5b6675}
code{font-size:12px;background:#eef1f5;padding:1px 4px;border-radius:3px}
details.run{background:#fff;border:1px solid #d5dae1;border-radius:8px;margin:14px 0;padding:0 16px}
details.run>summary{cursor:pointer;padding:4px 0}details.run>summary h2{display:inline;border:0;font-size:1.2em}
details.run[open]{padding-bottom:12px}details.prov{margin:8px 0}details.prov>summary{cursor:pointer}
.tag{display:inline-block;border-radius:12px;padding:0 9px;font-size:0.65em;color:#fff;background:#7f7f7f;
vertical-align:middle;font-weight:normal}.tag.full{background:#2e7d32}.tag.partial{background:#c77c02}
.tag.absent{background:#b23b3b}table.summary-table td{white-space:nowrap}.scroll{overflow-x:auto}
p.meta{font-size:12px;color:#5b6675;margin:-4px 0 8px}small.how{color:#5b6675;font-size:11px}
.mark{display:inline-block;border-radius:10px;padding:0 7px;font-size:10px;color:#fff;background:#2e7d32}
p.lead{margin:0 0 6px}
"""


def build_report(run_dirs: list[Path], out: Path) -> Path:
    """Write one self-contained HTML report of `run_dirs` to `out` and return `out`.

    Draws whatever each run directory holds; says in the page what is missing. A directory with
    nothing usable raises RunDirectoryError (one line). With several runs, each run's section is
    collapsed and its figures are drawn when it is opened."""
    with deferred_template():
        document = _document(run_dirs)
    out = Path(out)
    atomic_write_text(out, document)
    return out


def _document(run_dirs: list[Path]) -> str:
    if not run_dirs:
        raise ConfigError("give at least one run directory to report on")
    paths = [Path(p) for p in run_dirs]
    runs = [load_run(path, name) for path, name in zip(paths, _unique_names(paths))]
    several = len(runs) > 1
    named = identities(paths, [run.manifest for run in runs])
    rows = []
    for index, (run, identity) in enumerate(zip(runs, named)):
        run.label, run.step, run.compact = identity.label, identity.step, several
        run.anchor, run.model_name, run.revision = f"run-{index}", identity.model, identity.revision
        for suite, results in run.results.items():
            rows += suite_rows(identity, suite, results)
    page = _Page()
    cards = f'<div class="cards">{"".join(_verdict_card(run, run.anchor) for run in runs)}</div>'
    if len(runs) > MANY_RUNS:  # the summary table across runs gives each verdict; the cards on demand
        cards = f"<details><summary>The {len(runs)} runs' verdict cards</summary>{cards}</details>"
    cross = _cross_run(runs, rows, page)
    sections = [_run_section(run, page, collapsed=several) for run in runs]
    provenance = "\n".join(_provenance(run, collapsed=several) for run in runs)
    toc = ['<a href="#verdict">verdict</a>'] + (['<a href="#cross-run">across runs</a>'] if cross else [])
    toc += [f'<a href="#{run.anchor}">{esc(run.label)}</a>' for run in runs]
    toc.append('<a href="#provenance">provenance</a>')
    from geomprobe import __version__

    opened = ("<p class=\"caption\">Each run's figures are in its section below, collapsed: open one (or follow "
              "its link) to draw them.</p>" if several else "")
    document = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>geomprobe report: {esc(", ".join(run.label for run in runs))}</title>
<style>{CSS}</style>
<script type="text/javascript">{plotly.offline.get_plotlyjs()}</script>
</head><body>
<header><h1>geomprobe report</h1><p>{esc(", ".join(f"{run.label} ({run.name})" for run in runs))} &middot;
generated {esc(now())} by geomprobe {esc(__version__)} &middot; self-contained, works offline</p>
<p class="caption">"METHODS.md section N" in the captions cites geomprobe's methods document (METHODS.md at the
root of the geomprobe repository): what each number is, its formula, baselines and nulls.</p></header>
<main>
<nav>{" ".join(toc)}</nav>
{cross}
<section id="verdict"><h2>Verdict</h2>
<p class="caption">METHODS.md section 5: value manifold PC1 or PC1+PC2 above threshold and above its shuffle
null; mean key |cos| below threshold in enough layers; attention entropy reduced from the first to the last layer.
Each criterion also needs the model to beat untrained copies of the same architecture on the same prompts (the
paired-bootstrap CI of model minus untrained excludes 0), since a random network passes most thresholds by itself.
3 of 3 criteria: full, 2: partial, fewer: absent. Where a run has them, a card also gives the SULA scores
(section 7) and the headline entropy-axis intervention (section 8), each next to paper III's values.</p>
{cards}</section>
{opened}
{"".join(sections)}
<section id="provenance"><h2>Provenance</h2>
{provenance}
</section>
</main>
{page.template_scripts()}<script type="text/javascript">{DRAW_SCRIPT % json.dumps(PLOTLY_CONFIG)}</script>
</body></html>
"""
    return document
