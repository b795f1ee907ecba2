"""Where ``trainwell doctor run``'s extra CPU time goes, phase by phase, in fresh processes.

``doctor_overhead.py`` gives the whole-run ratio of ``doctor run`` to ``python`` on a workload script; this splits the
extra time of the same runs by phase: start-up (the process, imports and the script's set-up up to the end of its
first optimizer step), the sampled steps after the first, the steps after a sampled one, the steps between windows
(in the first 250 steps and later) and the end (what runs after the last step: evaluation, the report, the
interpreter's exit). Each side records the CPU time (``time.process_time``) at the end of every optimizer step from a
global step post-hook, installed before the script runs on both sides; the process's whole CPU time comes from the
parent (``getrusage``). Runs alternate (python, doctor run, doctor run, python, ...) and each phase's figure is the
median over the pairs of the difference, with its per-step share.

    python benchmarks/doctor_phases.py [--only mlp_1ms] [--repeats 11]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from doctor_hotpath import _kind as kind  # (this folder's: the kinds of step the script loop is measured by)

HERE = Path(__file__).parent

# Run in the child: a step post-hook that keeps the CPU time of each step's end, written out at exit; then the script,
# as ``python SCRIPT`` (runpy) or as ``trainwell doctor run SCRIPT``.
CHILD = """
import atexit, json, sys, time
import torch
from torch.optim import optimizer
marks = []
clock = time.process_time
optimizer.register_optimizer_step_post_hook(lambda *a: marks.append(clock()))
path, script, doctor = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
atexit.register(lambda: open(path, "w").write(json.dumps(marks)))
sys.argv = sys.argv[2:3]
if doctor:
    from trainwell.cli import main
    sys.exit(main(["doctor", "run", script]))
import runpy
runpy.run_path(script, run_name="__main__")
"""


def phases(total: float, marks: list[float]) -> dict[str, float]:
    """A run's CPU seconds by phase, from the process total and the CPU time at each step's end."""
    out = {"start-up and step 0": marks[0], "end": total - marks[-1]}
    for step in range(1, len(marks)):
        name = kind(step)
        out[name] = out.get(name, 0.0) + marks[step] - marks[step - 1]
    out["whole run"] = total
    return out


def run(cmd: list[str], env: dict[str, str], marks_file: str) -> tuple[float, list[float]]:
    """(CPU seconds of the child, its marks); the marks file of the run before is removed first, so a child that
    wrote none fails here instead of lending the earlier run's."""
    Path(marks_file).unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return total, json.loads(Path(marks_file).read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="mlp_1ms", help="the workload script in benchmarks/scripts/")
    parser.add_argument("--repeats", type=int, default=11, help="interleaved pairs")
    args = parser.parse_args()
    script = str(HERE / "scripts" / f"{args.only}.py")
    with tempfile.TemporaryDirectory(prefix="tw-phases-") as tmp:
        marks_file = os.path.join(tmp, "marks.json")
        env = {**os.environ, "PYTHONPYCACHEPREFIX": os.path.join(tmp, "pycache")}  # compiled once, as installed
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        sides = {side: [sys.executable, "-c", CHILD, marks_file, script, flag] for side, flag in
                 (("python", "0"), ("doctor run", "1"))}
        for cmd in sides.values():  # warm-up: fills the bytecode cache
            run(cmd, env, marks_file)
        diffs: dict[str, list[float]] = {}
        plain_totals = []
        n_steps = 0
        for i in range(args.repeats):
            order = ["python", "doctor run"] if i % 2 == 0 else ["doctor run", "python"]
            runs = {side: run(sides[side], env, marks_file) for side in order}
            got = {side: phases(*runs[side]) for side in order}
            n_steps = len(runs["python"][1])
            plain_totals.append(got["python"]["whole run"])
            for name, value in got["doctor run"].items():
                diffs.setdefault(name, []).append(value - got["python"][name])
            print(f"  pair {i + 1}: +{diffs['whole run'][-1] * 1e3:.0f} ms", flush=True)
    steps = Counter(kind(s) for s in range(1, n_steps))
    print(f"{args.only}: doctor run's extra CPU by phase (median of {args.repeats} pairs; python's whole run "
          f"{statistics.median(plain_totals):.2f} s)")
    for name, values in diffs.items():
        count = steps.get(name, 0)
        per = f"  {statistics.median(values) / count * 1e6:8.1f} us a step ({count} steps)" if count else ""
        print(f"  {name:22s} {statistics.median(values) * 1e3:+8.1f} ms{per}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
