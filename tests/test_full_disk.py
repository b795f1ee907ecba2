"""A disk that refuses bytes (full, or a file-size limit) ends a run with one paragraph and exit code 2 that names
the file, says what the run folder kept and how to go on; the folder is never deleted once it holds the user's
config, and `--resume` finishes the run once there is room. A run stopped after summary.json gets its report and
model card back from `--resume` or `trainwell report`."""

from __future__ import annotations

import errno
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import main_in, train_once
from trainwell.cli import main

ARGS = ["--data", "digits", "--set", "data.limit=300", "--epochs", "1", "--batch-size", "16",
        "--set", "model.channels=[4]", "--set", "model.hidden=[8]", "--device", "cpu", "--no-progress",
        "--no-doctor", "--threads", "1"]


def trainwell(cwd: Path, *argv: str, max_file_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, with files limited to ``max_file_bytes`` (``ulimit -f``) if given."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-m", "trainwell", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, preexec_fn=limit if max_file_bytes is not None else None)


def refused(done: subprocess.CompletedProcess[str]) -> str:
    """Exit code 2, one error paragraph, no traceback; returns the paragraph."""
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr + done.stdout, done.stderr[-3000:]
    assert done.stderr.count("trainwell: error: ") == 1, done.stderr[-3000:]
    return done.stderr.split("trainwell: error: ", 1)[1]


@pytest.mark.slow
def test_a_file_size_limit_in_the_checkpoint_keeps_the_folder_and_resume_finishes(tmp_path: Path) -> None:
    """config.yaml and the logs fit in 16 kB, the 35 kB checkpoint does not: before any checkpoint existed, the
    folder (with the user's config and logs) used to be deleted."""
    err = refused(trainwell(tmp_path, "train", "--out", "run", *ARGS, max_file_bytes=16_000))
    assert "checkpoints/best.pt" in err and "File too large (EFBIG)" in err
    assert "is kept" in err and "ulimit -f" in err and "trainwell train --resume run" in err
    run = tmp_path / "run"
    assert (run / "config.yaml").is_file() and (run / "steps.csv").is_file()
    assert not list((run / "checkpoints").glob(".*.tmp"))  # the half-written save is gone

    done = trainwell(tmp_path, "train", "--resume", "run")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (run / "report.html").is_file() and (run / "README.md").is_file()


@pytest.mark.slow
def test_a_file_size_limit_in_the_report_keeps_the_checkpoint_and_resume_writes_the_report(tmp_path: Path) -> None:
    err = refused(trainwell(tmp_path, "train", "--out", "run", *ARGS, max_file_bytes=100_000))
    assert "'run/report.html'" in err and "checkpoints/last.pt from step 15 is intact" in err
    run = tmp_path / "run"
    assert (run / "summary.json").is_file() and not (run / "report.html").exists()

    done = trainwell(tmp_path, "train", "--resume", "run")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rebuilt report.html and README.md" in done.stderr
    assert "<h2>Confusion matrix" in (run / "report.html").read_text(encoding="utf-8")  # the task's own section
    assert (run / "README.md").is_file()


def test_a_file_size_limit_before_anything_is_written_says_what_it_cleared(tmp_path: Path) -> None:
    err = refused(trainwell(tmp_path, "train", "--out", "run", *ARGS, max_file_bytes=1000))
    assert "'run/config.yaml'" in err and "nothing worth keeping" in err and "start the run again" in err
    assert not (tmp_path / "run").exists()


def _can_mount_tmpfs(point: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)], capture_output=True)
    return done.returncode == 0


@pytest.mark.slow
def test_a_full_disk_during_a_save_is_reported_and_resume_finishes_after_space_is_freed(tmp_path: Path) -> None:
    """A real ENOSPC from a 64 kB tmpfs (torch's zip writer used to turn it into "unexpected pos")."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _can_mount_tmpfs(disk):
        pytest.skip("needs root and `mount -t tmpfs` (CI runs as root) for a real full disk")
    try:
        err = refused(trainwell(tmp_path, "train", "--out", "disk/run", *ARGS))
        assert "No space left on device (ENOSPC)" in err and ".pt'" in err and "unexpected pos" not in err
        assert "free space" in err and "trainwell train --resume disk/run" in err
        assert (disk / "run" / "config.yaml").is_file()
        subprocess.run(["mount", "-o", "remount,size=4m", str(disk)], check=True)  # space freed
        done = trainwell(tmp_path, "train", "--resume", "disk/run")
        assert done.returncode == 0, done.stderr[-3000:]
        assert (disk / "run" / "report.html").is_file()
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_a_refused_write_names_the_file_and_keeps_the_previous_version(tmp_path: Path) -> None:
    from trainwell._files import WriteFailed, atomic_write, atomic_write_text

    target = tmp_path / "metrics.csv"
    atomic_write_text(target, "old\n")

    def full(f) -> None:  # type: ignore[no-untyped-def]
        f.write(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(WriteFailed, match=re.escape(f"Could not write {str(target)!r}: No space left on device")):
        atomic_write(target, full)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.csv"]


# --------------------------------------------------------------------------- a run stopped after summary.json


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_once(tmp_path_factory, ARGS)


def _headings(page: str) -> list[str]:
    return re.findall(r"<h2>(.*?)</h2>", page)


def test_resume_of_a_run_killed_after_summary_json_rebuilds_report_and_card(
        finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    original = (run / "report.html").read_text(encoding="utf-8")
    (run / "report.html").unlink()
    (run / "README.md").unlink()
    assert main_in(tmp_path, "train", "--resume", "run") == 0
    err = capsys.readouterr().err
    assert "is finished" in err and "rebuilt report.html and README.md from the run's files" in err
    assert _headings((run / "report.html").read_text(encoding="utf-8")) == _headings(original)
    assert (run / "README.md").read_text(encoding="utf-8") == (finished / "README.md").read_text(encoding="utf-8")


def test_trainwell_report_rebuilds_the_report_from_the_files(finished: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    original = (run / "report.html").read_text(encoding="utf-8")
    (run / "report.html").write_text("damaged", encoding="utf-8")
    done = trainwell(tmp_path, "report", "run")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == str(Path("run") / "report.html")
    rebuilt = (run / "report.html").read_text(encoding="utf-8")
    assert _headings(rebuilt) == _headings(original) and "Confusion matrix" in rebuilt


def test_trainwell_report_of_an_older_run_says_what_it_left_out(finished: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    (run / "report_sections.json").unlink()  # a run folder from before the sections were kept
    done = trainwell(tmp_path, "report", "run")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "left out: the task's and the doctor's sections" in done.stderr
    assert "Confusion matrix" not in (run / "report.html").read_text(encoding="utf-8")


def test_trainwell_report_of_an_unfinished_run_is_a_clear_error(finished: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    (run / "summary.json").unlink()
    err = refused(trainwell(tmp_path, "report", "run"))
    assert "no summary.json" in err and "trainwell train --resume run" in err


# --------------------------------------------------------------------------- temporary files of a killed save


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_resume_removes_the_temporary_files_a_killed_save_left(finished: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished, run)
    dead = _dead_pid()
    left = [run / "checkpoints" / f".last.pt.{dead}.0123abcd.tmp",
            run / "checkpoints" / f".best.pt.{dead}.89abcdef.tmp", run / f".metrics.csv.{dead}.00000000.tmp"]
    live = run / "checkpoints" / f".last.pt.{os.getppid()}.fedcba98.tmp"  # a live process's save in progress
    for path in [*left, live]:
        path.write_bytes(b"partial")
    assert main(["train", "--resume", str(run)]) == 0
    assert "removed 3 temporary files left by a save that was killed mid-write" in capsys.readouterr().err
    assert not any(p.exists() for p in left) and live.exists()
