"""The revisions of one model that a --revisions value names: a list, `all`, or `log:N` over Pythia's
published checkpoints or a wind tunnel's saved ones, with `main` dropped where a listed checkpoint is
the same weights. Look-ups only: nothing loads."""

from __future__ import annotations

import math
import re
from pathlib import Path

from geomprobe.errors import ConfigError

# Pythia's published checkpoints (revisions stepN): step0, 1, 2, 4, ..., 512, then every 1000 steps
PYTHIA_STEPS = (0, *(2**i for i in range(10)), *range(1000, 143001, 1000))


def log_spaced(steps, n: int) -> list[int]:
    """n of `steps` spaced evenly in log(step + 1), always with the first and the last, sorted and
    unique: each target takes the nearest step not taken yet (the ends first)."""
    steps = sorted(set(int(s) for s in steps))
    if n < 2:
        raise ConfigError(f"log:{n}: pick at least 2 revisions (the first and the last)")
    if n > len(steps):
        raise ConfigError(f"log:{n} asks for more revisions than the {len(steps)} there are: use all, or a smaller N")
    positions = [math.log1p(s) for s in steps]
    low, high = positions[0], positions[-1]
    targets = [low + (high - low) * i / (n - 1) for i in range(n)]
    chosen: set[int] = set()
    for target in [targets[0], targets[-1], *targets[1:-1]]:
        best = min((i for i in range(len(steps)) if i not in chosen), key=lambda i: (abs(positions[i] - target), i))
        chosen.add(best)
    return [steps[i] for i in sorted(chosen)]


def _log_spaced_of(name: str, steps, item: str) -> list[int]:
    try:
        return log_spaced(steps, int(item.split(":", 1)[1]))
    except ConfigError as error:
        raise ConfigError(f"--revisions for {name}: {error}") from None


def _is_pythia(name: str) -> bool:
    from geomprobe.models.registry import MODELS

    info = MODELS.get(name)
    hub = info.hub_id if info is not None else name
    return name.startswith("pythia-") or hub.lower().startswith("eleutherai/pythia-")


def _windtunnel_dir(name: str) -> tuple[Path | None, bool]:
    """(directory holding the checkpoints, is a wind tunnel) for a wind-tunnel alias (its cached
    directory, None while it is not trained yet) or a wind-tunnel training directory."""
    from geomprobe.models.registry import MODELS

    info = MODELS.get(name)
    if info is not None:
        if not info.hub_id.startswith("windtunnel:"):
            return None, False
        from geomprobe.windtunnel.builtin import windtunnel_dir

        directory = windtunnel_dir(info.hub_id.split(":", 1)[1])
        return (directory if (directory / "metrics.json").exists() else None), True
    path = Path(name).expanduser()
    if path.is_dir() and (path / "windtunnel.json").is_file():
        return path, True
    return None, False


def model_revisions(name: str, text: str | None) -> list[str | None]:
    """The revisions of one model a --revisions value names (None: the main / final model)."""
    from geomprobe.models.loading import windtunnel_checkpoints, windtunnel_revision
    from geomprobe.models.registry import MODELS

    if text is None or not text.strip() or text.strip() == "main":
        return [None]
    info = MODELS.get(name)
    if info is not None and info.hub_id.startswith("builtin:"):
        raise ConfigError(f"--revisions {text}: built-in model '{name}' has no revisions; sweep it without "
                          f"--revisions, or as {name}@main")
    wt_dir, is_windtunnel = _windtunnel_dir(name)
    pythia = _is_pythia(name)
    out: list[str | None] = []
    for item in [part.strip() for part in text.split(",") if part.strip()]:
        if item == "all" or re.fullmatch(r"log:\s*\d+", item):
            if is_windtunnel:
                if wt_dir is None:
                    raise ConfigError(f"--revisions {item}: {name} is not trained yet, so it has no checkpoints to "
                                      f"list: run `geomprobe run --model {name}` once first, or name the revisions")
                steps = list(windtunnel_checkpoints(wt_dir) or {})
                if not steps:
                    raise ConfigError(f"--revisions {item}: {name} has no saved checkpoints (checkpoints/step-N.pt)")
                if item == "all":
                    out += [f"step-{s}" for s in steps] + [None]
                else:
                    out += [f"step-{s}" for s in _log_spaced_of(name, steps, item)]
            elif pythia:
                if item == "all":
                    out += [f"step{s}" for s in PYTHIA_STEPS]
                else:
                    out += [f"step{s}" for s in _log_spaced_of(name, PYTHIA_STEPS, item)]
            else:
                raise ConfigError(f"--revisions {item}: no list of checkpoints is known for {name} (Pythia models "
                                  "and wind-tunnel training directories have one): name its revisions, e.g. "
                                  "--revisions main,REV")
        elif item.startswith("log"):
            raise ConfigError(f"--revisions {item}: write log:N, e.g. log:10 (N log-spaced checkpoints)")
        elif item in ("main", "final") and (is_windtunnel or item == "main"):
            out.append(None)
        elif is_windtunnel:
            if wt_dir is not None:
                found = windtunnel_revision(wt_dir, item, name)
                if found is None:
                    raise ConfigError(f"--revisions: {name} has no saved checkpoints (checkpoints/step-N.pt)")
                out.append(found[0])
            else:  # an alias not trained yet: the job trains it, then checks the step
                match = re.fullmatch(r"step-?0*(\d+)", item)
                if match is None:
                    raise ConfigError(f"--revisions {item}: a wind tunnel's revisions are its checkpoints, step-N")
                out.append(f"step-{match.group(1)}")
        elif info is None and Path(name).expanduser().is_dir():
            raise ConfigError(f"--revisions: '{name}' is a local directory, which has no revisions (only wind-tunnel "
                              "training directories do): sweep it without --revisions")
        else:
            match = re.fullmatch(r"step(\d+)", item)
            if pythia and match and int(match.group(1)) not in PYTHIA_STEPS:
                near = min(PYTHIA_STEPS, key=lambda s: abs(s - int(match.group(1))))
                raise ConfigError(f"--revisions {item}: Pythia publishes no such checkpoint (step0, step1, 2, 4, ..., "
                                  f"512, then every 1000 to step143000); nearest: step{near}")
            out.append(item)
    unique = list(dict.fromkeys(out))
    if not unique:
        raise ConfigError("--revisions is empty: give revisions, all or log:N (or leave it out for the main model)")
    final = _final_revision(name) if None in unique else None
    if final is not None and final in unique:  # main is that checkpoint's weights: one run of them, by its step
        unique.remove(None)
    return unique


def _final_revision(name: str) -> str | None:
    """The checkpoint revision whose weights are the main / final model's, when one is known:
    Pythia's step143000 (its main branch), a wind tunnel's checkpoint at its last training step."""
    if _is_pythia(name):
        return f"step{PYTHIA_STEPS[-1]}"
    wt_dir, _ = _windtunnel_dir(name)
    if wt_dir is None:
        return None
    from geomprobe.errors import GeomprobeError
    from geomprobe.readers import read_metrics

    try:
        last = read_metrics(wt_dir / "metrics.json").get("steps")
    except GeomprobeError:
        return None
    from geomprobe.models.loading import windtunnel_checkpoints

    return f"step-{last}" if isinstance(last, int) and last in (windtunnel_checkpoints(wt_dir) or {}) else None
