"""`geomprobe push` against a stand-in for the Hugging Face Hub, never the network.

StandInHub is an HTTP server on 127.0.0.1 (a port the system picks) that answers the routes the
installed huggingface_hub's HfApi.create_repo, create_branch and create_commit send (read from its
source: hf_api.py and _commit_api.py), and keeps the committed files in memory:

    POST /api/repos/create                               {name, organization, type, visibility}
    POST /api/validate-yaml                              README.md's front matter, parsed with PyYAML
    POST /api/datasets/{owner}/{name}/branch/{branch}    create_branch
    POST /api/datasets/{owner}/{name}/preupload/{rev}    every file "regular": no LFS or xet transfer
    POST /api/datasets/{owner}/{name}/commit/{rev}       NDJSON: a header, then base64 file contents

Any other request is answered 404 and recorded in `unexpected`, so a test fails when
huggingface_hub starts calling something the stand-in does not know. An autouse fixture points
huggingface_hub's default endpoint at a closed port and its token at nothing, so that no test can
reach the real Hub even by mistake.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from geomprobe.cli import app
from geomprobe.errors import ConfigError, HubError, RunDirectoryError
from geomprobe.push import card, files_to_push, push
from geomprobe.results import Run

TOKEN = "hf_standin_write_token"
OWNER = "standin-user"  # the token's owner: where a bare NAME goes


class StandInHub:
    """The stand-in Hub: repos[repo_id] = {"private", "branches": {name: {path: bytes}}, "commits": [header]}."""

    def __init__(self, refuse: int | None = None):
        self.refuse = refuse  # answer every request with this status (401: a token the Hub refuses)
        self.repos: dict[str, dict] = {}
        self.requests: list[tuple[str, str]] = []
        self.unexpected: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                hub.handle(self, "GET")

            def do_POST(self):
                hub.handle(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def files(self, repo_id: str, branch: str = "main") -> dict[str, bytes]:
        return self.repos[repo_id]["branches"][branch]

    # -- the routes

    def handle(self, request: BaseHTTPRequestHandler, method: str) -> None:
        path = unquote(urlsplit(request.path).path)
        body = request.rfile.read(int(request.headers.get("Content-Length") or 0))
        with self.lock:
            self.requests.append((method, path))
        if self.refuse is not None:
            return self.answer(request, self.refuse, {"error": "Invalid credentials in Authorization header"},
                               {"X-Error-Message": "Invalid credentials in Authorization header"})
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.answer(request, 401, {"error": "Invalid credentials in Authorization header"},
                               {"X-Error-Message": "Invalid credentials in Authorization header"})
        parts = path.strip("/").split("/")
        with self.lock:
            if method == "POST" and path == "/api/repos/create":
                return self.create(request, json.loads(body))
            if method == "POST" and path == "/api/validate-yaml":
                return self.validate(request, json.loads(body))
            if method == "POST" and len(parts) == 6 and parts[:2] == ["api", "datasets"]:
                repo_id, action, revision = f"{parts[2]}/{parts[3]}", parts[4], parts[5]
                if repo_id not in self.repos:
                    return self.answer(request, 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
                if action == "branch":
                    return self.branch(request, repo_id, revision)
                if revision not in self.repos[repo_id]["branches"]:
                    return self.answer(request, 404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound"})
                if action == "preupload":
                    return self.preupload(request, json.loads(body))
                if action == "commit":
                    return self.commit(request, repo_id, revision, body)
            self.unexpected.append((method, path))
        return self.answer(request, 404, {"error": f"the stand-in does not serve {method} {path}"})

    def answer(self, request, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            request.send_header(key, value)
        request.end_headers()
        request.wfile.write(data)

    def create(self, request, payload: dict) -> None:
        if payload.get("type") != "dataset":
            return self.answer(request, 400, {"error": f"the stand-in holds datasets only, not {payload.get('type')}"})
        repo_id = f"{payload.get('organization') or OWNER}/{payload['name']}"
        url = f"{self.url}/datasets/{repo_id}"
        if repo_id in self.repos:
            return self.answer(request, 409, {"error": "You already created this dataset repo", "url": url})
        self.repos[repo_id] = {"private": payload.get("visibility") == "private", "branches": {"main": {}},
                               "commits": []}
        return self.answer(request, 200, {"url": url, "name": repo_id})

    def validate(self, request, payload: dict) -> None:
        content = payload["content"]
        if not content.startswith("---\n") or "\n---\n" not in content[4:]:
            return self.answer(request, 400, {"errors": [{"message": "no YAML front matter"}]})
        try:
            metadata = yaml.safe_load(content[4:content.index("\n---\n", 4)])
        except yaml.YAMLError as error:
            return self.answer(request, 400, {"errors": [{"message": str(error)}]})
        if not isinstance(metadata, dict):
            return self.answer(request, 400, {"errors": [{"message": "the front matter is not a mapping"}]})
        return self.answer(request, 200, {"errors": [], "warnings": []})

    def branch(self, request, repo_id: str, branch: str) -> None:
        branches = self.repos[repo_id]["branches"]
        if branch in branches:
            return self.answer(request, 409, {"error": "Reference already exists"})
        branches[branch] = dict(branches["main"])
        return self.answer(request, 200, {})

    def preupload(self, request, payload: dict) -> None:
        files = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                 for f in payload["files"]]
        return self.answer(request, 200, {"files": files})

    def commit(self, request, repo_id: str, revision: str, body: bytes) -> None:
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        if not lines or lines[0]["key"] != "header":
            return self.answer(request, 400, {"error": "the commit has no header"})
        added = {}
        for line in lines[1:]:
            if line["key"] != "file" or line["value"].get("encoding") != "base64":
                return self.answer(request, 400, {"error": f"the stand-in takes regular files only, not {line['key']}"})
            added[line["value"]["path"]] = base64.b64decode(line["value"]["content"])
        repo = self.repos[repo_id]
        repo["branches"][revision].update(added)
        repo["commits"].append(lines[0]["value"])
        oid = f"{len(repo['commits']):040x}"
        return self.answer(request, 200, {"commitUrl": f"{self.url}/datasets/{repo_id}/commit/{oid}",
                                          "commitOid": oid, "pullRequestUrl": None})


@pytest.fixture(autouse=True)
def no_real_hub(monkeypatch, tmp_path):
    """huggingface_hub online (the tests' conftest sets HF_HUB_OFFLINE=1 for everything else), its
    default endpoint a closed port, no token from the environment or a saved file."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", closed_port())
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_OIDC_RESOURCE", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def hub():
    with StandInHub() as standin:
        yield standin
    assert not standin.unexpected, f"requests the stand-in does not serve: {standin.unexpected}"


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def handmade_run(path: Path, status: str = "complete") -> Path:
    """A run directory written by hand (no model): manifest, run.json, an extract suite with its
    results, prompts and arrays, the lock, a temporary and a hidden file."""
    path.mkdir(parents=True)
    manifest = {"status": "complete" if status == "complete" else "running", "seed": 0,
                "model": {"spec": "hand-made", "family": "gpt_neox", "dtype": "float32", "device": "cpu"},
                "config": {"model": "hand-made", "model_identity": {"kind": "hub", "commit": "0123abcd"}},
                "suites": {"extract": {"status": status}}, "versions": {"geomprobe": "0.1.0", "torch": "2.13.0"}}
    (path / "manifest.json").write_text(json.dumps(manifest))
    (path / "run.json").write_text(json.dumps({"document": "geomprobe run"}))
    (path / "prompts.jsonl").write_text('{"id": "a", "text": "one"}\n')
    (path / "extract").mkdir()
    (path / "extract" / "results.json").write_text(json.dumps({"suite": "extract", "schema_version": 1}))
    (path / "extraction").mkdir()
    np.save(path / "extraction" / "values.npy", np.arange(12, dtype=np.float32).reshape(3, 4))
    (path / "extraction" / "meta.json").write_text("{}")
    (path / ".geomprobe.lock").write_text("pid 1: geomprobe run\n")
    (path / "extract" / ".results.json.ab12cd34.geomprobe-tmp").write_text("{half")
    (path / ".notes").write_text("mine")
    return path


SMALL = ["manifest.json", "prompts.jsonl", "run.json", "extract/results.json"]  # files_to_push order


def test_push_uploads_the_card_results_and_prompts_not_arrays_lock_or_temporaries(hub, tmp_path):
    run_dir = handmade_run(tmp_path / "run")
    url = push(run_dir, "tiny-results", token=TOKEN, endpoint=hub.url, with_report=False, private=True)
    assert url == f"{hub.url}/datasets/{OWNER}/tiny-results"
    received = hub.files(f"{OWNER}/tiny-results")
    assert sorted(received) == sorted(["README.md", *SMALL]) == sorted(url.files)
    for name in SMALL:
        assert received[name] == (run_dir / name).read_bytes(), name
    assert hub.repos[f"{OWNER}/tiny-results"]["private"]
    readme = received["README.md"].decode()
    assert "hand-made" in readme and "0123abcd" in readme and "not included" in readme

    arrays = push(run_dir, f"{OWNER}/with-arrays", token=TOKEN, endpoint=hub.url, with_report=False, with_arrays=True)
    received = hub.files(f"{OWNER}/with-arrays")
    assert received["extraction/values.npy"] == (run_dir / "extraction" / "values.npy").read_bytes()
    assert "extraction/meta.json" in received and "extraction/meta.json" in arrays.files
    assert not any(".geomprobe" in name or name.startswith(".") or "/." in name for name in received)


def test_a_branch_other_than_main_is_created_and_pushed_to(hub, tmp_path):
    run_dir = handmade_run(tmp_path / "run")
    url = push(run_dir, f"{OWNER}/runs", token=TOKEN, endpoint=hub.url, with_report=False, revision="tiny-v2")
    assert url.endswith("/datasets/standin-user/runs/tree/tiny-v2")
    assert "extract/results.json" in hub.files(f"{OWNER}/runs", "tiny-v2") and not hub.files(f"{OWNER}/runs")


@pytest.mark.parametrize("repo", ["a/b/c", "", "/name", "owner/", "-name", "name.", "na me", "a..b", "x" * 97])
def test_a_repository_name_that_is_not_owner_name_is_refused_before_any_request(hub, tmp_path, repo):
    run_dir = handmade_run(tmp_path / "run")
    with pytest.raises(ConfigError, match="is not a repository name: give OWNER/NAME or NAME"):
        push(run_dir, repo, token=TOKEN, endpoint=hub.url, with_report=False)
    assert hub.requests == []


def test_a_directory_that_is_no_run_is_refused(hub, tmp_path):
    with pytest.raises(RunDirectoryError, match="is not a run directory .no manifest.json."):
        push(tmp_path, "name", token=TOKEN, endpoint=hub.url)
    assert hub.requests == []


def test_an_unfinished_run_is_refused_unless_allowed_and_the_card_says_so(hub, tmp_path):
    run_dir = handmade_run(tmp_path / "run", status="failed")
    with pytest.raises(RunDirectoryError, match=r"is not finished \(extract failed; the run's status is running\): "
                                                r"rerun its command .* --allow-unfinished"):
        push(run_dir, "name", token=TOKEN, endpoint=hub.url, with_report=False)
    assert hub.requests == []
    push(run_dir, "name", token=TOKEN, endpoint=hub.url, with_report=False, allow_unfinished=True)
    assert "**Unfinished run:** extract failed" in hub.files(f"{OWNER}/name")["README.md"].decode()


def test_a_link_out_of_the_run_directory_refuses_the_push_before_any_request(hub, tmp_path):
    run_dir = handmade_run(tmp_path / "run")
    outside = tmp_path / "secret.json"
    outside.write_text('{"key": "not to be shared"}')
    (run_dir / "extract" / "notes.json").symlink_to(outside)
    with pytest.raises(RunDirectoryError, match="leads outside the run directory") as refused:
        push(run_dir, "name", token=TOKEN, endpoint=hub.url, with_report=False)
    assert "\n" not in str(refused.value) and hub.requests == [] and hub.repos == {}
    (run_dir / "extract" / "notes.json").unlink()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "results.json").write_text("{}")
    (run_dir / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(RunDirectoryError, match="linked/results.json leads outside"):
        files_to_push(run_dir)


def test_a_link_inside_the_run_directory_and_arrays_kept_elsewhere_are_fine(tmp_path):
    run_dir = handmade_run(tmp_path / "run")
    (run_dir / "extract" / "same.json").symlink_to(run_dir / "extract" / "results.json")
    scratch = tmp_path / "scratch"
    (run_dir / "extraction").rename(scratch)
    (run_dir / "extraction").symlink_to(scratch, target_is_directory=True)
    (run_dir / "a-link").symlink_to(run_dir / "extract", target_is_directory=True)  # walked before extract/
    chosen = files_to_push(run_dir)
    assert "extract/same.json" in chosen and "extract/results.json" in chosen
    assert not any(name.startswith("a-link/") for name in chosen)
    with pytest.raises(RunDirectoryError, match="extraction/meta.json leads outside"):
        files_to_push(run_dir, with_arrays=True)


def test_no_token_is_one_line(hub, tmp_path):
    run_dir = handmade_run(tmp_path / "run")
    with pytest.raises(HubError, match=r"^no Hugging Face token: pass --token, set HF_TOKEN, or run `hf auth login`"):
        push(run_dir, "name", endpoint=hub.url, with_report=False)
    assert hub.requests == []


def test_a_token_the_hub_refuses_is_one_line(tmp_path):
    run_dir = handmade_run(tmp_path / "run")
    with StandInHub(refuse=401) as refusing:
        with pytest.raises(HubError, match=r"refused the token \(401 Unauthorized\): give a valid write token") as err:
            push(run_dir, "owner/name", token="hf_wrong", endpoint=refusing.url, with_report=False)
    assert "\n" not in str(err.value) and refusing.repos == {}
    assert refusing.requests[0] == ("POST", "/api/repos/create")


def test_an_unreachable_hub_is_one_line(tmp_path):
    run_dir = handmade_run(tmp_path / "run")
    endpoint = closed_port()
    with pytest.raises(HubError, match=f"^cannot reach the Hub at {endpoint} .*: check the network, or --endpoint"):
        push(run_dir, "owner/name", token=TOKEN, endpoint=endpoint, with_report=False)


def test_the_command_line_prints_json_and_one_line_errors(hub, tmp_path):
    run_dir = handmade_run(tmp_path / "run")
    runner = CliRunner()
    done = runner.invoke(app, ["push", str(run_dir), "--repo", "owner/cli", "--token", TOKEN, "--endpoint", hub.url,
                               "--no-report", "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer == {"url": f"{hub.url}/datasets/owner/cli", "files": ["README.md", *SMALL]}
    plain = runner.invoke(app, ["push", str(run_dir), "--repo", "owner/cli", "--token", TOKEN, "--endpoint", hub.url,
                                "--no-report"])
    assert plain.stdout.strip() == f"pushed 5 files to {hub.url}/datasets/owner/cli"
    refused = runner.invoke(app, ["push", str(run_dir), "--repo", "a/b/c", "--json"])
    assert refused.exit_code == 2 and json.loads(refused.stdout)["kind"] == "ConfigError"
    assert len(refused.stderr.strip().splitlines()) == 1 and refused.stderr.startswith("error: --repo 'a/b/c'")


def test_card_of_a_handmade_run_escapes_what_would_break_a_table(tmp_path):
    manifest = {"status": "complete", "command": "geomprobe run --model 'a|b'\n--suite geometry",
                "model": {"spec": "org/model|v2\nsecond line", "family": "llama", "dtype": "bfloat16",
                          "quantize": "4bit", "device": "cuda"},
                "config": {"model_identity": {"kind": "local", "sha256": "feedbeef", "files": ["model.safetensors"]}},
                "backend": "hf", "seed": 3, "geomprobe_commit": "abc123-dirty",
                "versions": {"geomprobe": "0.1.0", "torch": "2.13.0", "transformers": "5.25.0"},
                "suites": {"geometry": {"status": "complete", "prompts": {"n": 75, "sha256": "0" * 64}},
                           "sula": {"status": "skipped", "why": "an encoder | has no\nnext token"}}}
    results = {"geometry": {"verdict": {"label": "partial", "n_met": 2, "n_criteria": 3,
                                        "summary": "partial (2/3): PC1 | high\nkeys <orthogonal>"},
                            "untrained_null": {"spec": "init:2", "description": "init-1000, init-1001",
                                               "copies": {"planned": 2, "used": 2}}}}
    text = card(Run(path=tmp_path / "nowhere", manifest=manifest, results=results), files=["run.json"])
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["tags"] == ["geomprobe", "interpretability"] and front["viewer"] is False
    assert front["geomprobe"]["model"] == "org/model|v2\nsecond line" and front["geomprobe"]["verdict"] == "partial"
    body = text.split("---\n", 2)[2]
    assert "**partial** (2/3 criteria met)" in body and "PC1 \\| high keys \\<orthogonal\\>" in body
    assert "| model | org/model\\|v2 second line |" in body and "| quantisation | 4bit |" in body
    assert "| sula | skipped | - | - | an encoder \\| has no next token |" in body
    assert "- command: geomprobe run --model 'a\\|b' --suite geometry" in body
    assert "init:2 (init-1000, init-1001), 2 of 2 planned used" in body and "seed 3" in body
    assert "torch 2.13.0, transformers 5.25.0" in body and "commit abc123-dirty" in body
    tables, rows = [], []  # every row of a table has as many cells as the table's header
    for line in [*body.splitlines(), ""]:
        if line.startswith("|"):
            rows.append(len(line.replace("\\|", "").split("|")))
        elif rows:
            tables.append(rows)
            rows = []
    assert len(tables) == 4 and all(len(set(table)) == 1 for table in tables), tables
    assert "weights | sha256 feedbeef of model.safetensors" in body


# ----------------------------------------------------------------------------------------------
# a real run, made by geomprobe.run on the built-in tiny model


@pytest.fixture(scope="module")
def geometry_run(tmp_path_factory):
    import geomprobe
    from geomprobe.config import RunConfig
    from geomprobe.suites.geometry import GeometryConfig

    out = tmp_path_factory.mktemp("push") / "tiny-neox"
    geomprobe.run(RunConfig(model="tiny-neox", out=str(out), device="cpu", limit=60),
                  GeometryConfig(n_boot=20, n_null=10, init_seeds=1, null="init:2", n_per_quintile=0), quiet=True)
    return out


@pytest.mark.slow
def test_a_real_run_pushed_has_its_files_byte_for_byte_and_a_card_with_the_verdict(hub, geometry_run):
    from geomprobe.analysis.null_comparison import status_words
    from geomprobe.results import load_run

    assert not (geometry_run / "report.html").exists()
    pushed = push(geometry_run, "owner/tiny", token=TOKEN, endpoint=hub.url)
    received = hub.files("owner/tiny")
    expected = files_to_push(geometry_run)
    assert "report.html" in expected and "geometry/results.json" in expected  # the report was built first
    assert sorted(received) == sorted(["README.md", *expected]) == sorted(pushed.files)
    for name in expected:
        assert received[name] == (geometry_run / name).read_bytes(), name
    assert not any(name.endswith((".npy", ".npz")) for name in received)

    readme = received["README.md"].decode()
    run = load_run(geometry_run)
    verdict = run.verdict()
    assert "# geomprobe run: tiny-neox" in readme and "| model | tiny-neox |" in readme
    assert f"**{verdict['label']}** ({verdict['n_met']}/{verdict['n_criteria']} criteria met)" in readme
    words = {status_words(f["vs_untrained"]) for f in run.headlines("geometry") if f["vs_untrained"]}
    assert words and all(word in readme for word in words)
    assert "init-1000, init-1001" in readme and "torch " in readme and "| geometry/results.json |" in readme

    with_arrays = push(geometry_run, "owner/tiny-arrays", token=TOKEN, endpoint=hub.url, with_arrays=True)
    received = hub.files("owner/tiny-arrays")
    arrays = [name for name in with_arrays.files if name.endswith(".npy")]
    assert "geometry/extraction/values.npy" in arrays
    for name in arrays:
        assert received[name] == (geometry_run / name).read_bytes(), name


@pytest.mark.slow
def test_the_command_line_pushes_a_real_run(hub, geometry_run):
    done = CliRunner().invoke(app, ["push", str(geometry_run), "--repo", "tiny-cli", "--token", TOKEN, "--endpoint",
                                    hub.url, "--json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["url"] == f"{hub.url}/datasets/{OWNER}/tiny-cli"
    assert answer["files"][0] == "README.md" and "report.html" in answer["files"]
    assert sorted(answer["files"]) == sorted(hub.files(f"{OWNER}/tiny-cli"))
