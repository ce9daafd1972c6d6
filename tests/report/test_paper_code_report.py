"""The side-by-side table of `--definitions paper-code` (METHODS.md section 11) in the HTML report
and in `geomprobe compare`, from one small real run: the sula and geometry suites on the
windtunnel-sula model with paper-code definitions. The cells are read back from the HTML and
compared with <run>/<suite>/results.json. "Without paper-code" is checked on a copy of that run
whose results.json files have the "paper_code" and "definitions" keys removed (what a run made
without the option, or before it existed, holds), so the tidy rows of the two can be compared
exactly; tests/report/test_report.py and tests/report/test_compare_sweep.py check it on runs made without it."""

import json
import re
import shutil
from html.parser import HTMLParser

import pytest

from geomprobe.compare import aggregate, value_of
from geomprobe.report import build_report
from geomprobe.runner import RunConfig, run
from geomprobe.suites.geometry import GeometryConfig
from geomprobe.suites.sula import SulaConfig

TITLE = "geomprobe's definitions and the papers' released code"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    import torch

    base = tmp_path_factory.mktemp("paper-code-runs")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with_code = base / "paper-code"
        run(RunConfig(model="windtunnel-sula", out=str(with_code)),
            [SulaConfig(n_per_k=10, controls=(), definitions="paper-code", null="off", n_boot=20),
             GeometryConfig(n_per_quintile=5, n_boot=20, n_null=20, init_seeds=0, definitions="paper-code",
                            null="off")], progress=False)
    finally:
        torch.set_num_threads(threads)
    without = base / "geomprobe-only"
    shutil.copytree(with_code, without)
    for suite in ("sula", "geometry"):
        path = without / suite / "results.json"
        results = json.loads(path.read_text())
        del results["paper_code"], results["definitions"]
        path.write_text(json.dumps(results))
    return {"with": with_code, "without": without, "base": base}


def results_of(run_dir, suite):
    return json.loads((run_dir / suite / "results.json").read_text())


@pytest.fixture(scope="module")
def page(runs):
    out = build_report([runs["with"]], runs["base"] / "one.html")
    return out.read_text()


class Tables(HTMLParser):
    """Every <figure class="gp-table"> of a page: its title, lead, caption text and cells (each cell:
    its text, the small second line, the mark, the tooltip and the class)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.stack, self.open = [], [], False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "figure" and attrs.get("class") == "gp-table":
            self.tables.append({"title": "", "lead": "", "caption": "", "rows": []})
            self.open, self.stack = True, []
        if not self.open:
            return
        table = self.tables[-1]
        if tag == "tr":
            table["rows"].append([])
        elif tag in ("td", "th"):
            table["rows"][-1].append({"text": "", "small": "", "mark": "", "title": attrs.get("title") or "",
                                      "class": attrs.get("class") or ""})
        if tag != "br":
            self.stack.append((tag, attrs.get("class") or ""))

    def handle_endtag(self, tag):
        if tag == "figure":
            self.open = False
        while self.open and self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if not self.open or not self.stack:
            return
        table, (tag, css) = self.tables[-1], self.stack[-1]
        tags = [tag for tag, _ in self.stack]
        if "figcaption" in tags:
            table["caption"] += data
            if tag == "b":
                table["title"] += data
        elif tag == "p" and "lead" in css:
            table["lead"] += data
        elif ("td" in tags or "th" in tags) and table["rows"] and table["rows"][-1]:
            cell = table["rows"][-1][-1]
            cell["small" if tag == "small" else "mark" if css == "mark" else "text"] += data


def tables_of(text: str) -> dict[str, dict]:
    parser = Tables()
    parser.feed(text)
    return {re.sub(r"^Table \d+\. |\.$", "", table["title"].strip()): table for table in parser.tables}


@pytest.mark.slow
def test_the_report_draws_each_suites_side_by_side_table_from_its_results(runs, page):
    tables = tables_of(page)
    for suite, name in (("sula", "SULA"), ("geometry", "Geometry")):
        paper_code = results_of(runs["with"], suite)["paper_code"]
        table = tables[f"{name}: {TITLE}"]
        header, *body = table["rows"]
        assert [cell["text"] for cell in header] == ["quantity", "geomprobe", "paper code", "published"]
        assert len(body) == len(paper_code["rows"])
        assert table["lead"] == paper_code["note"]
        for cells, row in zip(body, paper_code["rows"]):
            label, geomprobe, code, published = cells
            assert label["text"].strip() == row["label"]
            assert (label["mark"] == "same definition") == row["same_definition"]
            assert geomprobe["small"] == row["geomprobe_how"] and code["small"] == row["paper_code_how"]
            assert code["title"] == (row["released_file"] or "")
            assert published["class"] == "paper" and published["title"] == (row["published_source"] or "")
            if row["geomprobe"] is None:
                assert geomprobe["text"] == "-"
            if row["published"] is None:
                assert published["text"] == "-"
        assert f"{suite} suite \u00b7 definitions: geomprobe + paper-code side by side" in page
    # the numbers, formatted as the rest of the report writes them: fractions in %, rho +.2f, MAE .3g
    sula = {row["label"]: row for row in results_of(runs["with"], "sula")["paper_code"]["rows"]}
    cells = {cells[0]["text"].strip(): cells for cells in tables[f"SULA: {TITLE}"]["rows"][1:]}
    pc1 = sula["value PC1 fraction, last layer"]
    assert [c["text"] for c in cells["value PC1 fraction, last layer"][1:]] == [
        f"{100 * pc1['geomprobe']:.1f}%", f"{100 * pc1['paper_code']:.1f}%", f"{100 * pc1['published']:.1f}%"]
    rho = sula["rho(PC1, H_bayes), values"]
    assert [c["text"] for c in cells["rho(PC1, H_bayes), values"][1:]] == [
        f"{rho['geomprobe']:+.2f}", f"{rho['paper_code']:+.2f}", f"{rho['published']:+.2f}"]
    mae = sula["SULA MAE (bits)"]
    assert cells["SULA MAE (bits)"][1]["text"] == f"{mae['geomprobe']:.3g}" == cells["SULA MAE (bits)"][2]["text"]
    geometry = {row["label"]: row for row in results_of(runs["with"], "geometry")["paper_code"]["rows"]}
    cells = {cells[0]["text"].strip(): cells for cells in tables[f"Geometry: {TITLE}"]["rows"][1:]}
    keys = geometry["key orthogonality (mean |cos|)"]
    assert [c["text"] for c in cells["key orthogonality (mean |cos|)"][1:]] == [
        f"{keys['geomprobe']:.4f}", f"{keys['paper_code']:.4f}", f"{keys['published']:.4f}"]


@pytest.mark.slow
def test_the_caption_says_where_the_definitions_part_most(runs, page):
    tables = tables_of(page)
    for suite, name in (("sula", "SULA"), ("geometry", "Geometry")):
        rows = results_of(runs["with"], suite)["paper_code"]["rows"]
        both = [r for r in rows if r["geomprobe"] is not None and r["paper_code"] is not None
                and not r["same_definition"]]
        top = max(both, key=lambda r: abs(r["geomprobe"] - r["paper_code"]) / max(abs(r["geomprobe"]),
                                                                               abs(r["paper_code"])))
        caption = " ".join(tables[f"{name}: {TITLE}"]["caption"].split())
        assert f'part most on "{top["label"]}"' in caption, caption
        assert "the rows marked same definition agree to rounding" in caption


@pytest.mark.slow
def test_a_run_without_paper_code_has_no_side_by_side_table(runs):
    text = build_report([runs["without"]], runs["base"] / "without.html").read_text()
    assert TITLE not in text.replace("&#x27;", "'") and "paper-code side by side" not in text


@pytest.mark.slow
def test_several_runs_get_one_cross_run_row_per_suite_with_paper_code(runs):
    text = build_report([runs["with"], runs["without"]], runs["base"] / "both.html").read_text()
    table = tables_of(text)[f"Across runs: {TITLE}"]
    header, *body = table["rows"]
    assert [c["text"] for c in header][:3] == ["run (model@revision)", "suite", "PC1: geomprobe"]
    assert [(cells[0]["text"], cells[1]["text"]) for cells in body] == [
        ("windtunnel-sula@main (paper-code)", "geometry"), ("windtunnel-sula@main (paper-code)", "sula")]
    sula = results_of(runs["with"], "sula")["paper_code"]["rows"]
    rho = next(row for row in sula if row["quantity"] == "rho_pc1_entropy_sula")
    assert [c["text"] for c in body[1][5:]] == [f"{rho['geomprobe']:+.2f}", f"{rho['paper_code']:+.2f}",
                                               f"{rho['published']:+.2f}"]
    assert text.count(f"SULA: {TITLE}".replace("'", "&#x27;")) == 1  # the copy's own section has none


@pytest.mark.slow
def test_the_tidy_table_has_the_paper_code_rows_and_nothing_else_changes(runs):
    with_code, without = aggregate([runs["with"]]).rows, aggregate([runs["without"]]).rows
    label = "windtunnel-sula@main"
    added = [row for row in with_code if row["statistic"].startswith("paper_code.")]
    kept = [row for row in with_code if not row["statistic"].startswith("paper_code.")]
    assert [{**row, "run_dir": ""} for row in kept] == [{**row, "run_dir": ""} for row in without]
    assert not any(row["statistic"].startswith("paper_code.") for row in without)
    mae = value_of(with_code, label, "sula", "paper_code.sula_mae.sula_mae_bits[paper-code]")
    sula = {row["label"]: row for row in results_of(runs["with"], "sula")["paper_code"]["rows"]}
    assert mae["value"] == sula["SULA MAE (bits)"]["paper_code"]
    assert "the same definition as geomprobe's" in mae["method"]
    rho = sula["rho(PC1, H_bayes), values"]
    for definition, key in (("geomprobe", "geomprobe"), ("paper-code", "paper_code"), ("published", "published")):
        row = value_of(with_code, label, "sula", f"paper_code.rho_pc1_entropy_sula.rho_pc1_h_bayes_values[{definition}]")
        assert row["value"] == rho[key] and row["ci_low"] is None
    assert value_of(with_code, label, "sula", "paper_code.rho_pc1_entropy_sula.rho_pc1_h_bayes_values[published]")[
        "method"] == rho["published_source"]
    hidden = sula["PC1 fraction of the final hidden state"]  # no geomprobe number: no [geomprobe] row
    assert value_of(with_code, label, "sula", "paper_code.value_pc1_fraction.pc1_fraction_of_the_final_hidden_state"
                                              "[geomprobe]") is None and hidden["geomprobe"] is None
    geometry = results_of(runs["with"], "geometry")["paper_code"]["rows"]
    keys = next(row for row in geometry if row["quantity"] == "key_orthogonality")
    row = value_of(with_code, label, "geometry", "paper_code.key_orthogonality.key_orthogonality_mean_cos[paper-code]")
    assert row["value"] == keys["paper_code"]
    # every number of every side-by-side row, and no other
    expected = sum(row[key] is not None for suite in ("sula", "geometry")
                   for row in results_of(runs["with"], suite)["paper_code"]["rows"]
                   for key in ("geomprobe", "paper_code", "published"))
    assert len(added) == expected


def test_the_caption_reads_the_rows_it_is_given():
    from geomprobe.report.definitions import paper_code_table

    def row(label, geomprobe, paper_code, same=False, quantity="participation_ratio"):
        return {"quantity": quantity, "label": label, "geomprobe": geomprobe, "paper_code": paper_code,
                "geomprobe_how": "g", "paper_code_how": "p", "published": None, "published_source": None,
                "same_definition": same, "released_file": None}

    rows = [row("small gap", 2.0, 2.5), row("large gap", 2.0, 8.0), row("flipped", 0.3, -0.31, quantity="rho_x"),
            row("code only", None, 0.4), row("should agree", 0.5, 0.7, same=True)]
    caption = paper_code_table({"paper_code": {"note": "n", "rows": rows}}, "sula", "SULA").caption
    assert 'part most on "flipped" (geomprobe +0.30, paper code -0.31: the sign differs)' in caption
    assert '"code only" is the released code\'s reading alone' in caption
    assert 'and "should agree" does not: worth reporting' in caption and "No row has a published figure" in caption
    agree = paper_code_table({"paper_code": {"note": "n", "rows": [row("same", 1.0, 1.0004, same=True)]}}, "sula", "SULA")
    assert "the same numbers to the precision shown" not in agree.caption  # no row of different definitions
    assert "agree to rounding, as they should" in agree.caption
    assert paper_code_table({"definitions": "geomprobe"}, "sula", "SULA") is None
