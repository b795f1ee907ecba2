"""params-recreated finds the real shapes of weights made inside the loop (a model and optimizer per batch, a
layer built inside forward(), an nn.Parameter re-wrapped each step, torch.randn weights next to an optimizer made
before the loop), names what is re-created, and is the one finding: what follows from it is folded in as its
symptoms (issue 26, sections 2 and 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_doctor_cases import run_doctor

CASES = Path(__file__).parent / "doctor_cases" / "params-recreated"

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("name, named", [
    ("buggy_model_in_loop.py", "`sgd` and `clf` are created inside the loop"),
    ("buggy_layer_in_forward.py", "Linear(in_features=32, out_features=3"),
    ("buggy_parameter_rewrapped.py", "model.weight"),
    ("buggy_stale_optimizer_randn.py", "W"),
])
def test_the_cause_is_named_and_alone(name: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    findings = run_doctor(CASES / name, tmp_path, capsys)["findings"]
    found = {f["id"]: f for f in findings}
    assert "params-recreated" in found
    assert named in found["params-recreated"]["message"]
    # Nothing else serious stands beside the cause: its consequences are listed inside it.
    others = [f["id"] for f in findings if f["id"] != "params-recreated" and f["severity"] in ("error", "warning")]
    assert others == [], others
