"""Hardware knobs never change the optimization: ``--accumulate 4`` trains like one batch of 64, augmentation
included, because augmentation randomness follows the sample (seed, epoch, sample index), not the batch."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from trainwell.data.augment import Augment
from trainwell.data.bundle import TensorData
from trainwell.data.loading import EpochLoader
from trainwell.engine.seed import SampleDraws
from trainwell.engine.trainer import Trainer


def _augmented_inputs(micro: int) -> dict[int, torch.Tensor]:
    """Each sample's augmented image in two epochs of batch 16, computed in micro-batches of ``micro``."""
    g = torch.Generator().manual_seed(0)
    n = 37  # the last global batch is short: 16, 16, 5
    data = TensorData(torch.rand(n, 1, 8, 8, generator=g), torch.arange(n))
    augment = Augment("affine+flip", 2, 15.0, 0.1)
    seen: dict[int, torch.Tensor] = {}

    def transform(x: torch.Tensor, draws: SampleDraws | None) -> torch.Tensor:
        assert draws is not None
        out = augment(x, draws)
        for index, image in zip(draws.indices, out):
            seen[draws.epoch.epoch * 1000 + index] = image.clone()
        return out.flatten(1)

    model = nn.Linear(64, n)
    loader = EpochLoader(data, batch_size=16, micro_batch_size=micro, shuffle=True, seed=5)
    Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1), loader, epochs=2,
            train_transform=transform, seed=5, accumulate=16 // micro).fit()
    return seen


def test_every_sample_is_augmented_the_same_in_one_batch_or_in_micro_batches() -> None:
    whole, micro = _augmented_inputs(16), _augmented_inputs(4)
    assert whole.keys() == micro.keys() and len(whole) == 2 * 37
    assert all(torch.equal(whole[k], micro[k]) for k in whole)
    assert not torch.equal(whole[3], whole[1003])  # a new epoch draws anew


@pytest.mark.slow
def test_accumulate_4_ends_with_the_weights_of_batch_64(tmp_path: Path) -> None:
    """digits with random affine augmentation and a one-cycle schedule, a CNN without BatchNorm or dropout."""
    from trainwell.app.configure import resolve
    from trainwell.app.run import train_from_config

    common = ["data.augment=affine", "model.batch_norm=false", "model.channels=[8,16]", "model.hidden=[32]",
              "train.epochs=2", "train.batch_size=64"]
    weights = []
    for accumulate in (1, 4):
        config = resolve(flags={"data.name": "digits"}, sets=[*common, f"train.accumulate={accumulate}"])
        (tmp_path / str(accumulate)).mkdir()
        result = train_from_config(config, tmp_path / str(accumulate), progress="none", doctor=False)
        assert result.trainer.state.step == 2 * 23  # 1437 training samples: 23 global batches per epoch
        weights.append(result.trainer.model.state_dict())
    gap = max(float((weights[0][k] - weights[1][k]).abs().max()) for k in weights[0])
    assert gap <= 1e-4, f"max weight difference {gap:.3g}"
    print(f"max abs weight difference, batch 64 vs accumulate 4: {gap:.3g}")
