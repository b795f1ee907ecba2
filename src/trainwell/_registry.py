"""A small named registry, shared by models, datasets, tasks and doctor checks.

An entry holds its object, or (``register_lazy``) the ``"package.module:attr"`` where it lives, so a
registry of built-ins can list names and metadata without importing their heavy modules (torch).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from trainwell._errors import TrainwellError

T = TypeVar("T")


@dataclass
class Entry(Generic[T]):
    name: str
    obj: T | None
    summary: str
    meta: dict[str, Any] = field(default_factory=dict)
    target: str | None = None  # "package.module:attr" of a lazily registered object

    def load(self) -> T:
        """The registered object, importing its module on first use for a lazy entry."""
        if self.obj is None and self.target is not None:
            module, _, attr = self.target.partition(":")
            self.obj = getattr(importlib.import_module(module), attr)
        assert self.obj is not None
        return self.obj


class Registry(Generic[T]):
    """Maps names to builders; unknown names get the list of choices and a "did you mean"."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def register(self, name: str, summary: str = "", **meta: Any) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            doc = summary or (getattr(obj, "__doc__", None) or "").strip().split("\n")[0]
            self._add(Entry(name, obj, doc, dict(meta)))
            return obj

        return deco

    def register_lazy(self, name: str, target: str, summary: str, **meta: Any) -> None:
        """Register ``target`` ("package.module:attr") under ``name`` without importing it yet."""
        self._add(Entry(name, None, summary, dict(meta), target=target))

    def _add(self, entry: Entry[T]) -> None:
        if entry.name in self._entries:
            raise ValueError(f"{self.kind} {entry.name!r} is registered twice")
        self._entries[entry.name] = entry

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(self._entries[n] for n in self.names())

    def entry(self, name: str) -> Entry[T]:
        try:
            return self._entries[name]
        except KeyError:
            raise TrainwellError(unknown_name_message(self.kind, name, self.names())) from None

    def get(self, name: str) -> T:
        return self.entry(name).load()


def did_you_mean(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.5)
    return f" Did you mean {close[0]!r}?" if close else ""


def unknown_name_message(kind: str, name: str, choices: list[str]) -> str:
    return f"Unknown {kind} {name!r}.{did_you_mean(name, choices)} Choose one of: {', '.join(choices)}."
