"""Logging a run to MLflow (``--logger mlflow``, the ``[mlflow]`` extra), as a training callback.

The store: ``log.mlflow_uri`` (``--tracking-uri``), else ``$MLFLOW_TRACKING_URI``, else a SQLite database in
``./mlruns`` (``sqlite:///<cwd>/mlruns/mlflow.db``, artifacts beside it in ``mlruns/artifacts``). Not MLflow's old
``./mlruns`` file store: MLflow 3 keeps it in maintenance mode and refuses it unless ``MLFLOW_ALLOW_FILE_STORE`` is
set, while a SQLite file needs no server and is what ``mlflow ui --backend-store-uri`` reads.

A run logs its config as params (dotted keys), every epoch's numbers with ``step=epoch``, the loss and learning
rate every ``log_every`` optimizer steps (``step/loss``, ``step/lr``, ``step=`` the global step), and, once the run
folder is complete, the test figures and the folder's small files (not the checkpoints unless asked). The run ends
FINISHED, or FAILED (an error) / KILLED (Ctrl-C). ``mlflow.json`` in the run folder names the MLflow run, so
``--resume`` continues it, skipping the points it already holds.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell import __version__
from trainwell._errors import TrainwellError
from trainwell.engine.callbacks import Callback
from trainwell.engine.run_folder import write_json

if TYPE_CHECKING:
    from trainwell.config import LogConfig
    from trainwell.engine.trainer import Trainer

DEFAULT_EXPERIMENT = "trainwell"
STATE_FILE = "mlflow.json"
# The run folder's small files, logged as artifacts at the end (checkpoints only with log.mlflow_checkpoints).
ARTIFACTS = ("report.html", "summary.json", "config.yaml", "README.md", "metrics.csv", "steps.csv", "env.json",
             "doctor.json")
PARAM_LENGTH = 6000  # MLflow 3's longest param value; config.yaml (an artifact) keeps any longer one whole
PARAMS_PER_CALL = 100  # MLflow's limits for one log_batch call
METRICS_PER_CALL = 1000
NOT_METRICS = {"epoch", "step", "is_best"}  # an epoch row's counters, not measurements
INSTALL = 'pip install "trainwell[mlflow]"'


def import_mlflow(uri: str) -> Any:
    """The mlflow module, or a TrainwellError naming the install; a SQLite store also needs SQLAlchemy and alembic
    (the extra brings them; ``mlflow-skinny`` alone does not)."""
    try:
        import mlflow

        if uri.startswith("sqlite:"):
            import alembic  # noqa: F401
            import sqlalchemy  # noqa: F401
    except ImportError as e:
        raise TrainwellError(f"Logging to MLflow (--logger mlflow, {uri}) needs the package {e.name or 'mlflow'}, "
                             "which is not installed.", fix=INSTALL) from None
    return mlflow


def store_uri(given: str | None) -> str:
    """The tracking URI a run logs to: ``given``, else ``$MLFLOW_TRACKING_URI``, else ``./mlruns/mlflow.db``; a
    relative SQLite path is made absolute (a resumed run finds the same store from any folder)."""
    uri = given or os.environ.get("MLFLOW_TRACKING_URI") or "sqlite:///mlruns/mlflow.db"
    path = sqlite_path(uri)
    return uri if path is None else f"sqlite:///{path}"


def sqlite_path(uri: str) -> Path | None:
    """The absolute database file of a ``sqlite:///`` URI (``sqlite:///rel.db``, ``sqlite:////abs.db``)."""
    prefix = "sqlite:///"
    if not uri.startswith(prefix) or len(uri) == len(prefix):
        return None
    return Path(uri[len(prefix):]).expanduser().absolute()


def flat_params(tree: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """``{"train": {"lr": 0.001}}`` -> ``("train.lr", "0.001")``: strings as they are, other values as JSON."""
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from flat_params(value, f"{name}.")
        else:
            text = value if isinstance(value, str) else json.dumps(value)
            yield name, text if len(text) <= PARAM_LENGTH else text[:PARAM_LENGTH - 3] + "..."


def numbers(row: dict[str, Any], skip: set[str] = NOT_METRICS) -> dict[str, float]:
    """The row's plain numbers (not flags, counters or missing values)."""
    return {k: float(v) for k, v in row.items()
            if k not in skip and isinstance(v, (int, float)) and not isinstance(v, bool)}


class MlflowLogger(Callback):
    """Logs a run to an MLflow tracking store; only the main process (rank 0) gets one.

    ``run_dir``: the run folder (``mlflow.json``, the artifacts at the end; the run ends in ``on_run_end``), or
    ``None`` (``fit`` without ``out``: the run ends with training). ``params``: the config, flattened to dotted keys.
    """

    def __init__(self, *, params: dict[str, Any], run_dir: Path | None = None, uri: str | None = None,
                 experiment: str = DEFAULT_EXPERIMENT, run_name: str | None = None, checkpoints: bool = False,
                 log_every: int = 10) -> None:
        self.uri = store_uri(uri)
        self.mlflow = import_mlflow(self.uri)  # before any data is read: a missing package fails the run at once
        self.params = params
        self.run_dir = run_dir
        self.experiment = experiment
        self.run_name = run_name or (run_dir.name if run_dir is not None else "fit")
        self.checkpoints = checkpoints
        self.log_every = log_every
        self.client: Any = None
        self.run_id: str | None = None
        self._logged_epoch = 0  # points a resumed MLflow run holds already
        self._logged_step = 0

    # ------------------------------------------------------------------ the run's life

    def on_fit_start(self, trainer: Trainer) -> None:
        saved = self._saved()
        self.uri = saved.get("tracking_uri", self.uri)
        self.client = self.mlflow.MlflowClient(tracking_uri=self.uri)
        if saved:
            self._continue(saved["run_id"])
        else:
            self._start()
        print(f"MLflow: logging to {self.uri}, experiment {self.experiment}, run {self.run_id}"
              + (" (continued)" if saved else ""), file=sys.stderr)

    def on_log(self, trainer: Trainer, rows: list[dict[str, Any]]) -> None:
        now = _millis()
        metric = self.mlflow.entities.Metric
        points = [metric(f"step/{key}", float(row[key]), now, row["step"]) for row in rows for key in ("loss", "lr")
                  if row["step"] > self._logged_step and row["step"] % self.log_every == 0]
        self._log_metrics(points)

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        if row["epoch"] <= self._logged_epoch:  # a resumed run redoing an epoch it logged before it stopped
            return
        now, metric = _millis(), self.mlflow.entities.Metric
        self._log_metrics([metric(k, v, now, row["epoch"]) for k, v in numbers(row).items()])

    def on_fit_end(self, trainer: Trainer) -> None:
        if self.run_dir is None:  # no run folder: nothing comes after training
            self._end("FINISHED")
        else:  # on_run_end ends it; a run that dies before then is FAILED, not RUNNING forever
            atexit.register(self._abandoned)

    def on_exception(self, trainer: Trainer, error: BaseException) -> None:
        if self.run_id is not None:
            self._end("KILLED" if isinstance(error, KeyboardInterrupt) else "FAILED")

    def on_run_end(self, trainer: Trainer, summary: dict[str, Any]) -> None:
        """Test figures and the summary's other numbers (``best_`` before the names an epoch logs: best_val_loss),
        then the run folder's small files; the run ends FINISHED."""
        if self.run_id is None or self.run_dir is None:
            return
        per_epoch = {k for row in trainer.state.history for k in row}
        figures = {(f"best_{k}" if k in per_epoch else k): v for k, v in numbers(summary, set()).items()}
        now, metric = _millis(), self.mlflow.entities.Metric
        self._log_metrics([metric(k, v, now, trainer.state.epoch) for k, v in figures.items()])
        for name in ARTIFACTS:
            if (self.run_dir / name).is_file():
                self.client.log_artifact(self.run_id, str(self.run_dir / name))
        best = self.run_dir / "checkpoints" / "best.pt"
        if self.checkpoints and best.is_file():
            self.client.log_artifact(self.run_id, str(best), artifact_path="checkpoints")
        self._end("FINISHED")
        atexit.unregister(self._abandoned)

    # ------------------------------------------------------------------ helpers

    def _start(self) -> None:
        try:
            found = self.client.get_experiment_by_name(self.experiment)
            experiment_id = found.experiment_id if found is not None else self._create_experiment()
            run = self.client.create_run(experiment_id, run_name=self.run_name, tags=self._tags())
        except self.mlflow.exceptions.MlflowException as e:
            raise TrainwellError(f"MLflow could not open the tracking store {self.uri}: {e.message}",
                                 fix="check --tracking-uri (log.mlflow_uri): e.g. sqlite:///mlruns/mlflow.db, or "
                                     "http://HOST:PORT of a running `mlflow server`") from None
        self.run_id = run.info.run_id
        params = [self.mlflow.entities.Param(k, v) for k, v in flat_params(self.params)]
        for i in range(0, len(params), PARAMS_PER_CALL):
            self.client.log_batch(self.run_id, params=params[i:i + PARAMS_PER_CALL])
        if self.run_dir is not None:
            write_json(self.run_dir / STATE_FILE, {"tracking_uri": self.uri, "experiment": self.experiment,
                                                   "experiment_id": experiment_id, "run_id": self.run_id})

    def _create_experiment(self) -> str:
        """A new experiment; in a SQLite store its artifacts go beside the database, not into the current folder."""
        db = sqlite_path(self.uri)
        if db is not None:
            db.parent.mkdir(parents=True, exist_ok=True)
        location = (db.parent / "artifacts").as_uri() if db is not None else None
        return self.client.create_experiment(self.experiment, artifact_location=location)

    def _continue(self, run_id: str) -> None:
        """The MLflow run of a resumed run folder, RUNNING again, with how far it was logged."""
        try:
            run = self.client.get_run(run_id)
        except self.mlflow.exceptions.MlflowException as e:
            raise TrainwellError(f"The run folder's {STATE_FILE} names MLflow run {run_id} in {self.uri}, which "
                                 f"cannot be read: {e.message}",
                                 fix=f"make that store reachable again, or delete {self.run_dir / STATE_FILE} to log "
                                     "the rest of the run to a new MLflow run") from None
        self.run_id = run_id
        self.experiment = self.client.get_experiment(run.info.experiment_id).name
        self.client.update_run(run_id, status="RUNNING")
        self._logged_epoch = self._last_step("train_loss")
        self._logged_step = self._last_step("step/loss")

    def _last_step(self, key: str) -> int:
        return max((m.step for m in self.client.get_metric_history(self.run_id, key)), default=0)

    def _saved(self) -> dict[str, Any]:
        path = self.run_dir / STATE_FILE if self.run_dir is not None else None
        if path is None or not path.is_file():
            return {}
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            return {"tracking_uri": str(saved["tracking_uri"]), "run_id": str(saved["run_id"])}
        except (ValueError, KeyError, TypeError):
            raise TrainwellError(f"{path} cannot be read (it should name the MLflow run this folder logs to).",
                                 fix=f"delete {path} to log the rest of the run to a new MLflow run") from None

    def _tags(self) -> dict[str, str]:
        tags = {"trainwell.version": __version__}
        if self.run_dir is not None:
            tags["trainwell.run_dir"] = str(self.run_dir.absolute())
        return tags

    def _log_metrics(self, points: list[Any]) -> None:
        for i in range(0, len(points), METRICS_PER_CALL):
            self.client.log_batch(self.run_id, metrics=points[i:i + METRICS_PER_CALL])

    def _end(self, status: str) -> None:
        self.client.set_terminated(self.run_id, status=status)
        self.run_id = None

    def _abandoned(self) -> None:
        if self.run_id is not None:
            self._end("FAILED")


def _millis() -> int:
    return int(time.time() * 1000)


def run_loggers(log: LogConfig, *, params: dict[str, Any], run_dir: Path | None, log_every: int) -> list[Callback]:
    """The loggers ``log.loggers`` names, made now: a missing package fails the run before any data is read."""
    if "mlflow" not in log.loggers:
        return []
    return [MlflowLogger(params=params, run_dir=run_dir, uri=log.mlflow_uri, experiment=log.mlflow_experiment,
                         checkpoints=log.mlflow_checkpoints, log_every=log_every)]
