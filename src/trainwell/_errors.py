"""Errors that reach the user as one clear paragraph instead of a traceback."""

from __future__ import annotations


class TrainwellError(Exception):
    """A problem with the user's input: the message says what is wrong and how to fix it.

    The CLI prints the message and exits with ``exit_code`` (2 by default);
    ``--debug`` shows the traceback as well.
    """

    exit_code: int = 2

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        self.fix = fix
        super().__init__(message if fix is None else f"{message}\n  Fix: {fix}")


class ConfigError(TrainwellError):
    """The configuration is invalid; the message lists every problem found."""


class DataError(TrainwellError):
    """A dataset could not be read: the message names the file, row or column."""
