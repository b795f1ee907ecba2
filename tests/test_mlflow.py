"""--logger mlflow against a real local MLflow store (SQLite, read back with MlflowClient): params, per-epoch metrics
equal to metrics.csv, test figures equal to summary.json, the folder's files as artifacts, the run's end status, one
MLflow run continued by --resume, rank 0 alone logging; and the clear error when mlflow is not installed."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trainwell.cli import main
from trainwell.engine.callbacks import Callback
from trainwell.report.mlflow_logger import flat_params, store_uri

ARGS = ["--data", "digits", "--epochs", "2", "--set", "data.limit=300", "--batch-size", "16",
        "--set", "model.channels=[8]", "--set", "model.hidden=[16]", "--device", "cpu", "--threads", "1",
        "--no-doctor", "--no-progress"]
BATCHES = 15  # digits limited to 300 samples: 240 training samples, 15 batches of 16 per epoch


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One SQLite store for the module (creating its tables takes seconds); each test logs to its own experiment."""
    return f"sqlite:///{tmp_path_factory.mktemp('store') / 'mlflow.db'}"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


def runs_of(store: str, experiment: str) -> list[Any]:
    mlflow = pytest.importorskip("mlflow")
    client = mlflow.MlflowClient(tracking_uri=store)
    found = client.get_experiment_by_name(experiment)
    assert found is not None, f"no experiment {experiment!r} in {store}"
    return client.search_runs([found.experiment_id])


def history(store: str, run_id: str, key: str) -> list[tuple[int, float]]:
    import mlflow

    return sorted((m.step, m.value) for m in mlflow.MlflowClient(tracking_uri=store).get_metric_history(run_id, key))


def column(run: Path, name: str) -> list[float]:
    with (run / "metrics.csv").open(newline="") as f:
        return [float(row[name]) for row in csv.DictReader(f)]


# ---------------------------------------------------------------------------------------------------- no store


def test_params_are_dotted_keys_with_json_values_and_long_ones_are_cut() -> None:
    params = dict(flat_params({"train": {"lr": 0.001, "grad_clip": None, "early_stop": {"patience": 3}},
                               "model": {"channels": [8], "kwargs": {}}, "name": "x" * 7000}))
    assert params == {"train.lr": "0.001", "train.grad_clip": "null", "train.early_stop.patience": "3",
                      "model.channels": "[8]", "model.kwargs": "{}", "name": "x" * 5997 + "..."}


def test_the_store_defaults_to_a_sqlite_database_in_mlruns_and_relative_paths_become_absolute(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert store_uri(None) == f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}"
    assert store_uri("sqlite:///db/x.db") == f"sqlite:///{tmp_path / 'db' / 'x.db'}"
    assert store_uri("sqlite:////abs/x.db") == "sqlite:////abs/x.db"
    assert store_uri("http://localhost:5000") == "http://localhost:5000"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://tracking:5000")
    assert store_uri(None) == "http://tracking:5000"


def test_a_tracking_uri_without_the_mlflow_logger_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", *ARGS, "--out", "run", "--tracking-uri", "sqlite:///x.db"]) == 2
    err = capsys.readouterr().err
    assert "mlflow_uri is set but loggers does not include mlflow" in err and "--logger mlflow" in err
    assert not Path("run").exists()


def test_without_mlflow_the_logger_fails_before_training_naming_the_extra(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)  # what `import mlflow` finds when it is not installed
    assert main(["train", *ARGS, "--out", "run", "--logger", "mlflow"]) == 2
    err = capsys.readouterr().err
    assert "needs the package mlflow" in err and 'pip install "trainwell[mlflow]"' in err
    assert "split train" not in err and not Path("run").exists()  # no data read, no folder left behind


# ---------------------------------------------------------------------------------------------------- a real store


@pytest.mark.slow
def test_a_run_logs_params_metrics_test_figures_and_files_to_a_local_store(
        store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("mlflow")
    experiment = "whole-run"
    assert main(["train", *ARGS, "--out", "run", "--logger", "mlflow", "--tracking-uri", store,
                 "--set", f"log.mlflow_experiment={experiment}"]) == 0
    assert f"MLflow: logging to {store}, experiment {experiment}, run " in capsys.readouterr().err
    run_dir = tmp_path / "run"
    [run] = runs_of(store, experiment)
    assert run.info.status == "FINISHED" and run.info.run_name == "run"
    assert json.loads((run_dir / "mlflow.json").read_text())["run_id"] == run.info.run_id
    config = (run_dir / "config.yaml").read_text()
    lr = next(line.split(":")[1].strip() for line in config.splitlines() if line.strip().startswith("lr:"))
    assert float(run.data.params["train.lr"]) == float(lr)
    assert run.data.params["model.channels"] == "[8]" and run.data.params["data.name"] == "digits"
    assert run.data.tags["trainwell.run_dir"] == str(run_dir)
    for key in ("val_loss", "train_loss", "val_accuracy"):
        assert history(store, run.info.run_id, key) == list(enumerate(column(run_dir, key), start=1)), key
    summary = json.loads((run_dir / "summary.json").read_text())
    assert run.data.metrics["test_accuracy"] == summary["test_accuracy"]
    assert run.data.metrics["best_val_loss"] == summary["val_loss"]
    assert [s for s, _ in history(store, run.info.run_id, "step/loss")] == list(range(10, 2 * BATCHES + 1, 10))
    import mlflow

    files = {a.path for a in mlflow.MlflowClient(tracking_uri=store).list_artifacts(run.info.run_id)}
    assert {"report.html", "summary.json", "config.yaml", "README.md", "metrics.csv"} <= files
    assert not any(name.startswith("checkpoints") or name.endswith(".pt") for name in files)


class Fail(Callback):
    """Raises ``error`` after ``batches`` training batches (Ctrl-C, or a crash)."""

    def __init__(self, batches: int, error: type[BaseException]) -> None:
        self.batches, self.error = batches, error

    def on_train_batch_end(self, trainer: object, loss: float) -> None:
        self.batches -= 1
        if self.batches == 0:
            raise self.error("stopped by the test")


@pytest.fixture
def fail_after(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    import trainwell.app.run as app_run

    made = app_run.folder_callbacks

    def install(batches: int, error: type[BaseException]) -> None:
        monkeypatch.setattr(app_run, "folder_callbacks", lambda *a, **k: made(*a, **k) + [Fail(batches, error)])

    yield install
    monkeypatch.setattr(app_run, "folder_callbacks", made)


@pytest.mark.slow
def test_ctrl_c_marks_the_run_killed_and_resume_continues_the_same_mlflow_run(
        store: str, tmp_path: Path, fail_after: Any, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("mlflow")
    experiment = "resumed"
    fail_after(BATCHES + 3, KeyboardInterrupt)  # in the second epoch
    assert main(["train", *ARGS, "--out", "run", "--logger", "mlflow", "--tracking-uri", store,
                 "--set", f"log.mlflow_experiment={experiment}"]) == 130
    [stopped] = runs_of(store, experiment)
    assert stopped.info.status == "KILLED"
    assert [s for s, _ in history(store, stopped.info.run_id, "val_loss")] == [1]
    fail_after(0, KeyboardInterrupt)  # never
    capsys.readouterr()
    assert main(["train", "--resume", "run"]) == 0
    assert f"run {stopped.info.run_id} (continued)" in capsys.readouterr().err
    [run] = runs_of(store, experiment)
    assert run.info.run_id == stopped.info.run_id and run.info.status == "FINISHED"
    assert history(store, run.info.run_id, "val_loss") == list(enumerate(column(tmp_path / "run", "val_loss"), 1))


@pytest.mark.slow
def test_a_crash_after_logging_past_the_last_checkpoint_logs_each_step_once_after_resume(
        store: str, fail_after: Any) -> None:
    pytest.importorskip("mlflow")
    experiment = "crashed"
    # last.pt every 4 steps, losses read every 5: the crash at step 27 comes after step 25 was logged, and the
    # resume starts again from step 24.
    fail_after(27, RuntimeError)
    with pytest.raises(RuntimeError, match="stopped by the test"):
        main(["train", *ARGS, "--out", "run", "--logger", "mlflow", "--tracking-uri", store, "--checkpoint-every", "4",
              "--set", "train.log_every=5", "--set", f"log.mlflow_experiment={experiment}",
              "--set", "log.mlflow_checkpoints=true"])
    [failed] = runs_of(store, experiment)
    assert failed.info.status == "FAILED"
    assert [s for s, _ in history(store, failed.info.run_id, "step/loss")][-1] == 25
    fail_after(0, RuntimeError)
    assert main(["train", "--resume", "run"]) == 0
    [run] = runs_of(store, experiment)
    assert run.info.run_id == failed.info.run_id and run.info.status == "FINISHED"
    assert [s for s, _ in history(store, run.info.run_id, "step/loss")] == list(range(5, 2 * BATCHES + 1, 5))
    assert [s for s, _ in history(store, run.info.run_id, "val_loss")] == [1, 2]
    import mlflow  # log.mlflow_checkpoints=true adds best.pt to the folder's files

    logged = mlflow.MlflowClient(tracking_uri=store).list_artifacts(run.info.run_id, "checkpoints")
    assert [a.path for a in logged] == ["checkpoints/best.pt"]


@pytest.mark.slow
def test_fit_without_a_folder_logs_the_epochs_and_finishes_the_run(store: str) -> None:
    pytest.importorskip("mlflow")
    import torch

    from trainwell import fit

    x, y = torch.randn(64, 4, generator=torch.Generator().manual_seed(0)), torch.arange(64) % 3
    data = torch.utils.data.TensorDataset(x, y)
    result = fit(torch.nn.Linear(4, 3), data, data, epochs=2, batch_size=16, progress="none", loggers=["mlflow"],
                 mlflow_uri=store, mlflow_experiment="fit")
    [run] = runs_of(store, "fit")
    assert run.info.status == "FINISHED" and run.data.params["lr"] == "0.001"
    assert history(store, run.info.run_id, "val_loss") == [(r["epoch"], r["val_loss"]) for r in result.history]


@pytest.mark.slow
def test_under_two_processes_rank_0_alone_logs(store: str, tmp_path: Path) -> None:
    pytest.importorskip("mlflow")
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    command = [sys.executable, "-m", "trainwell", "train", *ARGS, "--epochs", "1", "--nproc", "2", "--out", "run",
               "--logger", "mlflow", "--tracking-uri", store, "--set", "log.mlflow_experiment=ddp"]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (done.stdout + done.stderr).count("MLflow: logging to") == 1
    [run] = runs_of(store, "ddp")
    assert run.info.status == "FINISHED" and [s for s, _ in history(store, run.info.run_id, "val_loss")] == [1]
