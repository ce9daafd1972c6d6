from enum import Enum


class Status(Enum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "@@Cdone"
    FAILED = "failed"@@O
