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
