"""`trainwell doctor run`: the script behaves exactly as under `python`, and the doctor never breaks it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any
from pathlib import Path

import pytest
import torch
from torch import nn

from trainwell.cli import main


def _write(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "script.py"
    script.write_text(body)
    return script


def test_argv_name_output_and_exit_code_are_the_scripts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _write(tmp_path, "import sys\nprint(__name__, sys.argv[1:])\nsys.exit(3)\n")
    code = main(["doctor", "run", "--json", str(tmp_path / "d.json"), str(script), "--lr", "0.1", "x"])
    assert code == 3
    assert "__main__ ['--lr', '0.1', 'x']" in capsys.readouterr().out
    report = json.loads((tmp_path / "d.json").read_text())
    assert report["exit_code"] == 3 and report["findings"] == []


def test_an_exception_in_the_script_prints_its_traceback_and_exits_1(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    script = _write(tmp_path, "def f():\n    raise ValueError('boom')\nf()\n")
    assert main(["doctor", "run", str(script)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "ValueError: boom" in err


def test_a_broken_check_never_breaks_the_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from trainwell.doctor.checks.zero_grad import ZeroGradMissing

    def explode(self, ev):  # type: ignore[no-untyped-def]
        raise RuntimeError("bug in a check")

    monkeypatch.setattr(ZeroGradMissing, "on_backward_pre", explode)
    script = _write(tmp_path, "import torch\nm = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD(m.parameters(), 0.1)\n"
                              "for _ in range(3):\n    opt.zero_grad()\n    m(torch.ones(4, 2)).sum().backward()\n"
                              "    opt.step()\nprint('finished')\n")
    out = tmp_path / "d.json"
    assert main(["doctor", "run", "--json", str(out), str(script)]) == 0
    captured = capsys.readouterr()
    assert "finished" in captured.out
    assert "zero-grad-missing" in captured.err and "bug in a check" in captured.err
    assert "zero-grad-missing" in json.loads(out.read_text())["internal_errors"][0]


def test_hooks_are_removed_afterwards(tmp_path: Path) -> None:
    import torch.nn.functional as F

    before = (F.cross_entropy, torch.Tensor.backward, torch.optim.Optimizer.zero_grad)
    script = _write(tmp_path, "print('hi')\n")
    assert main(["doctor", "run", str(script)]) == 0
    assert (F.cross_entropy, torch.Tensor.backward, torch.optim.Optimizer.zero_grad) == before


def test_watch_context_manager_finds_a_bug() -> None:
    from trainwell import doctor

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=1))
    opt = torch.optim.Adam(model.parameters())
    x, y = torch.randn(32, 4), torch.randint(0, 3, (32,))
    with doctor.watch(show=False) as session:
        for _ in range(5):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    assert [f.id for f in session.findings] == ["softmax-before-cross-entropy"]
    assert "test_doctor_runner.py:" in session.findings[0].where  # the user's loss line, not torch's


def test_fit_with_doctor_reports_the_same_checks() -> None:
    import trainwell
    from torch.utils.data import TensorDataset

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Softmax(dim=1))
    data = TensorDataset(torch.randn(128, 4), torch.randint(0, 3, (128,)))
    result = trainwell.fit(model, data, epochs=1, batch_size=16, progress=False, device="cpu", doctor=True)
    assert "softmax-before-cross-entropy" in [f.id for f in result.findings]


def test_fit_reports_its_model_calls_without_hooks_and_the_doctor_still_sees_each_one() -> None:
    """In fit, the trainer hands the doctor each call of the model (Trainer.call_watch, or step_watch between
    windows) instead of the doctor hooking the model: no hook of the doctor's is on the model, and training batches
    fed on steps that are not sampled (steps 41-49: sampled are the first ten, then one in ten) still count: a
    validation set copied from exactly those batches is found as split-leakage."""
    import trainwell
    from torch.utils.data import DataLoader, TensorDataset

    from trainwell.engine.callbacks import Callback

    torch.manual_seed(0)
    x, y = torch.randn(64 * 16, 8), torch.randint(0, 3, (64 * 16,))
    val = TensorDataset(x[41 * 16:49 * 16].clone(), y[41 * 16:49 * 16].clone())
    seen: list[tuple[int, bool]] = []

    class Look(Callback):
        def on_train_batch_end(self, trainer: Any, loss: Any) -> None:
            model = trainer.model
            # (between windows the loop reports whole micro-batches instead: tests/test_doctor_loop_reports.py)
            watched = trainer.call_watch is not None or trainer.step_watch is not None
            seen.append((len(model._forward_hooks) + len(model._forward_pre_hooks), watched))

    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    loader = DataLoader(TensorDataset(x, y), batch_size=16)  # in order: step k trains on rows 16k..16k+15
    result = trainwell.fit(model, loader, val, epochs=1, progress=False, device="cpu", doctor=True,
                           callbacks=[Look()])
    assert len(seen) == 64 and all(hooks == 0 and watched for hooks, watched in seen)
    assert "split-leakage" in [f.id for f in result.findings]
    assert not model._forward_hooks and not model._forward_pre_hooks


def test_checks_command_lists_every_check(capsys: pytest.CaptureFixture[str]) -> None:
    from trainwell.doctor import checks  # noqa: F401
    from trainwell.doctor.check import CHECKS

    assert main(["checks", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in rows} == set(CHECKS.names())
    assert all(r["severity"] in ("error", "warning", "info") for r in rows)
    for check in CHECKS:
        for lang in ("en", "zh"):
            text = check.obj.text[lang]
            assert text.title and text.message and text.fix


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_checks_command_shows_no_unfilled_placeholders(lang: str, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    from trainwell.doctor import checks  # noqa: F401
    from trainwell.doctor.check import CHECKS

    monkeypatch.setenv("COLUMNS", "400")  # one table row per line, ids unbroken
    for extra in ([], ["--json"]):
        assert main(["checks", "--lang", lang, *extra]) == 0
        out = capsys.readouterr().out
        assert not re.findall(r"\{\w+\}", out)
        assert all(name in out for name in CHECKS.names())


def test_real_cli_subprocess_in_chinese(tmp_path: Path) -> None:
    script = _write(tmp_path, "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
                              "m = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))\n"
                              "opt = torch.optim.SGD(m.parameters(), 0.1)\nx, y = torch.randn(16, 4), torch.randint(0, 3, (16,))\n"
                              "for _ in range(3):\n    opt.zero_grad()\n    nn.CrossEntropyLoss()(m(x), y).backward()\n    opt.step()\n")
    proc = subprocess.run([sys.executable, "-m", "trainwell", "doctor", "run", "--lang", "zh", str(script)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert "softmax-before-cross-entropy" in proc.stderr and "概率" in proc.stderr


COMPILED = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
fast = torch.compile(model, backend="aot_eager")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 8), torch.randint(0, 3, (64,))
for step in range(25):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(fast(x), y)
    loss.backward()
    opt.step()
print(f"loss {loss.item():.6f}")
"""


def test_a_torch_compiled_model_trains_the_same_under_the_doctor(tmp_path: Path) -> None:
    script = _write(tmp_path, COMPILED)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    watched = subprocess.run([sys.executable, "-m", "trainwell", "doctor", "run", "--json", str(tmp_path / "d.json"),
                              str(script)], capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout.splitlines()[-1] == plain.stdout.splitlines()[-1]
    assert "global hooks" not in watched.stderr  # torch's warning about the doctor's hooks is not the user's concern
    assert json.loads((tmp_path / "d.json").read_text())["findings"] == []


def test_a_script_that_does_not_compile_shows_what_python_shows(tmp_path: Path) -> None:
    """The SyntaxError with the script's file, line and caret, python's exit code 1, and no frame of trainwell's."""
    script = _write(tmp_path, "x = 1\nif x\n    print(x)\n")
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    watched = subprocess.run([sys.executable, "-m", "trainwell", "doctor", "run", "--json", str(tmp_path / "d.json"),
                              str(script)], capture_output=True, text=True, timeout=120)
    assert plain.returncode == watched.returncode == 1
    assert "SyntaxError: expected ':'" in plain.stderr
    assert watched.stderr.startswith(plain.stderr), watched.stderr
    assert "Traceback" not in watched.stderr and "trainwell" not in watched.stderr.split("trainwell doctor")[0]
    assert json.loads((tmp_path / "d.json").read_text())["exit_code"] == 1


def test_json_is_written_where_the_command_was_typed_when_the_script_changes_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    script = _write(tmp_path, "import os\nos.chdir('elsewhere')\n")
    assert main(["doctor", "run", "--json", "d.json", str(script)]) == 0
    assert (tmp_path / "d.json").is_file() and not (tmp_path / "elsewhere" / "d.json").exists()


FORKS = """
import multiprocessing as mp
import os
import sys

import torch
from torch import nn


def train():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))
    opt = torch.optim.SGD(m.parameters(), 0.1)
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    for _ in range(3):
        opt.zero_grad()
        nn.CrossEntropyLoss()(m(x), y).backward()
        opt.step()


def child(how):
    train()
    if how == "sys.exit":
        sys.exit(3)
    if how == "os._exit":
        os._exit(4)


if __name__ == "__main__":
    codes = []
    for how in ("return", "sys.exit", "os._exit"):
        p = mp.get_context("fork").Process(target=child, args=(how,))
        p.start()
        p.join()
        codes.append(p.exitcode)
    print("process exit codes", *codes, flush=True)
    pid = os.fork()
    if pid == 0:
        train()  # the forked child runs on to the end of the script
    else:
        _, status = os.waitpid(pid, 0)
        print("forked child exit code", os.waitstatus_to_exitcode(status), flush=True)
        train()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_only_the_process_that_started_the_script_reports(tmp_path: Path) -> None:
    """Children forked by the script (multiprocessing's fork start method, ending by return, sys.exit or os._exit,
    and an os.fork() child that runs on to the script's end) train with the same bug first: the doctor reports it
    once, from the starting process, with one summary and one JSON file; the children's exit codes are python's."""
    script = _write(tmp_path, FORKS)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    watched = subprocess.run([sys.executable, "-m", "trainwell", "doctor", "run", "--json", str(tmp_path / "d.json"),
                              str(script)], capture_output=True, text=True, timeout=120)
    assert plain.returncode == watched.returncode == 0, watched.stderr
    assert watched.stdout == plain.stdout == "process exit codes 0 3 4\nforked child exit code 0\n"
    assert watched.stderr.count("softmax-before-cross-entropy:") == 1, watched.stderr
    assert watched.stderr.count("trainwell doctor found: 1") == 1, watched.stderr
    report = json.loads((tmp_path / "d.json").read_text())
    assert [f["id"] for f in report["findings"]] == ["softmax-before-cross-entropy"]


def test_fit_watches_evaluation_losses_only_while_it_evaluates_and_still_tells_overfitting() -> None:
    """In fit, between windows a training step runs the library's own loss function (the loop says when it
    evaluates, and only evaluation losses need the doctor's wrapper there, once the handlers of a run's first
    training losses are done); the evaluation passes are still
    watched: a model that memorises random labels is found overfitting."""
    import torch.nn.functional as F
    from torch.utils.data import TensorDataset

    import trainwell
    from trainwell.engine.callbacks import Callback

    original = F.cross_entropy
    plain_in_training: list[bool] = []

    class Look(Callback):
        def on_train_batch_end(self, trainer: Any, loss: Any) -> None:
            session = next(c for c in trainer.callbacks if type(c).__name__ == "DoctorCallback").session
            # Between windows, once the handlers that look at a run's first training losses are done (step 250):
            if trainer.state.step > 250 and not session.in_window:
                plain_in_training.append(F.cross_entropy is original)

    torch.manual_seed(0)
    x, y = torch.randn(192, 16), torch.randint(0, 4, (192,))
    model = nn.Sequential(nn.Linear(16, 128), nn.ReLU(), nn.Linear(128, 4))
    result = trainwell.fit(model, TensorDataset(x[:128], y[:128]), TensorDataset(x[128:], y[128:]), epochs=40,
                           batch_size=16, progress=False, device="cpu", doctor=True, callbacks=[Look()])
    assert plain_in_training and all(plain_in_training)
    assert "overfitting" in [f.id for f in result.findings]
    assert F.cross_entropy is original
