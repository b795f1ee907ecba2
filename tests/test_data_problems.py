"""A data file's problems come in one error: every missing column with the columns the file has and the
settings that name them, and the bad cells' first few places with their count."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainwell._errors import DataError
from trainwell.data.tabular import read_feature_csv
from trainwell.data.text_files import read_text_file


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _error(call, *args, **kwargs) -> str:
    with pytest.raises(DataError) as e:
        call(*args, **kwargs)
    return str(e.value)


def test_a_tsv_without_both_columns_names_both_and_both_settings(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.tsv", "txt\tlab\nhello\tpos\nbye\tneg\n")
    msg = _error(read_text_file, path, "tsv", "text", "label")
    assert "no columns 'text' and 'label'" in msg and "'txt', 'lab'" in msg
    assert "--set text.text_column=COLUMN" in msg and "--set data.label=COLUMN" in msg


def test_a_jsonl_file_names_every_line_without_its_keys(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.jsonl", '{"text": "a", "label": 1}\n{"txt": "b", "label": 0}\n'
                                       '{"text": "c", "label": 1}\n{"text": "d"}\n')
    msg = _error(read_text_file, path, "jsonl", "text", "label")
    assert "2 lines without the keys" in msg
    assert "line 2: no key 'text'; the keys found are 'txt', 'label'" in msg
    assert "line 4: no key 'label'; the keys found are 'text'" in msg


def test_empty_texts_and_labels_are_counted_and_the_first_few_named(tmp_path: Path) -> None:
    rows = "".join(f"{'' if i % 2 else 'ok'},{'pos' if i != 4 else ''}\n" for i in range(1, 16))
    path = _write(tmp_path, "r.csv", "text,label\n" + rows)
    msg = _error(read_text_file, path, "csv", "text", "label")
    assert "9 bad cells; the first 5:" in msg, msg  # 8 empty texts (odd rows) and an empty label (row 4)
    assert "line 2, column 'text': the text is empty" in msg and "line 5, column 'label': the label is empty" in msg
    assert "line 12" not in msg  # only the first few are listed


def test_text_rows_of_the_wrong_length_are_all_named(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.csv", "text,label\na,1\nb,c,1\nd,0\ne,f,g,0\n")
    msg = _error(read_text_file, path, "csv", "text", "label")
    assert "line 3: 3 values but the header has 2 columns" in msg and "line 5: 4 values" in msg


def test_a_table_without_its_label_names_the_columns_it_has(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.csv", "f1,f2,y\n1,2,0\n")
    msg = _error(read_feature_csv, path, "label", ["f1", "f3", "f4"])
    assert "no label column 'label'" in msg and "feature columns 'f3' and 'f4'" in msg
    assert "the columns are f1, f2, y" in msg and "--set data.label=COLUMN" in msg


def test_bad_table_cells_are_counted_and_the_first_five_named(tmp_path: Path) -> None:
    rows = ["1,2,0", "x,2,1", "3,,0", "4,nan,1", "5,6", "6,y,0", "7,z,1", "8,9,"]
    path = _write(tmp_path, "t.csv", "f1,f2,label\n" + "\n".join(rows) + "\n")
    msg = _error(read_feature_csv, path, "label")
    assert "7 bad cells; the first 5:" in msg, msg
    for expected in ("line 3, column 'f1': 'x' is not a number", "line 4, column 'f2': the cell is empty",
                     "line 5, column 'f2': value is nan (NaN/inf)", "line 6: 2 values but the header has 3 columns",
                     "line 7, column 'f2': 'y' is not a number"):
        assert expected in msg
    assert "line 8" not in msg and "line 9" not in msg
    assert "encode categories" in msg and "drop that row" in msg  # the fixes of what is shown


def test_one_bad_cell_reads_as_one_sentence(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.csv", "f1,f2,label\n1,2,0\n3,,1\n")
    msg = _error(read_feature_csv, path, "label")
    assert msg.startswith(f"{path}, line 3, column 'f2': the cell is empty.")
