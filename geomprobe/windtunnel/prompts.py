"""Prompts in a wind-tunnel task's own language, for running suites on wind-tunnel models.

Each prompt is a sampled sequence cut at a supervised position, so the model's next-token
distribution there is the one scored against Bayes. The leading <bos> is left out of the text
(the task tokenizer adds it).
"""

from __future__ import annotations

import numpy as np

from geomprobe.prompts import Prompt


def task_prompts(task, n: int = 200, seed: int = 0, position: str | None = None) -> list[Prompt]:
    """n prompts; position "last" cuts at the last supervised position (the SULA query, the recall
    probe, the final bijection key) and "random" at a uniformly chosen supervised position;
    None: the task's own `prompt_position`."""
    position = position or task.prompt_position
    rng = np.random.default_rng(seed)
    batch = task.sample(n, rng)
    prompts = []
    for row in range(n):
        positions = np.flatnonzero(batch.supervised[row])
        cut = positions[-1] if position == "last" else rng.choice(positions)
        text = task.to_text(batch.tokens[row, 1: cut + 1])
        prompts.append(Prompt(id=f"{task.name}-{row:04d}", text=text, domain=task.name, source="windtunnel"))
    return prompts
