"""Tables read in an 80-column terminal: `trainwell checks` and `trainwell predict` keep what tells rows apart."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from rich.cells import cell_len

from conftest import main_in, train_once
from trainwell.cli import main


def _out(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int = 80,
         cwd: Path | None = None) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    assert (main_in(cwd, *argv) if cwd else main(argv)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(cell_len(line) <= width for line in lines), [line for line in lines if cell_len(line) > width]
    return lines


def _first_cells(lines: list[str]) -> list[str]:
    """The first column of each table row (rows start with a vertical bar)."""
    return [line.split("│")[1].strip() for line in lines if line.startswith("│")]


# ------------------------------------------------------------------------------------------ trainwell checks


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_checks_ids_are_never_cut_at_80_columns(lang: str, capsys, monkeypatch) -> None:
    from trainwell.doctor import checks  # noqa: F401
    from trainwell.doctor.check import CHECKS

    cells = _first_cells(_out(["checks", "--lang", lang], capsys, monkeypatch))
    ids = [c.removesuffix(" *") for c in cells if c]
    assert sorted(ids) == sorted(CHECKS.names())  # each id whole on one line (the descriptions wrap instead)


# ------------------------------------------------------------------------------------------ trainwell predict


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_once(tmp_path_factory, ["--set", "data.limit=300", "--epochs", "1", "--set", "model.channels=[4]",
                                         "--set", "model.hidden=[8]", "--no-progress", "--no-doctor"])


def test_predict_names_each_image_by_the_part_that_tells_it_apart(digits_run: Path, tmp_path: Path, capsys,
                                                                    monkeypatch) -> None:
    from PIL import Image

    from trainwell.config import DataConfig
    from trainwell.data import build_data

    digits = build_data(DataConfig(limit=300)).test.x[:3, 0].numpy().astype(np.uint8)
    deep = tmp_path / "incoming" / "new_nolabel_images_from_the_scanner"
    files = [deep / "new_nolabel_scan_0001.png", deep / "new_nolabel_scan_0002.png",
             tmp_path / "incoming" / "other_batch" / "new_nolabel_scan_0001.png"]
    for path, digit in zip(files, digits):
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(digit).save(path)
    labels = ["new_nolabel_images_from_the_scanner/new_nolabel_scan_0001.png",
              "new_nolabel_images_from_the_scanner/new_nolabel_scan_0002.png", "other_batch/new_nolabel_scan_0001.png"]
    assert _first_cells(_out(["predict", str(digits_run), *map(str, files)], capsys, monkeypatch, 140)) == labels
    cells = _first_cells(_out(["predict", str(digits_run), *map(str, files)], capsys, monkeypatch))
    assert len(set(cells)) == 3  # at 80 columns: cut at the start, where the paths are alike
    for cell, label in zip(cells, labels):
        assert cell == label or (cell.startswith("…") and label.endswith(cell[1:]) and len(cell) > 25)
    cells = _first_cells(_out(["predict", str(digits_run), *map(str, files[:2])], capsys, monkeypatch))
    assert cells == ["new_nolabel_scan_0001.png", "new_nolabel_scan_0002.png"]


def test_input_labels_keep_the_shortest_distinct_ending() -> None:
    from trainwell.cli.predict import input_labels

    assert input_labels(["a/b/x.png", "a/c/x.png", "a/c/y.png"]) == ["b/x.png", "c/x.png", "c/y.png"]
    assert input_labels(["x.png", "./x.png"]) == ["x.png", "./x.png"]  # the same file twice: as typed
    assert input_labels(["/data/x.png"]) == ["x.png"]


@pytest.mark.slow
def test_predict_shows_the_texts_shortened_at_the_end(tmp_path: Path, capsys, monkeypatch) -> None:
    good, bad = ["质量很好", "非常满意", "推荐购买", "物超所值"], ["太差了", "不推荐", "质量很差", "非常失望"]
    rows = [(f"{t}{i}", lab) for i in range(15) for t, lab in [(g, "pos") for g in good] + [(b, "neg") for b in bad]]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"text": t, "y": lab}, ensure_ascii=False) + "\n"
                                              for t, lab in rows), encoding="utf-8")
    assert main_in(tmp_path, "train", "--data", "jsonl:d.jsonl", "--set", "data.label=y", "--out", "run",
                   "--epochs", "1", "--no-progress", "--no-doctor", "--set", "model.embed_dim=16",
                   "--set", "model.hidden_size=8", "--set", "text.tokenizer=char") == 0
    reviews = ["质量很好，" * 30, ("The delivery was quick and the box was fine, but after two days of use the "
                                 "battery no longer charges and the seller does not answer."), "太差了"]
    (tmp_path / "more_reviews.txt").write_text("\n".join(reviews) + "\n", encoding="utf-8")
    lines = _out(["predict", "run", "more_reviews.txt", "太差了，不推荐"], capsys, monkeypatch, cwd=tmp_path)
    cells = _first_cells(lines)
    assert "more_reviews.txt" not in "\n".join(lines)
    assert len(cells) == 4 and cells[2:] == ["太差了", "太差了，不推荐"]
    assert cells[0].endswith("…") and reviews[0].startswith(cells[0][:-1]) and len(cells[0]) > 10
    assert cells[1].endswith("…") and reviews[1].startswith(cells[1][:-1]) and len(cells[1]) > 10
    capsys.readouterr()
    assert main_in(tmp_path, "predict", "run", "more_reviews.txt", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert [(r["input"], r["text"]) for r in out] == [(f"more_reviews.txt:{i + 1}", t) for i, t in enumerate(reviews)]
    assert re.fullmatch(r"\S+", out[0]["top"][0]["class"])
