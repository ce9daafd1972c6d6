"""`--batch-size auto`: the largest batch that fits, found once on the device and remembered.

    size, how = auto_batch_size(loaded, tokens=512, start=32)

On a GPU the model runs forward passes of `tokens` random token ids (the run's longest prompt, as
the plan counts it) at growing batch sizes, doubling from the plan's recommendation until one runs
out of memory or its peak passes MEMORY_SHARE of the device (or the cap), and keeps the last that
ran; if the first already fails, it halves until one runs. The answer is remembered in the cache
(GEOMPROBE_CACHE/batch_sizes.json) under the model's identity, the device's name and memory, the
dtype and the token count, so a second run of the same model on the same card probes nothing. On a
CPU nothing is probed: the plan's batch (8) is kept, since host memory is not the limit there and a
larger batch buys little speed. The manifest records the batch size, the tokens it was found for
and how (probed, remembered, or the CPU default).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from geomprobe.errors import ConfigError

log = logging.getLogger(__name__)

MEMORY_SHARE = 0.9  # a probe whose peak passes this share of the device counts as not fitting
CAP = 1024  # never probe beyond this batch


def search(fits: Callable[[int], bool], start: int, cap: int = CAP) -> int:
    """The largest batch for which fits(batch) holds, searched by doubling from `start` (halving when
    `start` itself does not fit), assuming that what fits at b fits below b. ConfigError when not
    even one fits."""
    batch = max(1, min(start, cap))
    if fits(batch):
        while batch * 2 <= cap and fits(batch * 2):
            batch *= 2
        return batch
    while batch > 1:
        batch //= 2
        if fits(batch):
            return batch
    raise ConfigError("--batch-size auto: not even one prompt of the run's longest length fits on the device: "
                      "pass --max-tokens N to cut long prompts, or a smaller --dtype")


def _key(loaded, device_name: str, memory: int, tokens: int) -> str:
    from geomprobe.rundir import model_identity

    identity = model_identity(loaded)
    weights = identity.get("sha256") or identity.get("commit") or identity.get("source") or loaded.spec
    return f"{loaded.spec}|{weights}|{device_name}|{memory}|{loaded.dtype}|{loaded.quantize}|{tokens}"


def _remembered():
    from geomprobe.errors import GeomprobeError
    from geomprobe.paths import cache_dir
    from geomprobe.readers import read_data

    path = cache_dir() / "batch_sizes.json"
    try:
        data = read_data(path)
    except GeomprobeError:  # missing or damaged: measured again, and written afresh
        data = {}
    return path, data if isinstance(data, dict) else {}


def auto_batch_size(loaded, tokens: int, start: int) -> tuple[int, str]:
    """(batch size, how it was found) for `loaded` at prompts of `tokens` tokens (see the module docstring)."""
    import torch

    if not str(loaded.device).startswith("cuda") or not torch.cuda.is_available():
        return start, f"the plan's batch on {loaded.device} (only GPU memory is probed)"
    device = torch.device(loaded.device if ":" in str(loaded.device) else "cuda")
    props = torch.cuda.get_device_properties(device)
    key = _key(loaded, props.name, props.total_memory, tokens)
    path, known = _remembered()
    if isinstance(known.get(key), int) and known[key] >= 1:
        return known[key], f"remembered from an earlier probe on this {props.name} ({path})"
    vocab = int(getattr(loaded.model.config, "vocab_size", 1000) or 1000)

    def fits(batch: int) -> bool:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
        try:
            with torch.no_grad():
                ids = torch.randint(0, vocab, (batch, tokens), device=device)
                loaded.model(input_ids=ids, attention_mask=torch.ones_like(ids))
        except torch.cuda.OutOfMemoryError:
            return False
        finally:
            torch.cuda.empty_cache()
        return torch.cuda.max_memory_allocated(device) <= MEMORY_SHARE * props.total_memory

    batch = search(fits, start)
    known[key] = batch
    from geomprobe.rundir import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(known, indent=1, sort_keys=True))
    log.info("--batch-size auto: %d prompts of %d tokens fit on this %s (probed; remembered in %s)", batch, tokens,
             props.name, path)
    return batch, f"probed on this {props.name}: the largest power-of-two multiple of the plan's batch that ran"


def longest_prompt(planned) -> int:
    """The longest prompt, in tokens, of the plan's passes (at least 1)."""
    return max((sweep.lengths.max for suite in planned.suites for sweep in suite.sweeps if sweep.lengths.n),
               default=1)


__all__ = ["auto_batch_size", "longest_prompt", "search"]
