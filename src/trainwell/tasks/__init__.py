"""Tasks: what differs between classification, text and embedding runs (``TASKS`` registry)."""

from trainwell.tasks.base import TASKS, Task, get_task

from trainwell.tasks import classification  # noqa: E402,F401  (register the built-ins)

__all__ = ["TASKS", "Task", "get_task"]
