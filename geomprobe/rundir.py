"""Run directories: the unit of provenance (METHODS.md section 10).

Every file is written atomically (temporary file in the same folder, then os.replace), so an
interrupted run leaves either the old file or the new one, never half of one. The manifest says
what produced the directory; its `fingerprint` decides whether a rerun may resume it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import io
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from geomprobe.errors import RunDirectoryError

MANIFEST = "manifest.json"
PACKAGES = ("geomprobe", "torch", "transformers", "transformer_lens", "accelerate", "bitsandbytes", "numpy",
            "scipy", "scikit-learn", "tokenizers", "huggingface_hub")


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


UMASK = _current_umask()  # read once: os.umask can only be read by setting it
FILE_MODE = 0o666 & ~UMASK  # what open() would give: 0644 under umask 022
DIR_MODE = 0o777 & ~UMASK


def disk_error(error: OSError, path: Path) -> RunDirectoryError | None:
    """A one-line RunDirectoryError for a full disk or a permission problem, or None."""
    import errno

    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return RunDirectoryError(f"no space left on the device writing {path}: free some space (finished work "
                                 "is kept; rerun the same command to resume)")
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return RunDirectoryError(f"cannot write {path} ({error.strerror}): choose an --out you can write to")
    return None


# ----------------------------------------------------------------------------------------------
# writes stay inside the run: while a run writes its directory (confined), every path written or
# deleted through this module is resolved, symbolic links followed, and must lie below the run
# directory or geomprobe's cache before anything is opened

_ROOTS: list[tuple[Path, ...]] = []  # the confinements entered, innermost last (process-wide: threads too)


@contextlib.contextmanager
def confined(*roots):
    """Inside this block, writes and deletions through geomprobe.rundir (atomic_writer and the
    helpers below, which the suites, the extraction and --overwrite use) must land below one of
    `roots` (resolved now; None entries are skipped), else a one-line RunDirectoryError before
    anything is opened."""
    resolved = tuple(Path(os.path.realpath(root)) for root in roots if root is not None)
    _ROOTS.append(resolved)
    try:
        yield resolved
    finally:
        _ROOTS.pop()


def inside(path, what: str = "write") -> Path:
    """`path`, after checking that it lands inside the confinement (when one is entered): its folder
    resolved with every symbolic link followed, its own name kept (a link there is replaced or
    deleted, never followed). Raises RunDirectoryError naming where it resolves to."""
    path = Path(path)
    if not _ROOTS:
        return path
    roots = _ROOTS[-1]
    target = Path(os.path.realpath(path.parent)) / path.name
    if any(target == root or root in target.parents for root in roots):
        return path
    raise RunDirectoryError(f"refusing to {what} {path}: it resolves to {target}, outside the run directory "
                            f"{roots[0]} (a symbolic link on the way?): remove the link, or give --out a directory "
                            "on the file system where the run should live")


def make_dirs(path) -> Path:
    """mkdir -p, inside the confinement."""
    path = inside(path, "create")
    path.mkdir(parents=True, exist_ok=True)
    return path


def remove_path(path) -> None:
    """Delete a file, a folder (with what it holds) or a symbolic link (the link only, never what it
    points at), inside the confinement; nothing when it is not there."""
    import shutil

    path = inside(path, "delete")
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path)


# the suffixes of the files geomprobe writes in a run directory: a folder of such a name is never its own
WRITTEN_SUFFIXES = (".json", ".jsonl", ".npy", ".npz", ".html", ".pt", ".txt")


def refuse_folder(path) -> None:
    """A one-line RunDirectoryError when `path`, a file geomprobe is about to write, is a folder (a
    real one: a symbolic link there is replaced, never followed). os.replace cannot put a file in
    its place, and geomprobe does not delete a folder it did not make (a rerun with --overwrite and the
    same configuration keeps it too)."""
    import shlex

    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        raise RunDirectoryError(f"{path} is a folder where geomprobe writes a file: remove it (rm -r "
                                f"{shlex.quote(str(path))}) and run the same command again")


@contextlib.contextmanager
def atomic_writer(path: Path):
    """A binary file handle on a temporary file beside `path` (the umask's mode), fsynced and
    os.replace'd onto `path` on exit; removed on error. A full disk or a permission problem is a
    one-line RunDirectoryError; a path outside the confinement (confined) is refused first, and so
    is a folder in the place of `path` (refuse_folder)."""
    path = inside(path)
    refuse_folder(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMPORARY_SUFFIX, dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), FILE_MODE)  # mkstemp makes 0600
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as error:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        friendly = disk_error(error, path) if isinstance(error, OSError) else None
        if friendly is not None:
            raise friendly from None
        raise


def own_folder(folder, overwrite: bool = False, owner: str = "run", replaceable: bool = True) -> Path:
    """`folder`, where a run, a training run or a sweep (`owner`) writes inside its directory: a
    symbolic link there (to a folder elsewhere, or to anything else) is refused in one line before
    anything is written, or with overwrite replaced by a folder of the owner's own (the link removed,
    one warning line; what it pointed at is untouched). replaceable: whether the refusal offers
    --overwrite (a sweep's own folders are only refused)."""
    import warnings

    folder = Path(folder)
    if not folder.is_symlink():
        return folder
    target = os.path.realpath(folder)
    if not (overwrite and replaceable):
        offer = (f", or pass --overwrite to replace it with a folder of the {owner}'s own ({target} is left as it is)"
                 if replaceable else "")
        raise RunDirectoryError(f"{folder} is a symbolic link to {target}: a {owner} writes only inside its own "
                                f"directory; remove the link (rm {folder}){offer}")
    remove_path(folder)
    warnings.warn(f"{folder} was a symbolic link to {target}: replaced by a folder of the {owner}'s own ({target} "
                  "is left as it is)", stacklevel=2)
    return folder


def output_file(path, option: str = "-o", example: str = "report.html") -> Path:
    """`path`, a file a command writes where the user says (`report -o FILE`), checked before anything
    is computed: a symbolic link there is refused (geomprobe never writes through one, and does not
    replace the user's link either: give the target), and so is a folder, a FIFO, a device or a
    socket, or a path below a file (ConfigError, one line). The write itself goes through atomic_writer."""
    import stat

    from geomprobe.errors import ConfigError
    from geomprobe.files import what_it_is

    path = Path(path)
    if path.is_symlink():
        target = os.path.realpath(path)
        raise ConfigError(f"{option} {path} is a symbolic link to {target}: geomprobe neither writes through a link "
                          f"nor replaces it; give {option} {target} to write there, or another file name")
    try:
        mode = os.lstat(path).st_mode
    except OSError:  # not there (or below a file: said next)
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise ConfigError(f"{option} {path} is a directory: give the {example.split('.')[0]}'s file name, e.g. "
                          f"{option} {path / example}")
    if mode is not None and not stat.S_ISREG(mode):
        raise ConfigError(f"{option} {path} is {what_it_is(mode)}, not a regular file: choose another file name")
    if any(parent.exists() and not parent.is_dir() for parent in path.resolve().parents):
        raise ConfigError(f"{option} {path}: a folder on that path is a file; choose another file name")
    return path


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically (geomprobe.rundir.atomic_writer)."""
    with atomic_writer(path) as handle:
        handle.write(data)


# what atomic_write_bytes leaves if killed mid-write: its own suffix, so that no user file that merely
# looks like a temporary (.bashrc.original, .thesis.tex.20240101) is ever taken for one
TEMPORARY_SUFFIX = ".geomprobe-tmp"
TEMPORARY = re.compile(r"\.(?P<name>.+)\.[a-z0-9_]{8}" + re.escape(TEMPORARY_SUFFIX))
SUITE_FOLDER = re.compile(r"[a-z][a-z0-9_-]*")  # a suite's folder name: never '.', '..' or a path


def remove_temporaries(directory: Path) -> list[Path]:
    """Delete the temporary files of interrupted atomic writes below `directory` (only safe while
    no other process writes there: call it with the directory's lock held). Returns them."""
    removed = []
    for path in Path(directory).rglob(".*"):
        match = TEMPORARY.fullmatch(path.name)
        if match and path.is_file() and not path.name.startswith(".geomprobe.lock"):
            remove_path(path)
            removed.append(path)
    return removed


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj) -> str:
    """`obj` as indented JSON, written atomically; returns the sha256 (hex) of the bytes written
    (a suite's results.json keeps it in the manifest: geomprobe.integrity)."""
    data = (json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n").encode("utf-8")
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


def atomic_save_npy(path: Path, array: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.save(buffer, array)
    atomic_write_bytes(path, buffer.getvalue())


def atomic_save_npz(path: Path, **arrays: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def package_versions() -> dict[str, str | None]:
    from importlib import metadata

    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> str | None:
    """The commit of the geomprobe checkout this code runs from (with '-dirty' if modified)."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (commit + ("-dirty" if dirty else "")) or None


def fingerprint(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=_json_default).encode()).hexdigest()[:16]


def _differences(new: dict, old: dict, prefix: str = "") -> list[str]:
    """'seed 0 -> 1', 'model_identity.sha256 ...': the keys whose values differ, nested dicts walked."""
    out = []
    for key in sorted(set(new) | set(old)):
        a, b = new.get(key), old.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{prefix}{key}.")
        elif json.dumps(a, sort_keys=True, default=_json_default) != json.dumps(b, sort_keys=True, default=_json_default):
            def short(value):
                text = json.dumps(value, default=_json_default)
                return text if len(text) <= 40 else text[:37] + "..."

            out.append(f"{prefix}{key} {short(b)} -> {short(a)}")
    return out


def check_out(path: str | Path, model_source: str | None = None, overwrite: bool = False) -> Path:
    """Refuse, with one line and before anything is written, an --out that cannot or should not
    hold a run directory: empty, the current directory, a file or below one, a model directory, a
    directory of other files (unless overwrite: its files are then kept), or one not writable."""
    from geomprobe.errors import ConfigError
    from geomprobe.locks import LOCK_NAME

    if not str(path).strip():
        raise ConfigError("--out is empty: give a run directory, e.g. --out runs/mine (default runs/<model>)")
    path = Path(path).expanduser()
    resolved = path.resolve()
    if resolved == Path.cwd().resolve():
        raise ConfigError(f"--out {path} is the current directory: a run directory is a folder of its own, "
                          "e.g. --out runs/mine")
    if path.exists() and not path.is_dir():
        raise ConfigError(f"--out {path} is a file, not a directory: choose another --out")
    existing = resolved
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(f"--out {path} lies below {existing}, which is a file: choose another --out")
    if model_source and Path(model_source).is_dir() and Path(model_source).resolve() == resolved:
        raise ConfigError(f"--out {path} is the model's own directory: write the run somewhere else")
    if resolved.is_dir() and not (resolved / MANIFEST).exists():
        if (resolved / "config.json").exists():
            raise ConfigError(f"--out {path} holds a model (config.json) and no run: write the run somewhere else")
        others = [child.name for child in resolved.iterdir() if child.name != LOCK_NAME]
        if others and not overwrite:
            raise ConfigError(f"--out {path} holds other files ({', '.join(sorted(others)[:3])}"
                              f"{', ...' if len(others) > 3 else ''}) and no geomprobe manifest: choose a new or "
                              "empty directory, or pass --overwrite to write into it (its files are kept)")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {path}: {existing} is not writable by this user; choose another --out")
    return path


class RunDirectory:
    """A results directory. `open()` creates it or checks that a rerun matches what is there.

    Only one process writes a run directory at a time (`lock()`, geomprobe.locks). `--overwrite`
    removes only what geomprobe wrote there (the manifest, the suites' folders it lists, the
    report), never other files."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def lock(self):
        from geomprobe.locks import DirectoryLock

        return DirectoryLock(self.path, what="run directory")

    def read_manifest(self) -> dict | None:
        """manifest.json (geomprobe.readers.read_manifest: bounded, checked against its schema), or
        None when there is none; anything unreadable is a one-line RunDirectoryError naming the fix."""
        from geomprobe.readers import read_manifest

        if not self.manifest_path.exists() and not self.manifest_path.is_symlink():
            return None
        return read_manifest(self.manifest_path)

    def check(self, config: dict, suites: dict[str, dict] | None = None, *, overwrite: bool = False) -> dict:
        """What open() would do, without writing: raises RunDirectoryError when the directory holds
        a run of another configuration, or a finished suite run with other options (unless
        overwrite). Returns {"existing": manifest or None, "replace_all": bool, "replace": [suites]}."""
        existing = self.read_manifest()
        plan = {"existing": existing, "replace_all": False, "replace": []}
        if existing is None:
            return plan
        if existing.get("fingerprint") != fingerprint(config):
            if not overwrite:
                changed = _differences(config, existing.get("config", {})) or ["fingerprint"]
                raise RunDirectoryError(f"{self.path} holds a run with a different configuration (differs in: "
                                        f"{'; '.join(changed)}); use another --out or pass --overwrite")
            plan["replace_all"] = True
            return plan
        for name, options in (suites or {}).items():
            before = (existing.get("suites") or {}).get(name) or {}
            if before.get("status") != "complete" or "options" not in before:
                continue
            normal = json.loads(json.dumps(options, default=_json_default))
            if normal != before["options"]:
                if not overwrite:
                    changed = _differences(normal, before["options"])
                    raise RunDirectoryError(f"the {name} suite in {self.path} finished with other options (differs "
                                            f"in: {'; '.join(changed)}); pass --overwrite to redo it, or use another "
                                            "--out")
                plan["replace"].append(name)
        return plan

    def _remove_own(self, existing: dict, suites: list[str] | None = None, registered=None) -> None:
        """Delete what geomprobe wrote: the listed suites' folders (all the manifest names when
        suites is None, with the manifest and report), nothing else. A folder is removed only when
        its name is a suite's (registered: the suite registry's names, when given) and it is a real
        folder directly inside the run directory: a manifest's text never names what is deleted. A
        symbolic link in their place is left for own_folder (what it points at is never touched)."""
        names = list((existing.get("suites") or {})) if suites is None else suites
        root = self.path.resolve()
        for name in names:
            if not isinstance(name, str) or not SUITE_FOLDER.fullmatch(name):
                continue
            if registered is not None and name not in registered:
                continue
            target = self.path / name
            if target.is_dir() and not target.is_symlink() and target.resolve().parent == root:
                remove_path(target)
        if suites is None:
            for name in (MANIFEST, "report.html", "prompts.jsonl", "extraction"):
                target = self.path / name
                if not (target.is_symlink() and target.is_dir()):  # a linked folder: own_folder's to replace
                    remove_path(target)

    def refuse_folders(self, suites) -> None:
        """Before any suite runs: a one-line RunDirectoryError (refuse_folder) for a folder where the
        run writes a file: run.json, report.html, prompts.jsonl, or a name with a file's suffix
        (WRITTEN_SUFFIXES) anywhere in the folders of `suites` or in extraction/. Symbolic links are
        not followed (own_folder refuses them)."""
        for name in ("run.json", "report.html", "prompts.jsonl"):
            refuse_folder(self.path / name)
        for name in [*suites, "extraction"]:
            folder = self.path / name
            if folder.is_symlink() or not folder.is_dir():
                continue
            for parent, folders, _ in os.walk(folder):
                for child in folders:
                    if child.endswith(WRITTEN_SUFFIXES):
                        refuse_folder(Path(parent) / child)

    def own_folder(self, name: str, overwrite: bool = False) -> Path:
        """<run>/<name>, where a suite writes: geomprobe.rundir.own_folder."""
        return own_folder(self.path / name, overwrite)

    def open(self, config: dict, *, overwrite: bool = False, extra: dict | None = None,
             suites: dict[str, dict] | None = None, registered=None) -> dict:
        """Start or resume a run with `config` (what determines its results); `suites`: name ->
        options of the suites about to run. A directory made by a different config, or holding a
        finished suite with other options, is refused unless overwrite=True (which then removes
        only what geomprobe wrote); a folder where the run writes a file is refused (refuse_folders)."""
        plan = self.check(config, suites, overwrite=overwrite)
        existing = plan["existing"]
        if plan["replace_all"]:
            self._remove_own(existing, registered=registered)
            existing = None
        elif plan["replace"]:
            self._remove_own(existing, plan["replace"], registered=registered)
            for name in plan["replace"]:
                existing["suites"].pop(name, None)
        self.refuse_folders(suites or {})
        make_dirs(self.path)
        remove_temporaries(self.path)  # left by a process killed mid-write (we hold the lock)
        manifest = existing or {"created": now()}
        manifest.update({
            "fingerprint": fingerprint(config),
            "config": config,
            "status": "running",
            "started": now(),
            "ended": None,
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            "versions": package_versions(),
            "geomprobe_commit": git_commit(),
            **(extra or {}),
        })
        manifest.setdefault("suites", {})
        self.write_manifest(manifest)
        return manifest

    def write_manifest(self, manifest: dict) -> None:
        atomic_write_json(self.manifest_path, manifest)

    def update(self, **fields) -> dict:
        manifest = self.read_manifest() or {}
        manifest.update(fields)
        self.write_manifest(manifest)
        return manifest


TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.json", "vocab.txt", "merges.txt", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model")


GGUF_INFO = "gguf.json"  # what geomprobe.models.gguf writes beside a model it dequantized from a GGUF


def read_gguf_info(directory: str | Path) -> dict | None:
    """gguf.json of a folder geomprobe dequantized from a GGUF file (the file, its SHA-256 and
    quantisation), or None for any other folder or an unreadable file."""
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_data

    path = Path(directory) / GGUF_INFO
    if not path.is_file():
        return None
    try:
        info = read_data(path)
    except GeomprobeError:
        return None
    return info if isinstance(info, dict) else None


def model_identity(loaded) -> dict:
    """What the model is, beyond its name: the resolved hub commit, or for a local directory (a
    built-in or wind-tunnel cache included) a hash of its config and weight files, and of its
    tokenizer's files (tokenizer_sha256: a replaced tokenizer is another model). Files up to
    256 MiB are hashed whole; larger ones by size, modification time and their first and last
    16 MiB (hashing many GB on every run would cost minutes). A wind-tunnel training checkpoint
    loaded as a revision (`runs/wt@step-200`) adds the revision and its checkpoint file's hash, so
    two checkpoints of one directory never share a run directory."""

    def hashed(paths: list[Path]) -> str:
        digest = hashlib.sha256()
        limit, edge = 256 << 20, 16 << 20
        for path in paths:
            size = path.stat().st_size
            digest.update(f"{path.name}\0{size}\0".encode())
            with path.open("rb") as handle:
                if size <= limit:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        digest.update(block)
                else:
                    digest.update(str(path.stat().st_mtime_ns).encode())
                    digest.update(handle.read(edge))
                    handle.seek(size - edge)
                    digest.update(handle.read(edge))
        return digest.hexdigest()[:16]

    if getattr(loaded, "in_memory", None):  # a model object passed in: its class and hashes of what it holds
        return loaded.memory_identity()
    source = Path(str(loaded.source))
    if not source.is_dir():
        return {"kind": "hub", "source": str(loaded.source), "revision": loaded.revision, "commit": loaded.commit}
    weights = sorted(p for p in source.iterdir() if p.is_file() and (
        p.name == "config.json" or p.suffix in (".safetensors", ".bin", ".pt", ".pth", ".gguf")
        or p.name.endswith(".index.json")))
    identity = {"kind": "local", "files": [p.name for p in weights], "sha256": hashed(weights)}
    tokenizer = sorted(p for p in source.iterdir() if p.is_file() and p.name in TOKENIZER_FILES)
    if tokenizer:  # the same weights with another tokenizer give other token ids: another model
        identity.update(tokenizer_files=[p.name for p in tokenizer], tokenizer_sha256=hashed(tokenizer))
    converted = read_gguf_info(source)
    if converted is not None:  # dequantized from a GGUF: which file, its hash and quantisation
        identity["gguf"] = {key: converted.get(key) for key in ("gguf_file", "gguf_sha256", "file_type", "tensor_types",
                                                                "source", "converted_by")}
    checkpoint = getattr(loaded, "checkpoint", None)
    if checkpoint:
        path = Path(checkpoint)
        identity.update(revision=loaded.revision, checkpoint=f"{path.parent.name}/{path.name}",
                        checkpoint_sha256=hashed([path]))
    return identity
