"""Tasks: what differs between classification, text and embedding runs (``TASKS`` registry)."""

from trainwell.tasks.base import TASKS, Task, get_task

from trainwell.tasks import classification, text  # noqa: E402,F401  (register the built-ins)
from trainwell.tasks import embedding  # noqa: E402,F401  (face verification)

__all__ = ["TASKS", "Task", "get_task"]
