"""After a crash the doctor never says "no problems found": it names the line, the failing operation and its
tensors, and a cause or plainly that it has none (issue 26, section 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trainwell._errors import ConfigError
from trainwell.cli import main
from trainwell.doctor.session import Session

DOT = "import torch\na = torch.ones(4, 3)\nb = torch.ones(4, 3)\nprint(torch.dot(a, b))\n"
PLAIN = "def f():\n    raise ValueError('boom')\nf()\n"
NONE_FOUND = ("no problems found", "没有发现问题")


def _crash(tmp_path: Path, name: str, source: str, lang: str, capsys: pytest.CaptureFixture[str]) \
        -> tuple[str, dict[str, Any]]:
    """Runs the script under ``doctor run``, which must exit 1; (its stdout and stderr, its script-error finding)."""
    script = tmp_path / name
    script.write_text(source)
    out = tmp_path / "d.json"
    assert main(["doctor", "run", "--lang", lang, "--json", str(out), str(script)]) == 1
    streams = capsys.readouterr()
    return streams.out + streams.err, {f["id"]: f for f in json.loads(out.read_text())["findings"]}["script-error"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_torch_dot_on_matrices_is_explained_from_its_operands(tmp_path: Path, lang: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    shown, f = _crash(tmp_path, "dot.py", DOT, lang, capsys)
    assert not any(words in shown for words in NONE_FOUND)
    assert f["where"].endswith("dot.py:4")
    assert f["evidence"]["operation"] == "torch.dot"
    assert [o["shape"] for o in f["evidence"]["operands"]] == [[4, 3], [4, 3]]
    assert "(4, 3)" in f["message"] and f["evidence"]["explained"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_error_outside_torch_says_there_is_no_explanation(tmp_path: Path, lang: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    shown, f = _crash(tmp_path, "plain.py", PLAIN, lang, capsys)
    assert not any(words in shown for words in NONE_FOUND)
    assert f["where"].endswith("plain.py:2") and not f["evidence"]["explained"]
    assert ("no explanation beyond the traceback" in f["message"]) or ("没有比回溯更多的解释" in f["message"])


def test_trainwells_own_errors_are_not_a_script_error() -> None:
    """``trainwell train`` and ``fit`` explain their own errors (value and fix, no traceback): the doctor adds
    nothing."""
    with Session(on_finding=lambda f: None) as session:
        session.error(ConfigError("train.lr must be positive"))
        session.end()
    assert "script-error" not in {f.id for f in session.findings}


def test_inside_fit_a_failing_layer_is_explained_and_a_users_own_raise_is_left_alone(tmp_path: Path) -> None:
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    from trainwell.doctor.callback import DoctorCallback
    from trainwell.engine.callbacks import Callback
    from trainwell.engine.trainer import Trainer

    class Stop(Callback):
        def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
            raise KeyError("the user's own stop")

    def ids(model: nn.Module, extra: list[Callback]) -> dict[str, Any]:
        data = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 3, (16,))), batch_size=8)
        doctor = DoctorCallback(run_dir=tmp_path, show=False)
        trainer = Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1), data,
                          epochs=1, callbacks=[doctor, *extra])
        with pytest.raises(Exception):
            trainer.fit()
        return {f.id: f for f in doctor.findings}

    class Dot(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.ones(8, 4))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.dot(x, self.w)  # dot wants two vectors

    wrong = ids(Dot(), [])
    assert wrong["script-error"].evidence["operation"] == "torch.dot"
    assert [o["shape"] for o in wrong["script-error"].evidence["operands"]] == [[8, 4], [8, 4]]
    assert "script-error" not in ids(nn.Sequential(nn.Linear(4, 3)), [Stop()])


MATMUL = "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2)\nx = torch.randn(8, 5)\nout = model(x)\n"
SUMMARY = {"en": ("The script stopped with an error at", "shape-mismatch explains it",
                  "the doctor has no explanation beyond the traceback"),
           "zh": ("脚本在", "shape-mismatch 给出了解释", "doctor 对此没有比回溯更多的解释")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_summary_names_the_stopping_line_when_another_check_explained_it(
        tmp_path: Path, lang: str, capsys: pytest.CaptureFixture[str]) -> None:
    """shape-mismatch explains the crash, so script-error stays quiet; the end box still says where the script
    stopped, and which finding explains it."""
    script = tmp_path / "mm.py"
    script.write_text(MATMUL)
    out = tmp_path / "d.json"
    assert main(["doctor", "run", "--lang", lang, "--json", str(out), str(script)]) == 1
    streams = capsys.readouterr()
    shown = streams.out + streams.err
    ids = {f["id"] for f in json.loads(out.read_text())["findings"]}
    assert "shape-mismatch" in ids and "script-error" not in ids
    stopped, explained, _ = SUMMARY[lang]
    summary = shown[shown.rindex(stopped):]
    assert "mm.py:5" in summary and explained in summary
    assert not any(words in shown for words in NONE_FOUND)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_summary_says_plainly_when_nothing_explains_the_crash(tmp_path: Path, lang: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    shown, f = _crash(tmp_path, "plain.py", PLAIN, lang, capsys)
    stopped, _, unexplained = SUMMARY[lang]
    summary = shown[shown.rindex(stopped):]
    assert "plain.py:2" in summary and unexplained in summary


def test_no_summary_line_without_a_crash() -> None:
    from trainwell.doctor.findings import Finding
    from trainwell.doctor.render import crash_words

    quiet = Finding(id="lr-too-high", severity="warning", title="t", message="m", fix="f", where="a.py:3")
    assert crash_words([quiet]) is None and crash_words([]) is None


CASES = {
    # the facts each cause is read from, in scripts no rule's message text was written for
    "cat_0d": ("import torch\nparts = [torch.tensor(1.0), torch.tensor(2.0)]\nall_ = torch.cat(parts)\n",
               "torch.stack"),
    "gather_rank": ("import torch\nq = torch.randn(4, 2)\na = torch.tensor([0, 1, 1, 0])\nt = q.gather(1, a)\n",
                    "a.unsqueeze(1)"),
    "set_slot": ("import torch\nx = torch.zeros(2, 3)\nidx = torch.tensor([0, 1])\nv = torch.ones(5)\n"
                 "x[idx, 0] = v\n", "5 elements"),
    "not_tensor": ("import torch\nfrom torch import nn\nfc = nn.Linear(3, 2)\npair = (torch.ones(1, 3), torch.ones(1))\n"
                   "y = fc(pair)\n", "tuple of 2 tensors"),
    "leaf_flag": ("import torch\nw = torch.ones(2, requires_grad=True)\nh = w * 2\nh.requires_grad = False\n",
                  "detach()"),
    "spatial": ("import torch\nimport torch.nn.functional as F\nm = torch.rand(8, 8)\np = F.max_pool2d(m, 2)\n",
                "[None]"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_causes_come_from_the_operands(tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    source, words = CASES[case]
    shown, f = _crash(tmp_path, f"{case}.py", source, "en", capsys)
    assert f["where"].endswith(f"{case}.py:{source.count(chr(10))}")
    assert f["evidence"]["explained"] and words in f["message"] + f["fix"], f["message"] + f["fix"]


def test_integer_indices_beside_floats_are_not_called_a_dtype_error(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """An int64 index next to float data is normal (gather, lengths, labels): no 'convert it to float' advice
    unless the error is about types."""
    source = ("import torch\nfrom torch.utils.data import TensorDataset\n"
              "d = TensorDataset(torch.randn(10, 3), torch.arange(8))\n")
    shown, f = _crash(tmp_path, "ds.py", source, "en", capsys)
    assert ".float()" not in f["fix"]


def test_a_slice_bound_not_read_is_not_taken_for_the_whole_list() -> None:
    import ast
    import sys

    import torch

    from trainwell.doctor.checks._failure import _index_value, _value_of

    xs, n, t = [1, 2, 3, 4], 3, torch.tensor([1, 2])  # noqa: F841 - read from this frame
    frame = sys._getframe()
    expr = lambda src: ast.parse(src, mode="eval").body  # noqa: E731
    assert _value_of(expr("xs[1:3]"), frame) == [2, 3]
    assert _value_of(expr("xs[:n - 1]"), frame) is None  # (was xs[:], the whole list)
    assert _value_of(expr("xs[t:]"), frame) is None  # (was a TypeError inside the crash check)
    assert _index_value(expr("x[:n - 1]").slice, frame) is None
