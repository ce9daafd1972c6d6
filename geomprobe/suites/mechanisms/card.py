"""The mechanisms suite's card face: nothing on the verdict card, only the note, in a wind-tunnel
transformer's section, that its frame-precision curves were not computed and how to compute them
(the suite's two_timescale curves, or `geomprobe windtunnel curves`). Imported by geomprobe.report
through geomprobe.suites.base.load_faces; registers with geomprobe.report.cards.register_card."""

from __future__ import annotations

from geomprobe.report.cards import register_card
from geomprobe.report.rundata import RunData


def _missing(run: RunData) -> list[str]:
    notes = []
    suite_curves = ((run.results.get("mechanisms") or {}).get("two_timescale") or {}).get("curves")
    if (run.windtunnel is not None and run.windtunnel.get("arch") == "transformer" and run.curves is None
            and not suite_curves):
        # a run's own directory gets the suggestion; the model's (often a cache) is not the reader's to write into
        notes.append("frame-precision curves: not computed "
                     + (f"(run `geomprobe windtunnel curves {run.path}`)" if run.manifest is None else
                        f"(run `geomprobe run --model {run.model} --suite mechanisms --out {run.path}`)"))
    return notes


register_card("mechanisms", missing=_missing)
