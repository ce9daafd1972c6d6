"""The geometry suite's report card: the verdict (METHODS.md section 5), each criterion against
untrained copies, the run's evidence of inference and the verdict in words; what to run where it
is missing; and across runs, paper III's Table 2 and the signature chart. Imported by
geomprobe.report through geomprobe.suites.base.load_faces; registers with register_card."""

from __future__ import annotations

from geomprobe.report.cards import entropy_order_words, register_card, untrained_cells, versus_untrained
from geomprobe.report.figures import fmt, pct
from geomprobe.report.page import esc
from geomprobe.report.rundata import RunData
from geomprobe.suites.geometry.figures import signature_chart

VERDICT_RULE = """METHODS.md section 5: value manifold PC1 or PC1+PC2 above threshold and above its shuffle
null; mean key |cos| below threshold in enough layers; attention entropy reduced from the first to the last layer.
Each criterion also needs the model to beat untrained copies of the same architecture on the same prompts (the
paired-bootstrap CI of model minus untrained excludes 0), since a random network passes most thresholds by itself.
3 of 3 criteria: full, 2: partial, fewer: absent."""


def _mark(met) -> str:
    """met: a criterion's state ("met" | "not met" | "not tested" | "not resolvable") or, from older
    results, a bool."""
    if met is None:
        return '<span class="na">n/a</span>'
    if met in ("not tested", "not resolvable"):
        return f'<span class="na">{met}</span>'
    return '<span class="yes">met</span>' if met in (True, "met") else '<span class="no">not met</span>'


def _yes(value) -> str:
    return "n/a" if value is None else ("yes" if value else "no")


def _sentences(run: RunData) -> list[tuple[object, str]]:
    """Each criterion of the verdict with its untrained-null comparison, and the entropy ordering of
    PC1, as (shown?, sentence)."""
    said = []

    def say(held, text):
        said.append((held, text))

    geometry = run.results.get("geometry") or {}
    verdict = geometry.get("verdict") or {}
    vm, keys, focus = verdict.get("value_manifold") or {}, verdict.get("keys") or {}, verdict.get("focusing") or {}
    if vm:
        above = vm.get("above_shuffle_null") or {}
        say(vm.get("met"), f"a value manifold: PC1 {pct(vm.get('pc1'))}, PC1+PC2 {pct(vm.get('pc12'))} of variance "
            f"(threshold {pct(vm.get('pc_threshold'))}; above the shuffle null: PC1 {_yes(above.get('pc1'))}, "
            f"PC1+PC2 {_yes(above.get('pc12'))})"
            + versus_untrained((vm.get("vs_untrained") or {}).get((vm.get("passed_by") or ["pc12"])[0])))
    order = entropy_order_words((geometry.get("value_manifold") or {}).get("rho_pc1_entropy_raw"),
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
            + versus_untrained(keys.get("vs_untrained")))
    if focus:
        say(focus.get("met"), f"attention focusing (learned retrieval; a copy-task model shows it too): 1 - "
            f"H(L-1)/H(0) = {pct(focus.get('focusing'))} (threshold {pct(focus.get('focusing_threshold'))})"
            + versus_untrained(focus.get("vs_untrained")))
    return said


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


def _verdict(run: RunData, title: str) -> str:
    """The card of a run with a geometry verdict: each criterion, measured, against untrained copies
    and by its rule; '' for a run without one."""
    verdict = (run.results.get("geometry") or {}).get("verdict")
    if not verdict:
        return ""
    label = str(verdict.get("label", "?"))
    vm, keys, focus = verdict.get("value_manifold", {}), verdict.get("keys", {}), verdict.get("focusing", {})
    above = vm.get("above_shuffle_null") or {}
    rows = [
        ("value manifold", f"PC1 {pct(vm.get('pc1'))}, PC1+PC2 {pct(vm.get('pc12'))}; above shuffle null: PC1 "
                           f"{_yes(above.get('pc1'))}, PC1+PC2 {_yes(above.get('pc12'))}",
         untrained_cells((vm.get("vs_untrained") or {}).get("pc1"), "PC1")
         + untrained_cells((vm.get("vs_untrained") or {}).get("pc12"), "PC1+PC2"),
         f"PC1+PC2 (>= PC1) > {pct(vm.get('pc_threshold'))}, above its shuffle null and better than untrained",
         vm.get("state") or vm.get("met")),
        ("key orthogonality", f"{pct(keys.get('fraction_below'))} of layers with mean |cos| < "
                              f"{fmt(keys.get('orth_threshold'), '.2f')}",
         untrained_cells(keys.get("vs_untrained"), "mean |cos|"),
         f">= {pct(keys.get('orth_layer_fraction'))} of layers, and within "
         f"{fmt((keys.get('non_inferiority') or {}).get('margin', 2), 'g')}x the untrained value (a level random "
         "networks have; from the wind tunnels' largest ratio)", keys.get("state") or keys.get("met")),
        ("attention focusing", f"1 - H(L-1)/H(0) = {pct(focus.get('focusing'))}",
         untrained_cells(focus.get("vs_untrained"), "focusing"),
         f"> {pct(focus.get('focusing_threshold'))}, better than untrained (learned retrieval, not specific to "
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


def _label(run: RunData) -> str | None:
    return ((run.results.get("geometry") or {}).get("verdict") or {}).get("label")


def _missing(run: RunData) -> list[str]:
    notes = []
    if run.manifest is not None and "geometry" not in run.results:
        notes.append(f"no geometry suite: no value manifold, key orthogonality, focusing ratio or verdict "
                     f"(run `geomprobe run --suite geometry --out {run.path}`)")
    if run.manifest is None and run.windtunnel is not None and run.windtunnel.get("arch") == "transformer":
        notes.append(f"a wind-tunnel training run: probe its geometry with `geomprobe run --model {run.path} "
                     "--suite geometry --out runs/NAME`")
    return notes


# --------------------------------------------------------------------------------------------
# cross-model table (paper III Table 2 layout, fields of geomprobe.compare.row_for)


def _cross_model(runs: list[RunData], page) -> str:
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


register_card("geometry", verdict=_verdict, rule=VERDICT_RULE, label=_label, sentences=_sentences,
              missing=_missing, across_runs=_cross_model)
