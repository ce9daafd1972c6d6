"""The page's building blocks: HTML escaping (esc), figure JSON rounded and safe inside a <script>
tag, figures and tables numbered (Page), and the one script that draws them. Apart from html.py,
which assembles the page, so that the suites' card faces (geomprobe.report.cards) write their HTML
with the same escaping and add figures to the same Page."""

from __future__ import annotations

import base64
import functools
import html
import json
import math

import numpy as np

from .figures import REPORT_TEMPLATE, Cell, Figure, Table


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


class Page:
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
