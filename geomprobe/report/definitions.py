"""The side-by-side tables of --definitions paper-code: a suite section's table, its number formats
and one-line reading, and the table across runs. Apart from figures.py because the suites' figures
faces and the cross-run section read it, and no family of the machinery does."""

from __future__ import annotations

import math

from .figures import Cell, Table, pct
from .rundata import RunData

# --------------------------------------------------------------------------------------------
# geomprobe's definitions beside the papers' released code's (--definitions paper-code, METHODS.md
# section 11): results["paper_code"]["rows"], each written by geomprobe.paper_code.side_by_side_row

PAPER_CODE_TITLE = "geomprobe's definitions and the papers' released code"
# each quantity as the report's other tables write it ("%": pct); rho rows "+.2f", Pearson ".4f"
PAPER_CODE_SPECS = {"value_pc1_fraction": "%", "attention_focusing": "%", "participation_ratio": ".2f",
                    "key_orthogonality": ".4f", "sula_mae": ".3g"}


def paper_code_of(results) -> dict | None:
    """results["paper_code"] when a suite ran with --definitions paper-code, else None."""
    table = results.get("paper_code") if isinstance(results, dict) else None
    return table if isinstance(table, dict) and isinstance(table.get("rows"), list) else None


def _paper_code_rows(results) -> list[dict]:
    table = paper_code_of(results)
    return [row for row in (table or {}).get("rows") or [] if isinstance(row, dict)]


def _real(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def paper_code_number(row: dict, value) -> str:
    """A side-by-side number as the report's other tables write its quantity: '-' for none (not a
    geomprobe headline, no published figure), 'n/a' for a non-finite one."""
    if value is None:
        return "-"
    if _real(value) is None:
        return "n/a"
    quantity, label = str(row.get("quantity") or ""), str(row.get("label") or "")
    spec = (".4f" if label.startswith("Pearson") else "+.2f" if quantity.startswith("rho_")
            else PAPER_CODE_SPECS.get(quantity, ".3g"))
    return pct(value) if spec == "%" else format(value, spec)


def definitions_line(run: RunData, suite: str, where: str = "") -> str:
    """The section's metadata line when `suite` ran with --definitions paper-code (or
    paper-code-as-released), else ''."""
    results = run.results.get(suite) or {}
    table = paper_code_of(results)
    if table is None:
        return ""
    definitions = results.get("definitions") or table.get("definitions") or "paper-code"
    return f"{suite} suite \u00b7 definitions: geomprobe + {definitions} side by side{where}"


def _paper_code_reading(rows: list[dict]) -> str:
    """What to look for in these rows: where the two definitions part most (the gap relative to the
    larger magnitude, among the rows printed differently), where their signs differ, and whether
    the rows of one definition agree as printed."""
    both = [row for row in rows if _real(row.get("geomprobe")) is not None and _real(row.get("paper_code")) is not None]

    def printed(row, key):
        return paper_code_number(row, row.get(key))

    def named(labelled):
        names = [f'"{row.get("label")}"' for row in labelled]
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"

    differ = [row for row in both if not row.get("same_definition") and printed(row, "geomprobe")
              != printed(row, "paper_code")]
    flipped = [row for row in both if row["geomprobe"] * row["paper_code"] < 0]
    parts = []
    if differ:
        def gap(row):
            return abs(row["geomprobe"] - row["paper_code"]) / max(abs(row["geomprobe"]), abs(row["paper_code"]))

        top = max(differ, key=gap)
        parts.append(f"here they part most on {named([top])} (geomprobe {printed(top, 'geomprobe')}, paper code "
                     f"{printed(top, 'paper_code')}{': the sign differs' if top in flipped else ''})")
        flipped = [row for row in flipped if row is not top]
    elif any(not row.get("same_definition") for row in both):
        parts.append("here the two definitions give the same numbers to the precision shown")
    if flipped:
        parts.append(f"the sign differs for {named(flipped)}")
    only = [row for row in rows if row.get("geomprobe") is None and row.get("paper_code") is not None]
    if only:
        parts.append(f"{named(only)} {'is' if len(only) == 1 else 'are'} the released code's reading alone, not a "
                     "geomprobe headline")
    same = [row for row in both if row.get("same_definition")]
    apart = [row for row in same if printed(row, "geomprobe") != printed(row, "paper_code")]
    if apart:
        parts.append(f"rows marked same definition should agree to rounding, and {named(apart)} "
                     f"{'does' if len(apart) == 1 else 'do'} not: worth reporting")
    elif same:
        parts.append("the rows marked same definition agree to rounding, as they should")
    return "; ".join(parts)


def paper_code_table(results: dict, suite: str, name: str) -> Table | None:
    """The side-by-side table of a suite run with --definitions paper-code (None otherwise)."""
    table, rows = paper_code_of(results), _paper_code_rows(results)
    if table is None or not rows:
        return None
    body = [[Cell(str(row.get("label") or row.get("quantity")), mark="same definition" if row.get("same_definition")
                  else "", title=f"quantity {row.get('quantity')} (METHODS.md section 11)"),
             Cell(paper_code_number(row, row.get("geomprobe")), detail=str(row.get("geomprobe_how") or "")),
             Cell(paper_code_number(row, row.get("paper_code")), detail=str(row.get("paper_code_how") or ""),
                  title=str(row.get("released_file") or "")),
             Cell(paper_code_number(row, row.get("published")), title=str(row.get("published_source") or ""),
                  css="paper")]
            for row in rows]
    caption = (f"Each headline number under geomprobe's definition (as the {suite} suite reports it) and under the "
               f"papers' released code's, both computed by geomprobe on the same prompts and arrays, with the "
               f"published figure; the small type says how each is defined: look for where the definitions part: "
               f"{_paper_code_reading(rows)}.")
    notes = [f"published, {row.get('label')}: {row.get('published_source')}" for row in rows
             if row.get("published") is not None and row.get("published_source")]
    caption += (" The published figures are the papers' or their code's on the papers' own models (sources below), "
                "references, never results." if notes else " No row has a published figure.")
    return Table(f"{name}: {PAPER_CODE_TITLE}", caption, ["quantity", "geomprobe", "paper code", "published"], body,
                 notes=notes, lead=str(table.get("note") or ""))


def paper_code_across_runs(entries: list[tuple[str, str, dict]]) -> Table | None:
    """One row per (run label, suite, results) with a side-by-side table: its first PC1-fraction
    row and its first rho(PC1, entropy) row under both definitions, with the published figure."""
    body = []
    for label, suite, results in entries:
        rows = _paper_code_rows(results)
        if not rows:
            continue
        pc1 = next((row for row in rows if row.get("quantity") == "value_pc1_fraction"), None)
        rho = next((row for row in rows if str(row.get("quantity") or "").startswith("rho_pc1_entropy")), None)
        picked = [f"{what}: {row.get('label')}" for what, row in (("PC1", pc1), ("rho", rho)) if row is not None]
        cells: list[str | Cell] = [label, Cell(suite, detail="; ".join(picked))]
        for row in (pc1, rho):
            cells += (["-", "-", "-"] if row is None else [
                Cell(paper_code_number(row, row.get("geomprobe")), title=str(row.get("geomprobe_how") or "")),
                Cell(paper_code_number(row, row.get("paper_code")), title=str(row.get("paper_code_how") or "")),
                Cell(paper_code_number(row, row.get("published")), title=str(row.get("published_source") or ""),
                     css="paper")])
        body.append(cells)
    if not body:
        return None
    caption = ("The value-manifold PC1 fraction and rho(PC1, entropy) of every suite run with --definitions "
               "paper-code, under geomprobe's definition and the released code's (hover for how each is defined; "
               "the run's own section has every row): look for whether the two definitions part by the same "
               "amount in every run, or one of them alone moves between models or checkpoints; the published "
               "figures are references, never results.")
    header = ["run (model@revision)", "suite", "PC1: geomprobe", "PC1: paper code", "PC1: published",
              "rho: geomprobe", "rho: paper code", "rho: published"]
    return Table(f"Across runs: {PAPER_CODE_TITLE}", caption, header, body)
