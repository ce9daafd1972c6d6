"""The console answers first: after each suite a short table of its headline figures beside the
untrained copies' (geometry: the three criteria, their verdict states and the label), the full
tables only with --details; no table cell is ever cut to an ellipsis."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app


def _run(tmp_path, *extra):
    from geomprobe.models.builtin import demo_prompts_path

    # the 60 demo prompts as candidates: the model and each copy score them for their own samples
    args = ["run", "--model", "tiny-neox", "--suite", "geometry", "--null", "init:2", "--n-per-quintile", "3",
            "--prompts", str(demo_prompts_path()), "--out", str(tmp_path / "run"), *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout, json.loads((tmp_path / "run" / "geometry" / "results.json").read_text())


@pytest.mark.slow
def test_the_default_summary_is_the_verdict_table_and_details_give_the_full_one(tmp_path):
    out, results = _run(tmp_path)
    verdict, comparisons = results["verdict"], results["untrained_null"]["comparisons"]
    assert f"{verdict['label']} ({verdict['n_met']}/3 criteria met)" in out
    assert "signature" not in out and "verdict:" not in out  # the full table and the long verdict line
    assert "full tables: --details" in out and "…" not in out
    assert "evidence of inference not tested: it needs sula or the ablation against untrained copies" in out
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in out.splitlines() if line.startswith("│") and line.split("│")[1].strip()}
    words = {"above untrained": "better", "below untrained": "worse",
             "indistinguishable from untrained": "indistinguishable"}
    for label, entry, statistic in (("value manifold PC1+PC2", "value_manifold", "pc12"),
                                    ("attention focusing", "focusing", "focusing")):
        model, untrained, versus, met = rows[label]
        cmp = comparisons[statistic]
        assert model.startswith(f"{cmp['model']:.3f}") and untrained == f"{cmp['null_mean']:.3f}"
        assert versus == words.get(cmp["status"], cmp["status"]) and met == verdict[entry]["state"]
    keys = next(v for k, v in rows.items() if k.startswith("keys"))
    assert keys[1] == f"{comparisons['keys']['null_mean']:.3f}" and keys[3] == verdict["keys"]["state"]
    assert len(out.splitlines()) < 20

    detailed, again = _run(tmp_path, "--details")
    assert "signature" in detailed and f"verdict: {again['verdict']['summary'][:40]}" in re.sub(r"\s*\n", " ", detailed)
    assert "criteria met" not in detailed and "…" not in detailed


def test_a_column_too_narrow_for_its_numbers_folds_them_instead_of_cutting_them(capsys):
    from rich.table import Table

    from geomprobe.console import table_console

    table = Table(title="narrow")
    numbers = [f"{0.1234567890123 * i:.12f}" for i in range(1, 9)]
    for i in range(8):
        table.add_column(f"p value {i}")
    table.add_row(*numbers)
    table_console(min_width=60).print(table)
    printed = capsys.readouterr().out
    assert "…" not in printed
    text = re.sub(r"[\s│┃┏┓┗┛┡┩└┘━─╇┳┻┼╋┃]", "", printed)
    for number in numbers:  # every digit is there, read column by column after folding
        assert all(digit in text for digit in number)
    lines = [line for line in printed.splitlines() if line.startswith("│")]
    for column in range(8):
        cells = "".join(line.split("│")[column + 1].strip() for line in lines)
        assert cells == numbers[column]


def test_the_brief_faces_say_where_the_evidence_line_goes():
    """The evidence line follows geometry, sula and the ablation (each suite's brief face says so);
    geometry alone gives its own rows (its criteria); geomprobe/brief.py names no suite."""
    import inspect

    import geomprobe.brief
    from geomprobe.brief import briefs

    found = briefs()
    assert {suite for suite, brief in found.items() if brief.evidence} == {"geometry", "sula", "ablation"}
    assert [suite for suite, brief in found.items() if brief.rows is not None] == ["geometry"]
    source = inspect.getsource(geomprobe.brief)
    assert not any(f'"{name}"' in source for name in ("geometry", "sula", "ablation", "mechanisms", "domain"))
