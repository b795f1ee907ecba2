"""Tokenizers for task ``text``: ``char``, ``word`` (jieba for Chinese) or a user's ``package.module:function``.

Latin letters are lower-cased; words and numbers stay whole; every punctuation mark is a token
(``！`` and ``?`` carry sentiment). ``char`` makes every CJK character a token; ``word``
segments runs of CJK characters with jieba (imported on first use, its log lines silenced).

>>> char_tokens("质量很好 Good, 5 stars!")
['质', '量', '很', '好', 'good', ',', '5', 'stars', '!']
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from trainwell._errors import ConfigError
from trainwell._imports import import_module_of

Tokenizer = Callable[[str], list[str]]

# CJK ideographs (with extension A and compatibility forms), kana and hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CHAR = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\s\w]|_")  # a CJK character, a word / number, a symbol
_RUNS = re.compile(rf"([{_CJK}]+)")  # splits text into CJK runs (odd items) and the rest (even items)
_OTHER = re.compile(rf"[^\W{_CJK}]+|[^\s\w]|_")  # outside CJK runs: words / numbers and symbols

BUILTIN = ("char", "word")


def char_tokens(text: str) -> list[str]:
    """Every CJK character a token; Latin words and numbers whole (lower-cased); each symbol a token."""
    return [t.lower() for t in _CHAR.findall(text)]


def word_tokens(text: str) -> list[str]:
    """Chinese words from jieba; whitespace / punctuation splitting elsewhere (lower-cased)."""
    cut = _jieba()
    out: list[str] = []
    for i, part in enumerate(_RUNS.split(text)):
        if i % 2:
            out += cut(part)
        elif part:
            out += [t.lower() for t in _OTHER.findall(part)]
    return out


@lru_cache(maxsize=1)
def _jieba() -> Tokenizer:
    import logging

    try:
        import jieba
    except ImportError:
        raise ConfigError("text.tokenizer=word needs the jieba package for Chinese word segmentation.",
                          fix='pip install "trainwell[text]" (or pip install jieba), or use --set text.tokenizer=char') from None
    jieba.setLogLevel(logging.WARNING)  # "Building prefix dict ..." on every start
    jieba.initialize()
    return lambda s: jieba.lcut(s, HMM=True)


def truncate(tokens: list[str], max_len: int, mode: str = "head", head_fraction: float = 0.5) -> list[str]:
    """At most ``max_len`` tokens: the first (``head``), the last (``tail``), or the first
    ``round(max_len * head_fraction)`` and the rest from the end (``head+tail``; reviews often end with the verdict).

    >>> truncate(list("abcdefgh"), 4, "head+tail")
    ['a', 'b', 'g', 'h']
    """
    if len(tokens) <= max_len:
        return list(tokens)
    if mode == "head":
        return tokens[:max_len]
    if mode == "tail":
        return tokens[len(tokens) - max_len:]
    if mode != "head+tail":
        raise ConfigError(f"text.truncate {mode!r} is not head, tail or head+tail.")
    head = min(max_len, max(0, round(max_len * head_fraction)))
    return tokens[:head] + tokens[len(tokens) - (max_len - head):]


def get_tokenizer(spec: str) -> Tokenizer:
    """``char``, ``word`` or ``package.module:function`` (str -> list of str); the current folder is importable."""
    if spec == "char":
        return char_tokens
    if spec == "word":
        return word_tokens
    if ":" not in spec:
        raise ConfigError(f"text.tokenizer {spec!r} is not char, word or package.module:function.",
                          fix="e.g. --set text.tokenizer=char, or --set text.tokenizer=mytok:split")
    module, attr = import_module_of(spec, "text.tokenizer", "mytok:split", "package.module:function")
    module_name = module.__name__
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ConfigError(f"{module_name!r} has no function {attr!r} for text.tokenizer={spec}.")
    return _checked(fn, spec)


def _checked(fn: Callable[[str], object], spec: str) -> Tokenizer:
    def tokenize(text: str) -> list[str]:
        tokens = fn(text)
        if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
            raise ConfigError(f"text.tokenizer {spec} returned {type(tokens).__name__} for {text[:30]!r}; "
                              "it must return a list of strings.")
        return list(tokens)

    return tokenize
