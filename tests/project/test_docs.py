"""The documentation's code blocks run (examples that cannot go stale), and its site builds.

DOCS: README.md, CONTRIBUTING.md, analyses/README.md and every page under docs/ (the mkdocs site,
mkdocs.yml); the site is built with `mkdocs build --strict` (a broken link, a page missing from the
navigation or a reference that does not resolve fails) and every object its API reference lists
has a docstring, as has each of its public members.

Every fenced block has a language tag, and the tag says what happens to it:

- ```python: the python blocks of one document run in order in one fresh subprocess, in a temporary
  directory, sharing one namespace (the README's sections build on each other's variables), after
  the SUBSTITUTIONS below; names the README leaves to the reader (`inputs`, `enc`, `my_loss`, ...)
  are bound by PLACEHOLDERS just before the first block that uses them.
- ```bash: each `geomprobe ...` line runs (same substitutions, `geomprobe` = `python -m geomprobe.cli`)
  in a temporary directory, so `runs/...` outputs land there; `make demo` / `make test` lines are
  what CI runs and are not rerun here.
- ```toml: parsed. ```text: a listing, not code: nothing to run.

A marker on the line right before a fence changes that:

- `<!-- docs-test: skip (reason) -->`: the block does not run (hub, GPU, minutes of training); the
  test lists it with its reason, and every `geomprobe` line of a skipped bash block is still
  parsed by the CLI (options, choices, ranges, option/suite pairing) without running anything.
- `<!-- docs-test: raises ErrorName -->`: the block must raise ErrorName.

Measured numbers the README quotes come from `make docs-figures` (docs/figures.json), never from here.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", "CONTRIBUTING.md", "analyses/README.md",
        *sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "docs").rglob("*.md"))]
README_MAX_LINES = 300  # the README is the front door: what geomprobe answers, two commands, links

# What makes the examples run offline on a CPU in seconds: hub models become built-in tiny models of
# the same family, full sizes become small ones. Applied in order, as regular expressions, to the
# code of every block (python and bash alike). Keep it short: an example that needs more is
# rewritten or marked skip in the README.
SUBSTITUTIONS = [
    (r'RunConfig\(model="phi-2", dtype="float16"\)',  # geometry: 30 candidates (prompts.jsonl) instead of 1,448
     'RunConfig(model="tiny-phi", prompts="prompts.jsonl")'),
    (r'"my-finetuned-pythia"', "loaded.source"),  # the README's own-model example: tiny-neox's directory
    (r"pythia-410m@step0", "tiny-neox"),
    (r"pythia-410m", "tiny-neox"),  # 24 layers -> 4: the layer numbers below follow
    (r"phi-2", "tiny-phi"),
    (r'dtype="(bfloat16|float16)"', 'dtype="float32"'),
    (r'device="cuda"', 'device="cpu"'),
    (r"\[12, 23\]", "[1, 3]"),  # pythia-410m layers -> tiny-neox layers
    (r"(?<![\d.])12(?![\d])", "2"),  # the ablation suite's axis layer on 4 layers is 2 (README "ablation")
    (r"blocks\.5\.", "blocks.1."),
    (r'\(4, "attn_out"\)', '(3, "attn_out")'),
    (r"n_per_k=250", "n_per_k=8"),
    (r"n_per_quintile=15", "n_per_quintile=3"),
    (r"n_random=10", "n_random=2, n_per_k=8"),
    (r"\[500\]", "[16]"),  # k-major prompts: with n_per_k=8 the k = 2 prompts start at 16
    (r'run_dir = run\(RunConfig\(model="tiny-neox"\), "all"\)',
     'run_dir = run(RunConfig(model="tiny-neox"), "extract")'),  # "all" at default sizes takes minutes
    (r"steps=3000", "steps=5, batch_size=16, eval_sequences=16"),
    # the README's measuring lines at the defaults take minutes on 2 cores with 19 copies: the same
    # command on the first 8 prompts (8 per k) against 2 copies runs every step in seconds, into run
    # directories of its own (other pages' examples write runs/tiny-neox with other settings)
    (r"(run --model (\S+) --suite geometry,sula)(?=\s|$)", r"\1 --limit 8 --null init:2 --n-boot 50 --out runs/readme-\2"),
    (r"(report|compare) runs/(\S+) runs/(\S+)", r"\1 runs/readme-\2 runs/readme-\3"),
]

# Names the README's python leaves to the reader, bound (from `loaded`) before the first block that uses one.
PLACEHOLDERS = textwrap.dedent('''
    def _docs_placeholders(loaded):
        import torch
        enc = loaded.tokenizer(["The capital of France is"], return_tensors="pt")
        last = enc["attention_mask"].sum(1, keepdim=True) - 1
        return {"inputs": enc, "enc": enc, "input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"],
                "query_index": last.to(torch.int64), "reference_tokens": enc["input_ids"], "tokens": enc["input_ids"],
                "my_loss": lambda logits: logits.float().pow(2).mean()}
''')
PLACEHOLDER_NAMES = ["inputs", "enc", "input_ids", "attention_mask", "query_index", "reference_tokens", "tokens",
                     "my_loss"]

MARKER = re.compile(r"<!--\s*docs-test:\s*(skip|raises)\s*(.*?)\s*-->")
FENCE = re.compile(r"^```(\S*)\s*$")
LANGUAGES = {"python", "bash", "toml", "text"}


@dataclass
class Block:
    doc: str
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    marker: str | None  # "skip" | "raises" | None
    reason: str  # the skip reason, or the error name for "raises"

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks_of(doc: str) -> list[Block]:
    lines = (ROOT / doc).read_text().splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        previous = next((line for line in reversed(lines[:index]) if line.strip()), "")
        marked = MARKER.search(previous)
        reason = marked.group(2).strip("() ") if marked else ""
        found.append(Block(doc, index + 1, opening.group(1), "\n".join(lines[index + 1:end]),
                           marked.group(1) if marked else None, reason))
        index = end + 1
    return found


ALL_BLOCKS = [block for doc in DOCS for block in blocks_of(doc)]


def substitute(code: str) -> str:
    for pattern, replacement in SUBSTITUTIONS:
        code = re.sub(pattern, replacement, code)
    return code


def shell_lines(code: str) -> list[str]:
    """The command lines of a bash block: comments dropped, backslash continuations joined."""
    joined = re.sub(r"\\\n\s*", " ", code)
    commands = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            commands.append(shlex.join(words))
    return commands


def is_placeholder(command: str) -> bool:
    """A synopsis line (`geomprobe report RUN_DIR [RUN_DIR ...]`), not a command one can run."""
    return "..." in command or re.search(r"\[|\bRUN_DIR\b|\bFILE\b|\bNAME\b", command) is not None


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, demo_prompts):
    path = tmp_path_factory.mktemp("docs")
    records = "".join(json.dumps({"id": p.id, "text": p.text}) + "\n" for p in demo_prompts[:30])
    for name in ("prompts.jsonl", "my_prompts.jsonl"):  # the prompt files the examples read
        (path / name).write_text(records)
    data = path / "analyses" / "data"  # the README's real-model line reads the repository's prompt file
    data.mkdir(parents=True)
    shutil.copy(Path(__file__).resolve().parents[2] / "analyses" / "data" / "paper3-mixed-75.jsonl", data)
    return path


def test_every_block_is_tagged():
    untagged = [block.where for block in ALL_BLOCKS if block.lang not in LANGUAGES]
    assert not untagged, f"give these blocks a language tag ({', '.join(sorted(LANGUAGES))}): {untagged}"


def test_skipped_blocks_say_why():
    skipped = [(block.where, block.reason) for block in ALL_BLOCKS if block.marker == "skip"]
    print("\nskipped doc blocks:\n" + "\n".join(f"  {where}: {reason}" for where, reason in skipped))
    assert all(reason for _, reason in skipped), f"a skip marker needs a reason: {skipped}"
    raises = [block for block in ALL_BLOCKS if block.marker == "raises"]
    assert all(block.lang == "python" and block.reason for block in raises), [b.where for b in raises]


@pytest.mark.parametrize("block", [b for b in ALL_BLOCKS if b.marker == "skip"], ids=lambda block: block.where)
def test_marked_skip(block):
    """One visible skip per marked block, with the README's reason (`pytest -rs` lists them)."""
    pytest.skip(f"{block.where} ({block.lang}): {block.reason}")


DRIVER = textwrap.dedent('''
    import ast, json, re, sys, time, traceback
    blocks = json.loads(open(sys.argv[1]).read())
    namespace = {"__name__": "__docs__"}
    exec(blocks["placeholders"], namespace)
    outcomes = []
    for block in blocks["blocks"]:
        if "loaded" in namespace and "_docs_bound" not in namespace and any(
                re.search(rf"\\b{name}\\b", block["code"]) for name in blocks["names"]):
            namespace.update(namespace["_docs_placeholders"](namespace["loaded"]))
            namespace["_docs_bound"] = True
        slow = []
        try:
            for statement in ast.parse(block["code"]).body:  # one at a time, to time them
                started = time.perf_counter()
                exec(compile(ast.Module([statement], []), block["where"], "exec"), namespace)
                if time.perf_counter() - started > 2:
                    slow.append([statement.lineno, round(time.perf_counter() - started, 1)])
            outcomes.append({"where": block["where"], "raised": None, "slow": slow})
        except Exception as err:
            outcomes.append({"where": block["where"], "raised": type(err).__name__, "message": str(err)[:300],
                             "traceback": traceback.format_exc()[-1500:]})
    print("DOCS-OUTCOMES " + json.dumps(outcomes))
''')


@pytest.mark.slow
@pytest.mark.parametrize("doc", [doc for doc in DOCS if any(b.doc == doc and b.lang == "python" for b in ALL_BLOCKS)])
def test_python_blocks_run(doc, workdir):
    blocks = [block for block in ALL_BLOCKS if block.doc == doc and block.lang == "python" and block.marker != "skip"]
    spec = {"placeholders": PLACEHOLDERS, "names": PLACEHOLDER_NAMES,
            "blocks": [{"where": block.where, "code": substitute(block.code)} for block in blocks]}
    spec_file = workdir / f"{Path(doc).name}.blocks.json"
    spec_file.write_text(json.dumps(spec))
    driver = workdir / "docs_driver.py"
    driver.write_text(DRIVER)
    done = subprocess.run([sys.executable, str(driver), str(spec_file)], cwd=workdir, capture_output=True, text=True,
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("DOCS-OUTCOMES ")]
    assert lines, f"the driver did not finish:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    outcomes = {o["where"]: o for o in json.loads(lines[-1].removeprefix("DOCS-OUTCOMES "))}
    problems = []
    print(f"\n{doc}: statements over 2 s (line in block, seconds):",
          {where: o["slow"] for where, o in outcomes.items() if o.get("slow")})
    for block in blocks:
        outcome = outcomes[block.where]
        expected = block.reason if block.marker == "raises" else None
        if outcome["raised"] != expected:
            problems.append(f"{block.where}: expected {expected or 'no error'}, got {outcome['raised']}: "
                            f"{outcome.get('message')}\n{outcome.get('traceback', '')}")
    assert not problems, "\n\n".join(problems)


def geomprobe(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "geomprobe.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "CUDA_VISIBLE_DEVICES": "", "COLUMNS": "200", "OMP_NUM_THREADS": "1"},
                          timeout=600)


def shell_blocks(marker):
    return [block for block in ALL_BLOCKS if block.lang == "bash" and block.marker == marker]


@pytest.mark.slow
@pytest.mark.parametrize("block", shell_blocks(None), ids=lambda block: block.where)
def test_shell_blocks_run(block, workdir):
    for command in shell_lines(substitute(block.code)):
        words = shlex.split(command)
        if Path(words[0]).name == "geomprobe":
            words[0] = "geomprobe"
        if words[0] == "make":
            assert words[1:] in (["demo"], ["test"], ["docs-figures"]), f"{block.where}: unknown make line {command}"
            continue  # what CI (make demo, make test) or the docs-figures script runs
        assert words[0] == "geomprobe", f"{block.where}: only geomprobe lines can run here; mark the block: {command}"
        done = geomprobe(words[1:], workdir)
        assert done.returncode == 0, f"{block.where}: {command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def offline_model(spec: str) -> bool:
    """Whether a model loads here in seconds without training anything: a built-in tiny model, or a
    wind tunnel already in this session's cache (a first use would train it into the session's
    cache, which later tests expect untouched)."""
    from geomprobe.models.registry import MODELS, parse_model_spec
    from geomprobe.windtunnel.builtin import windtunnel_dir

    name, revision = parse_model_spec(str(spec))
    info = MODELS.get(name)
    if info is None or revision:
        return False
    if info.kind == "windtunnel":
        return (windtunnel_dir(info.hub_id.split(":", 1)[1]) / "windtunnel.json").exists()
    return info.kind == "builtin"


@pytest.fixture()
def parse_only(monkeypatch, tmp_path):
    """`geomprobe run`/`extract` build their configs (every check) and stop before running a suite:
    on a model that loads here in seconds (a built-in one, or a wind tunnel already cached) the model is
    loaded and the run's own checks against it run too (layers in range, suite pairing, each
    suite's precheck); on a hub model the line stops before loading it."""
    import types

    import geomprobe.models.loading
    import geomprobe.runner

    real_check = geomprobe.models.loading.check_spec
    built = []

    def checked(run_config, configs, **kwargs):
        built.append(configs)
        model = str(run_config.model)
        if not offline_model(model):
            return types.SimpleNamespace(path=Path("x"), summary=dict)
        import dataclasses

        config = dataclasses.replace(run_config, model=model, out=str(tmp_path / f"run-{len(built)}"), device="cpu")
        with monkeypatch.context() as inner:
            inner.setattr(geomprobe.runner, "_run_locked", lambda *args, **kw: built.append("prechecked"))
            path = geomprobe.runner._run_suites(config, configs, progress=False, report=False, details=False,
                                                skip_unsupported=kwargs.get("skip_unsupported"))
            return types.SimpleNamespace(path=path, summary=dict)  # run() reads the finished run: none here

    monkeypatch.setattr(geomprobe.runner, "run", checked)
    # a path in an example (/path/to/..., runs/wt-bij made by an earlier line) stands for the reader's
    # own directory: parsing does not refuse it as missing; a bare alias is still checked
    monkeypatch.setattr(geomprobe.models.loading, "check_spec",
                        lambda spec: None if "/" in str(spec) and not Path(str(spec)).exists() else real_check(spec))
    return built


def check_options(command: str, where: str) -> None:
    """Parse a command line with the CLI's own (typer) commands, without running it: a usage error
    (unknown option, bad choice) fails; `run`/`extract` also build their configs (parse_only)."""
    import typer.main

    from geomprobe.cli import app
    from geomprobe.errors import GeomprobeError

    words = shlex.split(command)[1:]
    if words[0].startswith("-"):
        return  # --version: an eager option of the group, nothing to parse
    command_obj, rest, parent, name = typer.main.get_command(app), list(words), None, "geomprobe"
    while hasattr(command_obj, "get_command"):  # a group: walk down to the subcommand
        context = command_obj.make_context(name, [], parent=parent, resilient_parsing=True)
        name, rest, parent = rest[0], rest[1:], context
        command_obj = command_obj.get_command(context, name)
        assert command_obj is not None, f"{where}: no command {name!r} in {command}"
    try:
        ctx = command_obj.make_context(name, rest, parent=parent)
        if name in ("run", "extract"):
            with ctx:
                command_obj.invoke(ctx)
    except GeomprobeError as err:
        pytest.fail(f"{where}: {command}: {err}")
    except Exception as err:  # typer's own click: compare by name
        kinds = {kind.__name__ for kind in type(err).__mro__}
        if "UsageError" in kinds:
            pytest.fail(f"{where}: {command}: {err}")
        if "Exit" not in kinds:
            raise
        assert err.exit_code == 0, f"{where}: {command}: exit {err.exit_code} (the error is on stderr above)"


@pytest.mark.slow
@pytest.mark.parametrize("block", shell_blocks("skip"), ids=lambda block: block.where)
def test_skipped_shell_lines_parse(block, parse_only):
    checked = 0
    for command in shell_lines(block.code):
        words = shlex.split(command)
        if Path(words[0]).name != "geomprobe" or is_placeholder(command):
            continue  # installs, `make`, synopses with placeholders
        check_options(command, block.where)
        checked += 1
    prechecked = parse_only.count("prechecked")
    print(f"{block.where}: skipped ({block.reason}); {checked} geomprobe lines parsed, {prechecked} of them "
          "also checked against the loaded model")


@pytest.mark.parametrize("block", [b for b in ALL_BLOCKS if b.lang == "toml"], ids=lambda block: block.where)
def test_toml_blocks_parse(block):
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    assert tomllib.loads(block.code)


def test_docs_figures_recorded():
    """docs/figures.json (make docs-figures) exists and says when, how and with what it was made."""
    record = json.loads((ROOT / "docs" / "figures.json").read_text())
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", record["date"])
    assert "docs-figures" in record["command"] and record["geomprobe_commands"]
    assert record["versions"]["geomprobe"] and record["figures"]
    pages = " ".join(" ".join((ROOT / doc).read_text().split()) for doc in DOCS)  # a sentence may wrap
    assert f"`make docs-figures`, {record['date']}" in pages, "the documentation should cite the figures' date"


def test_the_readme_is_short_and_links_what_it_names():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES, f"README.md: at most {README_MAX_LINES} lines (move text to docs/)"
    assert readme.startswith("# geomprobe\n\n```bash\nmake demo"), "the README's first lines are the two commands"
    missing = [target for target in re.findall(r"\]\(([^)#:\s]+)", readme) if not (ROOT / target).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def reference_objects() -> list[str]:
    """The dotted names docs/reference.md renders (`::: geomprobe.x.y` lines)."""
    return re.findall(r"^::: (\S+)", (ROOT / "docs" / "reference.md").read_text(), flags=re.M)


def documented(obj) -> bool:
    """A docstring written for it: a dataclass's generated `Name(field: type, ...)` does not count."""
    import inspect

    text = (inspect.getdoc(obj) or "").strip()
    return bool(text) and not (inspect.isclass(obj) and text.startswith(f"{obj.__name__}("))


def test_every_object_in_the_api_reference_has_docstrings():
    import importlib
    import inspect

    assert len(reference_objects()) >= 30
    missing = []
    for dotted in reference_objects():
        module_name, _, name = dotted.rpartition(".")
        obj = getattr(importlib.import_module(module_name), name)
        members = [(dotted, obj)]
        if inspect.isclass(obj):
            members += [(f"{dotted}.{key}", value) for key, value in vars(obj).items()
                        if not key.startswith("_") and (inspect.isfunction(value) or isinstance(value, property))]
        missing += [where for where, member in members if not documented(member)]
    assert not missing, "give these a docstring (they are in the API reference, docs/reference.md):\n" + \
        "\n".join(missing)


def test_a_missing_docstring_is_caught():
    from dataclasses import dataclass

    class Undocumented:
        def method(self):
            pass

    @dataclass
    class Fields:
        x: int = 0

    assert not documented(Undocumented.method) and not documented(Fields) and documented(test_docs_figures_recorded)


@pytest.mark.slow
def test_the_cli_reference_is_current():
    """docs/cli-reference.md is what the command line declares now (regenerate: `make docs`)."""
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'scripts'); import mkdocs_hooks; "
                           "print(mkdocs_hooks.cli_reference(), end='')"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == (ROOT / "docs" / "cli-reference.md").read_text(), \
        "docs/cli-reference.md is stale: run `make docs` (python scripts/mkdocs_hooks.py)"


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path):
    """mkdocs build --strict: every page in the navigation, every link and reference resolves; the
    command-line reference is generated from the CLI itself."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    reference = (tmp_path / "site" / "cli-reference" / "index.html").read_text()
    assert "geomprobe run" in reference and "--n-per-k" in reference and "geomprobe windtunnel train" in reference
    api = (tmp_path / "site" / "reference" / "index.html").read_text()
    assert all(dotted.rpartition(".")[2] in api for dotted in reference_objects())
