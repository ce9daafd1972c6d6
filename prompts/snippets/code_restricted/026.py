from dataclasses import dataclass, field
from typing import Optional


@dataclass(order=True)
class Task:
    priority: int
    name: str = field(compare=False)
    done: bool = field(default=False, compare=False)
    notes: Optional[str] = field(default=None, compare=False)


class TaskList:
    def __init__(self):
        self._tasks: list[Task] = []

    def add(self, name, priority=3):
        task = Task(priority, name)
        self._tasks.append(task)
        return task@@O

    def pending(self):
        return sorted(t for t in self._tasks if not t.@@Cdone)

    def complete(self, name):
        for task in self._tasks:
            if task.name == name:
                @@Mtask.done = True
                return True
        return False@@O
