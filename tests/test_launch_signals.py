"""The multi-process launchers (``trainwell train --nproc`` and ``trainwell doctor run --nproc``) never leave a worker
behind: SIGTERM, SIGINT or SIGHUP to the launcher stops its workers and ends it with one line (no traceback) and the
shell's exit code; a SIGKILLed launcher's workers end themselves; a worker killed with no restarts left ends the run
with the command that resumes it.

Every process of a test carries a marker in its environment, so the test finds the workers (and kills what is left
of them) by reading ``/proc``, also after their launcher is gone.
"""

from __future__ import annotations

import os
import signal
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds processes through /proc")

SRC = str(Path(__file__).resolve().parents[1] / "src")
MARK = "TW_LAUNCH_SIGNALS_TEST"
TRAIN = ["-m", "trainwell", "train", "--data", "digits", "--model", "mlp", "--set", "model.hidden=[16]",
         "--batch-size", "64", "--threads", "1", "--no-progress", "--no-doctor", "--nproc", "2"]

# Trains with DDP on gloo until stopped; each rank says it is in its loop by writing a file.
ENDLESS = """
import sys
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

dist.init_process_group("gloo")
model = nn.parallel.DistributedDataParallel(nn.Linear(4, 2))
opt = torch.optim.SGD(model.parameters(), 0.1)
for step in range(10**9):
    opt.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    opt.step()
    if step == 5:
        Path(sys.argv[1], f"rank{dist.get_rank()}").write_text("")
"""

FAULTY = Path(__file__).with_name("faulty_model.py")


def _env(marker: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")}
    env["PYTHONPATH"] = os.pathsep.join([SRC, *extra.pop("PYTHONPATH", "").split(os.pathsep)]).rstrip(os.pathsep)
    env[MARK] = marker
    env.update(extra)
    return env


def _marked(marker: str) -> set[int]:
    """The processes whose environment carries ``marker``."""
    wanted = f"{MARK}={marker}".encode()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # gone meanwhile, or not ours
            continue
        if wanted in environ.split(b"\0") and state != "Z":  # a zombie has ended, its parent has not reaped it
            found.add(int(entry.name))
    return found


def _wait_for(condition: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.2)


class _Launcher:
    """A launcher started in a session of its own, its output in a file, and everything of it killed at the end."""

    def __init__(self, args: list[str], cwd: Path, **env: str) -> None:
        self.marker = uuid.uuid4().hex
        self.log = cwd / f"launcher-{self.marker}.log"
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=_env(self.marker, **env), stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def workers(self) -> set[int]:
        return _marked(self.marker) - {self.proc.pid}

    def output(self) -> str:
        return self.log.read_text()

    def kill_all(self) -> None:
        for pid in _marked(self.marker) | ({self.proc.pid} if self.proc.poll() is None else set()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=30)


@pytest.fixture
def launchers() -> Iterator[list[_Launcher]]:
    started: list[_Launcher] = []
    yield started
    for launcher in started:
        launcher.kill_all()


def _train_until_a_checkpoint(tmp_path: Path, launchers: list[_Launcher]) -> _Launcher:
    launcher = _Launcher([*TRAIN, "--epochs", "100000", "--out", "run"], tmp_path)
    launchers.append(launcher)
    _wait_for(lambda: (tmp_path / "run" / "checkpoints" / "last.pt").is_file() or launcher.proc.poll() is not None,
              120, "the first checkpoint")
    assert launcher.proc.poll() is None, launcher.output()[-3000:]
    assert len(launcher.workers()) == 2
    return launcher


def _doctor_in_its_loop(tmp_path: Path, launchers: list[_Launcher]) -> _Launcher:
    (tmp_path / "endless.py").write_text(ENDLESS)
    launcher = _Launcher(["-m", "trainwell", "doctor", "run", "--nproc", "2", "endless.py", str(tmp_path)], tmp_path)
    launchers.append(launcher)
    _wait_for(lambda: all((tmp_path / f"rank{r}").is_file() for r in range(2)) or launcher.proc.poll() is not None,
              120, "both ranks in their loop")
    assert launcher.proc.poll() is None, launcher.output()[-3000:]
    assert len(launcher.workers()) == 2
    return launcher


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_to_the_train_launcher_stops_its_workers(tmp_path: Path, launchers: list[_Launcher],
                                                          signum: int) -> None:
    launcher = _train_until_a_checkpoint(tmp_path, launchers)
    launcher.proc.send_signal(signum)
    assert launcher.proc.wait(timeout=60) == 128 + signum
    _wait_for(lambda: not launcher.workers(), 10, "the workers to end")
    out = launcher.output()
    assert "Traceback" not in out, out[-3000:]
    assert f"trainwell: stopped by {signal.Signals(signum).name}" in out
    assert out.count("trainwell train --resume run") == 1, out[-3000:]  # once, from the launcher
    assert (tmp_path / "run" / "checkpoints" / "last.pt").is_file()


@pytest.mark.slow
def test_a_signal_to_the_doctor_launcher_stops_its_workers(tmp_path: Path, launchers: list[_Launcher]) -> None:
    launcher = _doctor_in_its_loop(tmp_path, launchers)
    launcher.proc.send_signal(signal.SIGTERM)
    assert launcher.proc.wait(timeout=60) == 128 + signal.SIGTERM
    _wait_for(lambda: not launcher.workers(), 10, "the workers to end")
    out = launcher.output()
    assert "Traceback" not in out and "trainwell doctor: stopped by SIGTERM" in out, out[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["train", "doctor"])
def test_the_workers_of_a_sigkilled_launcher_end(tmp_path: Path, launchers: list[_Launcher], command: str) -> None:
    """SIGKILL leaves torchrun's agent no chance to stop its workers: each worker ends itself within seconds."""
    launcher = (_train_until_a_checkpoint if command == "train" else _doctor_in_its_loop)(tmp_path, launchers)
    launcher.proc.kill()
    launcher.proc.wait(timeout=30)
    _wait_for(lambda: not launcher.workers(), 10, "the workers of the killed launcher to end")


@pytest.mark.slow
def test_a_killed_worker_ends_the_run_with_the_resume_command(tmp_path: Path, launchers: list[_Launcher]) -> None:
    """Rank 1 is SIGKILLed in step 30 with no restart left; the checkpoint of step 25 keeps the folder."""
    shutil.copy(FAULTY, tmp_path / "faulty.py")
    launcher = _Launcher([*TRAIN, "--model", "faulty:Net", "--epochs", "2", "--checkpoint-every", "5", "--out", "run"],
                         tmp_path, PYTHONPATH=str(tmp_path), TW_KILL_AT="30")
    launchers.append(launcher)
    assert launcher.proc.wait(timeout=240) == 1
    out = launcher.output()
    assert "trainwell: worker 1 failed (exit code -9)" in out, out[-3000:]
    # The command names what --resume cannot take from the folder: the processes and the user's own model.
    assert "continue it with:\n  trainwell train --resume run --nproc 2 --model faulty:Net\n" in out, out[-3000:]
    assert (tmp_path / "run" / "checkpoints" / "last.pt").is_file()


def test_without_the_parent_death_signal_a_watching_thread_ends_the_worker(tmp_path: Path) -> None:
    """Where prctl is not there, a worker watches its parent: killed parent, ended worker."""
    marker = uuid.uuid4().hex
    worker = ("import os, time\nfrom trainwell.cli.launch import _watch_parent\n"
              "_watch_parent(os.getppid(), every_s=0.1)\ntime.sleep(120)\n")
    parent = (f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {worker!r}])\n"
              "time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", parent], env=_env(marker), start_new_session=True)
    try:
        _wait_for(lambda: len(_marked(marker)) == 2, 30, "the worker")
        time.sleep(0.5)
        proc.kill()
        proc.wait(timeout=30)
        _wait_for(lambda: not _marked(marker), 10, "the worker to end")
    finally:
        for pid in _marked(marker):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_failure_reported_is_the_one_that_started_it(tmp_path: Path) -> None:
    """A worker killed with SIGKILL writes no error file; the agent then stops the others with SIGTERM, and their
    error files can carry an earlier time. The launcher names the killed worker, not one the agent stopped."""
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError, ProcessFailure

    from trainwell.cli.launch import _first_cause

    stopped = ProcessFailure(local_rank=0, pid=10, exitcode=-signal.SIGTERM, error_file=str(tmp_path / "none"))
    killed = ProcessFailure(local_rank=1, pid=11, exitcode=-signal.SIGKILL, error_file=str(tmp_path / "none"))
    stopped.timestamp, killed.timestamp = 100, 101
    error = ChildFailedError("train", {0: stopped, 1: killed})
    assert error.get_first_failure()[0] == 0  # what torchrun alone would name
    assert _first_cause(error)[0] == 1
    only_stopped = ChildFailedError("train", {0: stopped})
    assert _first_cause(only_stopped)[0] == 0


def test_a_workers_error_file_appears_whole_or_not_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent stops the other workers with SIGTERM once one fails, then reads their error files: one stopped
    while writing must not leave an empty file (the agent's JSONDecodeError ended the launcher with a traceback
    and no resume command). The file is written beside its place and renamed; torchrun reads what it says."""
    import json

    from torch.distributed.elastic.multiprocessing.errors import ProcessFailure

    from trainwell.cli.launch import _record

    target = tmp_path / "attempt_0" / "0" / "error.json"
    monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(target))
    seen: list[bool] = []
    dump = json.dump

    def watched(data: object, out: object) -> None:
        seen.append(target.exists())  # while the text is written, the agent must find no file (or a whole one)
        dump(data, out)

    monkeypatch.setattr(json, "dump", watched)
    try:
        raise RuntimeError("rank 0: the exchange did not complete")
    except RuntimeError as e:
        assert _record(e)
    assert seen == [False]
    assert os.listdir(target.parent) == ["error.json"]  # nothing left beside it
    failure = ProcessFailure(local_rank=0, pid=10, exitcode=1, error_file=str(target))
    assert failure.message["message"] == "RuntimeError: rank 0: the exchange did not complete"
    assert "raise RuntimeError" in failure.message["extraInfo"]["py_callstack"]
    monkeypatch.delenv("TORCHELASTIC_ERROR_FILE")
    assert not _record(RuntimeError("not under torchrun"))
