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


def expected(script: Path) -> str:
    m = re.match(r"# expect: ([\w-]+)", script.read_text().splitlines()[0])  # (and an optional "(mentions word)")
    assert m, f"{script.name}: the first line must be '# expect: <id>' or '# expect: none'"
    return m.group(1)


def findings(script: Path) -> tuple[dict[str, str], list[str]]:
    """{id: severity} of the doctor's findings on ``script``, and its internal errors."""
    from trainwell.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "doctor.json"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(["doctor", "run", "--lang", "en", "--json", str(out), str(script)])
        report = json.loads(out.read_text())
    return {f["id"]: f["severity"] for f in report["findings"]}, report["internal_errors"]


def main() -> int:
    import torch

    torch.set_num_threads(1)
    found = missed = alarms = healthy = 0
    for script in sorted(HERE.glob("*.py")):
        if script.name == "evaluate.py":
            continue
        want = expected(script)
        got, internal = findings(script)
        serious = sorted(i for i, s in got.items() if s in ("error", "warning"))
        if want == "none":
            healthy += 1
            alarms += bool(serious)
            verdict = "false alarm" if serious else "quiet"
        else:
            found += want in got
            missed += want not in got
            verdict = "found" if want in got else "MISSED"
        print(f"{script.name:45} {want:28} {verdict:12} {sorted(got)}{' INTERNAL ' + str(internal) if internal else ''}")
    print(f"\nbuggy: {found}/{found + missed} found; healthy: {alarms}/{healthy} with a false alarm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
