"""How `trainwell train` starts: the data is checked before the config is shown, the config is shown compactly
(the keys that differ from the defaults; --show-config for all), and a bad file leaves no run folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import main_in

TINY = ["--data", "digits", "--epochs", "1", "--threads", "1", "--no-progress", "--no-doctor", "--device", "cpu",
        "--set", "model.channels=[4]", "--set", "model.hidden=[8]"]
CSV = ["--model", "mlp", "--set", "model.hidden=[8]", "--epochs", "1", "--threads", "1", "--no-progress",
       "--no-doctor", "--device", "cpu"]


@pytest.mark.parametrize("content", [None, "f1,f2,label\n1,2,0\n3,x,1\n" + "5,6,0\n7,8,1\n" * 20])
def test_bad_data_is_said_before_any_config_and_leaves_no_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None) -> None:
    if content is not None:
        (tmp_path / "t.csv").write_text(content, encoding="utf-8")
    assert main_in(tmp_path, "train", "--data", "csv:t.csv", "--out", "run", *CSV) == 2
    err = capsys.readouterr().err
    assert ("does not exist" if content is None else "'x' is not a number") in err
    assert "config" not in err.lower() and "mlflow" not in err  # no config shown for a run that never started
    assert not (tmp_path / "run").exists()


def test_the_config_shown_is_what_differs_from_the_defaults_one_key_a_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_in(tmp_path, "train", *TINY, "--out", "run") == 0
    err = capsys.readouterr().err
    assert "  train.epochs: 1\n" in err and "  model.channels: [4]\n" in err and "  data.name: digits\n" in err
    assert "mlflow_experiment" not in err and "text.tokenizer" not in err  # defaults, another task's keys
    assert err.index("model.channels") < err.index("epoch   1/1")
    assert "config.yaml" in err


@pytest.mark.slow
def test_show_config_prints_every_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_in(tmp_path, "train", *TINY, "--out", "run", "--show-config") == 0
    err = capsys.readouterr().err
    assert "mlflow_experiment: trainwell" in err and "channels: [4]" in err


# --------------------------------------------------------------------------- a busy machine

@pytest.mark.parametrize(("cores", "processes", "load", "expected"), [
    (2, 1, 3.1, 1), (2, 1, 1.2, 1), (2, 1, 0.9, None), (8, 1, 3.0, 5), (8, 2, 4.5, 2), (2, 1, None, None),
    (1, 1, 5.0, None)])
def test_the_load_leaves_its_free_cores(cores: int, processes: int, load: float | None,
                                        expected: int | None) -> None:
    from trainwell.machine import Machine, busy_threads

    assert busy_threads(Machine(cores=cores, processes=processes), load) == expected
    assert busy_threads(Machine(cores=cores, processes=processes, omp_threads=cores), load) is None  # chosen


def _busy(monkeypatch: pytest.MonkeyPatch, load: float) -> None:
    from trainwell.app import run
    from trainwell.machine import Machine

    monkeypatch.setattr(run, "load_average", lambda: load)
    monkeypatch.setattr(run, "this_machine", lambda: Machine(cores=2))


def _threads_used(run_dir: Path) -> int:
    import json

    return json.loads((run_dir / "env.json").read_text())["torch_threads"]


def test_a_busy_machine_gets_the_free_threads_and_is_told_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _busy(monkeypatch, 3.1)
    i = TINY.index("--threads")
    args = TINY[:i] + TINY[i + 2:]  # the default thread count
    assert main_in(tmp_path, "train", *args, "--out", "run") == 0
    err = capsys.readouterr().err
    assert "the machine is busy: load 3.1 on 2 cores; using 1 thread (--threads N to choose;" in err
    assert _threads_used(tmp_path / "run") == 1
    assert main_in(tmp_path, "train", *args, "--out", "asked", "--threads", "2") == 0  # an explicit count is obeyed
    assert "busy" not in capsys.readouterr().err and _threads_used(tmp_path / "asked") == 2


def test_a_resumed_run_keeps_the_threads_it_started_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.app.run import run_threads
    from trainwell.config import Config

    _busy(monkeypatch, 3.1)
    (tmp_path / "env.json").write_text('{"torch_threads": 2}')
    assert run_threads(Config(), tmp_path, resume=True) == (2, None)
    threads, note = run_threads(Config(), tmp_path, resume=False, lang="zh")
    assert threads == 1 and note is not None and "机器正忙" in note
    (tmp_path / "env.json").write_text("{}")  # no count recorded: the default, and it is said, not assumed
    threads, note = run_threads(Config(), tmp_path, resume=True)
    assert threads is None and note is not None and "records no thread count" in note


# --------------------------------------------------------------------------- --compile on a CPU

def test_compile_messages_go_to_the_log_not_the_terminal(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    import logging
    import warnings

    import torch  # noqa: F401  (its loggers get their handlers on import)

    from trainwell.engine.compile_log import compile_messages

    log = tmp_path / "compile.log"
    with pytest.warns(UserWarning) as shown, compile_messages(log):
        logging.getLogger("torch._dynamo").warning("recompile_limit reached with one_graph")
        logging.getLogger("torch.utils.cpp_extension").warning("No CUDA runtime is found")
        warnings.warn_explicit("a compiler note", UserWarning, "/x/site-packages/torch/_inductor/lowering.py", 1)
        warnings.warn_explicit("the user's own warning", UserWarning, "/home/me/train.py", 7)
    logging.getLogger("torch._dynamo").warning("after the run")
    err = capfd.readouterr().err
    text = log.read_text()
    assert "recompile_limit" in text and "No CUDA runtime" in text and "a compiler note" in text
    assert "recompile_limit" not in err and "No CUDA runtime" not in err
    assert [str(w.message) for w in shown] == ["the user's own warning"] and "the user's own" not in text
    assert "after the run" in err  # torch's loggers are given back


@pytest.mark.slow
def test_compile_on_a_cpu_says_what_it_does_and_keeps_torch_quiet(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))  # compiled afresh: torch's messages come
    assert main_in(tmp_path, "train", *TINY, "--out", "run", "--compile", "--set", "data.limit=300") == 0
    err = capfd.readouterr().err
    assert "--compile on a CPU: the first steps are slower" in err and "run/compile.log" in err
    assert not re.search(r"^[WIE]\d{4} ", err, flags=re.M), err  # torch's own log lines (W1207 12:00:00 ...)
    assert "torch/" not in err and "CUDA_HOME" not in err
    assert (tmp_path / "run" / "compile.log").is_file()
