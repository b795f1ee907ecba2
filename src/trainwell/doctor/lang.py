"""Which language the doctor speaks: ``--lang``, else Chinese when the locale is Chinese (``trainwell._lang``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainwell._lang import detect_lang, pick

__all__ = ["detect_lang", "pick", "told"]


def told(lang: str, words: Mapping[str, tuple[str, str]], **values: Any) -> dict[str, str]:
    """Each part of a finding a check words per case (``{"headline": (en, zh), "story": ..., "remedy": ...}``),
    in the finding's language and filled with ``values``."""
    return {part: pick(lang, en, zh).format(**values) for part, (en, zh) in words.items()}
