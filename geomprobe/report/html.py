"""`build_report(run_dirs, out)`: one self-contained HTML file drawing what the run directories hold.

    from geomprobe.report import build_report
    build_report([Path("runs/pythia-410m"), Path("runs/phi-2")], Path("reports/compare.html"))

plotly.js is inlined once in the page head, so the file opens offline and makes no network request
(no CDN, fonts or MathJax). Each figure is a div and its figure JSON in a
`<script type="application/json">` tag (floats rounded to what the plot can show, the plotly
template stored once); one small inline script calls Plotly.newPlot for the figures in view at
load, and for a collapsed `<details>` section's figures when it is first opened. Every string read
from a run directory is HTML-escaped (page.py holds the figure JSON, the numbering and the script).
Runs are labelled model@revision (geomprobe.compare.identities, unique per run). Layout: a verdict
panel, one card per run (cards.py, from the suites' card faces); with several runs, the cross-run
section (a summary row per run, the blocks the suites' cards add (paper III's Table 2 and its
chart), the statistics against training step for models run at several checkpoints, and for suites
run with --definitions paper-code one row per run of their PC1 and rho under both definitions) and
each run's figures collapsed, drawn when opened and without their per-prompt detail; with one run,
its figures open; what is missing; the provenance of every run. A section whose suite ran with
--definitions paper-code says so under its heading and holds the side-by-side table
(definitions.paper_code_table).
"""

from __future__ import annotations

import json
from pathlib import Path

import plotly.offline

from geomprobe.compare import STATUS_WORD, identities, suite_rows, summary_cell, summary_columns
from geomprobe.errors import ConfigError
from geomprobe.rundir import atomic_write_text, now

from .cards import cards, verdict_caption, verdict_card, verdict_label
from .definitions import PAPER_CODE_TITLE, paper_code_across_runs
from .figures import deferred_template, run_figure_families
from .page import DRAW_SCRIPT, Page, esc
from .rundata import RunData, load_run
from .trajectories import trajectory_figures

MANY_RUNS = 4  # above this many runs the verdict cards are collapsed too

# Nothing that would fetch: no plotly.com link, no MathJax typesetting, no topojson.
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "showSendToCloud": False, "typesetMath": False,
                 "toImageButtonOptions": {"format": "png"}}


def _unique_names(paths: list[Path]) -> list[str]:
    names = [p.name or str(p) for p in paths]
    return [str(Path(p.parent.name) / p.name) if names.count(p.name) > 1 else name
            for p, name in zip(paths, names)]


# --------------------------------------------------------------------------------------------
# across runs: the summary table, the blocks the suites' cards add, the side-by-side definitions
# and the trajectories


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


def _cross_run(runs: list[RunData], rows: list[dict], page: Page) -> str:
    """With several runs: the summary table, the blocks the suites' cards add (paper III's Table 2
    and the signature chart), the side-by-side definitions, and the statistics against training step
    for models run at several checkpoints."""
    if len(runs) < 2:
        return ""
    parts = [f'<section id="cross-run"><h2>Across runs ({len(runs)})</h2>', _summary_table(runs, rows),
             *(card.across_runs(runs, page) for card in cards() if card.across_runs)]
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
    """What the run's section says is not drawn: the notes made reading it, then each card's."""
    notes = list(run.notes)
    for card in cards():
        notes += card.missing(run) if card.missing else []
    return notes


def _run_section(run: RunData, page: Page, collapsed: bool) -> str:
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
    verdict = verdict_label(run)
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
    page = Page()
    panel = f'<div class="cards">{"".join(verdict_card(run, run.anchor) for run in runs)}</div>'
    if len(runs) > MANY_RUNS:  # the summary table across runs gives each verdict; the cards on demand
        panel = f"<details><summary>The {len(runs)} runs' verdict cards</summary>{panel}</details>"
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
<p class="caption">{verdict_caption()}</p>
{panel}</section>
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
