"""Where the evidence sits in a wind-tunnel sequence, and which tokens make a task's hypothesis
frame (Q-K alignment and the layer-0 frame). Pure numpy: token ids in, masks out.

    mask = evidence_mask(task, tokens, query_positions)   # bool [batch, n_queries, seq_len]
    groups = frame_token_groups(task)                       # {"keys": ids, "values": ids}

Evidence is the set of earlier positions whose tokens decide the exact posterior at a query:
- recall: at the probe key, the position of the earlier occurrence of that key and the value
  right after it (the matching pair);
- bijection: at the t-th key, every earlier VALUE token (each revealed value rules one hypothesis
  out: Bayes is uniform over the values not yet seen, so the evidence is exactly the seen values);
- sula: at any ":" (the query or an example's), every earlier example LABEL token (the counts
  n1, n2 of the posterior);
- hmm: not defined here (every header token and observation enters the filter), so None.
Queries at padding (query_position < 0) get an all-False row.
"""

from __future__ import annotations

import numpy as np

EVIDENCE_DEFINITIONS = {
    "recall": "the matching pair: the earlier occurrence of the probed key and the value after it",
    "bijection": "every earlier value token (the values already revealed, which rule hypotheses out)",
    "sula": "every earlier example label token (the evidence counts n1, n2)",
}


def evidence_definition(task) -> str | None:
    return EVIDENCE_DEFINITIONS.get(task.name)


def evidence_mask(task, tokens, query_positions) -> np.ndarray | None:
    """bool [batch, n_queries, seq_len]: True at the evidence positions of each query (always
    strictly before it). tokens: int [batch, seq_len]; query_positions: int [batch, n_queries]
    (-1 marks an unused query slot). None when the task defines no evidence (hmm)."""
    tokens = np.asarray(tokens)
    query_positions = np.asarray(query_positions)
    if tokens.ndim != 2 or query_positions.ndim != 2 or len(tokens) != len(query_positions):
        raise ValueError(f"tokens must be [batch, seq_len] and query_positions [batch, n_queries], got shapes "
                         f"{tokens.shape} and {query_positions.shape}")
    if task.name not in EVIDENCE_DEFINITIONS:
        return None
    batch, seq_len = tokens.shape
    positions = np.arange(seq_len)
    earlier = positions[None, None, :] < query_positions[:, :, None]  # [batch, n_queries, T]
    if task.name == "bijection":
        mask = earlier & np.isin(tokens, task.value_ids)[:, None, :]
    elif task.name == "sula":
        mask = earlier & np.isin(tokens, task.answer_ids)[:, None, :]
    else:  # recall: the key equal to the query's token, and the position after it
        query_token = np.take_along_axis(tokens, np.maximum(query_positions, 0), axis=1)  # [batch, n_queries]
        key_here = (tokens[:, None, :] == query_token[:, :, None]) & earlier & np.isin(tokens, task.key_ids)[:, None]
        value_here = np.zeros_like(key_here)
        value_here[:, :, 1:] = key_here[:, :, :-1]
        mask = (key_here | value_here) & earlier
    return mask & (query_positions[:, :, None] >= 0)


def query_positions_of(supervised) -> np.ndarray:
    """int64 [batch, max supervised per row]: each row's supervised positions in order, -1 padded."""
    supervised = np.asarray(supervised, dtype=bool)
    width = max(1, int(supervised.sum(1).max()))
    out = np.full((len(supervised), width), -1, dtype=np.int64)
    for row, mask in enumerate(supervised):
        where = np.flatnonzero(mask)
        out[row, : len(where)] = where
    return out


def frame_token_groups(task) -> dict[str, np.ndarray]:
    """The task's token groups whose layer-0 keys form the hypothesis frame, the first the headline:
    bijection and recall their keys (then values), sula its labels (then carriers), hmm its
    observation symbols (then probability levels)."""
    if task.name in ("bijection", "recall"):
        return {"keys": np.asarray(task.key_ids), "values": np.asarray(task.value_ids)}
    if task.name == "sula":
        return {"labels": np.asarray(task.answer_ids), "carriers": np.asarray(task.carrier_ids)}
    if task.name == "hmm":
        return {"symbols": np.asarray(task.symbol_ids), "levels": np.asarray(task.level_ids)}
    raise ValueError(f"no frame tokens defined for task {task.name!r}")
