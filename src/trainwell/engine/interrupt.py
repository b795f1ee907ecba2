"""Ctrl-C during training: the first one stops the run at the next step boundary (the checkpointer then saves
that exact step), a second one quits at once."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainwell.engine.trainer import Trainer


def catch_ctrl_c(trainer: Trainer) -> Callable[[], None]:
    """Turn the first Ctrl-C into ``trainer._interrupted`` (a stop at the next step boundary); returns what puts
    the handler back. Only where Python's own handler is in place, in the main thread of a single process (several
    processes would stop at different steps)."""
    trainer._interrupted = False
    if trainer.strategy.world_size > 1 or threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return lambda: None

    def pressed(signum: int, frame: Any) -> None:
        if trainer._interrupted:
            raise KeyboardInterrupt
        trainer._interrupted = True
        print("\ntrainwell: Ctrl-C: stopping after this step and saving it (press Ctrl-C again to quit at once)",
              file=sys.stderr)

    signal.signal(signal.SIGINT, pressed)
    return lambda: signal.signal(signal.SIGINT, signal.default_int_handler)
