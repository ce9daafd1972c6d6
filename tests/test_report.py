"""The HTML report (issue 7), built from small real runs made here: a geometry run on tiny-neox
(written with --report), a short wind-tunnel training run with its frame-precision curves, and a
geometry, sula and ablation run on that wind-tunnel model. Checked as text (self-contained, captioned, escaped,
missing parts said) and rendered in headless Chromium (no console message, no network request,
every figure drawn, a screenshot that is not blank)."""

import html
import json
import os
import re
import shutil
import signal
import subprocess

import pytest
from typer.testing import CliRunner

from geomprobe.cli import app
from geomprobe.errors import GeomprobeError
from geomprobe.report import build_report
from geomprobe.rundir import atomic_write_json
from geomprobe.runner import RunConfig, run
from geomprobe.suites.ablation import AblationConfig
from geomprobe.suites.geometry import GeometryConfig
from geomprobe.suites.sula import SulaConfig

SMALL = dict(n_per_quintile=5, n_boot=50, n_null=20, init_seeds=1)


def write_prompts(path, prompts):
    path.write_text("".join(json.dumps(p.to_dict()) + "\n" for p in prompts))
    return str(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory, demo_prompts):
    import torch

    from geomprobe.windtunnel.dissociation import dissociation_curves
    from geomprobe.windtunnel.models import TransformerSpec
    from geomprobe.windtunnel.prompts import task_prompts
    from geomprobe.windtunnel.tasks import make_task
    from geomprobe.windtunnel.train import TrainConfig, train

    base = tmp_path_factory.mktemp("report-runs")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models gain nothing from threads, and lose a lot on a busy machine
    try:
        neox = base / "tiny-neox"
        run(RunConfig(model="tiny-neox", prompts=write_prompts(base / "demo.jsonl", demo_prompts), out=str(neox)),
            GeometryConfig(**SMALL), report=True, progress=False)
        tunnel = base / "wt-sula"
        train(TrainConfig(task="sula", steps=30, batch_size=32, eval_sequences=64, n_checkpoints=2, log_every=5,
                          spec=TransformerSpec(32, 3, 2, 64)), tunnel, progress=False)
        atomic_write_json(tunnel / "curves.json", dissociation_curves(tunnel, n_probe=16, n_eval=64))
        probe = base / "wt-probe"  # a geomprobe run on the wind-tunnel model: its metrics come from the model dir
        sequences = write_prompts(base / "sula.jsonl", task_prompts(make_task("sula"), n=60, seed=0))
        run(RunConfig(model=str(tunnel), prompts=sequences, out=str(probe)), GeometryConfig(**SMALL),
            progress=False)
        sula = dict(n_per_k=6, n_boot=50)  # 5 conditions x 5 k x 6 prompts
        probe_config = RunConfig(model=str(tunnel), out=str(probe))
        run(probe_config, SulaConfig(**sula), progress=False)
        run(probe_config, AblationConfig(n_random=2, **sula), progress=False)  # reuses the sula suite's axis
    finally:
        torch.set_num_threads(threads)
    return {"neox": neox, "tunnel": tunnel, "probe": probe, "base": base}


@pytest.fixture(scope="module")
def report(runs):
    out = build_report([runs["neox"], runs["tunnel"], runs["probe"]], runs["base"] / "reports" / "all.html")
    return out, out.read_text()


def figures_of(text: str) -> list[str]:
    return re.findall(r'<figure class="gp-figure".*?</figure>', text, flags=re.S)


def test_run_with_report_flag_writes_a_report(runs):
    text = (runs["neox"] / "report.html").read_text()
    assert "Verdict" in text and "Key orthogonality per layer" in text and "Provenance" in text
    assert len(figures_of(text)) == 6  # manifold scatter, spectrum, per layer; keys; focusing; vs untrained
    assert "geometry: against untrained copies of the same architecture" in text
    # the per-layer profile draws each untrained copy's PC1
    assert text.count("PC1 of untrained copies") >= 1


def test_report_is_self_contained_and_every_figure_is_captioned(report):
    _, text = report
    assert text.count("<script") == text.count("</script>")
    # no external resource of any kind: scripts, styles, images, frames, CSS imports or urls
    assert not re.search(r"<(script|link|img|iframe|source)\b[^>]*\b(src|href)\s*=\s*[\"']?(https?:)?//", text, re.I)
    assert not re.search(r"@import|url\(\s*[\"']?(https?:)?//", text, re.I)
    body = text.split("</head>", 1)[1]
    figures = figures_of(text)
    # each figure: a div and its figure JSON; one inline script draws them (lazily in collapsed sections)
    assert body.count("Plotly.newPlot(") == 1
    assert body.count('<script type="application/json" id="plot-') == body.count('data-figure="plot-') == len(figures)
    assert body.count('<script type="application/json" id="gp-template-') == 1  # the plotly template, once
    # tiny-neox: 5 geometry figures; wind tunnel: per position, training, dissociation; the probe run:
    # 5 geometry + 3 SULA + 1 interventions + the same 3 wind-tunnel ones (read from the model's
    # directory); cross-model: 1; each of the two geometry runs and the SULA run: 1 against its
    # untrained copies
    assert len(figures) == 24
    assert "sula: against untrained copies of the same architecture" in text
    assert "MAE vs untrained copies (init-1000, init-1001, init-1002)" in text  # the SULA card
    for figure in figures:
        caption = re.search(r"<figcaption><b>Figure \d+\. [^<]+\.</b> ([^<]+)", figure)
        assert caption and len(caption.group(1).split()) >= 8, figure[-400:]
    assert "Paper III Table 2 layout" in text and 'id="cross-run"' in text
    table = text.split('id="cross-model"')[1].split("</table>")[0]
    assert table.count("<tr>") == 3  # header and the two geometry runs
    assert 'class="paper"' in table
    assert text.count('class="badge ') == 2  # two verdicts; the training run shows its Bayes scores instead
    # several runs: each run's section collapsed, labelled model@revision (duplicates by directory name)
    assert text.count('<details class="run"') == 3
    for label in ("tiny-neox@main", "wt-sula@main (wt-sula)", "wt-sula@main (wt-probe)"):
        assert f"<summary><h2>{html.escape(label)} " in text
    assert "frame-precision dissociation" in text
    assert "present but this version of the report does not draw it" not in text


def test_sula_and_intervention_figures_draw_the_results(runs, report):
    _, text = report
    sula = json.loads((runs["probe"] / "sula" / "results.json").read_text())
    ablation = json.loads((runs["probe"] / "ablation" / "results.json").read_text())
    titles = re.findall(r"<b>Figure \d+\. ([^<]+)\.</b>", text)
    for title in ("SULA: H_model and H_bayes per k", "SULA: H_model vs H_bayes per prompt",
                  "SULA: mean PC1 per k, main condition and controls",
                  "Entropy-axis interventions: true axis vs random axes"):
        assert titles.count(title) == 1, titles
    # the per-condition table: one row per condition and paper III's reference row
    table = re.search(r'<figure class="gp-table".*?</figure>', text, flags=re.S).group(0)
    assert "Table 1. SULA: scores per condition." in table
    assert table.count("<tr>") == 1 + len(sula["conditions"]) + 1 and 'class="paper"' in table
    main = sula["conditions"]["main"]
    assert f"{main['mae_bits']['value']:.3g}" in table
    # the scatter draws every main-condition prompt, the interventions every condition's true axis
    # and random axes, with its one-line reading
    n_main = sum(1 for _ in (runs["probe"] / "sula" / "prompts-main.jsonl").open())
    assert main["n_prompts"] == n_main
    # the per-k figure draws each untrained copy's H_model and MAE per k, from the results
    per_k = next(f for f in figures_of(text) if "SULA: H_model and H_bayes per k" in f)
    n_nulls = len(sula["untrained_null"]["models"])
    assert per_k.count('"legendgroup":"untrained"') == 2 * n_nulls
    assert f"{sula['untrained_null']['models'][0]['mae_bits']:.3g}" in per_k
    figure = next(f for f in figures_of(text) if "Entropy-axis interventions: true axis" in f)
    for condition in ablation["conditions"]:
        assert html.escape(condition["reading"]) in figure
    assert figure.count('"type":"box"') == 2 * len(ablation["conditions"])  # MAE and r, random axes
    # the verdict card of the probe run carries the SULA MAE and the intervention headline
    cards = text.split('<div class="cards">')[1].split("</section>")[0]
    assert cards.count("<b>SULA</b>") == 1 and cards.count("<b>Interventions</b>") == 1
    assert "paper III, LLMs (reference)" in cards


def test_runs_without_paper_code_definitions_have_no_side_by_side_table(runs, report):
    """The table of --definitions paper-code (tests/test_paper_code_report.py) only where a suite ran with it."""
    _, text = report
    for suite in ("geometry", "sula"):
        assert json.loads((runs["probe"] / suite / "results.json").read_text()).get("definitions", "geomprobe") \
            == "geomprobe"
    assert "definitions and the papers&#x27; released code" not in text and 'class="meta"' not in text
    assert 'id="cross-definitions"' not in text


def test_strings_from_files_are_escaped_and_missing_parts_are_said(runs, tmp_path):
    hostile = tmp_path / "hostile"
    (hostile / "geometry").mkdir(parents=True)
    shutil.copy(runs["neox"] / "geometry" / "results.json", hostile / "geometry" / "results.json")
    manifest = json.loads((runs["neox"] / "manifest.json").read_text())
    manifest["model"]["spec"] = "<script>alert(1)</script>"
    manifest["suites"]["domain"] = {"status": "running", "started": "now"}
    (hostile / "manifest.json").write_text(json.dumps(manifest))
    text = build_report([hostile], tmp_path / "hostile.html").read_text()
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "domain suite: no domain/results.json (status running)" in text
    # no extraction arrays here: the scatter is drawn uncoloured and the page says why
    assert "geometry/extraction/next_entropy_bits.npy is missing" in text
    with pytest.raises(GeomprobeError, match="nothing to report"):
        build_report([tmp_path / "hostile" / "geometry"], tmp_path / "x.html")


def test_report_cli(runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["report", str(runs["neox"]), str(runs["tunnel"])])
    assert result.exit_code == 0, result.output
    assert "report: reports/tiny-neox.html" in result.output and (tmp_path / "reports" / "tiny-neox.html").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = runner.invoke(app, ["report", str(empty), "-o", "x.html"])
    assert bad.exit_code == 2 and "nothing to report" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    bad = runner.invoke(app, ["report", str(tmp_path / "absent")])
    assert bad.exit_code == 2 and "is not a directory" in bad.stderr


# ---------------------------------------------------------------------------------------------
# headless Chromium


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (.ci/run installs Debian's "
                                                             "chromium where apt-get is available)")
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr",
                 "--v=0", "--virtual-time-budget=5000", "--no-first-run", "--disable-extensions",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium(page, tmp_path, *action) -> tuple[str, list[str], list[str]]:
    """Open `page` in headless Chromium with `action` (--dump-dom, --screenshot=...). Returns the
    stdout, the console messages (any level) and the URLs the page itself requested over the
    network (from Chromium's net log; the browser's own background requests are left out)."""
    profile, netlog = tmp_path / "profile", tmp_path / "netlog.json"
    shutil.rmtree(profile, ignore_errors=True)
    command = [CHROMIUM, *BROWSER_FLAGS, f"--user-data-dir={profile}", f"--log-net-log={netlog}", *action,
               page.as_uri()]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=120)
    finally:  # the browser and any helper it left behind, whether it finished or timed out
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
    console = [line for line in stderr.splitlines() if re.search(r":CONSOLE[:(]", line)]
    log = json.loads(netlog.read_text())
    names = {code: name for name, code in log["constants"]["logEventTypes"].items()}
    requested = [event["params"]["url"] for event in log["events"]
                 if names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in event.get("params", {})
                 and event["params"].get("initiator") != "not an origin"
                 and not event["params"]["url"].startswith(("file:", "data:", "blob:"))]
    return stdout, console, requested


@needs_chromium
def test_the_browser_checks_catch_console_errors_and_network_requests(tmp_path):
    canary = tmp_path / "canary.html"
    canary.write_text('<html><body><img src="https://example.invalid/x.png"><script>console.error("bad");'
                      'setTimeout(() => { throw new Error("boom") }, 10);</script></body></html>')
    _, console, requested = chromium(canary, tmp_path, "--dump-dom")
    assert any('"bad"' in line for line in console) and any("Uncaught Error: boom" in line for line in console)
    assert set(requested) == {"https://example.invalid/x.png"}


OPEN_ALL = "<script>document.querySelectorAll('details').forEach(function (d) { d.open = true; });</script>"


def with_sections_open(page, tmp_path):
    """A copy of a report that opens every collapsed <details> once loaded (their figures are drawn
    on the toggle event, as when a reader opens them)."""
    opened = tmp_path / f"{page.stem}-opened.html"
    opened.write_text(page.read_text().replace("</body>", OPEN_ALL + "</body>"))
    return opened


def drawn(figure: str) -> bool:
    """Plotly drew the figure, traces and not only axes (points, lines, bars or a heatmap's image)."""
    return ('class="main-svg"' in figure and "plot-container" in figure
            and re.search(r'class="(scatterlayer|barlayer|hm")', figure) is not None)


def check_renders(page, tmp_path) -> tuple[str, list[str]]:
    """Render a report as it opens (only the figures outside collapsed sections drawn), then with every
    section opened (every figure drawn): no console message, no network request. Returns the opened
    DOM and its figures."""
    text = page.read_text()
    dom, console, requested = chromium(page, tmp_path, "--dump-dom", "--window-size=1400,3000")
    assert console == [] and requested == [], "\n".join(console + requested)
    outside = [f for f in figures_of(re.sub(r'<details class="run".*?</details>', "", text, flags=re.S))]
    assert sum(drawn(f) for f in figures_of(dom)) == len(outside)
    dom, console, requested = chromium(with_sections_open(page, tmp_path), tmp_path, "--dump-dom",
                                       "--window-size=1400,3000")
    assert console == [], "\n".join(console)
    assert requested == []
    rendered = figures_of(dom)
    assert len(rendered) == len(figures_of(text))
    for figure in rendered:
        assert drawn(figure), figure[:300]
    return dom, rendered


@needs_chromium
def test_report_renders_in_headless_chromium(runs, report, tmp_path):
    pytest.importorskip("PIL", reason="pillow (a dev dependency) reads the screenshot")
    import numpy as np
    from PIL import Image

    page, text = report
    _, rendered = check_renders(page, tmp_path)
    shot = tmp_path / "report.png"
    _, console, _ = chromium(with_sections_open(page, tmp_path), tmp_path, f"--screenshot={shot}",
                             "--window-size=1400,3000")
    assert console == [], "\n".join(console)
    # the SULA and intervention figures drew their markers: per k, every main prompt, every
    # condition's PC1 per k, and the random axes' boxes with the true axis over them
    by_title = {re.search(r"<b>Figure \d+\. ([^<]+)\.</b>", f).group(1): f for f in rendered}
    sula = json.loads((runs["probe"] / "sula" / "results.json").read_text())
    n_k = len(sula["settings"]["k_values"])

    def points(title):
        return len(re.findall(r'class="point[ "]', by_title[title]))

    assert points("SULA: H_model and H_bayes per k") >= 2 * n_k
    assert points("SULA: H_model vs H_bayes per prompt") == sula["conditions"]["main"]["n_prompts"]
    assert points("SULA: mean PC1 per k, main condition and controls") == n_k * len(sula["conditions"])
    interventions = by_title["Entropy-axis interventions: true axis vs random axes"]
    n_conditions = len(json.loads((runs["probe"] / "ablation" / "results.json").read_text())["conditions"])
    assert interventions.count('class="box"') == 2 * n_conditions and points(
        "Entropy-axis interventions: true axis vs random axes") >= 2 * n_conditions

    pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert pixels.shape == (3000, 1400)
    non_white = (pixels < 235).mean()
    assert 0.03 < non_white < 0.9 and pixels.std() > 15, (non_white, pixels.std())
    # the lower half holds plots too, not a page that stopped drawing after the header
    assert (pixels[1500:] < 235).mean() > 0.01
