"""Detection and false alarms of the doctor on the real-world-shaped scripts in this folder."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent


def expected(script: Path) -> tuple[str, str | None]:
    """(the id to find or "none", a word its explanation must hold, if the first line names one)."""
    m = re.match(r"# expect: ([\w-]+)(?: \(mentions (\w+)\))?", script.read_text().splitlines()[0])
    assert m, f"{script.name}: the first line must be '# expect: <id>' or '# expect: none'"
    return m.group(1), m.group(2)


def findings(script: Path) -> tuple[dict[str, dict[str, str]], list[str]]:
    """{id: finding} of the doctor's findings on ``script``, and its internal errors."""
    from trainwell.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "doctor.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["doctor", "run", "--lang", "en", "--json", str(out), str(script)])
        report = json.loads(out.read_text())
    return {f["id"]: f for f in report["findings"]}, report["internal_errors"]


def main() -> int:
    import torch

    torch.set_num_threads(1)
    found = missed = alarms = healthy = 0
    for script in sorted(HERE.glob("*.py")):
        if script.name == "evaluate.py":
            continue
        want, mentions = expected(script)
        got, internal = findings(script)
        serious = sorted(i for i, f in got.items() if f["severity"] in ("error", "warning"))
        if want == "none":
            healthy += 1
            alarms += bool(serious)
            verdict = "false alarm" if serious else "quiet"
        else:
            hit = want in got and (not mentions or mentions in got[want]["message"] + got[want]["fix"])
            found += hit
            missed += not hit
            verdict = "found" if hit else f"MISSED (no {mentions})" if want in got else "MISSED"
        print(f"{script.name:45} {want:28} {verdict:12} {sorted(got)}{' INTERNAL ' + str(internal) if internal else ''}")
    print(f"\nbuggy: {found}/{found + missed} found; healthy: {alarms}/{healthy} with a false alarm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
