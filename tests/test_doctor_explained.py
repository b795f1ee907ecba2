"""What some case scripts' findings must say, beyond their id: the cause a beginner needs named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CASES = Path(__file__).parent / "doctor_cases"
pytestmark = pytest.mark.usefixtures("one_thread")

EXPLAINED = [
    ("shape-mismatch/buggy_lstm_view.py", "shape-mismatch", "batch_first=True"),  # not only the view
    ("shape-mismatch/buggy_dim_per_sample.py", "shape-mismatch", "`logits` (2,)"),  # the shapes on the user's line
    ("device-mismatch/buggy_layer_list_double.py", "device-mismatch", "self.layers = nn.ModuleList"),
    ("model-definition/buggy_layer_list.py", "model-definition", "blocks[0].weight"),
    ("model-definition/buggy_init_args.py", "model-definition", "`__int__`"),
    ("model-definition/buggy_init_forward.py", "model-definition", "`self.fc"),
    ("dataloader-bottleneck/buggy_short_run.py", "dataloader-bottleneck", "training steps"),  # how sure it is
    ("exploding-gradients/buggy_first_steps.py", "exploding-gradients", "very next loss"),
]


@pytest.mark.parametrize(("case", "check", "words"), EXPLAINED, ids=[c for c, _, _ in EXPLAINED])
def test_the_finding_names_the_cause(case: str, check: str, words: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.cli import main

    monkeypatch.chdir(tmp_path)
    out = tmp_path / "doctor.json"
    main(["doctor", "run", "--lang", "en", "--json", str(out), str(CASES / case)])
    capsys.readouterr()
    found = {f["id"]: f for f in json.loads(out.read_text())["findings"]}
    assert check in found, sorted(found)
    assert words in found[check]["message"] + found[check]["fix"]
