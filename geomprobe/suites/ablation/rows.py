"""The ablation suite's per-prompt rows (Run.rows, Run.table): each pass's label probabilities
(conditions/<pass>.json), read as p(L1) and the entropy over the two labels, one row per prompt."""

from __future__ import annotations

from geomprobe.errors import RunDirectoryError
from geomprobe.readers import read_data
from geomprobe.results import register_rows


def ablation_rows(run, condition: str | None) -> list[dict]:
    """Every pass's rows with a `condition` column (the pass's name), or one pass's."""
    import numpy as np

    from geomprobe.analysis.sula_metrics import restrict_to_labels

    work = run.path / "ablation" / "conditions"
    files = sorted(work.glob("*.json"))
    if not files:
        raise RunDirectoryError(f"{work} has no passes: run the ablation suite first")
    names = [f.stem for f in files]
    if condition is not None and condition not in names:
        raise RunDirectoryError(f"no ablation condition '{condition}' in {work}: it has {', '.join(names)}")
    rows = []
    for name, path in zip(names, files):
        if condition is not None and name != condition:
            continue
        data = read_data(path)
        if not isinstance(data, dict) or not isinstance(data.get("token_probs"), list):
            raise RunDirectoryError(f"{path} holds no token_probs: rerun the ablation suite to write it again")
        side = restrict_to_labels(np.array(data["token_probs"], dtype=float))
        rows += [{"condition": name, "prompt": i, "p_model_l1": float(side["p_model_l1"][i]),
                  "H_model": float(side["H_model"][i])} for i in range(len(side["H_model"]))]
    return rows


register_rows("ablation", ablation_rows)
