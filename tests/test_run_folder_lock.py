"""A run folder has one writer: RUN/.lock names it (process, host, start), a second writer is refused with exit
code 2 naming the first, a lock whose process is gone is taken over, and every exit path releases it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import main_in
from trainwell._errors import TrainwellError
from trainwell.engine import run_lock
from trainwell.engine.run_lock import LOCK_NAME, TOKEN_ENV, acquire, process_start

ARGS = ["--data", "digits", "--set", "data.limit=300", "--batch-size", "16", "--set", "model.channels=[4]",
        "--set", "model.hidden=[8]", "--device", "cpu", "--no-progress", "--no-doctor", "--threads", "1"]


def trainwell(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "trainwell", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONHASHSEED": "0"})


def refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-3000:]
    return done.stderr.split("trainwell: error: ", 1)[1]


def write_lock(folder: Path, pid: int, *, host: str | None = None, start: str | None = None) -> dict:
    holder = {"pid": pid, "host": host or socket.gethostname(), "started": "2026-01-02 03:04:05",
              "process_start": start if start is not None else process_start(pid), "command": "trainwell train",
              "token": f"test:{pid}"}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / LOCK_NAME).write_text(json.dumps(holder), encoding="utf-8")
    return holder


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def a_finished_looking_folder(folder: Path) -> Path:
    """A folder --resume accepts (config.yaml) without training anything before the lock is looked at."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text("task: classification\n", encoding="utf-8")
    return folder


# --------------------------------------------------------------------------- the lock itself


def test_a_live_holder_on_this_host_is_named(tmp_path: Path) -> None:
    write_lock(tmp_path / "run", os.getppid())
    with pytest.raises(TrainwellError) as e:
        acquire(tmp_path / "run")
    message = str(e.value)
    assert f"in use by trainwell train (pid {os.getppid()} on host {socket.gethostname()}, " \
           "since 2026-01-02 03:04:05)" in message
    assert f"kill {os.getppid()}" in message


def test_a_holder_on_another_host_is_refused_with_the_way_out(tmp_path: Path) -> None:
    write_lock(tmp_path / "run", dead_pid(), host="gpu-node-7")  # its pid means nothing here
    with pytest.raises(TrainwellError) as e:
        acquire(tmp_path / "run")
    assert "on host gpu-node-7" in str(e.value) and f"delete {str(tmp_path / 'run' / LOCK_NAME)!r}" in str(e.value)


def test_a_lock_whose_process_is_gone_is_taken_over_and_released(tmp_path: Path) -> None:
    pid = dead_pid()
    write_lock(tmp_path / "run", pid)
    lock = acquire(tmp_path / "run")
    try:
        assert lock.notes == [f"{tmp_path / 'run'}: took over the lock of a run that is gone (trainwell train "
                              f"(pid {pid} on host {socket.gethostname()}, since 2026-01-02 03:04:05))."]
        assert json.loads((tmp_path / "run" / LOCK_NAME).read_text())["pid"] == os.getpid()
    finally:
        lock.release()
    assert not (tmp_path / "run" / LOCK_NAME).exists()


def test_a_reused_process_id_is_no_holder(tmp_path: Path) -> None:
    """The id is alive, but its process started at another time than the lock's holder: not the holder."""
    if process_start(os.getppid()) is None:
        pytest.skip("needs /proc to tell a process's start time")
    write_lock(tmp_path / "run", os.getppid(), start="1")
    lock = acquire(tmp_path / "run")
    lock.release()
    assert lock.notes and "took over" in lock.notes[0]


def test_the_processes_of_one_group_share_the_holders_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A torchrun worker carries the launcher's token: it writes with the launcher, and leaves the lock to it."""
    holder = write_lock(tmp_path / "run", os.getppid())
    monkeypatch.setenv(TOKEN_ENV, holder["token"])
    lock = acquire(tmp_path / "run")
    assert not lock.owner
    lock.release()
    assert (tmp_path / "run" / LOCK_NAME).exists()  # still the launcher's


def test_of_two_processes_taking_a_fresh_folder_exactly_one_wins(tmp_path: Path) -> None:
    script = ("import sys, time; from pathlib import Path; from trainwell.engine.run_lock import acquire\n"
              "time.sleep(max(0.0, float(sys.argv[1]) - time.time()))\n"
              "try:\n    acquire(Path(sys.argv[2])); print('won'); time.sleep(1.5)\n"
              "except Exception as e:\n    print('lost', e)\n")
    (tmp_path / "run").mkdir()
    start = str(time.time() + 1.5)
    both = [subprocess.Popen([sys.executable, "-c", script, start, str(tmp_path / "run")], stdout=subprocess.PIPE,
                             text=True) for _ in range(2)]
    results = sorted(p.communicate(timeout=60)[0].split()[0] for p in both)
    assert results == ["lost", "won"]


# --------------------------------------------------------------------------- the command line


def test_resume_of_a_run_in_use_is_refused(tmp_path: Path) -> None:
    run = a_finished_looking_folder(tmp_path / "run")
    write_lock(run, os.getpid())  # this test's process: alive
    before = (run / LOCK_NAME).read_text()
    err = refused(trainwell(tmp_path, "train", "--resume", "run"))
    assert f"'run' is in use by trainwell train (pid {os.getpid()} on host" in err
    assert (run / LOCK_NAME).read_text() == before


def test_out_of_a_run_in_use_is_refused_naming_it(tmp_path: Path) -> None:
    write_lock(tmp_path / "run", os.getpid())
    err = refused(trainwell(tmp_path, "train", "--out", "run", *ARGS, "--epochs", "1"))
    assert f"is in use by trainwell train (pid {os.getpid()} on host" in err


def test_a_finished_run_leaves_no_lock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_in(tmp_path, "train", "--out", "run", *ARGS, "--epochs", "1") == 0
    assert not (tmp_path / "run" / LOCK_NAME).exists()
    assert run_lock.held(tmp_path / "run") is None


@pytest.mark.slow
def test_two_writers_then_kill_9_then_resume(tmp_path: Path) -> None:
    """A real training run holds its folder: a second `--out` and a `--resume` of it are refused while it trains;
    after a kill -9 its lock is stale, and `--resume` takes it over and finishes the run."""
    first = subprocess.Popen([sys.executable, "-m", "trainwell", "train", "--out", "run", *ARGS, "--epochs", "60",
                              "--checkpoint-every", "5"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    try:
        deadline = time.time() + 120
        while not (tmp_path / "run" / "checkpoints" / "last.pt").exists():
            assert first.poll() is None and time.time() < deadline, first.stderr.read() if first.stderr else ""
            time.sleep(0.1)
        err = refused(trainwell(tmp_path, "train", "--out", "run", *ARGS, "--epochs", "1"))
        assert f"'run' is in use by trainwell train (pid {first.pid} on host {socket.gethostname()}" in err
        err = refused(trainwell(tmp_path, "train", "--resume", "run"))
        assert f"pid {first.pid}" in err
        assert first.poll() is None, "the first run finished before the test could kill it; give it more epochs"
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    done = trainwell(tmp_path, "train", "--resume", "run")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"took over the lock of a run that is gone (trainwell train (pid {first.pid}" in done.stderr
    assert (tmp_path / "run" / "report.html").is_file() and not (tmp_path / "run" / LOCK_NAME).exists()
    rows = (tmp_path / "run" / "steps.csv").read_text().splitlines()[1:]
    assert [int(r.split(",")[0]) for r in rows] == list(range(1, 60 * 15 + 1))  # one writer: each step once
