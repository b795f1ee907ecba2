"""Which code a file may choose: none.

Every file trainwell reads (a checkpoint, a run's ``config.yaml``, an export's metadata, a ``--config`` file)
may name built-in models and tokenizers. A user's own ``package.module:name`` (or any other name outside
trainwell) is used only when the command line names it again, with exactly the same text; otherwise
:func:`check_file_names` stops with a clear error before anything is imported.

The config keys that can name code are :data:`CODE_KEYS`; a checkpoint's or export's data payload repeats
the tokenizer as ``payload["tokenizer"]``, which :func:`code_names` collects under ``text.tokenizer``.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainwell._errors import TrainwellError


@dataclass(frozen=True)
class CodeKey:
    """A config key whose value can name code: what it is called in messages and the option that names it."""

    key: str  # "model.name", "text.tokenizer"
    what: str  # "model", "tokenizer"
    option: str  # "--model", "--tokenizer"

    def builtin(self) -> list[str]:
        """The built-in names this key may hold (no torch is imported)."""
        if self.key == "model.name":
            from trainwell.models.registry import MODELS

            return MODELS.names()
        from trainwell.data.tokenize import BUILTIN

        return list(BUILTIN)


CODE_KEYS: dict[str, CodeKey] = {
    "model.name": CodeKey("model.name", "model", "--model"),
    "text.tokenizer": CodeKey("text.tokenizer", "tokenizer", "--tokenizer"),
}

Typed = Mapping[str, str]  # config key -> the name typed on the command line


def typed_names(model: str | None = None, tokenizer: str | None = None, sets: Iterable[str] = ()) -> dict[str, str]:
    """The code names typed on the command line: ``--model``, ``--tokenizer``, and ``--set model.name=...`` /
    ``--set text.tokenizer=...`` (a later ``--set`` wins, as it does in the config)."""
    from trainwell.config import parse_set

    typed: dict[str, str] = {}
    if model is not None:
        typed["model.name"] = model
    if tokenizer is not None:
        typed["text.tokenizer"] = tokenizer
    for item in sets:
        key, sep, _ = item.partition("=")
        if sep and key.strip() in CODE_KEYS:
            _, value = parse_set(item)
            if isinstance(value, str):
                typed[key.strip()] = value
    return typed


def code_names(config: Any, payload: Any = None, *, model: bool = True) -> list[tuple[str, Any]]:
    """(config key, value) for every name in a file's config (and data payload) that could choose code:
    ``model.name`` (unless ``model=False``: a format that carries the model as a graph never builds it from
    its name) and ``text.tokenizer``, from the config and from the payload. Missing keys are left out (their
    defaults are built in)."""
    found: list[tuple[str, Any]] = []
    sections = config if isinstance(config, dict) else {}
    for key in CODE_KEYS:
        if key == "model.name" and not model:
            continue
        section, _, field = key.partition(".")
        node = sections.get(section)
        if isinstance(node, dict) and field in node:
            found.append((key, node[field]))
    if isinstance(payload, dict) and "tokenizer" in payload:
        found.append(("text.tokenizer", payload["tokenizer"]))
    return found


def check_file_names(names: Iterable[tuple[str, Any]], source: str | Path, typed: Typed | None = None) -> None:
    """Raise a :class:`TrainwellError` when a name read from ``source`` chooses code that the command line
    (``typed``) does not name again with exactly the same text. Built-in names always pass."""
    typed = typed or {}
    for key, value in names:
        spec = CODE_KEYS[key]
        if isinstance(value, str) and (value in spec.builtin() or typed.get(key) == value or _library(key, value)):
            continue
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:79] + "…"
        message = (f"{source} names the {spec.what} {shown}, which is not one of trainwell's own: a file never "
                   "chooses code to run, so nothing was imported.")
        if isinstance(value, str) and ":" in value:
            again = f"{spec.option} {shlex.quote(value)}"
            fix = f"if this is your own {spec.what}, name it again on the command line: {again}"
        else:
            fix = f"use a file whose {spec.what} is built in ({', '.join(spec.builtin())})"
        if key in typed:
            message += f" The command line names {typed[key]!r} instead."
        raise TrainwellError(message, fix=fix)


def _library(key: str, value: str) -> bool:
    """A library's model by name (``torchvision:resnet18``): a registry entry, not code the file chooses."""
    from trainwell._library_names import is_library_model

    return key == "model.name" and is_library_model(value)
