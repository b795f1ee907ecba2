"""The processes a watched script starts: watched too, and their findings merged into the script's one report.

A script's ``multiprocessing.Process`` (fork or spawn start method) and ``torch.multiprocessing.spawn`` children
run under a session of their own:

- a child made by fork inherits the script's session, installed: at the start of the child's
  ``BaseProcess._bootstrap`` that copy is taken off, quietly, and a fresh session is put in its place, so the
  child is judged on what the child does (not on the parent's steps before the fork);
- a child made by spawn is a new interpreter: its command line (``multiprocessing.spawn.get_command_line``)
  runs ``spawn_main`` below, which puts the same ``_bootstrap`` wrapper in place and then hands over to Python's
  own ``spawn_main`` (the script's main module is prepared as Python prepares it).

At the end of ``_bootstrap`` (whatever the child's exit: a return, an exception, ``sys.exit``) the child ends its
session and writes what it saw (findings, internal errors, the kinds of tensors left unjudged, its exit code) to
a record in a folder of the script's process. The script's process reads the records present when the script
ends (it never waits: a child that is still running, or was killed, is not in the report) and reports each
finding once, with the children that saw it: a ``torch.multiprocessing.spawn`` child by its process index (the
finding's ``ranks``), any child by its process name in the message and in ``evidence["child_processes"]``.

Not watched: DataLoader workers, ``multiprocessing.Pool`` workers and managers (processes whose target is the
library's own: they run no training loop and are stopped abruptly), processes started by the ``forkserver``
start method (forked from a server the doctor never enters), and ``os.fork()`` children outside multiprocessing
(they end unreported, as before).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainwell.doctor.session import Session

RECORD = "child-{pid}.json"
_SKIPPED_TARGETS = ("torch.utils.data.", "multiprocessing.")  # the libraries' own workers and servers
_NOTE = {"en": " (Seen in the child process {labels}, started by the script.)",
         "zh": "（出现在脚本启动的子进程 {labels} 中。）"}


class Children:
    """The watch over a session's child processes: where their records go, and how they are merged back."""

    def __init__(self, folder: Path, lang: str, debug: bool, checks: list[str]) -> None:
        self.folder = folder
        self.lang = lang
        self.debug = debug
        self.checks = checks

    def config(self) -> dict[str, Any]:
        return {"dir": str(self.folder), "lang": self.lang, "debug": self.debug, "checks": self.checks}

    def collect(self, session: Session) -> None:
        """Merge the records the children wrote into ``session``: each finding once (one the session itself
        reported gets the children's names in its evidence), the children's internal errors named as theirs."""
        from trainwell.doctor.findings import Finding

        records = []
        for path in sorted(self.folder.glob(RECORD.format(pid="*"))):
            try:
                records.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as e:  # a record half written by a child killed while writing it
                session.internal_error(None, f"reading the child record {path.name}", e)
        records.sort(key=lambda r: (r["index"] is None, r["index"] or 0, r["label"]))
        seen: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
        for rec in records:
            for f in rec["findings"]:
                seen.setdefault(f["id"], []).append((rec, f))
            for check, handler, detail in rec["internal_errors"]:
                name = f"{handler} (child process {rec['label']})"
                session.internal_errors.append(f"{check}.{name}: {detail}" if check else f"{name}: {detail}")
                if session.on_internal_error is not None:
                    session.on_internal_error(check, name, detail)
            for kind, n in rec.get("unjudged", {}).items():
                session.unjudged[kind] = session.unjudged.get(kind, 0) + n
        for check_id, where in seen.items():
            labels = [rec["label"] for rec, _ in where]
            own = next((f for f in session.findings if f.id == check_id), None)
            if own is not None:
                own.evidence.setdefault("child_processes", []).extend(labels)
                continue
            first = where[0][1]
            indexes = [rec["index"] for rec, _ in where]
            note = (_NOTE.get(session.lang) or _NOTE["en"]).format(labels=", ".join(labels))
            finding = Finding(**{**first, "message": first["message"] + note,
                                 "evidence": {**first["evidence"], "child_processes": labels},
                                 "ranks": indexes if all(i is not None for i in indexes) else None})
            session.findings.append(finding)
            session.reported_ids.add(check_id)
            if session.on_finding is not None:
                session.on_finding(finding)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def watch_children(session: Session) -> Children:
    """Watch the child processes started while ``session`` is installed (patches undone with the session's)."""
    children = Children(Path(tempfile.mkdtemp(prefix="trainwell-doctor-children-")), session.lang, session.debug,
                        [c.id for c in session.checks])
    _patch_process(session._patch, children, session)
    return children


def _patch_process(patch: Callable[[Any, str, Any], None], children: Children, inherited: Session | None) -> None:
    import multiprocessing.process
    import multiprocessing.spawn

    base = multiprocessing.process.BaseProcess
    patch(base, "_bootstrap", _watched_bootstrap(base._bootstrap, children, inherited))
    patch(multiprocessing.spawn, "get_command_line", _watched_command_line(multiprocessing.spawn.get_command_line,
                                                                          children))


def _watched_command_line(fn: Callable[..., list[str]], children: Children) -> Callable[..., list[str]]:
    """``get_command_line`` whose ``-c`` program starts the child through ``spawn_main`` below."""

    def get_command_line(**kwds: Any) -> list[str]:
        line = fn(**kwds)
        if "-c" not in line:  # a frozen executable: no program to change (the child goes unwatched)
            return line
        at = line.index("-c") + 1
        given = ", ".join(f"{k}={v!r}" for k, v in kwds.items())
        line[at] = f"from trainwell.doctor.children import spawn_main; spawn_main({children.config()!r}, {given})"
        return line

    return get_command_line


def spawn_main(config: dict[str, Any], **kwds: Any) -> None:
    """A spawned child's start: the ``_bootstrap`` wrapper in place, then Python's own ``spawn_main``."""
    import multiprocessing.process
    import multiprocessing.spawn

    children = Children(Path(config["dir"]), config["lang"], config["debug"], config["checks"])
    base = multiprocessing.process.BaseProcess
    base._bootstrap = _watched_bootstrap(base._bootstrap, children, None)  # type: ignore[method-assign]
    multiprocessing.spawn.spawn_main(**kwds)


def _label(process: Any) -> tuple[str, int | None]:
    """The child's name in the report, and its index when ``torch.multiprocessing.spawn`` started it."""
    target = getattr(process, "_target", None)
    if (getattr(target, "__module__", None) == "torch.multiprocessing.spawn"
            and getattr(target, "__name__", "") == "_wrap"):
        index = process._args[1]
        return f"{index} of torch.multiprocessing.spawn", index
    return process.name, None


def _watched_bootstrap(fn: Callable[..., int], children: Children, inherited: Session | None) -> Callable[..., int]:
    def _bootstrap(process: Any, *args: Any, **kwargs: Any) -> int:
        target = getattr(process, "_target", None)
        if target is not None and str(getattr(target, "__module__", "")).startswith(_SKIPPED_TARGETS):
            return fn(process, *args, **kwargs)
        label, index = _label(process)
        session, errors = _child_session(children, inherited)
        code = 1
        try:
            code = fn(process, *args, **kwargs)
        finally:
            _end(session, children, process, label, index, errors, code)
        return code

    return _bootstrap


def _child_session(children: Children, inherited: Session | None) -> tuple[Session, list[list[Any]]]:
    """A fresh session for this child, installed (a forked child's copy of the parent's taken off first)."""
    from trainwell.doctor.session import Session

    if inherited is not None and inherited._installed:
        inherited.on_finding = inherited.on_internal_error = None
        inherited.uninstall()
    errors: list[list[Any]] = []
    session = Session(lang=children.lang, checks=children.checks, debug=children.debug,
                      on_internal_error=lambda check, handler, detail: errors.append([check, handler, detail]))
    session.install()
    _patch_process(session._patch, children, session)  # its own children (a fork of it inherits this session)
    return session, errors


def _end(session: Session, children: Children, process: Any, label: str, index: int | None,
         errors: list[list[Any]], code: int) -> None:
    """End the child's session and write its record; never raises into the child's exit."""
    try:
        session.end()
    except Exception as e:  # noqa: BLE001 - (a check's failure is caught by the session: this is the session's own)
        errors.append([None, "end", f"{type(e).__name__}: {e}"])
    try:
        session.uninstall()
    except Exception as e:  # noqa: BLE001
        errors.append([None, "uninstall", f"{type(e).__name__}: {e}"])
    data = {"pid": os.getpid(), "label": label, "index": index, "exit_code": code, "internal_errors": errors,
            "findings": [f.to_dict() for f in session.findings], "unjudged": session.unjudged}
    if not children.folder.is_dir():  # the script's process has ended and cleared it: nobody left to read it
        return
    try:
        from trainwell._files import atomic_write_json

        atomic_write_json(children.folder / RECORD.format(pid=os.getpid()), data)
    except Exception as e:  # noqa: BLE001 - a child's exit is never broken by its record
        print(f"trainwell doctor: the child process {label} could not write its record ({type(e).__name__}: {e})",
              file=sys.stderr)
