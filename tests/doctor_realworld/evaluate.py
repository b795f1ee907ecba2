"""Detection and false alarms of the doctor on the real-world scripts in this folder, per half.

Three groups, each printed with its own figures:

- ``written``: the scripts at the top of this folder, written here in the shapes people post (no public source;
  the checks were tuned with them, so they count as tuning material);
- ``tune``: public reproductions the checks may be tuned on (``tune/``);
- ``confirm``: public reproductions kept for confirmation (``confirm/``); do not tune on their results.

``python tests/doctor_realworld/evaluate.py [--half written|tune|confirm] [-k SUBSTRING]``
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
HALVES = ("written", "tune", "confirm")
_EXPECT = re.compile(r"# expect: ([\w-]+)(?: \(mentions (\w+)\))?( \(known miss\))?")


def scripts(half: str) -> list[Path]:
    """The scripts of one half, sorted."""
    if half == "written":
        return sorted(p for p in HERE.glob("*.py") if p.name != "evaluate.py")
    return sorted((HERE / half).glob("*.py"))


def expected(script: Path) -> tuple[str, str | None, bool]:
    """(the id to find or "none", a word its explanation must hold if the first line names one, a known miss?)."""
    lines = script.read_text().splitlines()
    m = _EXPECT.match(lines[0])
    assert m, f"{script.name}: the first line must be '# expect: <id>' or '# expect: none'"
    if script.parent != HERE:
        assert len(lines) > 1 and lines[1].startswith("# source: http"), f"{script.name}: line 2 must be '# source: <URL>'"
    return m.group(1), m.group(2), bool(m.group(3))


def findings(script: Path) -> tuple[dict[str, dict[str, str]], list[str]]:
    """{id: finding} of the doctor's findings on ``script``, and its internal errors."""
    from trainwell.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "doctor.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["doctor", "run", "--lang", "en", "--json", str(out), str(script)])
        report = json.loads(out.read_text())
    return {f["id"]: f for f in report["findings"]}, report["internal_errors"]


def evaluate(half: str, only: str | None = None) -> tuple[int, int, int, int]:
    """Print one line per script of ``half``; return (found, buggy, with a false alarm, healthy)."""
    found = buggy = alarms = healthy = 0
    for script in scripts(half):
        if only and only not in script.name:
            continue
        want, mentions, known = expected(script)
        got, internal = findings(script)
        serious = sorted(i for i, f in got.items() if f["severity"] in ("error", "warning"))
        if want == "none":
            healthy += 1
            alarms += bool(serious)
            verdict = f"FALSE ALARM {serious}" if serious else "quiet"
        else:
            buggy += 1
            hit = want in got and (not mentions or mentions in got[want]["message"] + got[want]["fix"])
            found += hit
            verdict = "found" if hit else f"MISSED (no {mentions})" if want in got else "MISSED"
            verdict += " (known miss)" if known else ""
        name = f"{half}/{script.name}" if half != "written" else script.name
        print(f"{name:58} {want:30} {verdict:24} {sorted(got)}{' INTERNAL ' + str(internal) if internal else ''}",
              flush=True)
    return found, buggy, alarms, healthy


def main() -> int:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=HALVES, action="append", help="only this group (repeatable)")
    parser.add_argument("-k", dest="only", help="only scripts whose name holds this")
    args = parser.parse_args()
    torch.set_num_threads(1)
    figures = {}
    for half in args.half or HALVES:
        figures[half] = evaluate(half, args.only)
        print()
    for half, (found, buggy, alarms, healthy) in figures.items():
        print(f"{half:8} buggy: {found}/{buggy} found; healthy: {alarms}/{healthy} with a false alarm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
