"""Crashes whose message forms no rule was written for (tests/doctor_errors_unseen, issue 26 section 1): every
script's crash gets an error finding at the line marked ``# <- fails`` that names the failing operation, and the
doctor never says "no problems found" after it. The tuning half must also keep its right causes; the confirmation
half is measured by ``evaluate.py``, not held to its causes here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "doctor_errors_unseen"


def _load_evaluator():  # under a name of its own: tests/doctor_heldout has an evaluate.py too
    spec = importlib.util.spec_from_file_location("doctor_errors_unseen_evaluate", HERE / "evaluate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


evaluate = _load_evaluator()  # the folder's own scoring, shared with its report

SCRIPTS = [p for half in evaluate.HALVES for p in evaluate.scripts(half)]

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(autouse=True)
def _distributions_validate_as_under_python() -> None:
    """Dynamo, once used in this process by an earlier test (torch.compile, torch.export), switches
    torch.distributions' argument validation off for good; a fresh ``python script.py`` has it on."""
    import torch

    torch.distributions.Distribution.set_default_validate_args(__debug__)


def test_both_halves_are_there() -> None:
    assert len(evaluate.scripts("tune")) >= 20 and len(evaluate.scripts("confirm")) >= 20


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_crash_is_placed_and_named(script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    report, shown = evaluate.run(script)
    assert report["internal_errors"] == []
    answers = evaluate.score(script, report, shown)
    finding = evaluate.error_finding(report)
    assert finding is not None, f"no error finding; printed:\n{shown[-2000:]}"
    assert answers["found"], "the doctor said 'no problems found' after a crash"
    assert answers["line"], f"{finding['where']} is not line {evaluate.failing_line(script)}"
    assert answers["op"], f"no operation named: {finding['message']}"
    if script.parent.name == "tune":
        assert answers["cause"], f"cause lost (wants one of {evaluate.cause_words(script)}): {finding['message']}"
