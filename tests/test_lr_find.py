"""The learning-rate finder: the range test's suggestion and its reason, robustness to a diverging (NaN) tail and to
a flat loss, the model and optimizer restored afterwards, `--lr auto` recorded in the run folder (and not run again
on resume), `fit(lr="find")` and `trainwell lr-find`."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from trainwell import fit
from trainwell._errors import TrainwellError
from trainwell.cli import main
from trainwell.engine.lr_range import LrRange, lr_range_test, schedule, suggest
from trainwell.engine.seed import get_rng_state
from trainwell.engine.trainer import Trainer

DIGITS = ["--data", "digits", "--model", "mlp", "--threads", "1", "--no-progress", "--no-doctor"]


def _regression(n: int = 256) -> TensorDataset:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 8, generator=g) * 3
    return TensorDataset(x, x @ torch.randn(8, 1, generator=g) + 0.1 * torch.randn(n, 1, generator=g))


def _sweep(model: nn.Module, data: TensorDataset, optimizer: torch.optim.Optimizer, loss: Any = None,
           **options: Any) -> LrRange:
    trainer = Trainer(model, loss or nn.MSELoss(), optimizer, DataLoader(data, batch_size=32, shuffle=False))
    return lr_range_test(trainer, **options)


def test_schedule_is_exponential_from_start_to_end() -> None:
    rates = schedule(1e-7, 10, 100)
    assert len(rates) == 100 and rates[0] == pytest.approx(1e-7) and rates[-1] == pytest.approx(10)
    assert rates[1] / rates[0] == pytest.approx(rates[-1] / rates[-2])


def test_suggestion_is_the_steepest_descent_before_the_minimum() -> None:
    rates = schedule(1e-6, 1, 100)
    # flat, then a descent centred on 1e-3, then a rise after 1e-1
    losses = [2.0 - 1.5 / (1 + math.exp(-3 * (math.log10(r) + 3))) + (5 * (r - 0.1) if r > 0.1 else 0) for r in rates]
    result = suggest(rates, losses)
    assert result.suggestion is not None and 5e-4 < result.suggestion < 2e-3
    assert result.reason.startswith(f"{result.suggestion:.2g}: the steepest descent of the smoothed loss")
    assert "had not diverged" in result.reason


def test_a_loss_that_goes_to_nan_gives_a_suggestion_below_the_divergence_never_nan() -> None:
    torch.manual_seed(0)
    model = nn.Linear(8, 1)
    result = _sweep(model, _regression(), torch.optim.SGD(model.parameters(), lr=0.1), start=1e-6, end=100.0)
    assert result.diverged_at is not None  # plain SGD on this regression blows up well before lr 100
    assert len(result.losses) < 100  # the sweep stopped early
    assert result.suggestion is not None and math.isfinite(result.suggestion)
    assert result.suggestion < result.diverged_at / 3
    assert f"below where it diverged at {result.diverged_at:.2g}" in result.reason
    json.dumps(result.to_dict(), allow_nan=False)  # the record holds no NaN / inf


def test_a_nan_tail_is_ignored_by_the_analysis() -> None:
    rates = schedule(1e-5, 1, 60)
    losses = [2.0 - 1.8 * min(1.0, max(0.0, (math.log10(r) + 4) / 2)) for r in rates[:50]] + [math.nan] * 10
    result = suggest(rates, losses)
    assert result.diverged_at == pytest.approx(rates[50])
    assert result.suggestion is not None and result.suggestion < rates[50]
    assert all(math.isnan(v) for v in result.smoothed[50:])


class _Flat(nn.Module):
    """Parameters that never change the output: every gradient is zero, the loss is flat."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x) * 0.0 + 1.0


def test_a_flat_loss_gives_no_suggestion_and_says_why() -> None:
    model = _Flat()
    result = _sweep(model, _regression(), torch.optim.Adam(model.parameters()))
    assert result.suggestion is None
    assert result.reason.startswith("no suggestion: the smoothed loss shows no clear descent")
    with pytest.raises(TrainwellError, match="no clear descent"):
        fit(_Flat(), _regression(), lr="find", loss=nn.MSELoss(), epochs=1, progress="none")


def _state(model: nn.Module, optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], str]:
    return {k: v.clone() for k, v in model.state_dict().items()}, repr(optimizer.state_dict())


def test_model_optimizer_and_rngs_are_restored_after_the_sweep() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Dropout(0.2), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()  # an optimizer with state, as in a real run
    weights, opt_state = _state(model, optimizer)
    rng = get_rng_state()["torch"].clone()
    result = _sweep(model, _regression(), optimizer)
    assert len(result.losses) > 10  # it did train
    after, opt_after = _state(model, optimizer)
    assert all(torch.equal(weights[k], after[k]) for k in weights)  # weights and BatchNorm statistics
    assert opt_after == opt_state  # moments, step counts and the learning rate
    assert torch.equal(get_rng_state()["torch"], rng)


@pytest.fixture(scope="module")
def digits() -> tuple[TensorDataset, TensorDataset]:
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = torch.tensor(x, dtype=torch.float32) / 16
    y = torch.tensor(y)
    return TensorDataset(x[:1400], y[:1400]), TensorDataset(x[1400:], y[1400:])


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))


@pytest.mark.slow
def test_fit_lr_find_on_digits_suggests_a_sane_rate_and_trains_as_with_that_rate(
        digits: tuple[TensorDataset, TensorDataset], tmp_path: Path) -> None:
    train, val = digits
    torch.manual_seed(0)
    found = fit(_mlp(), train, val, lr="find", epochs=1, progress="none", out=tmp_path / "found")
    rate = found.lr_find.suggestion
    assert 1e-4 < rate < 1e-1, found.lr_find.reason  # Adam on digits: measured about 1e-2
    torch.manual_seed(0)
    plain = fit(_mlp(), train, val, lr=rate, epochs=1, progress="none")
    # the finder left the seeded initial weights and every RNG as it found them: the same training
    assert all(torch.equal(a, b) for a, b in zip(found.model.state_dict().values(), plain.model.state_dict().values()))
    run = found.run_dir
    assert (run / "lr_find.png").read_bytes().startswith(b"\x89PNG")
    assert json.loads((run / "lr_find.json").read_text())["chosen"] == rate
    assert json.loads((run / "summary.json").read_text())["lr_find"]["chosen"] == rate


def test_fit_lr_find_refuses_an_optimizer_object() -> None:
    model = _mlp()
    with pytest.raises(TrainwellError, match="optimizer by name"):
        fit(model, _regression(), lr="find", optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


@pytest.mark.slow
def test_train_lr_auto_records_the_rate_in_config_yaml_and_resume_does_not_search_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--out", "run", *DIGITS, "--epochs", "1", "--lr", "auto"]) == 0
    err = capsys.readouterr().err
    found = json.loads((tmp_path / "run" / "lr_find.json").read_text())
    text = (tmp_path / "run" / "config.yaml").read_text()
    config = yaml.safe_load(text)
    assert config["train"]["lr"] == found["chosen"] == found["suggestion"]
    assert "# train.lr" in text and "chosen by the learning-rate finder" in text
    assert f"learning rate {found['suggestion']:.2g} from the finder" in err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["lr_find"]["chosen"] == found["chosen"]
    # the saved config reproduces the run without the finder
    from trainwell.app import lr_sweep

    monkeypatch.setattr(lr_sweep, "sweep_run", lambda *a, **k: pytest.fail("the finder ran again"))
    assert main(["train", "--out", "again", "--config", "run/config.yaml", "--threads", "1", "--no-progress",
                 "--no-doctor"]) == 0
    assert yaml.safe_load((tmp_path / "again" / "config.yaml").read_text())["train"]["lr"] == found["chosen"]


def test_train_lr_auto_without_a_descent_keeps_the_configured_rate_and_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from trainwell.app import lr_sweep

    flat = suggest(schedule(1e-7, 10, 50), [2.0] * 50)
    monkeypatch.setattr(lr_sweep, "sweep_run", lambda *a, **k: flat)
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--out", "run", *DIGITS, "--epochs", "1", "--lr", "auto"]) == 0
    err = capsys.readouterr().err
    from trainwell.data.registry import DatasetRecipes

    recipe = DatasetRecipes().recipe("digits", "classification")["train"]["lr"]  # what --lr auto replaced
    assert f"learning rate {recipe:g} kept (the configured one): the finder gave no suggestion" in " ".join(err.split())
    text = (tmp_path / "run" / "config.yaml").read_text()
    assert yaml.safe_load(text)["train"]["lr"] == recipe
    assert "kept because the learning-rate finder gave no suggestion" in text


def test_lr_auto_is_refused_with_several_processes() -> None:
    from trainwell.app.lr_sweep import single_process

    with pytest.raises(TrainwellError, match="not supported with several processes"):
        single_process(2, "--lr auto")


def test_lr_find_command_writes_the_png_and_prints_the_plot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["lr-find", "--out", "sweep", "--data", "digits", "--model", "mlp", "--threads", "1",
                 "--steps", "60"]) == 0
    out, err = capsys.readouterr()
    assert out.strip().endswith("sweep")
    assert (tmp_path / "sweep" / "lr_find.png").read_bytes().startswith(b"\x89PNG")
    assert "smoothed loss against the learning rate" in err and "┤" in err and "*" in err
    assert "suggested learning rate" in err and "the steepest descent" in err
    assert len(json.loads((tmp_path / "sweep" / "lr_find.json").read_text())["lrs"]) <= 60


def test_lr_find_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["lr-find", "--help"])
    assert exit_.value.code == 0
    assert "--start-lr" in capsys.readouterr().out


def test_lr_and_batch_size_flags_take_auto_and_reject_other_words(capsys: pytest.CaptureFixture[str]) -> None:
    from trainwell.cli import build_parser

    args = build_parser().parse_args(["train", "--lr", "auto", "--batch-size", "auto"])
    assert args.lr == "auto" and args.batch_size == "auto"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--lr", "fast"])
    assert "invalid float value: 'fast'" in capsys.readouterr().err
