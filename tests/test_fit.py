"""trainwell.fit on any nn.Module, with a Dataset or a DataLoader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import trainwell


def _data(n: int = 256) -> tuple[TensorDataset, TensorDataset]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 10, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()  # learnable
    return TensorDataset(x[: n - 64], y[: n - 64]), TensorDataset(x[n - 64:], y[n - 64:])


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2))


def test_fit_learns_and_reports_history() -> None:
    train, val = _data()
    result = trainwell.fit(_model(), train, val, epochs=5, lr=1e-2, progress=False, device="cpu")
    assert [r["epoch"] for r in result.history] == [1, 2, 3, 4, 5]
    assert result.history[-1]["train_loss"] < result.history[0]["train_loss"]
    assert result.history[-1]["val_accuracy"] > 0.85
    assert len(result.steps) == 5 * 3  # 192 samples / 64 per batch


def test_fit_is_reproducible_and_accepts_a_dataloader() -> None:
    train, val = _data()
    a = trainwell.fit(_model(), train, val, epochs=2, progress=False, device="cpu")
    b = trainwell.fit(_model(), train, val, epochs=2, progress=False, device="cpu")
    assert a.history[-1]["train_loss"] == b.history[-1]["train_loss"]
    loader = DataLoader(train, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
    c = trainwell.fit(_model(), loader, val, epochs=1, progress=False, device="cpu")
    assert len(c.steps) == 6


def test_fit_with_out_writes_a_run_folder(tmp_path: Path) -> None:
    train, val = _data()
    result = trainwell.fit(_model(), train, val, epochs=2, progress=False, device="cpu", out=tmp_path / "fit",
                           doctor=True)
    assert result.run_dir == tmp_path / "fit"
    for name in ("metrics.csv", "summary.json", "report.html", "checkpoints/best.pt", "doctor.json"):
        assert (tmp_path / "fit" / name).is_file()
    assert json.loads((tmp_path / "fit" / "doctor.json").read_text())["internal_errors"] == []


def test_fit_custom_loss_without_accuracy() -> None:
    x = torch.randn(128, 3)
    y = x.sum(1, keepdim=True)
    torch.manual_seed(0)
    result = trainwell.fit(nn.Linear(3, 1), TensorDataset(x, y), TensorDataset(x, y), loss=nn.MSELoss(),
                           epochs=3, lr=0.05, progress=False, device="cpu")
    assert result.history[-1]["val_accuracy"] is None
    assert result.history[-1]["val_loss"] < result.history[0]["val_loss"]


def test_fit_rejects_bad_arguments() -> None:
    train, _ = _data()
    with pytest.raises(ValueError, match="epochs"):
        trainwell.fit(_model(), train, epochs=0, progress=False)
    with pytest.raises(ValueError, match="lr"):
        trainwell.fit(_model(), train, lr=0, progress=False)


def test_fit_with_ema_validates_and_returns_the_averaged_weights(tmp_path: Path) -> None:
    torch.manual_seed(0)
    x, y = torch.randn(256, 8), torch.randint(0, 3, (256,))
    data = TensorDataset(x[:200], y[:200]), TensorDataset(x[200:], y[200:])

    def run(ema: float | None, out: str) -> trainwell.FitResult:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
        return trainwell.fit(model, *data, epochs=3, lr=1e-2, progress=False, device="cpu", ema=ema,
                             out=tmp_path / out)

    plain, averaged = run(None, "plain"), run(0.9, "ema")
    # Same training steps, so the trained weights agree; the averaged ones lag behind them.
    ckpt = torch.load(averaged.run_dir / "checkpoints" / "last.pt", weights_only=True)
    trained = plain.model.state_dict()
    assert all(torch.equal(ckpt["train_model"][k], trained[k]) for k in trained)
    assert all(torch.equal(ckpt["model"][k], v) for k, v in averaged.model.state_dict().items())
    assert not all(torch.equal(ckpt["model"][k], trained[k]) for k in trained)
    assert averaged.history[-1]["val_loss"] != plain.history[-1]["val_loss"]
    with pytest.raises(ValueError, match="ema"):
        trainwell.fit(nn.Linear(8, 3), data[0], ema=1.5, progress=False)


def test_every_argument_of_fit_is_recorded_or_said_not_to_be(tmp_path: Path) -> None:
    """The record of a fit (its checkpoints' ``config``, MLflow's params) comes from fit()'s own arguments: a new
    argument is recorded unless it is named in NOT_RECORDED (the data, the code, where output goes)."""
    import inspect

    from trainwell.app import fit as fit_module

    parameters = set(inspect.signature(fit_module.fit).parameters)
    assert fit_module.NOT_RECORDED <= parameters
    x, y = torch.randn(40, 4), torch.randint(0, 3, (40,))
    result = fit_module.fit(nn.Linear(4, 3), TensorDataset(x, y), epochs=1, progress="none", out=tmp_path / "run",
                            optimizer="sgd", early_stop=3, shard_min_share=0.2)
    recorded = torch.load(result.run_dir / "checkpoints" / "best.pt", weights_only=True)["config"]
    assert set(recorded) >= parameters - fit_module.NOT_RECORDED
    assert recorded["model"] == "Linear" and recorded["optimizer"] == "sgd" and recorded["shard_min_share"] == 0.2
    assert recorded["early_stop"] == {"patience": 3, "min_delta": 0.0}
    assert recorded["threads"] == torch.get_num_threads()
    assert not set(recorded) & (fit_module.NOT_RECORDED - {"model"})
