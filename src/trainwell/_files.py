"""The one way trainwell writes a file of the run folder: whole or not at all.

Every file goes to a temporary name in the same folder, is flushed to disk, then renamed over the
target, so a crash, ``kill -9`` or a full disk leaves the previous version intact, never half a file.
(Append-only logs such as ``steps.csv`` are the exception: their readers skip a cut-short last line.)
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write`` with a binary file open on a temporary name, then rename it to ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # os.open with 0o666 lets the umask decide the permissions (mkstemp would force 0600).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 text (newlines as given) atomically."""
    data = text.encode("utf-8")
    atomic_write(path, lambda f: f.write(data))


def atomic_write_json(path: Path, data: Any) -> None:
    """Write indented UTF-8 JSON atomically; values JSON does not know (paths, numpy numbers) as strings."""
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
