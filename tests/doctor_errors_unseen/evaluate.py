"""How the doctor explains crashes whose message forms no rule was written for (issue 26, section 1).

Each script in ``tune/`` and ``confirm/`` reproduces a real PyTorch error from a public report (named in its first
lines) and marks the line that fails with ``# <- fails``. Every script is run under ``trainwell doctor run --json``
and scored on five questions:

- found: the doctor reports the crash (an error finding carrying the message) and never says "no problems found";
- line: that finding names the failing line of the script;
- op: it names the operation that failed (``evidence.operation``, or the layer for the older error checks);
- shapes: it gives the shape of at least one tensor that operation was given;
- cause: it gives a cause (``evidence.explained``, or one of the checks that translate known messages spoke) and
  that cause is the right one: its text (message and fix) holds one of the words the script's ``# cause mentions:``
  line lists, chosen from the public report's resolution when the script was written, before any rule was.

Run ``python tests/doctor_errors_unseen/evaluate.py [tune|confirm]``; the figures are printed per half.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
HALVES = ("tune", "confirm")
QUESTIONS = ("found", "line", "op", "shapes", "cause")
_NONE_FOUND = ("no problems found", "没有发现问题")


def scripts(half: str) -> list[Path]:
    return sorted((HERE / half).glob("*.py"))


def failing_line(script: Path) -> int:
    """The line number marked ``# <- fails``."""
    lines = [i for i, text in enumerate(script.read_text().splitlines(), 1) if text.rstrip().endswith("# <- fails")]
    assert len(lines) == 1, f"{script.name}: mark exactly one line with '# <- fails'"
    return lines[0]


def cause_words(script: Path) -> list[str]:
    """The words (any one) that a right explanation of this script's crash holds."""
    line = next((t for t in script.read_text().splitlines()[:6] if t.startswith("# cause mentions:")), None)
    assert line, f"{script.name}: a '# cause mentions: word|word' line must follow '# half:'"
    return [w.strip() for w in line.split(":", 1)[1].split("|") if w.strip()]


def run(script: Path, lang: str = "en") -> tuple[dict[str, Any], str]:
    """The doctor's JSON report on ``script`` and everything it printed."""
    from trainwell.cli import main

    shown = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "doctor.json"
        with contextlib.redirect_stdout(shown), contextlib.redirect_stderr(shown):
            main(["doctor", "run", "--lang", lang, "--json", str(out), str(script)])
        return json.loads(out.read_text()), shown.getvalue()


def error_finding(report: dict[str, Any]) -> dict[str, Any] | None:
    """The finding that explains the crash: one whose evidence carries the error message."""
    found = [f for f in report["findings"] if f.get("evidence", {}).get("error")]
    return found[0] if found else None


def score(script: Path, report: dict[str, Any], shown: str) -> dict[str, bool]:
    """The five answers for one script."""
    f = error_finding(report)
    quiet = any(words in shown for words in _NONE_FOUND)
    if f is None or quiet:
        return {q: False for q in QUESTIONS}
    ev = f["evidence"]
    operands = ev.get("operands") or []
    said = (f["message"].replace(str(f.get("where") or ""), "") + " " + f["fix"]).lower()  # not the script's name
    return {
        "found": True,
        "line": str(f.get("where") or "").endswith(f"{script.name}:{failing_line(script)}"),
        "op": bool(ev.get("operation") or ev.get("module")),
        "shapes": any("shape" in o for o in operands) or bool(ev.get("tensors")),  # () is a scalar's shape
        "cause": (f["id"] != "script-error" or bool(ev.get("explained")))
        and any(w.lower() in said for w in cause_words(script)),
    }


def main(argv: list[str]) -> int:
    import torch

    torch.set_num_threads(1)
    for half in argv or list(HALVES):
        totals = dict.fromkeys(QUESTIONS, 0)
        names = scripts(half)
        for script in names:
            report, shown = run(script)
            answers = score(script, report, shown)
            for q in QUESTIONS:
                totals[q] += answers[q]
            f = error_finding(report)
            said = f"{f['id']}: {f['message'][:110]}" if f else "(no error finding)"
            marks = " ".join(q if answers[q] else "-" * len(q) for q in QUESTIONS)
            print(f"{half}/{script.name:38} {marks}  {said}")
        print(f"\n{half}: " + ", ".join(f"{q} {totals[q]}/{len(names)}" for q in QUESTIONS) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
