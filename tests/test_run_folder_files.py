"""What a run folder holds agrees with what the run returns."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch.utils.data import TensorDataset

import trainwell


def test_summary_json_equals_the_summary_returned(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(96, 6, generator=g), torch.randint(0, 3, (96,), generator=g)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    result = trainwell.fit(model, TensorDataset(x[:64], y[:64]), TensorDataset(x[64:], y[64:]), epochs=2,
                           out=tmp_path / "run", progress=False, doctor=True)
    assert result.run_dir is not None
    on_disk = json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8"))
    assert "doctor_findings" in on_disk  # added by the doctor's callback, before the file is written
    assert on_disk == json.loads(json.dumps(result.summary, default=str))


def test_every_file_of_the_run_folder_is_written_whole(tmp_path: Path, monkeypatch) -> None:
    """Each file (but TensorBoard's own event files) is renamed into place by the one atomic writer, so an
    interrupted write never leaves half a file (steps.csv is created so, then only appended to)."""
    import os

    from trainwell.app.configure import resolve
    from trainwell.app.run import train_from_config

    renamed: set[Path] = set()
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        renamed.add(Path(dst).resolve())
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    config = resolve(flags={"data.name": "digits", "train.epochs": 1},
                     sets=["model.channels=[4]", "model.hidden=[8]", "data.augment=none"])
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    train_from_config(config, run_dir, progress=False)
    files = {p.resolve() for p in run_dir.rglob("*") if p.is_file() and "tensorboard" not in p.parts}
    expected = {run_dir / n for n in ("config.yaml", "env.json", "metrics.csv", "summary.json", "report.html",
                                      "doctor.json", "checkpoints/last.pt", "checkpoints/best.pt")}
    assert {p.resolve() for p in expected} <= files
    assert files <= renamed, sorted(str(p) for p in files - renamed)


def test_a_failed_write_keeps_the_previous_file(tmp_path: Path) -> None:
    import pytest

    from trainwell._files import atomic_write, atomic_write_text

    target = tmp_path / "summary.json"
    atomic_write_text(target, "old\n")

    def broken(f) -> None:
        f.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(target, broken)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]  # no temporary file left behind


def test_the_summary_records_peak_memory(tmp_path: Path) -> None:
    x, y = torch.randn(64, 4), torch.randint(0, 2, (64,))
    result = trainwell.fit(torch.nn.Linear(4, 2), TensorDataset(x, y), TensorDataset(x, y), epochs=1,
                           out=tmp_path / "run", progress="none")
    assert result.summary["peak_memory_kind"] == "process peak RSS"
    assert 10 < result.summary["peak_memory_mb"] < 100_000  # torch alone takes tens of MB
