"""One vocabulary (issue 42 item 4): a comparison with untrained copies reads better / worse /
indistinguishable in every face that writes one (console brief and summary tables, Run's repr,
report cards, captions, the report's cross-run table, compare, the ablation's console table), for
higher-is-better and lower-is-better statistics alike, with the direction said as "lower is better"."""

import pytest
from rich.table import Table

from geomprobe.analysis.null_comparison import ABOVE, BELOW, SAME

EXPECTED = {ABOVE: "better", BELOW: "worse", SAME: "indistinguishable"}
# words of the old vocabularies, none of which any face may write again
BANNED = ("above untrained", "below untrained", "orthogonal than", "^", " v ", "above", "below")
CELLS = ("console brief", "report cross-run table", "compare summary", "ablation console")  # end with the word


def comparison(status: str, higher_is_better: bool) -> dict:
    model, null = (0.40, 0.25) if (status == ABOVE) == higher_is_better else (0.10, 0.25)
    return {"statistic": "pc1" if higher_is_better else "mae_bits", "status": status, "model": model,
            "null_mean": null, "higher_is_better": higher_is_better, "nulls": [0.24, 0.25, 0.26],
            "difference": {"value": model - null, "ci95": [model - null - 0.01, model - null + 0.01]},
            "rule": "rank", "rank": 1, "of": 20, "p_value": 0.05, "p_value_below": 1.0}


def faces(cmp: dict) -> dict[str, str]:
    """What each face writes for one comparison."""
    from geomprobe.brief import words
    from geomprobe.compare import STATUS_MARK, STATUS_WORD, summary_cell
    from geomprobe.report.cards import untrained_cells, versus_untrained
    from geomprobe.report.figures import UNTRAINED_RULE, UntrainedPanel, _untrained_panel
    from geomprobe.report.rundata import RunData
    from geomprobe.results import _figure_text
    from geomprobe.suites.ablation.console import _primary_row
    from geomprobe.suites.geometry import _vs_untrained

    row = {"run": "m@main", "suite": "sula", "statistic": cmp["statistic"], "value": cmp["model"], "text": "",
           "ci_low": None, "ci_high": None, "n": 20, "status_vs_untrained": cmp["status"]}
    results = {"untrained_null": {"comparisons": {cmp["statistic"]: cmp}, "description": "init:19",
                                  "models": [{"name": f"init-{i}"} for i in range(3)]}}
    panel = _untrained_panel(RunData(path=None, name="m", results={"sula": results}),
                             UntrainedPanel("sula", lambda name: None, UNTRAINED_RULE))
    table = Table(*[str(i) for i in range(10)])
    _primary_row(table, {"id": "cut", "primary": {"statistic": {"true": 0.5, "random_mean": 0.1, "rank": 1, "of": 10,
                                                                "p_value": 0.1, "log2_ratio": 2.3},
                                                  "untrained": {**cmp, "n_nulls": 3, "null_sd": 0.01}}})
    return {
        "console brief": words(cmp["status"], copies=True),
        "console summary (geometry --details)": _vs_untrained(results, cmp["statistic"])[1],
        "Run repr": _figure_text({"header": "PC1", "value": cmp["model"], "unit": "", "vs_untrained": cmp["status"]}),
        "report card sentence": versus_untrained(cmp),
        "report card table": untrained_cells(cmp, "statistic"),
        "report caption": panel.caption.replace(UNTRAINED_RULE, ""),  # the rule says what "better" needs
        "report cross-run table": summary_cell([row], "m@main", "sula", cmp["statistic"], marks=STATUS_WORD),
        "compare summary": summary_cell([row], "m@main", "sula", cmp["statistic"], marks=STATUS_MARK),
        "ablation console": str(table.columns[7]._cells[0]),
    }


# faces that write a whole sentence say the direction of a lower-is-better statistic
SENTENCES = ("console summary (geometry --details)", "report card sentence", "report card table", "report caption")


@pytest.mark.parametrize("higher_is_better", [True, False], ids=["higher is better", "lower is better"])
@pytest.mark.parametrize("status", [ABOVE, SAME, BELOW])
def test_every_face_says_better_worse_or_indistinguishable(status, higher_is_better):
    for face, text in faces(comparison(status, higher_is_better)).items():
        assert EXPECTED[status] in text, (face, text)
        others = [word for word in EXPECTED.values() if word != EXPECTED[status]]
        said = text.replace("lower is better", "").replace("higher is better", "")  # the direction, not a status
        assert not any(word in said for word in others), (face, text)
        assert not any(word in text for word in BANNED), (face, text)
        if face in CELLS:
            assert text.endswith(EXPECTED[status]), (face, text)  # not the old "same", "^", "v" or "="
        if face in SENTENCES:
            assert ("lower is better" in text) == (not higher_is_better), (face, text)
