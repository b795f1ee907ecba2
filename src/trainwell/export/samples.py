"""Real inputs for the parity check: samples of the run's own test split, rebuilt through its task and
turned into model inputs exactly as evaluation does (eval transform; text: padded ids and lengths)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from trainwell._errors import TrainwellError
from trainwell.export.formats import ExportError

LIMIT = 256  # samples in the main parity batch
OTHER_SIZES = (1, 5)  # further batches, of sizes unlike the export example's, to prove the free batch dimension
EXAMPLE_SIZE = 2  # the batch the exporters trace


@dataclass
class Samples:
    split: str  # test (or val when the run has no test split)
    example: tuple[torch.Tensor, ...]  # what the exporters trace
    batches: list[tuple[torch.Tensor, ...]]  # what the parity check compares on


def test_samples(config_dict: dict[str, Any], payload: dict[str, Any]) -> Samples:
    from trainwell.config import Config
    from trainwell.tasks import get_task

    config = Config.model_validate(config_dict)
    task = get_task(config.task)
    task.adopt(payload)
    try:
        bundle = task.build_data(config)
    except TrainwellError as e:
        raise ExportError(f"The parity check runs the model on the run's own test split, and its data "
                          f"({config.data.name}) could not be read again: {e}",
                          fix="run `trainwell export` in the folder the run was trained in "
                              "(relative data paths are read from there)") from None
    _same_data(bundle, payload, getattr(task, "vocab", None))
    split, dataset = ("test", bundle.test) if bundle.test is not None and len(bundle.test) else ("val", bundle.val)
    if dataset is None or not len(dataset):
        raise ExportError("The run has neither a test nor a validation split to check the export on.",
                          fix="train with --set data.test_fraction=0.1")
    collate = task.loader_options(config, dataset, train=False).get("collate_fn")
    _, transform = task.transforms(config, bundle)
    order = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(0)).tolist()

    def batch(indices: list[int]) -> tuple[torch.Tensor, ...]:
        from trainwell.data import TensorData

        if isinstance(dataset, TensorData):
            x, _ = dataset[indices]
        else:
            x, _ = (collate or torch.utils.data.default_collate)([dataset[i] for i in indices])
        x = transform(x, None) if transform is not None else x
        return tuple(x) if isinstance(x, (tuple, list)) else (x,)

    sizes = [min(LIMIT, len(order))] + [s for s in OTHER_SIZES if s <= len(order)]
    return Samples(split, batch(order[:EXAMPLE_SIZE]), [batch(order[-s:] if i else order[:s])
                                                        for i, s in enumerate(sizes)])


def _same_data(bundle: Any, payload: dict[str, Any], vocab: Any) -> None:
    """Refuse data that changed since training: other classes, or (text) another vocabulary."""
    changed = bundle.class_names != payload.get("class_names")
    if vocab is not None and "vocab" in payload:
        changed = changed or vocab.to_dict() != payload["vocab"]
    if changed:
        raise ExportError("The run's data changed since training (its classes or vocabulary differ), so its "
                          "test split no longer matches the model.",
                          fix="export in the folder the run was trained in, with the data it was trained on")
