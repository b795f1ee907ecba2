"""The language trainwell speaks: ``--lang``, else Chinese when the locale is Chinese, else English.

Each module that prints keeps its own texts in one table, ``{key: (English, Chinese)}``, and words them with
:func:`say`."""

from __future__ import annotations

import locale
import os
from collections.abc import Mapping
from typing import Any

LANGS = ("en", "zh")


def detect_lang(requested: str | None = None) -> str:
    if requested in LANGS:
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
    """The text in ``lang``: for a message composed on the spot."""
    return zh if lang == "zh" else en


def say(table: Mapping[str, tuple[str, str]], lang: str, key: str, **values: Any) -> str:
    """The text of ``key`` in ``lang`` from a module's table, filled with ``values``."""
    text = pick(lang, *table[key])
    return text.format(**values) if values else text
