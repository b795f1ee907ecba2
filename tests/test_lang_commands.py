"""Every command that speaks to the user speaks Chinese with --lang zh or a Chinese locale, English otherwise."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import main_in

TINY = ["--data", "digits", "--epochs", "1", "--threads", "1", "--no-progress", "--no-doctor", "--device", "cpu",
        "--set", "model.channels=[4]", "--set", "model.hidden=[8]"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lang")
    assert main_in(folder, "train", *TINY, "--out", "run", "--lang", "en") == 0
    return folder / "run"


def _no_locale(monkeypatch: pytest.MonkeyPatch, lang: str = "en_US.UTF-8") -> None:
    for var in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", lang)


def test_train_speaks_the_language_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _no_locale(monkeypatch)
    assert main_in(tmp_path, "train", *TINY, "--out", "zh", "--lang", "zh") == 0
    err = capsys.readouterr().err
    for text in ("与默认值不同的项", "数据：digits", "第   1/1 轮", "训练损失", "验证准确率", "结果", "测试准确率", "运行文件夹"):
        assert text in err, text
    assert "train_loss" not in err and "Result" not in err
    assert "trainwell 训练运行：zh" in (tmp_path / "zh" / "report.html").read_text(encoding="utf-8")
    assert main_in(tmp_path, "train", *TINY, "--out", "en", "--lang", "en") == 0
    err = capsys.readouterr().err
    for text in ("differ from the defaults", "data: digits", "epoch   1/1", "train_loss", "Result", "test accuracy"):
        assert text in err, text
    assert "训练" not in err


def test_a_chinese_locale_chooses_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _no_locale(monkeypatch, "zh_CN.UTF-8")
    assert main_in(tmp_path, "train", *TINY, "--out", "run") == 0
    assert "第   1/1 轮" in capsys.readouterr().err


def test_predict_runs_report_and_checks_speak_chinese(trained: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    _no_locale(monkeypatch)
    digit = Path(__file__).parents[1] / "examples" / "data" / "digit.png"
    folder = trained.parent
    for lang, expected in (("zh", ("预测结果", "概率")), ("en", ("Predictions", "probability"))):
        assert main_in(folder, "predict", str(trained), str(digit), "--lang", lang) == 0
        out = capsys.readouterr().out
        assert all(text in out for text in expected), out
    for lang, expected in (("zh", "中有 1 个运行"), ("en", "1 run in")):
        assert main_in(folder, "runs", str(folder), "--lang", lang) == 0
        assert expected in capsys.readouterr().out
    copy = folder / "copy"
    shutil.copytree(trained, copy)
    for lang, expected in (("zh", "<h2>概要</h2>"), ("en", "<h2>Summary</h2>")):
        assert main_in(folder, "report", str(copy), "--lang", lang) == 0
        assert expected in (copy / "report.html").read_text(encoding="utf-8")
    assert main_in(folder, "checks", "--lang", "zh") == 0
    assert "检查的是训练循环本身的代码" in capsys.readouterr().out
    _no_locale(monkeypatch, "zh_CN.UTF-8")
    assert main_in(folder, "runs", str(folder)) == 0
    assert "中有 2 个运行" in capsys.readouterr().out  # (the run and its copy)


@pytest.mark.slow
def test_the_preflight_names_its_stages_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_in(tmp_path, "doctor", "--lang", "zh", "--data", "digits", "--model", "mlp", "--threads", "1",
                   "--device", "cpu") in (0, 1)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "1. 数据" in text and "2. 形状" in text
