"""Accumulation keeps the optimization of the global batch: every step's gradient is the gradient of the mean
loss over its global batch, also for the last short batch and for per-token losses with ignored positions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch.utils.data import Dataset

from trainwell._errors import ConfigError
from trainwell.data.loading import EpochLoader
from trainwell.engine.accumulate import micro_batch_size
from trainwell.engine.callbacks import Callback
from trainwell.engine.trainer import Trainer


class _Grads(Callback):
    """Every step's gradients (after backward, before the step)."""

    def __init__(self) -> None:
        self.steps: list[list[torch.Tensor]] = []

    def on_before_optimizer_step(self, trainer: Trainer) -> None:
        self.steps.append([p.grad.clone() for p in trainer.model.parameters()])


def _accumulated_grads(model: nn.Module, loss_fn: nn.Module, data: Dataset, *, batch: int,
                       accumulate: int) -> tuple[list[list[torch.Tensor]], list[list[int]]]:
    """Train one epoch with lr 0 (the weights stay put); each step's gradients and its global batch's indices."""
    loader = EpochLoader(data, batch_size=batch, micro_batch_size=batch // accumulate, shuffle=True, seed=3)
    grads = _Grads()
    trainer = Trainer(model, loss_fn, torch.optim.SGD(model.parameters(), lr=0.0), loader, epochs=1,
                      accumulate=accumulate, callbacks=[grads])
    trainer.fit()
    whole = EpochLoader(data, batch_size=batch, shuffle=True, seed=3)
    return grads.steps, [m.indices for m in whole.plan()]


def _direct_grads(model: nn.Module, loss_fn: nn.Module, data: Dataset, indices: list[int]) -> list[torch.Tensor]:
    x, y = data[indices]
    model.zero_grad(set_to_none=True)
    loss_fn(model(x), y).backward()
    return [p.grad.clone() for p in model.parameters()]


class _Pairs(Dataset):
    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.x, self.y = x, y

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: Any) -> tuple[torch.Tensor, torch.Tensor]:
        return self.x[i], self.y[i]


def test_every_step_including_the_last_short_one_has_the_global_batch_gradient() -> None:
    g = torch.Generator().manual_seed(0)
    data = _Pairs(torch.randn(29, 6, generator=g), torch.randint(0, 3, (29,), generator=g))  # 3 x 8, then 5
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    steps, batches = _accumulated_grads(model, nn.CrossEntropyLoss(), data, batch=8, accumulate=4)
    assert [len(b) for b in batches] == [8, 8, 8, 5] and len(steps) == 4  # micro-batches 2,2,2,2 then 2,2,1
    for got, indices in zip(steps, batches):
        want = _direct_grads(model, nn.CrossEntropyLoss(), data, indices)
        assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-5) for a, b in zip(got, want))


class _Tagger(nn.Module):
    """Per-token classes: (B, T) token ids -> (B, C, T) logits, the layout nn.CrossEntropyLoss takes."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.out = nn.Linear(8, 4)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.out(self.embed(tokens)).transpose(1, 2)


def test_a_per_token_loss_is_averaged_over_the_counted_tokens_of_the_whole_global_batch() -> None:
    g = torch.Generator().manual_seed(1)
    n, t = 22, 9
    tokens = torch.randint(1, 20, (n, t), generator=g)
    labels = torch.randint(0, 4, (n, t), generator=g)
    lengths = torch.randint(1, t + 1, (n,), generator=g)  # padded positions are ignored: very uneven counts
    labels[torch.arange(t)[None, :] >= lengths[:, None]] = -100
    data = _Pairs(tokens, labels)
    torch.manual_seed(0)
    model = _Tagger()
    loss_fn = nn.CrossEntropyLoss(ignore_index=-100)
    steps, batches = _accumulated_grads(model, loss_fn, data, batch=8, accumulate=4)
    assert [len(b) for b in batches] == [8, 8, 6]
    for got, indices in zip(steps, batches):
        want = _direct_grads(model, loss_fn, data, indices)
        assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-5) for a, b in zip(got, want))
    # Weighting micro-batches by samples instead (the classic mistake) gives another gradient here.
    x, y = data[batches[0]]
    model.zero_grad(set_to_none=True)
    for part in range(4):
        (loss_fn(model(x[2 * part:2 * part + 2]), y[2 * part:2 * part + 2]) / 4).backward()
    naive = model.out.weight.grad.clone()
    assert not torch.allclose(naive, _direct_grads(model, loss_fn, data, batches[0])[1], atol=1e-4)


def test_class_weights_count_each_target_by_its_class_weight() -> None:
    g = torch.Generator().manual_seed(2)
    data = _Pairs(torch.randn(16, 5, generator=g), torch.randint(0, 3, (16,), generator=g))
    torch.manual_seed(0)
    model = nn.Linear(5, 3)
    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor([0.2, 1.0, 3.0]))
    steps, batches = _accumulated_grads(model, loss_fn, data, batch=16, accumulate=4)
    want = _direct_grads(model, loss_fn, data, batches[0])
    assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-5) for a, b in zip(steps[0], want))


def test_class_weights_with_an_ignore_index_past_the_classes_count_only_the_real_targets() -> None:
    """Segmentation's ``ignore_index=255`` with class weights: the ignored targets index no weight (an IndexError
    under accumulation before), and the step's gradient is still the global batch's."""
    g = torch.Generator().manual_seed(6)
    y = torch.randint(0, 3, (16,), generator=g)
    y[::5] = 255
    data = _Pairs(torch.randn(16, 5, generator=g), y)
    torch.manual_seed(0)
    model = nn.Linear(5, 3)
    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor([0.2, 1.0, 3.0]), ignore_index=255)
    steps, batches = _accumulated_grads(model, loss_fn, data, batch=16, accumulate=2)
    want = _direct_grads(model, loss_fn, data, batches[0])
    assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-5) for a, b in zip(steps[0], want))


def test_targets_are_counted_where_they_are_and_class_weights_follow_them() -> None:
    """The targets are counted before the batch moves to the device: class weights kept on another device are
    brought to the targets once (a device mismatch on CUDA before; ``meta`` stands for the other device here)."""
    from trainwell.engine.accumulate import target_count

    loss_fn = nn.CrossEntropyLoss(weight=torch.tensor([0.5, 2.0]), ignore_index=255)
    counted = target_count(loss_fn, torch.tensor([0, 1, 255, 1], device="meta"))
    assert isinstance(counted, torch.Tensor) and counted.device.type == "meta"
    counted = target_count(loss_fn, torch.tensor([0, 1, 255, 1]))
    assert isinstance(counted, torch.Tensor) and float(counted) == pytest.approx(4.5)


def test_a_plain_dataloader_yields_micro_batches_that_accumulate_per_step() -> None:
    g = torch.Generator().manual_seed(4)
    x, y = torch.randn(10, 4, generator=g), torch.randint(0, 2, (10,), generator=g)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=2)
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    grads = _Grads()
    trainer = Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.0), loader, epochs=1,
                      accumulate=3, callbacks=[grads])
    assert trainer.steps_per_epoch() == 2
    trainer.fit()
    assert trainer.state.step == 2 and trainer.state.history[-1]["step"] == 2
    for got, rows in zip(grads.steps, (slice(0, 6), slice(6, 10))):  # 3 micro-batches, then the 2 left
        model.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x[rows]), y[rows]).backward()
        assert all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(got, model.parameters()))


def test_the_logged_step_loss_is_the_global_batch_mean_loss() -> None:
    g = torch.Generator().manual_seed(5)
    data = _Pairs(torch.randn(12, 4, generator=g), torch.randint(0, 2, (12,), generator=g))
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    rows: list[dict[str, Any]] = []

    class Keep(Callback):
        def on_log(self, trainer: Trainer, logged: list[dict[str, Any]]) -> None:
            rows.extend(logged)

    loader = EpochLoader(data, batch_size=12, micro_batch_size=3, shuffle=False, seed=0)
    Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.0), loader, epochs=1,
            accumulate=4, callbacks=[Keep()]).fit()
    with torch.no_grad():
        want = float(nn.functional.cross_entropy(model(data.x), data.y))
    assert rows[0]["loss"] == pytest.approx(want, rel=1e-6)


def test_a_global_batch_that_does_not_split_evenly_is_a_config_error() -> None:
    assert micro_batch_size(64, processes=2, accumulate=4) == 8
    with pytest.raises(ConfigError, match="global batch") as err:
        micro_batch_size(60, processes=2, accumulate=4)
    assert "divisible by 8" in str(err.value)


def test_the_config_rejects_an_accumulate_that_does_not_divide_the_batch(tmp_path: Path) -> None:
    from trainwell.app.configure import resolve

    assert resolve(sets=["train.batch_size=64", "train.accumulate=4"]).train.accumulate == 4
    with pytest.raises(ConfigError, match="accumulate"):
        resolve(sets=["train.batch_size=64", "train.accumulate=3"])


def test_a_functional_cross_entropy_with_its_options_bound_counts_targets_too() -> None:
    """``loss=functools.partial(F.cross_entropy, ignore_index=-100)`` (a common way to pass options): its mean is
    over the counted tokens, so the micro-batches are weighted by counted tokens, as for the module (they were
    weighted by samples, and the gradient was not the global batch's)."""
    import functools

    g = torch.Generator().manual_seed(1)
    n, t = 22, 9
    tokens = torch.randint(1, 20, (n, t), generator=g)
    labels = torch.randint(0, 4, (n, t), generator=g)
    lengths = torch.randint(1, t + 1, (n,), generator=g)
    labels[torch.arange(t)[None, :] >= lengths[:, None]] = -100
    data = _Pairs(tokens, labels)
    torch.manual_seed(0)
    model = _Tagger()
    loss_fn = functools.partial(nn.functional.cross_entropy, ignore_index=-100)
    steps, batches = _accumulated_grads(model, loss_fn, data, batch=8, accumulate=4)
    for got, indices in zip(steps, batches):
        want = _direct_grads(model, loss_fn, data, indices)
        assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-5) for a, b in zip(got, want))


@pytest.mark.cuda
def test_counting_a_per_token_loss_does_not_wait_for_the_gpu() -> None:
    """The targets are counted on the device: no copy of a host count to the GPU that waits for it (CUDA's sync
    debug mode turns every such wait into an error while the steps run). Not run here: this machine has no GPU."""
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(1, 20, (32, 9), generator=g)
    labels = torch.randint(0, 4, (32, 9), generator=g)
    labels[:, 6:] = -100
    loader = EpochLoader(_Pairs(tokens, labels), batch_size=8, micro_batch_size=4, shuffle=True, seed=3)

    class Strict(Callback):
        def __init__(self) -> None:
            self.steps = 0

        def on_epoch_start(self, trainer: Trainer) -> None:
            torch.cuda.synchronize()
            torch.cuda.set_sync_debug_mode("error")

        def on_train_batch_end(self, trainer: Trainer, loss: torch.Tensor) -> None:
            self.steps += 1
            if self.steps == 4:  # the epoch's last step: its losses are read (a wait, by design) after it
                torch.cuda.set_sync_debug_mode("default")

    torch.manual_seed(0)
    model = _Tagger()
    try:
        Trainer(model, nn.CrossEntropyLoss(ignore_index=-100), torch.optim.Adam(model.parameters()), loader,
                epochs=1, accumulate=2, device=torch.device("cuda"), log_every=1000, callbacks=[Strict()]).fit()
    finally:
        torch.cuda.set_sync_debug_mode("default")
