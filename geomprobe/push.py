"""Share a finished run directory on the Hugging Face Hub, as a dataset repository with a card.

    from geomprobe.push import push
    url = push("runs/pythia-410m", "me/pythia-410m-geometry")      # README.md (the card), run.json, ...
    url.files                                                       # what was uploaded, paths in the repo

What goes up (`files_to_push`): README.md, the card this module writes from the run's own files
(`card`); run.json and manifest.json; every suite's results.json and its other JSON and JSONL
files (prompts, samples, conditions); report.html (built first when missing, unless
with_report=False). Arrays (`*.npy`, `*.npz`, and the extraction folders that hold them with their
meta.json, request.json, prompts.jsonl and shards) only with with_arrays=True. Never the lock file,
temporaries of an interrupted write, hidden files, or anything whose real path is outside the run
directory: a symbolic link that leads out of it refuses the whole push before anything is sent.

A run that is not finished (its status, or a suite's, other than complete or skipped) is refused
with the suites that are not, unless allow_unfinished=True: the card then says so at its top.

The upload is huggingface_hub's HfApi: create_repo (a dataset, exist_ok) and one create_commit.
Every failure a user can cause or meet is one line (geomprobe.errors.HubError): no token, a token
the Hub refuses, a Hub that cannot be reached, a repository name that is not OWNER/NAME or NAME.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from geomprobe.errors import ConfigError, HubError, RunDirectoryError
from geomprobe.locks import LOCK_NAME
from geomprobe.rundir import MANIFEST, TEMPORARY_SUFFIX

REPORT = "report.html"
CARD = "README.md"
SMALL_SUFFIXES = (".json", ".jsonl")  # the suites' numbers, prompts and samples
ARRAY_SUFFIXES = (".npy", ".npz")
FINISHED = ("complete", "skipped")
# Hub repository names: letters, digits, '-', '_', '.', at most 96 characters, an optional owner
REPO_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?")


class Pushed(str):
    """What push returns: the dataset repository's URL (a str), with `files`, the paths uploaded
    (README.md first), and `commit`, the commit's id on the Hub."""

    files: list[str]
    commit: str | None

    def __new__(cls, url: str, files: list[str], commit: str | None = None):
        pushed = super().__new__(cls, url)
        pushed.files, pushed.commit = list(files), commit
        return pushed


def check_repo_name(repo: str) -> str:
    """`repo` when it is OWNER/NAME or NAME as the Hub spells them; ConfigError (one line) otherwise."""
    parts = repo.split("/") if isinstance(repo, str) else []
    if not (1 <= len(parts) <= 2 and all(REPO_PART.fullmatch(part) and ".." not in part and "--" not in part
                                         for part in parts)):
        raise ConfigError(f"--repo {repo!r} is not a repository name: give OWNER/NAME or NAME (letters, digits, "
                          "'-', '_' and '.', at most 96 characters each, not starting or ending with '-' or '.')")
    return repo


# ----------------------------------------------------------------------------------------------
# which files


def _is_array_folder(folder: Path) -> bool:
    """An extraction folder: it holds .npy arrays or the shards of an unfinished extraction."""
    try:
        return any(child.suffix == ".npy" or (child.name == "shards" and child.is_dir()) for child in folder.iterdir())
    except OSError:
        return False


def files_to_push(run_dir: str | Path, *, with_arrays: bool = False, with_report: bool = True) -> list[str]:
    """The run directory's files push uploads, as paths relative to it ('/'-separated, sorted;
    README.md, the card, is not a file of the directory and is not listed). Raises RunDirectoryError
    naming the first file or folder whose real path is outside the run directory (a symbolic link
    out of it): nothing is uploaded then."""
    root = Path(run_dir)
    real_root = root.resolve()
    chosen, seen = [], set()
    # A link to a folder inside the run directory is not followed (that folder is walked under its
    # own name); one leading out of it is, so that what would be chosen there is refused (arrays
    # kept on a scratch disk are fine while they stay local), each real folder once.
    for folder, subfolders, names in os.walk(root, followlinks=True):
        here = Path(folder)
        real = here.resolve()
        if real in seen:
            subfolders[:] = []
            continue
        seen.add(real)
        relative = here.relative_to(root)
        subfolders[:] = sorted(name for name in subfolders if not name.startswith(".") and not (
            (here / name).is_symlink() and _within((here / name).resolve(), real_root)))
        in_arrays = relative != Path(".") and any(_is_array_folder(root / part) for part in
                                                  [relative, *relative.parents] if part != Path("."))
        for name in sorted(names):
            if name.startswith(".") or name.endswith(TEMPORARY_SUFFIX) or name == LOCK_NAME:
                continue  # the lock, an interrupted write's temporary, hidden files
            if relative == Path("."):
                wanted = name in (MANIFEST, "run.json") or name.endswith(SMALL_SUFFIXES) or (
                    with_report and name == REPORT)
            elif in_arrays:
                wanted = with_arrays
            else:
                wanted = name.endswith(SMALL_SUFFIXES) or (with_arrays and name.endswith(ARRAY_SUFFIXES))
            if wanted:
                _inside(here / name, real_root, root)
                chosen.append((relative / name).as_posix())
    return sorted(chosen, key=lambda rel: (rel.count("/"), rel))


def _within(real: Path, real_root: Path) -> bool:
    return real == real_root or real_root in real.parents


def _inside(path: Path, real_root: Path, root: Path) -> Path:
    """The real path of `path`, which must lie inside the run directory."""
    real = path.resolve()
    if not _within(real, real_root):
        raise RunDirectoryError(f"{path} leads outside the run directory {root} (to {real}): push uploads only "
                                "files inside it; replace the link by a copy or remove it")
    return real


# ----------------------------------------------------------------------------------------------
# the card


def _text(value) -> str:
    """One line of text for the card's prose and tables: whitespace (newlines included) collapsed,
    and the characters that would end a table cell, open HTML or a code span escaped."""
    text = " ".join(str(value).split())
    for char in ("\\", "|", "`", "<", ">"):
        text = text.replace(char, "\\" + char)
    return text


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _text(value)
    return str(value) if isinstance(value, int) else format(value, ".3g")


def _yaml(value) -> str:
    """A YAML scalar: JSON's quoting, which YAML reads as the same string."""
    return json.dumps(str(value), ensure_ascii=False)


def _identity(manifest: dict) -> list[tuple[str, str]]:
    """(row, text) of what identifies the model beyond its name: the hub commit, or the hashes of
    the weights and tokenizer of a local directory; a GGUF source; a training checkpoint."""
    model = manifest.get("model") if isinstance(manifest.get("model"), dict) else {}
    identity = (manifest.get("config") or {}).get("model_identity") or {}
    rows = []
    if model.get("revision") or identity.get("revision"):
        rows.append(("revision", _text(model.get("revision") or identity.get("revision"))))
    if identity.get("kind") == "hub" or model.get("commit"):
        rows.append(("hub commit", _text(identity.get("commit") or model.get("commit") or "not recorded")))
    if identity.get("kind") == "local":
        rows.append(("weights", f"sha256 {_text(identity.get('sha256'))} of {_text(', '.join(identity.get('files') or []))}"))
        if identity.get("tokenizer_sha256"):
            rows.append(("tokenizer", f"sha256 {_text(identity['tokenizer_sha256'])} of "
                                      f"{_text(', '.join(identity.get('tokenizer_files') or []))}"))
    gguf = identity.get("gguf") or {}
    if gguf:
        rows.append(("GGUF source", f"{_text(gguf.get('gguf_file'))}, sha256 {_text(gguf.get('gguf_sha256'))}, "
                                    f"{_text(gguf.get('file_type'))}"))
    if identity.get("checkpoint"):
        rows.append(("checkpoint", f"{_text(identity['checkpoint'])}, sha256 {_text(identity.get('checkpoint_sha256'))}"))
    if identity and identity.get("kind") not in ("hub", "local"):  # a model object passed in
        rows.append(("identity", _text(", ".join(f"{k} {v}" for k, v in identity.items()
                                                 if isinstance(v, (str, int, float)) and v is not None))))
    return rows


def _model_section(run) -> list[str]:
    manifest = run.manifest
    model = manifest.get("model") if isinstance(manifest.get("model"), dict) else {}
    shape = model.get("shape") or {}
    rows = [("model", _text(run.model)), ("family", _text(model.get("family") or "-"))]
    if shape:
        rows.append(("shape", _text(f"{shape.get('n_layers')} layers, {shape.get('n_heads')} heads "
                                    f"({shape.get('n_kv_heads')} key/value), head width {shape.get('d_head')}, "
                                    f"width {shape.get('d_model')}")))
    rows += _identity(manifest)
    config = manifest.get("config") or {}
    rows += [("quantisation", _text(model.get("quantize") or config.get("quantize") or "none")),
             ("dtype", _text(manifest.get("dtype") or model.get("dtype") or config.get("dtype") or "-")),
             ("backend", _text(manifest.get("backend") or config.get("backend") or "-")),
             ("device", _text(model.get("device") or "-"))]
    return ["## Model", "", "| | |", "|---|---|", *(f"| {key} | {value} |" for key, value in rows), ""]


def _verdict_section(run) -> list[str]:
    from geomprobe.analysis.null_comparison import status_words

    lines = []
    verdict = run.verdict()
    if verdict is not None:
        lines += ["## Geometry verdict", "",
                  f"**{_text(verdict.get('label'))}** ({_number(verdict.get('n_met'))}/"
                  f"{_number(verdict.get('n_criteria'))} criteria met)", ""]
        if verdict.get("summary"):
            lines += [f"> {_text(verdict['summary'])}", ""]
    evidence = run.evidence()
    words = _text(evidence["words"])
    line = f"**{words[:1].upper()}{words[1:]}**"
    primary = evidence.get("primary")
    if primary:
        p_value = primary.get("p_value")
        line += (f"; the pre-declared comparison, {_text(primary.get('comparison'))}, is "
                 f"{_text(status_words(primary.get('status')))}"
                 + (f" (p {_number(p_value)})" if isinstance(p_value, (int, float)) else ""))
    if evidence.get("supporting_better_than_untrained"):
        line += f"; also better than untrained: {_text(', '.join(evidence['supporting_better_than_untrained']))}"
    lines += [line + ".", ""]
    if evidence.get("rule"):
        lines += [f"The rule: {_text(evidence['rule'])}.", ""]
    return lines


def _figures_section(run) -> list[str]:
    """Every suite's headline figures, each against the untrained copies in the one vocabulary
    (geomprobe.analysis.null_comparison.status_words)."""
    from geomprobe.analysis.null_comparison import status_words

    rows = []
    for suite in run.statuses():
        figures = sorted(run.headlines(suite), key=lambda f: f["unit"] != "verdict")  # the verdict first
        for figure in figures:
            if figure["unit"] == "verdict":
                value = f"{_text(figure['text'])} ({_number(figure['value'])}/{_number(figure['n'])})"
            else:
                value = _number(figure["value"]) if figure["value"] is not None else _text(figure["text"] or "-")
            ci = figure.get("ci95")
            interval = f"[{_number(ci[0])}, {_number(ci[1])}]" if ci else "-"
            words = status_words(figure["vs_untrained"]) if figure.get("vs_untrained") else "-"
            n = figure["n"] if figure["unit"] != "verdict" else None
            rows.append(f"| {_text(suite)} | {_text(figure['header'])} | {value} | {interval} | "
                        f"{_text(figure['unit'] or '-')} | {_number(n)} | {_number(figure.get('untrained_mean'))} | "
                        f"{_text(words)} |")
    if not rows:
        return []
    return ["## Headline figures", "",
            "Each against the untrained copies of the same architecture run through the same pipeline: "
            "better than, worse than or indistinguishable from untrained (METHODS.md section 5).", "",
            "| suite | statistic | value | 95% CI | unit | n | untrained mean | vs untrained |",
            "|---|---|---|---|---|---|---|---|", *rows, ""]


def _suites_section(run) -> list[str]:
    entries = run.manifest.get("suites") or {}
    rows = []
    for suite, status in run.statuses().items():
        entry = entries.get(suite) if isinstance(entries.get(suite), dict) else {}
        prompts = entry.get("prompts") if isinstance(entry.get("prompts"), dict) else {}
        said = entry.get("why") or entry.get("error") or ""
        rows.append(f"| {_text(suite)} | {_text(status)} | {_number(prompts.get('n'))} | "
                    f"{_text(str(prompts.get('sha256') or '-')[:16])} | {_text(said) or '-'} |")
    if not rows:
        return []
    return ["## Suites", "", "| suite | status | prompts | prompts sha256 | why / error |", "|---|---|---|---|---|",
            *rows, ""]


def _copies(run) -> list[str]:
    """'geometry: init:2 (init-1000, init-1001), 2 of 2 planned used' per suite that has untrained copies."""
    out = []
    for suite, results in run.results.items():
        null = (results or {}).get("untrained_null") if isinstance(results, dict) else None
        if not isinstance(null, dict):
            continue
        copies = null.get("copies") if isinstance(null.get("copies"), dict) else {}
        used = f", {copies['used']} of {copies['planned']} planned used" if "used" in copies and "planned" in copies else ""
        out.append(f"{suite}: {null.get('spec')} ({null.get('description') or '-'}){used}")
    return out


def _made_section(run, files: list[str] | None) -> list[str]:
    manifest = run.manifest
    versions = manifest.get("versions") or {}
    commit = manifest.get("geomprobe_commit")
    lines = ["## How it was made", "",
             f"- command: {_text(manifest.get('command') or 'not recorded')}",
             f"- geomprobe {_text(versions.get('geomprobe') or '?')}" + (f", commit {_text(commit)}" if commit else ""),
             f"- started {_text(manifest.get('started') or '?')}, ended {_text(manifest.get('ended') or '-')}",
             f"- seed {_number(manifest.get('seed', (manifest.get('config') or {}).get('seed')))}",
             "- untrained copies: " + (_text("; ".join(_copies(run))) or "none"),
             "- versions: " + (_text(", ".join(f"{name} {version}" for name, version in versions.items()
                                                if name != "geomprobe" and version)) or "not recorded"),
             "- every suite's options, prompts and full results: run.json", ""]
    if files is not None:
        lines += _files_section(files)
    return lines


FILE_KINDS = (  # (pattern of a path in the repository, what it is), the first match
    ("run.json", "the whole run as one document (`geomprobe.load_run` reads the folder)"),
    (MANIFEST, "provenance: configuration, versions, model identity, each suite's status"),
    (REPORT, "the self-contained HTML report (open it in a browser)"),
    ("*/results.json", "the suite's results, every estimate with its CI (RESULTS_SCHEMA.md)"),
    ("*prompts*.jsonl", "the prompts read"),
    ("*sample*.json", "the prompts sampled"),
    ("*/meta.json", "the arrays' layers, shapes and units"),
    ("*/request.json", "what the extraction was asked for"),
    ("*.npy", "an array"),
    ("*.npz", "arrays"),
)
FILES_LISTED = 40  # rows of the card's file table; the rest are counted


def _files_section(files: list[str]) -> list[str]:
    from fnmatch import fnmatchcase

    rows = [f"| {CARD} | this card |"]
    for name in files[:FILES_LISTED]:
        what = next((text for pattern, text in FILE_KINDS if fnmatchcase(name, pattern)), "-")
        rows.append(f"| {_text(name)} | {what} |")
    if len(files) > FILES_LISTED:
        rows.append(f"| {len(files) - FILES_LISTED} more files | listed in the repository |")
    arrays = sum(name.endswith(ARRAY_SUFFIXES) for name in files)
    note = (f"{arrays} arrays included." if arrays else
            "The extraction arrays are not included (`geomprobe push --with-arrays` includes them).")
    return ["## Files", "", note, "", "| file | what |", "|---|---|", *rows, ""]


def card(run, *, files: list[str] | None = None, repo: str | None = None) -> str:
    """The dataset card (README.md) of a run (a geomprobe.results.Run, or a run directory), built
    from its files only: YAML front matter (tags, the model spec, viewer off: a run is files, not a
    table), the model and its identity, the unfinished suites if any, the geometry verdict and the
    evidence of inference, every suite's headline figures against the untrained copies, the
    suites, how it was made, and `files` (paths in the repository, when given). Text from the run
    is put on one line with table-breaking characters escaped. `repo` names the repository in the
    reading-back example."""
    from geomprobe.results import Run, load_run

    run = run if isinstance(run, Run) else load_run(run)
    verdict = run.verdict()
    front = ["---", f"pretty_name: {_yaml('geomprobe run: ' + ' '.join(run.model.split()))}", "tags:",
             "- geomprobe", "- interpretability", "viewer: false", "geomprobe:", f"  model: {_yaml(run.model)}",
             f"  status: {_yaml(run.manifest.get('status') or 'unknown')}"]
    if verdict is not None:
        front.append(f"  verdict: {_yaml(verdict.get('label'))}")
    lines = [*front, "---", "", f"# geomprobe run: {_text(run.model)}", "",
             "Measurements of the geometry of Bayesian inference in a language model, with every statistic "
             "compared with untrained copies of the model, made by geomprobe (`geomprobe run`) and pushed with "
             "`geomprobe push`.", ""]
    unfinished = _unfinished(run)
    if unfinished:
        lines += [f"**Unfinished run:** {_text(unfinished)}.", ""]
    lines += _model_section(run) + _verdict_section(run) + _figures_section(run) + _suites_section(run)
    lines += _made_section(run, files)
    if repo is not None:
        lines += ["## Reading it back", "", "```python", "from huggingface_hub import snapshot_download",
                  "from geomprobe import load_run", "",
                  f"run = load_run(snapshot_download({json.dumps(repo)}, repo_type=\"dataset\"))",
                  "run.summary()", "```", ""]
    if run.notes:
        lines += ["## Notes", "", *(f"- {_text(note)}" for note in run.notes), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def _unfinished(run) -> str:
    """'' for a finished run, else what is not: 'sula failed, ablation running; the run's status is running'."""
    suites = [f"{suite} {status}" for suite, status in run.statuses().items() if status not in FINISHED]
    status = run.manifest.get("status")
    if not suites and status == "complete":
        return ""
    return ", ".join(suites) + ("; " if suites else "") + f"the run's status is {status or 'not recorded'}"


# ----------------------------------------------------------------------------------------------
# the upload


def _hub_errors():
    """(HfHubHTTPError, OfflineModeIsEnabled, the HTTP library's base error), from huggingface_hub's
    own classes, so that a connection refused or a timeout is caught whichever HTTP library it uses."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    transport = next((cls for cls in HfHubHTTPError.__mro__[1:] if cls.__name__ == "HTTPError"), OSError)
    return HfHubHTTPError, OfflineModeIsEnabled, transport


def _hub_error(error, endpoint: str, repo: str) -> HubError:
    status = getattr(getattr(error, "response", None), "status_code", None)
    said = " ".join((getattr(error, "server_message", None) or "").split())[:200]
    if status == 401:
        return HubError(f"the Hub at {endpoint} refused the token (401 Unauthorized): give a valid write token with "
                        "--token or HF_TOKEN (or `hf auth login`); nothing was uploaded")
    if status == 403:
        return HubError(f"the token may not write to {repo} on {endpoint} (403 Forbidden): use a token with write access "
                        "to its owner, or push to a repository of your own; nothing was uploaded")
    return HubError(f"the Hub at {endpoint} answered {status} for {repo}" + (f" ({said})" if said else "")
                    + "; nothing was committed")


def push(run_dir: str | Path, repo: str, *, private: bool = False, token: str | None = None,
         endpoint: str | None = None, with_arrays: bool = False, with_report: bool = True, revision: str = "main",
         allow_unfinished: bool = False) -> Pushed:
    """Upload a finished run directory to the Hugging Face Hub as the dataset repository `repo`
    (OWNER/NAME, or NAME under the token's owner; created when missing, `private` then), with its
    card, in one commit on the branch `revision` (created when missing). Returns the repository's
    URL (Pushed: a str with .files and .commit).

    token: default the one huggingface_hub finds (HF_TOKEN, or `hf auth login`'s). endpoint:
    default HF_ENDPOINT, else huggingface.co. with_report builds RUN/report.html first when the run
    has none; a run without run.json (made before it existed) gets one the same way, both under the
    run directory's lock. A run that another geomprobe process holds is refused.
    See the module's docstring for what goes up and what is refused; every refusal is one line."""
    from geomprobe.locks import DirectoryLock, is_locked
    from geomprobe.results import RUN_DOCUMENT, load_run, write_run_document

    check_repo_name(repo)
    root = Path(run_dir)
    if not (root / MANIFEST).is_file():
        raise RunDirectoryError(f"{root} is not a run directory (no {MANIFEST}): give a directory written by "
                                "`geomprobe run`")
    run = load_run(root)
    unfinished = _unfinished(run)
    if unfinished and not allow_unfinished:
        raise RunDirectoryError(f"{root} is not finished ({unfinished}): rerun its command to finish it, or pass "
                                "--allow-unfinished to push it as it is")
    holder = is_locked(root)
    if holder:
        raise RunDirectoryError(f"{root} is in use by another geomprobe process ({holder}): push it when that is done")
    files_to_push(root, with_arrays=with_arrays, with_report=False)  # a link out of the directory: refused now

    HfHubHTTPError, OfflineModeIsEnabled, transport = _hub_errors()
    from huggingface_hub import CommitOperationAdd, HfApi, constants, get_token

    token = token or get_token()
    if not token:
        raise HubError("no Hugging Face token: pass --token, set HF_TOKEN, or run `hf auth login` (a token with "
                       "write access)")
    if constants.is_offline_mode():
        raise HubError("huggingface_hub is offline (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set): unset it to push")
    api = HfApi(endpoint=endpoint.rstrip("/") if endpoint else None, token=token)
    where = api.endpoint

    if (with_report and not (root / REPORT).is_file()) or not (root / RUN_DOCUMENT).is_file():
        from geomprobe.report import build_report

        with DirectoryLock(root, what="run directory"):
            if not (root / RUN_DOCUMENT).is_file():
                write_run_document(root)
            if with_report and not (root / REPORT).is_file():
                build_report([root], root / REPORT)
        run = load_run(root)
    files = files_to_push(root, with_arrays=with_arrays, with_report=with_report)
    real_root = root.resolve()

    try:
        created = api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        repo_id = getattr(created, "repo_id", None) or repo
        text = card(run, files=files, repo=repo_id)
        operations = [CommitOperationAdd(path_in_repo=CARD, path_or_fileobj=text.encode("utf-8"))]
        operations += [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(_inside(root / rel, real_root, root)))
                       for rel in files]
        if revision != "main":
            api.create_branch(repo_id, branch=revision, repo_type="dataset", exist_ok=True)
        info = api.create_commit(repo_id, operations, repo_type="dataset", revision=revision,
                                 commit_message=f"geomprobe run: {' '.join(run.model.split())}",
                                 commit_description=f"{len(files) + 1} files pushed by geomprobe push")
    except OfflineModeIsEnabled:
        raise HubError("huggingface_hub is offline (HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE is set): unset it to "
                       "push") from None
    except HfHubHTTPError as error:
        raise _hub_error(error, where, repo) from None
    except transport as error:
        raise HubError(f"cannot reach the Hub at {where} ({type(error).__name__}: {' '.join(str(error).split())[:160]}):"
                       " check the network, or --endpoint / HF_ENDPOINT; nothing was committed") from None
    url = str(created).rstrip("/") + ("" if revision == "main" else f"/tree/{revision}")
    return Pushed(url, [CARD, *files], getattr(info, "oid", None))
