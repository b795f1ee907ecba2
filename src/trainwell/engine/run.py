"""From a validated config to a finished run folder: data -> model -> trainer -> test -> report."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from trainwell.config import Config, save_yaml
from trainwell.data import DataBundle, build_data
from trainwell.data.augment import Augment
from trainwell.data.loading import EpochLoader
from trainwell.engine.callbacks import Callback
from trainwell.engine.checkpoint import load_checkpoint
from trainwell.engine.checkpointing import Checkpointer
from trainwell.engine.device import resolve_device
from trainwell.engine.optim import build_optimizer, build_scheduler
from trainwell.engine.run_folder import write_json
from trainwell.engine.seed import seed_everything
from trainwell.engine.trainer import Trainer
from trainwell.models import build_model
from trainwell.tasks.classification import make_loss

EVAL_BATCH = 256  # evaluation needs no gradients, so larger batches are cheap


@dataclass
class RunResult:
    run_dir: Path
    summary: dict[str, Any]
    trainer: Trainer


def folder_callbacks(run_dir: Path, *, checkpoint_every: int | None, log_every: int,
                     extra: dict[str, Any]) -> list[Callback]:
    """metrics.csv, TensorBoard events and checkpoints: what every run folder gets."""
    from trainwell.report.metrics import CsvLogger, TensorBoardLogger

    return [CsvLogger(run_dir / "metrics.csv"), TensorBoardLogger(run_dir / "tensorboard", log_every),
            Checkpointer(run_dir / "checkpoints", every_steps=checkpoint_every, extra=extra)]


def data_payload(bundle: DataBundle) -> dict[str, Any]:
    """What predict needs to treat new inputs exactly like the training data."""
    return {"preprocess": bundle.preprocess.to_dict(), "class_names": bundle.class_names,
            "num_classes": bundle.num_classes, "label_mapping": bundle.info.get("label_mapping"),
            "info": bundle.info}


def train_from_config(config: Config, run_dir: Path, *, resume: bool = False, progress: bool = True,
                      console: Any = None, on_ready: Any = None, doctor: bool = True) -> RunResult:
    """Train as the config says, writing everything into ``run_dir``; resume from its last.pt if asked."""
    seed_everything(config.seed, config.deterministic)
    bundle = build_data(config.data)
    model = build_model(config.model, bundle.input_shape, bundle.num_classes)
    device = resolve_device(config.device)
    model.to(device)
    tc = config.train
    pin = device.type == "cuda"
    train_loader = EpochLoader(bundle.train, batch_size=tc.batch_size, shuffle=True, seed=config.seed,
                               num_workers=config.data.num_workers, pin_memory=pin)
    val_loader = _eval_loader(bundle.val, config, pin)
    optimizer = build_optimizer(model.parameters(), tc.optimizer, tc.lr, weight_decay=tc.weight_decay,
                                momentum=tc.momentum)
    scheduler, interval = build_scheduler(optimizer, tc.scheduler, epochs=tc.epochs,
                                          steps_per_epoch=train_loader.batches_per_epoch,
                                          step_size=tc.step_size, gamma=tc.gamma)
    pre = bundle.preprocess
    augment = Augment(config.data.augment, config.data.shift, config.data.rotate, config.data.zoom)

    def train_transform(x: torch.Tensor, g: torch.Generator | None) -> torch.Tensor:
        x = pre.scaled(x)
        if augment.active and pre.kind == "image" and g is not None:
            x = augment(x, g)
        return pre.normalize(x)

    def eval_transform(x: torch.Tensor, g: torch.Generator | None) -> torch.Tensor:
        return pre(x)

    extra = {"config": config.to_dict(), "data": data_payload(bundle)}
    callbacks = folder_callbacks(run_dir, checkpoint_every=tc.checkpoint_every, log_every=tc.log_every, extra=extra)
    if progress:
        from trainwell.engine.progress import ProgressBar

        callbacks.insert(0, ProgressBar(console))
    if doctor:
        from trainwell.doctor.callback import DoctorCallback

        callbacks.append(DoctorCallback(console=console, run_dir=run_dir))
    trainer = Trainer(model, make_loss(tc.label_smoothing), optimizer, train_loader, val_loader=val_loader,
                      epochs=tc.epochs, device=device, scheduler=scheduler, scheduler_interval=interval,
                      train_transform=train_transform, eval_transform=eval_transform, grad_clip=tc.grad_clip,
                      seed=config.seed, monitor=tc.monitor, callbacks=callbacks)
    if resume:
        trainer.load_state_dict(load_checkpoint(run_dir / "checkpoints" / "last.pt", device))
    else:
        save_yaml(config, run_dir / "config.yaml")
        from trainwell.env import collect_env

        write_json(run_dir / "env.json", collect_env())
    if on_ready is not None:
        on_ready(trainer, bundle)
    trainer.fit()
    summary = finish_run(trainer, run_dir, config=config.to_dict(),
                         test_loader=_eval_loader(bundle.test, config, pin), extra_summary={
                             "data": config.data.name, "model": config.model.name, "device": str(device),
                             "split_sizes": bundle.info.get("sizes"), "label_mapping": bundle.info.get("label_mapping"),
                         })
    return RunResult(run_dir, summary, trainer)


def _eval_loader(dataset: Any, config: Config, pin: bool) -> EpochLoader | None:
    if dataset is None or len(dataset) == 0:
        return None
    return EpochLoader(dataset, batch_size=max(EVAL_BATCH, config.train.batch_size), shuffle=False,
                       seed=config.seed, num_workers=config.data.num_workers, pin_memory=pin)


def finish_run(trainer: Trainer, run_dir: Path, *, config: dict[str, Any], test_loader: Any = None,
               extra_summary: dict[str, Any] | None = None) -> dict[str, Any]:
    """Evaluate the best checkpoint on the test split, then write summary.json and report.html."""
    st = trainer.state
    best_path = run_dir / "checkpoints" / "best.pt"
    final_weights = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    if best_path.exists():
        trainer.model.load_state_dict(load_checkpoint(best_path, trainer.device)["model"])
    best_row = next((r for r in st.history if r["epoch"] == st.best_epoch), st.history[-1] if st.history else {})
    summary: dict[str, Any] = {
        "test_accuracy": None, "test_loss": None,
        "val_accuracy": best_row.get("val_accuracy"), "val_loss": best_row.get("val_loss"),
        "best_epoch": st.best_epoch, "epochs": st.epoch, "steps": st.step,
        "train_seconds": st.train_seconds,
        "samples_per_second": st.samples_seen / st.train_seconds if st.train_seconds else None,
        "parameters": sum(p.numel() for p in trainer.model.parameters()),
    }
    if test_loader is not None:
        metrics = trainer.evaluate(test_loader)
        summary["test_loss"] = metrics["loss"]
        summary["test_accuracy"] = metrics.get("accuracy")
    trainer.model.load_state_dict(final_weights)  # the caller gets the model as training left it
    summary.update(extra_summary or {})
    summary["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    write_json(run_dir / "summary.json", summary)
    from trainwell.report.html import write_report

    report_summary = {k: v for k, v in summary.items() if not isinstance(v, (dict, list))}
    from trainwell.doctor.callback import DoctorCallback

    extra = []
    for cb in trainer.callbacks:
        if isinstance(cb, DoctorCallback):
            from trainwell.report.doctor_section import doctor_sections

            extra = doctor_sections(cb.findings, cb.grad_norms)
            summary["doctor_findings"] = [f.id for f in cb.findings]
    write_report(run_dir / "report.html", title=f"trainwell run: {run_dir.name}", epochs=st.history,
                 steps=st.steps, config=config, summary=report_summary, extra_sections=extra)
    return summary
