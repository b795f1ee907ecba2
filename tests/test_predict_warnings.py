"""predict warns, naming the file, when an image is plainly unlike the training images."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from conftest import train_once
from trainwell.cli import main
from trainwell.config import DataConfig
from trainwell.data import Preprocess, build_data
from trainwell.data.input_check import image_warnings


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, np.ndarray]]:
    """A tiny mnist-5k run (white digits on black) and one of its test digits as uint8 pixels."""
    run = train_once(tmp_path_factory, ["--set", "data.limit=300", "--epochs", "1", "--set", "model.channels=[4]",
                                        "--set", "model.hidden=[8]", "--no-progress", "--no-doctor"])
    digit = build_data(DataConfig(limit=300)).test.x[0, 0].numpy().astype(np.uint8)
    yield run, digit


def predict_json(run: Path, capsys: pytest.CaptureFixture[str], *files: Path) -> tuple[list[dict], str]:
    assert main(["predict", str(run), *map(str, files), "--json"]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


@pytest.mark.slow
def test_an_inverted_digit_gets_a_warning_and_the_normal_one_none(digits_run, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run, digit = digits_run
    Image.fromarray(digit).save(tmp_path / "normal.png")
    Image.fromarray(255 - digit).save(tmp_path / "inverted.png")  # black digit on white
    results, err = predict_json(run, capsys, tmp_path / "normal.png", tmp_path / "inverted.png")
    assert results[0]["warnings"] == []
    assert len(results[1]["warnings"]) == 1 and "inverted" in results[1]["warnings"][0]
    assert "normal.png" not in err
    assert f"warning: {tmp_path / 'inverted.png'}: colours look inverted" in err


@pytest.mark.slow
def test_a_black_image_and_a_much_larger_one_get_warnings(digits_run, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    run, digit = digits_run
    Image.fromarray((digit > 127).astype(np.uint8)).save(tmp_path / "zero_one.png")  # 0-1 values as 8-bit pixels
    Image.fromarray(digit).resize((112, 112)).save(tmp_path / "big.png")
    results, _ = predict_json(run, capsys, tmp_path / "zero_one.png", tmp_path / "big.png")
    assert ["wrong scale" in w for w in results[0]["warnings"]] == [True]
    assert ["112x112 pixels, resized to 28x28" in w for w in results[1]["warnings"]] == [True]


def _mnist_like() -> Preprocess:
    return Preprocess(kind="image", input_shape=[1, 28, 28], scale=255.0, mean=[0.13], std=[0.31])


def test_checkpoints_without_source_size_still_load() -> None:
    old = _mnist_like().to_dict()
    del old["source_size"]
    assert Preprocess.from_dict(old).source_size == []


def test_image_folder_records_the_files_size_and_compares_with_it(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    for label in ("a", "b"):
        (tmp_path / label).mkdir()
        for i in range(10):
            Image.fromarray(rng.integers(0, 256, (40, 60), dtype=np.uint8)).save(tmp_path / label / f"{i}.png")
    pre = build_data(DataConfig(name="image-folder", path=str(tmp_path), image_size=8)).preprocess
    assert pre.source_size == [40, 60]  # (H, W) of the files, before resizing to 8x8
    x = torch.full((1, 8, 8), 0.5)
    assert image_warnings("same.png", x, pre, (60, 40)) == []
    assert "the training images were 60x40" in image_warnings("tiny.png", x, pre, (16, 16))[0]


def test_bright_images_are_not_called_inverted_when_training_is_mid_grey() -> None:
    pre = Preprocess(kind="image", input_shape=[3, 32, 32], scale=255.0, mean=[0.49, 0.48, 0.45],
                     std=[0.25, 0.24, 0.26])
    assert image_warnings("bright.png", torch.full((3, 32, 32), 0.8), pre, (32, 32)) == []
