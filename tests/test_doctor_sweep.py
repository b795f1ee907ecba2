"""The doctor sweeps in their cheap form: per check, the harmless end of its sweep stays quiet and a
clearly harmful strength fires (benchmarks/doctor_sweep.py runs the whole curves)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_driver import load

sweep = load()
POINTS = [(s, strength) for s in sweep.SWEEPS for strength in s.quick]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "strength"), POINTS, ids=[f"{s.check}@{v:g}" for s, v in POINTS])
def test_sweep_point(case, strength: float, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    point = sweep.run_sweep(case, (strength,))[0]
    harmless = strength == case.strengths[0]
    assert point.fired is not harmless, f"{case.check} at {strength:g}: fired={point.fired}"
    if harmless:
        assert not point.others, f"false alarm on the harmless end: {point.others}"
