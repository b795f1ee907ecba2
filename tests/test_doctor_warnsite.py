"""Warnings raised under the doctor's wrappers name the line they name without the doctor."""

from __future__ import annotations

import inspect
import warnings

import torch
import torch.nn.functional as F

from trainwell.doctor.session import Session


def _mse_warnings() -> list[tuple[str, int, str]]:
    column, row = torch.zeros(3, 1), torch.zeros(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
        F.mse_loss(column, row)  # torch warns with stacklevel=2: this line
        warnings.warn("from the test itself")  # stacklevel=1: the line below
        torch.nn.MSELoss()(column, row)  # through the module: torch's loss.py
    got = [(w.filename, w.lineno, str(w.message)[:20]) for w in caught]
    assert got[0][1] == line and got[1][1] == line + 1
    return got


def test_a_library_warning_names_the_callers_line_as_without_the_doctor() -> None:
    plain = _mse_warnings()
    with Session(checks=[]):
        watched = _mse_warnings()
    assert watched == plain
    assert plain[0][0] == __file__ and plain[2][0].endswith("loss.py")


def test_the_session_puts_warnings_warn_back() -> None:
    original = warnings.warn
    with Session(checks=[]):
        assert warnings.warn is not original
    assert warnings.warn is original


def _library(level: int) -> None:
    warnings.warn("deep", stacklevel=level)


def _wrapper(level: int) -> None:  # stands for one of the doctor's wrappers around a library call
    _library(level)


def _user(level: int, wrapped: bool) -> int:
    """Calls the library, through the wrapper or not; returns the line of the call."""
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    _wrapper(level) if wrapped else _library(level)
    return line


def _outer(level: int, wrapped: bool) -> tuple[int, int]:
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    return _user(level, wrapped), line


def test_each_stacklevel_counts_past_the_wrappers() -> None:
    from trainwell.doctor.warnsite import WRAPPERS, past_wrappers

    WRAPPERS.add(_wrapper.__code__)
    try:
        for level in (0, 1, 2, 3):
            seen = {}
            for wrapped in (False, True):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    original, warnings.warn = warnings.warn, past_wrappers(warnings.warn)
                    try:
                        user_line, outer_line = _outer(level, wrapped)
                    finally:
                        warnings.warn = original
                seen[wrapped] = (caught[0].filename, caught[0].lineno)
            # Levels 0 and 1 name the library's own line (the wrapper is not counted, so level 2 is still the
            # user's line, and 3 the line that called the user's function), wrapped or not.
            assert seen[True] == seen[False], level
            assert seen[True][1] == {2: user_line, 3: outer_line}.get(level, _library.__code__.co_firstlineno + 1)
    finally:
        WRAPPERS.discard(_wrapper.__code__)


def test_a_warning_shown_once_per_line_is_shown_once_per_script_line() -> None:
    """With Python's default filter, torch's size warning is shown once per calling line: under the doctor too
    (the record of lines shown is the script's, not the wrapper's single line)."""
    column, row = torch.zeros(3, 1), torch.zeros(3)

    def twice_from_two_lines() -> int:
        with warnings.catch_warnings(record=True) as caught:
            warnings.resetwarnings()
            warnings.simplefilter("default")
            for _ in range(2):
                F.mse_loss(column, row)
                F.mse_loss(column, row)
        return len(caught)

    plain = twice_from_two_lines()
    with Session(checks=[]):
        watched = twice_from_two_lines()
    assert plain == watched == 2
