"""``trainwell export``: the four formats, the parity check that guards them, the preprocessing that
travels inside the file, and ``trainwell predict FILE`` giving the run's own answers without the run."""

from __future__ import annotations

import csv
import json
import random
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from conftest import main_in

from trainwell.export.formats import ExportError, Signature, format_of
from trainwell.export.parity import TOLERANCE, compare

FORMATS = ("onnx", "torchscript", "exported", "safetensors")
SUFFIX = {"onnx": "onnx", "torchscript": "pt", "exported": "pt2", "safetensors": "safetensors"}


def trained(root: Path, *argv: str) -> Path:
    """A tiny run trained in ``root`` (relative data paths are read from there)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONHASHSEED", "0")
        assert main_in(root, "train", "--out", "run", "--epochs", "1", "--no-doctor", "--no-progress", *argv) == 0
    return root / "run"


def predictions(capsys: pytest.CaptureFixture[str], cwd: Path, target: str, *inputs: str) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main_in(cwd, "predict", target, *inputs, "--json", "--top-k", "3") == 0
    return json.loads(capsys.readouterr().out)


def assert_same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    """Same inputs, same top-k classes in the same order, probabilities within 1e-5."""
    assert [r["input"] for r in a] == [r["input"] for r in b]
    for ra, rb in zip(a, b):
        assert [t["class"] for t in ra["top"]] == [t["class"] for t in rb["top"]]
        assert [t["probability"] for t in ra["top"]] == pytest.approx([t["probability"] for t in rb["top"]], abs=1e-5)


# ---------------------------------------------------------------- the parity check alone (fast)

class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def test_parity_passes_for_the_same_function_and_fails_beyond_the_tolerance_or_on_a_top1_change() -> None:
    model = Tiny().eval()
    batches = [(torch.randn(9, 4),), (torch.randn(1, 4),)]
    same = compare(model, model, batches, split="test", classifier=True)
    assert same.passed and same.max_abs_diff == 0 and same.top1_agreement == 1.0 and same.batch_sizes == [9, 1]
    off = compare(model, lambda x: model(x) + 10 * TOLERANCE, batches, split="test", classifier=True)
    assert not off.passed and off.max_abs_diff == pytest.approx(10 * TOLERANCE, rel=1e-2) and off.top1_agreement == 1.0
    swapped = compare(model, lambda x: model(x).flip(1), batches, split="test", classifier=True)
    assert not swapped.passed and swapped.top1_agreement is not None and swapped.top1_agreement < 1.0
    nan = compare(model, lambda x: model(x) * float("nan"), batches, split="test", classifier=False)
    assert not nan.passed and nan.top1_agreement is None


def test_exported_files_are_told_by_their_extension() -> None:
    import trainwell.cli.export
    import trainwell.export

    assert trainwell.cli.export.FORMATS == trainwell.export.FORMATS == FORMATS  # the CLI's copy keeps --help torch-free
    assert [format_of(Path(f"m.{SUFFIX[f]}")) for f in FORMATS] == list(FORMATS)
    with pytest.raises(ExportError, match="not a run folder, nor a file"):
        format_of(Path("model.bin"))


def test_every_format_keeps_the_batch_dimension_free() -> None:
    """Exported with a batch of 2, each format runs batches of 1 and 7 like the model does."""
    from trainwell.export.formats import format_module

    model = Tiny().eval()
    meta = {"trainwell_export": 1, "payload": {}}
    for fmt in ("onnx", "torchscript", "exported"):
        module = format_module(fmt)
        runner, back = module.load(module.save(model, (torch.randn(2, 4),), Signature(text=False), meta))
        assert back == meta, fmt  # the metadata travels inside the file
        parity = compare(model, runner, [(torch.randn(1, 4),), (torch.randn(7, 4),)], split="test", classifier=True)
        assert parity.passed and parity.max_abs_diff < 1e-5, (fmt, parity)


# ---------------------------------------------------------------- real runs, through the command line

@pytest.fixture(scope="module")
def image_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A digits run and three of its test images as PNG files."""
    import numpy as np
    from PIL import Image
    from sklearn.datasets import load_digits

    root = tmp_path_factory.mktemp("image")
    run = trained(root, "--data", "digits", "--set", "model.channels=[8]", "--set", "model.hidden=[16]")
    images = load_digits().images
    for i in range(3):
        Image.fromarray((images[i] * 16).astype(np.uint8)).save(root / f"d{i}.png")
    yield run


@pytest.fixture(scope="module")
def csv_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A run on a small three-class CSV, and rows.csv with five rows of its feature columns."""
    root = tmp_path_factory.mktemp("table")
    rng = random.Random(0)
    with (root / "t.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["a", "b", "c", "kind"])
        for _ in range(150):
            y = rng.choice(["x", "y", "z"])
            k = "xyz".index(y)
            w.writerow([k + rng.random(), 3 * rng.random(), 2 * k - rng.random(), y])
    with (root / "rows.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["a", "b", "c"])
        w.writerows([[rng.random() * 3, rng.random(), rng.random() * 4] for _ in range(5)])
    yield trained(root, "--data", "csv:t.csv", "--set", "data.label=kind")


@pytest.fixture(scope="module")
def text_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("text")
    good, bad = ["very good", "great product", "love it", "works well"], ["very bad", "broken", "hate it", "poor"]
    lines = [f"{t} {i}\t{label}\n" for i in range(20) for label, ts in (("pos", good), ("neg", bad)) for t in ts]
    (root / "t.tsv").write_text("text\tlabel\n" + "".join(lines), encoding="utf-8")
    yield trained(root, "--task", "text", "--data", "tsv:t.tsv", "--set", "model.embed_dim=16",
                  "--set", "model.hidden_size=8")


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_image_run_exports_with_parity_and_predicts_like_the_run(
        image_run: Path, fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = image_run.parent
    out = tmp_path / fmt / f"digits.{SUFFIX[fmt]}"
    assert main_in(root, "export", "run", "--format", fmt, "--out", str(out)) == 0
    printed = capsys.readouterr()
    assert "same top-1 class for 100.0 %" in printed.err and str(out) in printed.out
    record = json.loads((out.parent / "export.json").read_text())
    parity = record["parity"]
    assert record["file"] == out.name and record["format"] == fmt and parity["passed"]
    assert parity["max_abs_diff"] <= 1e-4 and parity["top1_agreement"] == 1.0 and parity["split"] == "test"
    assert parity["batch_sizes"][0] == 180 and 1 in parity["batch_sizes"]  # the whole test split, and batch 1
    pre = record["payload"]["preprocess"]
    assert pre["input_shape"] == [1, 8, 8] and pre["scale"] == 16.0 and len(pre["mean"]) == 1
    assert record["payload"]["class_names"] == [str(i) for i in range(10)]

    expected = predictions(capsys, root, "run", "d0.png", "d1.png", "d2.png")
    shutil.copy(out, root / out.name)  # alone: no export.json, no run folder used
    import trainwell.export.model

    monkeypatch.setattr(trainwell.export.model, "load_run_model", None)
    if fmt == "exported":  # torch.export.load unpickles parts of a .pt2: predict does not load one
        assert main_in(root, "predict", out.name, "d0.png") == 2
        assert "does not load .pt2 files" in capsys.readouterr().err
        return
    assert_same(predictions(capsys, root, out.name, "d0.png", "d1.png", "d2.png"), expected)


def test_onnx_carries_the_preprocessing_in_its_metadata_props(csv_run: Path) -> None:
    import onnx

    root = csv_run.parent
    assert main_in(root, "export", "run") == 0  # onnx into run/export/onnx/model.onnx by default
    path = csv_run / "export" / "onnx" / "model.onnx"
    props = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    meta = json.loads(props["trainwell"])
    assert meta["payload"]["preprocess"]["features"] == ["a", "b", "c"] and len(meta["payload"]["preprocess"]["std"]) == 3
    assert meta["payload"]["class_names"] == ["x", "y", "z"] and meta["inputs"] == ["x"]
    record = json.loads((path.parent / "export.json").read_text())
    assert record["payload"] == meta["payload"] and record["parity"]["passed"]


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_a_csv_run_predicts_from_the_export_like_the_run(csv_run: Path, fmt: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    root = csv_run.parent
    out = tmp_path / f"m.{SUFFIX[fmt]}"
    assert main_in(root, "export", "run", "--format", fmt, "--out", str(out), "--last") == 0
    assert json.loads((tmp_path / "export.json").read_text())["source"]["checkpoint"] == "last"
    assert_same(predictions(capsys, root, str(out), "rows.csv"),
                predictions(capsys, root, "run", "rows.csv", "--checkpoint", "last"))


@pytest.mark.parametrize("fmt", ["torchscript", "safetensors"])
def test_a_text_run_exports_with_free_lengths_and_predicts_like_the_run(
        text_run: Path, fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = text_run.parent
    out = tmp_path / f"m.{SUFFIX[fmt]}"
    assert main_in(root, "export", "run", "--format", fmt, "--out", str(out)) == 0
    record = json.loads((tmp_path / "export.json").read_text())
    assert record["parity"]["passed"] and record["inputs"] == ["tokens", "lengths"]
    assert record["payload"]["vocab"]["itos"][:2] == ["<pad>", "<unk>"] and record["payload"]["tokenizer"]
    texts = ["very good", "a broken and very poor thing", "love it"]
    assert_same(predictions(capsys, root, str(out), *texts), predictions(capsys, root, "run", *texts))


def test_a_packed_lstm_to_onnx_is_one_clear_error_naming_the_formats_that_work(
        text_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out" / "m.onnx"
    assert main_in(text_run.parent, "export", "run", "--format", "onnx", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "The lstm model cannot be exported to ONNX" in err and "packed sequences" in err
    assert "Formats that export it: torchscript, safetensors." in err and "Fix: --format torchscript" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("broken", ["offset", "top1"])
def test_an_export_that_differs_fails_and_keeps_nothing(image_run: Path, broken: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import trainwell.export.torchscript_file as ts

    real_load = ts.load

    def load(blob: bytes) -> Any:
        runner, meta = real_load(blob)
        if broken == "offset":  # within every top-1, beyond the tolerance
            return (lambda x: runner(x) + 1e-3), meta
        return (lambda x: runner(x).roll(1, dims=1)), meta  # another class on top

    monkeypatch.setattr(ts, "load", load)
    out = tmp_path / "out" / "m.pt"
    assert main_in(image_run.parent, "export", "run", "--format", "torchscript", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "The TorchScript export does not compute what the model computes" in err and "Nothing was written" in err
    if broken == "offset":
        assert "largest |difference| 1.00e-03" in err and "same top-1 class for 100.0 %" in err
    else:
        assert "same top-1 class for 100.0 %" not in err
    assert not (tmp_path / "out").exists()


def test_export_mistakes_are_one_paragraph(csv_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = csv_run.parent
    assert main_in(root, "export", "run", "--format", "onnx", "--out", str(tmp_path / "m.pt")) == 2
    assert "ONNX exports are .onnx files" in capsys.readouterr().err
    (tmp_path / "export.json").write_text(json.dumps({"file": "other.onnx"}))
    assert main_in(root, "export", "run", "--format", "onnx", "--out", str(tmp_path / "m.onnx")) == 2
    assert "describes another export ('other.onnx')" in capsys.readouterr().err
    # the run's data must be readable again for the parity check: relative paths are read from the current folder
    assert main_in(tmp_path, "export", str(csv_run), "--format", "torchscript", "--out", str(tmp_path / "x/m.pt")) == 2
    err = capsys.readouterr().err
    assert "could not be read again" in err and "in the folder the run was trained in" in err
    assert not (tmp_path / "x").exists()
    # a file that trainwell export did not write
    with warnings.catch_warnings():  # torch.jit's deprecation warnings
        warnings.simplefilter("ignore")
        torch.jit.save(torch.jit.script(Tiny()), str(tmp_path / "foreign.pt"))
    assert main_in(root, "predict", str(tmp_path / "foreign.pt"), "rows.csv") == 2
    assert "carries no trainwell export metadata" in capsys.readouterr().err


def test_data_that_changed_since_training_is_refused(csv_run: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(csv_run, tmp_path / "run", ignore=shutil.ignore_patterns("export"))  # other tests export there
    text = (csv_run.parent / "t.csv").read_text().replace(",z\n", ",w\n")  # class z is now called w
    (tmp_path / "t.csv").write_text(text)
    assert main_in(tmp_path, "export", "run", "--format", "torchscript") == 2
    assert "data changed since training" in capsys.readouterr().err
    assert not (tmp_path / "run" / "export").exists()
