"""The HTML report, built from small real runs made here: a geometry run on tiny-neox
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

SMALL = dict(n_per_quintile=5, n_boot=50, n_null=20, init_seeds=1, null="init:3")


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
        sula = dict(n_per_k=6, n_boot=50, null="init:3")  # 5 conditions x 5 k x 6 prompts
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


@pytest.mark.slow
def test_run_with_report_flag_writes_a_report(runs):
    text = (runs["neox"] / "report.html").read_text()
    assert "Verdict" in text and "Key orthogonality per layer" in text and "Provenance" in text
    # manifold scatter, PC1 vs entropy, spectrum, per layer; keys; focusing, per head; vs untrained
    assert len(figures_of(text)) == 8
    assert "geometry: against untrained copies of the same architecture" in text
    # the per-layer profile draws each untrained copy's PC1
    assert text.count("PC1 of untrained copies") >= 1


@pytest.mark.slow
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
    # tiny-neox: 7 geometry figures; wind tunnel: per position, training, dissociation; the probe run:
    # 7 geometry + 4 SULA + 1 interventions + the same 3 wind-tunnel ones (read from the model's
    # directory); cross-model: 1; each of the two geometry runs and the SULA run: 1 against its
    # untrained copies
    assert len(figures) == 29
    # every figure has its data link, reading the figure's own embedded JSON (no network)
    tables = re.findall(r'<figure class="gp-table" id="(table-\d+)"', text)
    assert body.count('<a class="gp-data" ') == len(figures) + len(tables)
    for table in tables:  # and every table its CSV link
        assert f'data-table="{table}" data-name="{table}">data (CSV)</a>' in body
    for n in range(1, len(figures) + 1):
        assert f'data-source="plot-{n}-data" data-name="figure-{n}"' in body
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
    # each verdict card says what the run can show of inference, and why the geometry does not count
    assert text.count("Geometry alone does not count") == 2 and "a copy-task model" in text
    # several runs: each run's section collapsed, labelled model@revision (duplicates by directory name)
    assert text.count('<details class="run"') == 3
    for label in ("tiny-neox@main", "wt-sula@main (wt-sula)", "wt-sula@main (wt-probe)"):
        assert f"<summary><h2>{html.escape(label)} " in text
    assert "frame-precision dissociation" in text
    assert "present but this version of the report does not draw it" not in text


@pytest.mark.slow
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


@pytest.mark.slow
def test_runs_without_paper_code_definitions_have_no_side_by_side_table(runs, report):
    """The table of --definitions paper-code (tests/report/test_paper_code_report.py) only where a suite ran with it."""
    _, text = report
    for suite in ("geometry", "sula"):
        assert json.loads((runs["probe"] / suite / "results.json").read_text()).get("definitions", "geomprobe") \
            == "geomprobe"
    assert "definitions and the papers&#x27; released code" not in text and 'class="meta"' not in text
    assert 'id="cross-definitions"' not in text


@pytest.mark.slow
def test_strings_from_files_are_escaped_and_missing_parts_are_said(runs, tmp_path):
    hostile = tmp_path / "hostile"
    (hostile / "geometry").mkdir(parents=True)
    shutil.copy(runs["neox"] / "geometry" / "results.json", hostile / "geometry" / "results.json")
    manifest = json.loads((runs["neox"] / "manifest.json").read_text())
    manifest["model"]["spec"] = "<script>alert(1)</script>"
    manifest["suites"]["domain"] = {"status": "running", "started": "now"}
    manifest["suites"]["sula"] = {"status": "skipped", "why": "a <b>wind-tunnel</b> reason"}
    (hostile / "manifest.json").write_text(json.dumps(manifest))
    text = build_report([hostile], tmp_path / "hostile.html").read_text()
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "domain suite: no domain/results.json (status running)" in text
    # a skipped suite is said with the manifest's reason, not as something to finish
    assert "sula suite: skipped, not drawn (a &lt;b&gt;wind-tunnel&lt;/b&gt; reason)" in text
    assert "--suite sula" not in text
    # no extraction arrays here: the scatter is drawn uncoloured and the page says why
    assert "geometry/extraction/next_entropy_bits.npy is missing" in text
    with pytest.raises(GeomprobeError, match="nothing to report"):
        build_report([tmp_path / "hostile" / "geometry"], tmp_path / "x.html")


@pytest.mark.slow
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


def figure_spec(text: str, title: str) -> dict:
    """The embedded plotly JSON (data, layout) of the one figure titled `title`."""
    [figure] = [f for f in figures_of(text) if "<b>Figure " in f and f". {html.escape(title)}.</b>" in f]
    source = re.search(r'<script type="application/json" id="(plot-\d+-data)">(.*?)</script>', figure, re.S)
    return json.loads(source.group(2))


@pytest.mark.slow
def test_scatters_name_each_prompt_and_pc1_is_drawn_against_entropy(runs):
    import numpy as np

    text = (runs["neox"] / "report.html").read_text()  # a report of one run: every prompt with its text
    vm = json.loads((runs["neox"] / "geometry" / "results.json").read_text())["value_manifold"]
    prompts = [json.loads(line) for line in (runs["neox"] / "geometry" / "extraction" / "prompts.jsonl").open()]
    entropy = np.load(runs["neox"] / "geometry" / "extraction" / "next_entropy_bits.npy")
    [scatter] = figure_spec(text, "Value manifold: PC1 vs PC2")["data"]
    assert [row[0] for row in scatter["customdata"]] == [html.escape(p["id"]) for p in prompts]
    assert "%{customdata[0]}<br>%{customdata[1]}" in scatter["hovertemplate"]
    for row, prompt in zip(scatter["customdata"], prompts):
        whole = " ".join(prompt["text"].split())
        assert row[1] == html.escape(whole) if len(whole) <= 60 else \
            row[1] == html.escape(whole[:59]) + "\u2026"
    [against] = figure_spec(text, "Value manifold: PC1 vs next-token entropy")["data"]
    assert np.allclose(against["x"], entropy, rtol=1e-3, atol=1e-4)
    assert np.allclose(against["y"], vm["pc1_coords"], rtol=1e-3, atol=1e-4)
    assert f"rho(PC1, entropy) = {vm['rho_pc1_entropy_raw']:+.2f}" in text
    # SULA: PC1 against H_bayes, one trace per k, each point named by its prompt id and k
    probe = build_report([runs["probe"]], runs["base"] / "reports" / "probe.html").read_text()
    rows = [json.loads(line) for line in (runs["probe"] / "sula" / "prompts-main.jsonl").open()]
    traces = figure_spec(probe, "SULA: PC1 vs H_bayes per prompt, by k")["data"]
    ks = sorted({r["k"] for r in rows})
    assert [t["name"] for t in traces] == [f"k = {k}" for k in ks]
    for k, trace in zip(ks, traces):
        group = [r for r in rows if r["k"] == k]
        assert [c[0] for c in trace["customdata"]] == [r["id"] for r in group]
        assert {c[2] for c in trace["customdata"]} == {str(k)}
        assert np.allclose(trace["y"], [r["pc1"] for r in group], rtol=1e-3, atol=1e-4)


@pytest.mark.slow
def test_k_is_on_its_numeric_axis_and_coinciding_baselines_are_said(runs):
    from geomprobe.report.figures import coinciding

    probe = (runs["base"] / "reports" / "probe.html")
    text = build_report([runs["probe"]], probe).read_text()
    sula = json.loads((runs["probe"] / "sula" / "results.json").read_text())
    ks = sula["settings"]["k_values"]
    per_k = figure_spec(text, "SULA: H_model and H_bayes per k")
    assert per_k["layout"]["xaxis"]["tickvals"] == ks and per_k["data"][0]["x"] == ks
    pc1 = figure_spec(text, "SULA: mean PC1 per k, main condition and controls")
    assert pc1["layout"]["xaxis"]["tickvals"] == ks
    main = next(t for t in pc1["data"] if t.get("name") == "main")
    assert [round(x - k, 6) for x, k in zip(main["x"], ks)] == [round(main["x"][0] - ks[0], 6)] * len(ks)
    assert coinciding({"a": 0.1, "b": 0.10001, "c": 0.2, "d": 0.2006}) == {"0.100": ["a", "b"]}
    keys = json.loads((runs["probe"] / "geometry" / "results.json").read_text())["key_orthogonality"]
    levels = {"analytic Gaussian": keys.get("analytic_gaussian"),
              "empirical Gaussian": (keys.get("empirical_gaussian") or {}).get("mean"),
              "fresh init": ((keys.get("baselines") or {}).get("init") or {}).get("mean")}
    groups = coinciding({name: value for name, value in levels.items() if value is not None})
    figure = next(f for f in figures_of(text) if "<b>Figure " in f and "Key orthogonality per layer.</b>" in f)
    for value, names in groups.items():
        assert f"{', '.join(names)} coincide at {value}" in figure
    assert figure.count("(coincides)") == sum(map(len, groups.values()))


@pytest.mark.slow
def test_head_entropy_heatmap_draws_the_extraction(runs):
    import numpy as np

    text = (runs["neox"] / "report.html").read_text()
    focus = json.loads((runs["neox"] / "geometry" / "results.json").read_text())["attention_focusing"]
    entropy = np.load(runs["neox"] / "geometry" / "extraction" / "attn_entropy_bits.npy")
    [heatmap] = figure_spec(text, "Attention entropy per layer and head")["data"]
    z = np.array(heatmap["z"], dtype=float)
    assert heatmap["type"] == "heatmap" and z.shape == entropy.shape[1:]
    assert np.allclose(z, entropy.mean(axis=0), rtol=1e-3, atol=1e-4)
    # each layer's mean over heads is the focusing profile the geometry suite reports
    assert np.allclose(z.mean(axis=1), focus["hbar_bits"], rtol=1e-3, atol=1e-3)


@pytest.mark.slow
def test_the_verdict_card_says_in_words_what_the_model_shows(runs, report):
    from geomprobe.report.html import _missing
    from geomprobe.report.rundata import load_run

    _, text = report
    geometry = json.loads((runs["probe"] / "geometry" / "results.json").read_text())
    verdict, rho = geometry["verdict"], geometry["value_manifold"]["rho_pc1_entropy_raw"]
    card = next(c for c in text.split('<div class="card">')[1:] if "(wt-probe)" in c.split("</h3>")[0])
    words = card.split('<div class="words">')[1].split("</div>")[0]
    shows, lacks = words.split('<ul class="lacks">')
    order = "ordered" if abs(rho) >= 0.5 else ("only weakly ordered" if abs(rho) >= 0.3 else "not ordered")
    assert f"value PC1 is {order} by entropy: rho {rho:+.2f}" in (shows if abs(rho) >= 0.5 else lacks)
    for name, key in (("a value manifold", "value_manifold"), ("orthogonal keys", "keys"),
                      ("attention focusing", "focusing")):
        assert name in (shows if verdict[key]["met"] else lacks), name
    from geomprobe.analysis.null_comparison import status_words

    focus_null = verdict["focusing"]["vs_untrained"]
    assert f"{status_words(focus_null['status'])} ({focus_null['model']:.3f}" in words
    keys_null = verdict["keys"]["vs_untrained"]  # lower is better: said so, in the same words as the rest
    assert f"{status_words(keys_null['status'])} ({keys_null['model']:.3f} vs " \
           f"{keys_null['null_mean']:.3f}; lower is better)" in words
    # the not-drawn list follows what is drawn: the curves come from the model's curves.json here, from the
    # mechanisms suite's results otherwise; only a run without either is told, and never to write into the
    # model's directory
    run = load_run(runs["probe"])
    assert run.curves and not any("frame-precision" in note for note in _missing(run))
    run.curves = None
    [note] = [note for note in _missing(run) if "frame-precision" in note]
    assert f"windtunnel curves {runs['tunnel']}" not in note and f"--suite mechanisms --out {runs['probe']}" in note
    run.results["mechanisms"] = {"two_timescale": {"curves": [{"step": 0}]}}
    assert not any("frame-precision" in note for note in _missing(run))


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


@pytest.mark.slow
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


@pytest.mark.slow
@needs_chromium
def test_report_renders_in_headless_chromium(runs, report, tmp_path):
    pytest.importorskip("PIL", reason="pillow (a dev dependency) reads the screenshot")
    import numpy as np
    from PIL import Image

    page, text = report
    dom, rendered = check_renders(page, tmp_path)
    # the new views drew: a layer x head heatmap per geometry run, one data link per figure
    heatmaps = [f for f in rendered if "Attention entropy per layer and head.</b>" in f]
    assert len(heatmaps) == 2 and all('class="hm"' in f for f in heatmaps)
    assert dom.count('data-source="plot-') == len(rendered) == text.count('data-source="plot-')
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
    assert points("SULA: PC1 vs H_bayes per prompt, by k") == sula["conditions"]["main"]["n_prompts"]
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


# clicks a figure's data link, keeps the file it would save (a Blob) and writes it into the page
CLICK_DATA = """<script>window.addEventListener('load', function () {
  var saved = {};
  URL.createObjectURL = function (blob) { saved.blob = blob; return 'about:blank'; };
  HTMLAnchorElement.prototype.click = function () { saved.name = this.download; };
  var link = document.querySelector('a.gp-data[data-name="%s"]');
  link.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}));
  saved.blob.text().then(function (text) {
    var out = document.createElement('pre');
    out.id = 'downloaded';
    out.setAttribute('data-name', saved.name);
    out.textContent = text;
    document.body.appendChild(out);
  });
});</script>"""


@pytest.mark.slow
@needs_chromium
def test_a_figures_data_link_saves_its_values(runs, tmp_path):
    import numpy as np

    source = runs["neox"] / "report.html"
    text = source.read_text()
    titles = re.findall(r"<b>Figure (\d+)\. ([^<]+)\.</b>", text)
    number = next(int(n) for n, title in titles if title == "Value manifold: PC1 vs next-token entropy")
    page = tmp_path / "click.html"
    page.write_text(text.replace("</body>", CLICK_DATA % f"figure-{number}" + "</body>"))
    dom, console, requested = chromium(page, tmp_path, "--dump-dom")
    assert console == [] and requested == [], "\n".join(console + requested)
    saved = re.search(r'<pre id="downloaded" data-name="([^"]+)">(.*?)</pre>', dom, re.S)
    assert saved and saved.group(1) == f"figure-{number}.json"
    data = json.loads(html.unescape(saved.group(2)))
    assert data["figure"] == f"Figure {number}. Value manifold: PC1 vs next-token entropy"
    [trace] = data["traces"]
    vm = json.loads((runs["neox"] / "geometry" / "results.json").read_text())["value_manifold"]
    assert np.allclose(trace["y"], vm["pc1_coords"], rtol=1e-3, atol=1e-4)
    assert len(trace["customdata"]) == vm["n_prompts"]


@pytest.mark.slow
@needs_chromium
def test_a_tables_data_link_saves_its_cells_as_csv(runs, report, tmp_path):
    import csv
    import io

    page, text = report
    sula = json.loads((runs["probe"] / "sula" / "results.json").read_text())
    number = int(re.search(r'id="table-(\d+)">.*?<b>Table \d+\. SULA: scores per condition\.</b>', text, re.S).group(1))
    clicked = tmp_path / "click-table.html"
    clicked.write_text(text.replace("</body>", CLICK_DATA % f"table-{number}" + "</body>"))
    dom, console, requested = chromium(clicked, tmp_path, "--dump-dom")
    assert console == [] and requested == [], "\n".join(console + requested)
    saved = re.search(r'<pre id="downloaded" data-name="([^"]+)">(.*?)</pre>', dom, re.S)
    assert saved and saved.group(1) == f"table-{number}.csv"
    rows = list(csv.reader(io.StringIO(html.unescape(saved.group(2)))))
    assert rows[0][:2] == ["condition", "labels"]
    assert [row[0] for row in rows[1:-1]] == list(sula["conditions"]) and rows[-1][0].startswith("paper III")
    main = next(row for row in rows if row[0] == "main")
    assert main[3] == str(sula["conditions"]["main"]["n_prompts"])


