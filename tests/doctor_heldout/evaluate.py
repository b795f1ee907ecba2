"""Run the held-out doctor set and print detection / false-alarm rates.

Not part of the pytest suite. Usage (from the repo root):

    .venv/bin/python tests/doctor_heldout/evaluate.py [--out /tmp/heldout] [--only SUBSTR] [--record]

``--record`` writes each script's verdict and the rates to ``recorded.json`` beside this file;
``tests/test_doctor_heldout.py`` re-runs a sample of the scripts in CI and holds the doctor to it.

Each script's first line is ``# expect: <id>`` (buggy/) or ``# expect: none`` (correct/).
A buggy script counts as detected when its expected id is among the findings; a correct
script counts as a false alarm when any finding has severity ``warning`` or ``error``
(``info`` findings are ignored).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RECORDED = HERE / "recorded.json"
TRAINWELL = [sys.executable, "-m", "trainwell"]  # the interpreter running this file, with trainwell installed


def expected_id(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect:"), f"{path}: first line must be '# expect: <id>'"
    return first.split(":", 1)[1].strip()


def run_one(script: Path, out_dir: Path, timeout: float) -> dict:
    out = out_dir / f"{script.parent.name}__{script.stem}.json"
    if out.exists():
        out.unlink()
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    t0 = time.time()
    try:
        proc = subprocess.run([*TRAINWELL, "doctor", "run", "--json", str(out), str(script)],
                              cwd=str(script.parent), env=env, capture_output=True, text=True,
                              timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    secs = time.time() - t0
    findings = []
    if out.exists():
        try:
            findings = json.loads(out.read_text()).get("findings", [])
        except json.JSONDecodeError:
            findings = []
    return {"rc": rc, "seconds": round(secs, 1), "json": out.exists(),
            "findings": [(f["id"], f["severity"]) for f in findings]}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/heldout")
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--record", action="store_true", help=f"write the verdicts to {RECORDED.name}")
    args = ap.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)

    rows = []
    for kind in ("buggy", "correct"):
        for script in sorted((HERE / kind).glob("*.py")):
            if args.only and args.only not in script.name:
                continue
            exp = expected_id(script)
            r = run_one(script, out_dir, args.timeout)   # one at a time, on purpose
            ids = [i for i, _ in r["findings"]]
            loud = [i for i, sev in r["findings"] if sev in ("warning", "error")]
            if kind == "buggy":
                ok = exp in ids
                others = [i for i in loud if i != exp]
            else:
                ok = not loud
                others = loud
            rows.append({"kind": kind, "script": script.name, "expect": exp, "ok": ok,
                         "found": ids, "loud_other": others, **r})
            verdict = ("HIT " if ok else "MISS") if kind == "buggy" else ("ok  " if ok else "FA  ")
            print(f"{verdict} {kind:7s} {script.name:38s} expect={exp:30s} "
                  f"found={','.join(f'{i}({s[0]})' for i, s in r['findings']) or '-'}  "
                  f"rc={r['rc']} {r['seconds']}s", flush=True)

    buggy = [r for r in rows if r["kind"] == "buggy"]
    correct = [r for r in rows if r["kind"] == "correct"]
    print()
    print("| set | script | expected | found (severity) | verdict | script rc |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        found = ", ".join(f"{i} ({s})" for i, s in r["findings"]) or "-"
        verdict = ("hit" if r["ok"] else "MISS") if r["kind"] == "buggy" else ("clean" if r["ok"] else "FALSE ALARM")
        print(f"| {r['kind']} | {r['script']} | {r['expect']} | {found} | {verdict} | {r['rc']} |")
    print()
    if buggy:
        hits = sum(r["ok"] for r in buggy)
        extra = sum(bool(r["loud_other"]) for r in buggy)
        print(f"detection rate: {hits}/{len(buggy)} = {hits / len(buggy):.0%} "
              f"(buggy scripts with other warning/error ids too: {extra})")
    if correct:
        fas = sum(not r["ok"] for r in correct)
        print(f"false-alarm rate: {fas}/{len(correct)} = {fas / len(correct):.0%}")
    (out_dir / "summary.json").write_text(json.dumps(rows, indent=1))
    if args.record and not args.only:
        record(buggy, correct)
    return 0


def record(buggy: list[dict], correct: list[dict]) -> None:
    """Each script's verdict (hit / miss, clean / false alarm) and the rates, for the CI sample to check."""
    hits = sum(r["ok"] for r in buggy)
    alarms = sum(not r["ok"] for r in correct)
    RECORDED.write_text(json.dumps({
        "detection": f"{hits}/{len(buggy)}", "false_alarms": f"{alarms}/{len(correct)}",
        "scripts": {f"{r['kind']}/{r['script']}": {"expect": r["expect"], "ok": r["ok"],
                                                     "found": sorted(set(i for i, _ in r["findings"]))}
                    for r in buggy + correct},
    }, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())
