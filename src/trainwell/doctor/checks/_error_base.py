"""What the error checks share: an explanation in two languages and the ``ErrorCheck`` base that
turns a parsed PyTorch error into a finding."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from torch import nn

from trainwell.doctor.check import Check
from trainwell.doctor.checks._error_parsing import (Context, Parsed, describe, parse, user_line)

Words = tuple[str, str]  # (English, Simplified Chinese)


@dataclass
class Explanation:
    explain: Words
    fix: Words
    evidence: dict[str, Any] = field(default_factory=dict)
    place: Words = ("", "")  # overrides the failing module as the place, when set
    values: dict[str, Words] = field(default_factory=dict)  # more placeholders for the message


Explainer = Callable[[Parsed, Context, "ErrorCheck"], "Explanation | None"]
_CONV = nn.modules.conv._ConvNd
_NORM = nn.modules.batchnorm._NormBase


class ErrorCheck(Check):
    """Shared ``on_error``: parse, gather the context, explain, report at the user's line."""

    explainers: ClassVar[dict[str, Explainer]]
    fallback: ClassVar[Words]  # the fix when a message is recognised but its context cannot be read

    def on_error(self, error: BaseException) -> None:
        parsed = parse(error)
        if parsed is None or parsed.check != self.id or self.reported:
            return
        ctx = Context.of(error, self.session.current_module_stack())
        first = parsed.text.strip().splitlines()
        line = (first[0] if first else type(error).__name__)[:300]
        try:
            ex = self.explainers[parsed.kind](parsed, ctx, self)
        except Exception as e:  # noqa: BLE001 - an odd traceback still gets the plain translation
            ex = Explanation((f"PyTorch said: {line}", f"PyTorch 的报错：{line}"), self.fallback,
                             {"explain_failed": f"{type(e).__name__}: {e}"})
        if ex is None:
            return
        evidence = {"error": line, "kind": parsed.kind,
                    "module": ctx.name_of(ctx.failing) or (type(ctx.failing).__name__ if ctx.failing else None)}
        self.explain(user_line(error), ex, evidence, default_place=_place(ctx))

    def explain(self, where: str | None, ex: Explanation, evidence: dict[str, Any],
                default_place: Words = ("", "")) -> None:
        """Report ``ex`` in the session's language (its own place if set, else ``default_place``)."""
        lang = 1 if self.session.lang == "zh" else 0
        place = ex.place if ex.place != ("", "") else default_place
        self.report(where, {**evidence, **ex.evidence}, place=place[lang], explain=ex.explain[lang],
                    fix=ex.fix[lang], **{k: v[lang] for k, v in ex.values.items()})


def _place(ctx: Context) -> Words:
    m = ctx.failing
    if m is None:
        return "", ""
    name, desc = ctx.name_of(m), describe(m)
    return ((f" in `{name}` ({desc})", f"（出错的层：`{name}`，{desc}）") if name
            else (f" in {desc}", f"（出错的层：{desc}）"))


def _prod(s: tuple[int, ...]) -> int:
    return math.prod(s) if s else 1
