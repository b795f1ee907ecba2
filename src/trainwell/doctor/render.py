"""Showing findings: one block when a problem is first found, a summary table at the end, JSON."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainwell.doctor.findings import Finding

_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}
_LABEL = {"en": {"error": "error", "warning": "warning", "info": "info", "fix": "fix", "at": "at",
                 "none": "trainwell doctor: no problems found.", "summary": "trainwell doctor found"},
          "zh": {"error": "错误", "warning": "警告", "info": "提示", "fix": "修复", "at": "位置",
                 "none": "trainwell doctor：没有发现问题。", "summary": "trainwell doctor 发现"}}


_COLUMNS = {"zh": {"severity": "严重程度", "ranks": "进程", "where": "位置", "title": "问题"}}  # en: the names as they are

BLOCK_TITLE = "trainwell doctor"


def in_block(show: Callable[..., None], console: Any) -> Callable[..., None]:
    """``show`` printing between two rules: under ``doctor run`` the doctor's words share stderr with the
    script's, and each block of them stands apart (and is easy to strip)."""

    def shown(*args: Any) -> None:
        console.rule(BLOCK_TITLE, style="dim")
        show(*args)
        console.rule(style="dim")

    return shown


def print_finding(finding: Finding, console: Any, lang: str = "en", world_size: int = 1,
                  also: list[str] | None = None) -> None:
    """Print one finding as it is detected (or merged from ``world_size`` processes: then with its ranks).
    ``also``: the ids of the findings it explains (its symptoms, see ``folding.py``), else those folded into it."""
    from rich.markup import escape

    from trainwell.doctor.folding import symptom_ids, symptoms_note
    from trainwell.doctor.ranks import rank_words

    words = _LABEL.get(lang, _LABEL["en"])
    at = f"  ({words['at']} {escape(finding.where)})" if finding.where else ""
    ranks = f" [magenta]\\[{rank_words(finding.ranks, world_size, lang)}][/]" if finding.ranks is not None else ""
    console.print(f"[{_STYLE[finding.severity]}]trainwell doctor {words[finding.severity]}[/] "
                  f"[bold]{finding.id}[/]{ranks}: {escape(finding.title)}{at}", soft_wrap=True)
    console.print(f"  {escape(finding.message)}", soft_wrap=True, highlight=False)
    symptoms = also if also is not None else symptom_ids(finding)
    if symptoms:
        console.print(f"  {escape(symptoms_note(symptoms, lang))}", soft_wrap=True, highlight=False)
    console.print(f"  [green]{words['fix']}:[/] {escape(finding.fix)}", soft_wrap=True, highlight=False)


def live_printer(console: Any, lang: str = "en") -> Callable[[Finding], None]:
    """The ``on_finding`` that prints each finding as found, a symptom of a cause already printed as one line
    naming it (``folding.LiveFolding``)."""
    from rich.markup import escape

    from trainwell.doctor.folding import LiveFolding

    return LiveFolding(lambda f, also: print_finding(f, console, lang, also=also),
                       lambda text: console.print(f"[dim]trainwell doctor:[/] {escape(text)}", soft_wrap=True,
                                                  highlight=False), lang)


_INTERNAL = {"en": {"check": "trainwell doctor: the check {name} was switched off after an error of its own in "
                              "{handler} ({error}); the other checks and the rest of the run are unaffected.",
                    "hook": "trainwell doctor: its hook {handler} failed ({error}) and was ignored; "
                            "the rest of the run is unaffected."},
             "zh": {"check": "trainwell doctor：检查 {name} 在 {handler} 中自身出错（{error}），已被关闭；"
                             "其他检查和本次运行的其余部分不受影响。",
                    "hook": "trainwell doctor：它的钩子 {handler} 出错（{error}），已忽略；本次运行的其余部分不受影响。"}}


def print_internal_error(check: str | None, handler: str, error: str, console: Any, lang: str = "en") -> None:
    """One line saying the doctor's own code failed, what it switched off, and that the run goes on."""
    from rich.markup import escape

    words = _INTERNAL.get(lang, _INTERNAL["en"])
    line = words["check" if check else "hook"].format(name=check, handler=handler, error=error)
    console.print(f"[yellow]{escape(line)}[/]", soft_wrap=True, highlight=False)


def print_summary(findings: list[Finding], console: Any, lang: str = "en", world_size: int = 1,
                  unjudged: dict[str, int] | None = None) -> None:
    """The closing table (or "no problems found"), the line after a crash, and what the checks could not judge."""
    from rich.markup import escape

    words = _LABEL.get(lang, _LABEL["en"])
    if not findings:
        console.print(f"[green]{words['none']}[/]")
    else:
        _print_table(findings, console, lang, world_size)
    skipped = unjudged_words(unjudged or {}, lang)
    if skipped:
        console.print(f"[yellow]{escape(skipped)}[/]", soft_wrap=True, highlight=False)


_UNJUDGED = {"en": ("Not judged: {parts}. The checks skip sparse, nested and complex tensors, so what those carried "
                    "was not checked.", "{n} events with {kind} tensors"),
             "zh": ("未判断：{parts}。检查会跳过稀疏、嵌套和复数张量，它们携带的内容没有被检查。", "{n} 个带有 {kind} 张量的事件")}


def unjudged_words(unjudged: dict[str, int], lang: str = "en") -> str | None:
    """One line naming the events no check was given (``Session.unjudged``: by kind of tensor), or None."""
    if not unjudged:
        return None
    line, part = _UNJUDGED.get(lang, _UNJUDGED["en"])
    sep = "，" if lang == "zh" else ", "
    return line.format(parts=sep.join(part.format(n=n, kind=kind) for kind, n in sorted(unjudged.items())))


def _print_table(findings: list[Finding], console: Any, lang: str, world_size: int) -> None:
    from rich.markup import escape
    from rich.table import Table

    from trainwell.doctor.folding import symptom_ids
    from trainwell.doctor.ranks import rank_words

    words = _LABEL.get(lang, _LABEL["en"])
    table = Table(title=f"{words['summary']}: {len(findings)}")
    merged = any(f.ranks is not None for f in findings)
    for col in ("severity", "id", *(["ranks"] * merged), "where", "title"):
        table.add_column(_COLUMNS.get(lang, {}).get(col, col))
    for f in findings:
        ranks = [rank_words(f.ranks, world_size, lang)] * merged
        folded = symptom_ids(f)  # the symptoms it explains: named beside it, not rows of their own
        shown_id = f"{f.id} (+ {', '.join(folded)})" if folded else f.id
        table.add_row(f"[{_STYLE[f.severity]}]{words[f.severity]}[/]", shown_id, *ranks, escape(f.where or "-"),
                      escape(f.title))
    console.print(table)
    stopped = crash_words(findings, lang)
    if stopped:
        console.print(f"[bold red]{escape(stopped)}[/]", soft_wrap=True, highlight=False)


_STOPPED = {"en": ("The script stopped with an error at {where}: {how}.", "{id} explains it",
                   "the doctor has no explanation beyond the traceback"),
            "zh": ("脚本在 {where} 因错误而停止：{how}。", "{id} 给出了解释", "doctor 对此没有比回溯更多的解释")}


def crash_words(findings: list[Finding], lang: str = "en") -> str | None:
    """The summary's line after a crash (issue 26): the line the script stopped at and which finding explains
    the error, or plainly that none does. ``None`` when no finding is about a crash."""
    crash = next((f for f in findings if f.evidence.get("error")), None)
    if crash is None:
        return None
    line, explained, unexplained = _STOPPED.get(lang, _STOPPED["en"])
    how = unexplained if crash.id == "script-error" and not crash.evidence.get("explained") else \
        explained.format(id=crash.id)
    return line.format(where=crash.where or "?", how=how)


def findings_json(findings: list[Finding], **extra: Any) -> dict[str, Any]:
    return {**extra, "findings": [f.to_dict() for f in findings]}


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` whole or not at all (a run killed while writing keeps the previous file)."""
    from trainwell._files import atomic_write_json

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, data)
