"""``--batch-size auto`` on a run: the largest power-of-two micro-batch whose training step fits in GPU memory
(``engine/batch_search.py``), tried with the run's own model, optimizer, loss, data, precision and accumulation,
the model restored after each try. On a CPU (or MPS) there is no memory limit to search: the run uses the
configured batch size, and says so."""

from __future__ import annotations

from typing import Any

from trainwell.engine.batch_search import BatchSearch, free_memory, largest_fitting
from trainwell.engine.callbacks import Callback
from trainwell.engine.snapshot import preserved
from trainwell.engine.trainer import StopTraining, Trainer


def choose_batch_size(config: Any, parts: Any, *, configured: int) -> tuple[int, dict[str, Any], str]:
    """(the global batch, the record for batch_size_search.json, the sentence that says why)."""
    device = parts.device
    if device.type != "cuda":
        line = (f"batch size {configured}: --batch-size auto searches GPU memory for the largest batch that fits; "
                f"on {device.type} there is no such limit to find, so this run uses the configured batch size")
        return configured, {"searched": False, "device": device.type, "batch_size": configured, "reason": line}, line
    found = search(config, parts)
    tried = ", ".join(f"{m} {'fits' if r == 'fits' else 'out of memory'}" for m, r in found.tried.items())
    per = found.processes * found.accumulate
    line = (f"batch size {found.global_batch}: the largest power-of-two micro-batch whose training step fits in GPU "
            f"memory is {found.micro}" + (f" (x {found.processes} process(es) x {found.accumulate} micro-batches "
                                          f"per step)" if per > 1 else "")
            + ("" if found.limited_by == "memory" else
               f"; the search stopped at the cap of {found.cap} samples (the training split, at most 4096)")
            + f"; tried {tried}")
    return found.global_batch, {"searched": True, "device": str(device), **found.to_dict(), "reason": line}, line


def search(config: Any, parts: Any) -> BatchSearch:
    """Try one training step per power-of-two micro-batch on the run's parts (a fresh optimizer each time, so
    its state is counted), up to the training split's size."""
    from trainwell.engine.optim import build_optimizer

    tc = config.train
    processes, accumulate = parts.strategy.world_size, tc.accumulate
    transforms = parts.task.transforms(config, parts.bundle)

    def try_size(micro: int) -> None:
        optimizer = build_optimizer([*parts.model.parameters(), *parts.loss_fn.parameters()], tc.optimizer, 0.0,
                                    weight_decay=tc.weight_decay, momentum=tc.momentum)
        trainer = Trainer(parts.model, parts.loss_fn, optimizer, parts.loader(micro * processes * accumulate),
                          device=parts.device, precision=tc.precision, accumulate=accumulate, grad_clip=tc.grad_clip,
                          seed=config.seed, train_transform=transforms[0], callbacks=[_OneStep()])
        with preserved(parts.model, parts.loss_fn):
            trainer.fit()

    found = largest_fitting(try_size, cap=len(parts.bundle.train), processes=processes, accumulate=accumulate,
                            device=parts.device)
    free_memory(parts.device)
    return found


class _OneStep(Callback):
    def on_train_batch_end(self, trainer: Trainer, loss: Any) -> None:
        raise StopTraining
