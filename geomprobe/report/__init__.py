"""The HTML report: one self-contained page drawing what run directories hold.

    from geomprobe.report import build_report
    build_report([Path("runs/minilm")], Path("reports/minilm.html"))

`geomprobe report RUN_DIR ... -o reports/NAME.html` and `geomprobe run --report` call it.
Figure families: each suite's in its folder's figures.py, the report's own in figures.RUN_FIGURES, in
page order from figures.run_figure_families(); verdict cards: each suite's part in its folder's
card.py (cards.register_card), the panel in cards.py; the page's pieces in page.py, assembled by
html.py; files are read by rundata.load_run.
"""

from .html import build_report

__all__ = ["build_report"]
