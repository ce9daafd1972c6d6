"""Wind tunnels: small tasks with an exact Bayesian posterior at every supervised position
(METHODS.md section 9)."""

from geomprobe.windtunnel.tasks import (
    IGNORE_INDEX,
    TASKS,
    AssociativeRecallTask,
    BijectionTask,
    HMMTask,
    SulaTask,
    Task,
    TaskBatch,
    binary_entropy_bits,
    entropy_bits,
    make_task,
    quantise_rows,
    sula_posterior,
)

__all__ = [
    "IGNORE_INDEX",
    "TASKS",
    "AssociativeRecallTask",
    "BijectionTask",
    "HMMTask",
    "SulaTask",
    "Task",
    "TaskBatch",
    "binary_entropy_bits",
    "entropy_bits",
    "make_task",
    "quantise_rows",
    "sula_posterior",
]
