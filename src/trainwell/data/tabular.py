"""``csv:PATH`` — numeric feature columns and a label column, checked row by row."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from trainwell._errors import DataError
from trainwell.config import DataConfig
from trainwell.data.bundle import DataBundle
from trainwell.data.images import in_memory_bundle
from trainwell.data.problems import Problems
from trainwell.data.problems import names as problem_names
from trainwell.data.separator import csv_rows, detect_separator, separator_name

MAX_COLUMNS = 100_000  # features of one table; more is almost always a wrong separator or a transposed file


def read_feature_csv(path: Path, label: str | None, features: list[str] | None = None
                     ) -> tuple[np.ndarray, list[str], list[str], list[str]]:
    """Read a CSV into a float32 feature matrix.

    Returns (features N×F, label values, feature names, per-row labels); ``label=None``
    reads features only (prediction). Every problem names the file, line and column.
    """
    if not path.is_file():
        raise DataError(f"CSV file {str(path)!r} does not exist.", fix="check the path after csv:")
    try:
        content = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text ({e}).", fix="save the file as UTF-8 CSV") from None
    sep = detect_separator(content.split("\n", 1)[0])  # a comma, or the semicolon / tab the header uses instead
    rows = csv_rows(path, content, sep)
    first = next(rows, None)
    if first is None or not any(cell.strip() for cell in first[1]):
        raise DataError(f"{path}: the file is empty; it needs a header line and data rows.")
    header = [h.strip() for h in first[1]]
    if len(header) > MAX_COLUMNS:
        raise DataError(f"{path}: the header has {len(header):,} columns; trainwell reads tables of up to "
                        f"{MAX_COLUMNS:,} columns.",
                        fix="select or aggregate the features before training (or check that the separator, "
                            f"{separator_name(sep)}, is the one the file uses)")
    index: dict[str, int] = {}
    for i, name in enumerate(header):
        index.setdefault(name, i)  # a repeated name means its first column, as list.index did
    names = features if features is not None else [h for h in header if h != label]
    _check_columns(path, header, index, label, names, features is not None)
    cols = [index[n] for n in names]
    label_col = index[label] if label is not None else None
    body = [(i, r) for i, r in rows if any(c.strip() for c in r)]
    if not body:
        raise DataError(f"{path}: the header is there but there are no data rows.")
    x = np.empty((len(body), len(cols)), dtype=np.float32)
    labels: list[str] = []
    cells = Problems(path, "bad cells")
    for k, (line, row) in enumerate(body):
        if len(row) != len(header):
            cells.add(f"line {line}", f"{len(row)} values but the header has {len(header)} columns",
                      "give every row one value per column (quote values that contain the separator)")
            continue
        for j, c in enumerate(cols):
            x[k, j] = _number(cells, sep, line, header[c], row[c].strip())
        if label_col is not None:
            value = row[label_col].strip()
            if not value:
                cells.add(f"line {line}, column {label!r}", "the label is empty", "give every row a label")
            labels.append(value)
    cells.check()
    return x, labels, names, header


def _check_columns(path: Path, header: list[str], index: dict[str, int], label: str | None, names: list[str],
                   named: bool) -> None:
    """A missing label column and missing feature columns in one error, with the columns the file has."""
    missing = [n for n in names if n not in index]
    problems = ([f"no label column {label!r}"] if label is not None and label not in index else []) + (
        [f"no feature column{'s' if len(missing) > 1 else ''} {problem_names(missing)} that the model was trained on"]
        if missing else [])
    if problems:
        raise DataError(f"{path}: {'; '.join(problems)}; the columns are {_listed(header)}.",
                        fix="name the label column with --set data.label=COLUMN" if label is not None and label
                        not in index else "give the file the columns the model was trained on")
    if not names and not named:
        raise DataError(f"{path}: no feature columns besides the label {label!r}.")


def _number(cells: Problems, sep: str, line: int, column: str, cell: str) -> float:
    """The cell as a number, or nan after noting what is wrong with it in ``cells``."""
    where = f"line {line}, column {column!r}"
    if not cell:
        cells.add(where, "the cell is empty",
                  "fill in the missing value, or drop that row (or the column) before training")
        return math.nan
    try:
        value = float(cell)
    except ValueError:
        decimal_comma = sep != "," and "," in cell
        cells.add(where, f"{cell!r} is not a number",
                  f"this file separates columns with {separator_name(sep)}: write decimals with a point (1.5, "
                  "not 1,5)" if decimal_comma else
                  "features must be numeric: encode categories as numbers or drop the column")
        return math.nan
    if not math.isfinite(value):
        cells.add(where, f"value is {cell} (NaN/inf)",
                  "fill or drop missing values before training (NaN inputs make the loss NaN)")
    return value


def _listed(names: list[str], shown: int = 20) -> str:
    """Column names for a message: all of a few, the first ``shown`` of many with the count."""
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])}, ... ({len(names):,} in all)"


def _label_values(labels: list[str]) -> np.ndarray:
    """Numeric labels sort as numbers (1, 2, 10), others as text."""
    try:
        nums = np.array([float(v) for v in labels])
    except ValueError:
        return np.array(labels)
    return nums.astype(np.int64) if np.all(nums == np.round(nums)) else np.array(labels)


def csv_table(cfg: DataConfig) -> DataBundle:
    path = Path(cfg.path or "").expanduser()
    x, labels, names, _ = read_feature_csv(path, cfg.label)
    y = _label_values(labels)
    if len(np.unique(y)) < 2:
        raise DataError(f"{path}: column {cfg.label!r} has a single class ({labels[0]!r}); classification needs two or more.")
    bundle = in_memory_bundle(x, y, cfg, scale=1.0, source=f"csv {path}")
    bundle.preprocess.features = names
    with path.open(encoding="utf-8-sig") as f:
        sep = detect_separator(f.readline())
    if sep != ",":
        bundle.info.setdefault("notes", []).append(f"{path}: columns are separated by {separator_name(sep)}, not commas; read that way")
    return bundle
