"""Which language the doctor speaks: ``--lang``, else Chinese when the locale is Chinese."""

from __future__ import annotations

import locale
import os
from collections.abc import Mapping
from typing import Any


def detect_lang(requested: str | None = None) -> str:
    if requested in ("en", "zh"):
        return requested
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    try:
        loc = locale.getlocale()[0] or ""
    except ValueError:
        loc = ""
    return "zh" if loc.lower().startswith("zh") else "en"


def pick(lang: str, en: str, zh: str) -> str:
    """The text in the finding's language: for parts of a message that a check composes itself."""
    return zh if lang == "zh" else en


def told(lang: str, words: Mapping[str, tuple[str, str]], **values: Any) -> dict[str, str]:
    """Each part of a finding a check words per case (``{"headline": (en, zh), "story": ..., "remedy": ...}``),
    in the finding's language and filled with ``values``."""
    return {part: pick(lang, en, zh).format(**values) for part, (en, zh) in words.items()}
