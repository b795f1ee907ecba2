"""--batch-size auto: the largest power-of-two micro-batch that fits (out-of-memory caught, memory freed, the
search stops), the global batch = micro x processes x accumulate, capped; on the CPU it says so and keeps the
configured batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml

from trainwell._errors import TrainwellError
from trainwell.cli import main
from trainwell.engine import batch_search
from trainwell.engine.batch_search import MAX_BATCH, is_out_of_memory, largest_fitting

OOM = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError


def _fits_below(limit: int, tried: list[int], error: type[BaseException] = OOM) -> object:
    def try_size(micro: int) -> None:
        tried.append(micro)
        if micro > limit:
            raise error("CUDA out of memory. Tried to allocate 2.00 GiB")
    return try_size


def test_the_largest_power_of_two_that_fits_and_the_search_stops_at_the_first_oom() -> None:
    tried: list[int] = []
    found = largest_fitting(_fits_below(100, tried), cap=10_000)
    assert found.micro == 64 and found.global_batch == 64
    assert tried == [1, 2, 4, 8, 16, 32, 64, 128]
    assert found.tried[128] == "out of memory" and found.limited_by == "memory"


def test_a_runtime_error_saying_out_of_memory_counts_other_errors_do_not() -> None:
    found = largest_fitting(_fits_below(10, [], RuntimeError), cap=10_000)
    assert found.micro == 8
    assert is_out_of_memory(RuntimeError("MPS backend out of memory"))

    def broken(micro: int) -> None:
        raise ValueError("shapes do not match")

    with pytest.raises(ValueError, match="shapes"):
        largest_fitting(broken, cap=64)


def test_global_batch_is_micro_times_processes_times_accumulate_and_respects_the_cap() -> None:
    found = largest_fitting(_fits_below(10_000, []), cap=1000, processes=2, accumulate=4)
    assert found.global_batch == found.micro * 8 and found.global_batch % 8 == 0
    assert found.micro == 64 and found.global_batch == 512  # 128 x 8 = 1024 would pass the cap of 1000
    assert found.limited_by == "cap"
    big = largest_fitting(_fits_below(10**9, []), cap=10**9)
    assert big.global_batch == MAX_BATCH


def test_nothing_fits_is_a_clear_error() -> None:
    with pytest.raises(TrainwellError, match="Even a micro-batch of one sample"):
        largest_fitting(_fits_below(0, []), cap=64)


def test_an_oom_frees_memory_on_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    emptied: list[int] = []
    monkeypatch.setattr(batch_search.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(batch_search.torch.cuda, "empty_cache", lambda: emptied.append(1))
    largest_fitting(_fits_below(4, []), cap=64, device=torch.device("cuda"))
    assert emptied == [1]  # once, after the out-of-memory
    largest_fitting(_fits_below(4, []), cap=64, device=torch.device("cpu"))
    assert emptied == [1]  # never on the CPU


@pytest.mark.slow
def test_on_the_cpu_auto_says_so_and_keeps_the_configured_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--out", "run", "--data", "digits", "--model", "mlp", "--epochs", "1", "--threads", "1",
                 "--no-progress", "--no-doctor", "--batch-size", "auto", "--set", "data.limit=300"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    from trainwell.data.registry import DatasetRecipes

    recipe = DatasetRecipes().recipe("digits", "classification").get("train", {}).get("batch_size", 64)
    assert (f"batch size {recipe}: --batch-size auto searches GPU memory for the largest batch that fits; on cpu "
            "there is no such limit to find") in err
    text = (tmp_path / "run" / "config.yaml").read_text()
    assert yaml.safe_load(text)["train"]["batch_size"] == recipe
    assert "# train.batch_size was chosen by --batch-size auto" in text
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["batch_size_search"]["batch_size"] == recipe


def test_the_search_on_a_run_tries_real_steps_and_restores_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-size step on the run's parts (on the CPU, with out-of-memory injected above 16 samples)."""
    from trainwell.app import batch_size
    from trainwell.app.configure import resolve
    from trainwell.app.run import prepare

    config = resolve(flags={"data.name": "digits", "model.name": "mlp", "train.threads": 1, "train.accumulate": 2})
    parts = prepare(config)
    before = {k: v.clone() for k, v in parts.model.state_dict().items()}
    steps: list[int] = []
    real_fit = batch_size.Trainer.fit

    def fit(self: object) -> object:
        micro = self.train_loader.micro_batch_size  # type: ignore[attr-defined]
        steps.append(micro)
        if micro > 16:
            raise OOM("CUDA out of memory")
        return real_fit(self)  # type: ignore[arg-type]

    monkeypatch.setattr(batch_size.Trainer, "fit", fit)
    found = batch_size.search(config, parts)
    assert steps == [1, 2, 4, 8, 16, 32] and found.micro == 16 and found.global_batch == 32
    assert all(torch.equal(before[k], v) for k, v in parts.model.state_dict().items())


def test_the_doctor_preflight_refuses_auto_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor", "--data", "digits", "--batch-size", "auto", "--lr", "auto"]) == 2
    assert "train.batch_size and train.lr are auto" in capsys.readouterr().err
