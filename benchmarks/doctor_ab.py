"""The doctor's cost in ``fit`` with this checkout against another one, on the same machine in the same run.

A machine's speed drifts from day to day (and a shared one's from minute to minute), so a ratio measured today is
not comparable with one from another day. This runs ``fit(doctor=False)`` and ``fit(doctor=True)`` with the other
checkout's code and ``fit(doctor=True)`` with this one's, each in a fresh process, in every order in turn (a
one-epoch warm-up, then the 3,072 steps of the 1 ms MLP of ``doctor_overhead.py``, CPU time per step), and prints
the median ratios: each doctor over the plain run, and this checkout's doctor over the other's.

    git worktree add /tmp/before <commit>
    python benchmarks/doctor_ab.py /tmp/before [--rounds 12]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHILD = """
import json, sys, time
sys.path.insert(0, "benchmarks")
import torch
torch.set_num_threads(1)
import doctor_overhead as d
parts = d.fit_workload("mlp_1ms")
doctor = sys.argv[1] == "1"
d.run_fit(parts, doctor, epochs=1)  # warm-up: imports, first allocations
started = time.process_time()
result = d.run_fit(parts, doctor)
print(json.dumps((time.process_time() - started) / len(result.steps)))
"""


def one_fit(tree: Path, doctor: bool, cache: str) -> float:
    """CPU seconds per step of one ``fit`` with ``tree``'s code, in a fresh process that reads compiled bytecode
    from ``cache`` (both checkouts alike: a machine that sets PYTHONDONTWRITEBYTECODE would otherwise compile
    every module a run imports, in every process, and a checkout with stale caches more than the other)."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "PYTHONPYCACHEPREFIX": cache}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-c", CHILD, "1" if doctor else "0"], cwd=tree, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the fit with {tree}'s code failed:\n{done.stderr[-2000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("other", type=Path, help="another checkout (a folder holding src/ and benchmarks/)")
    parser.add_argument("--rounds", type=int, default=12, help="a multiple of 6 gives every order equally often")
    args = parser.parse_args()
    other, this = args.other.resolve(), HERE.parent
    if not (other / "src" / "trainwell").is_dir() or not (other / "benchmarks" / "doctor_overhead.py").is_file():
        raise SystemExit(f"{other} holds no trainwell checkout (src/trainwell and benchmarks/doctor_overhead.py): "
                         "make one with git worktree add FOLDER COMMIT")
    runs: dict[str, list[float]] = {"plain": [], "other": [], "this": []}
    sides = [("plain", other, False), ("other", other, True), ("this", this, True)]
    # Every order of the three in turn: each side runs first, second and third equally often, and drift hits all
    # of them alike.
    orders = list(itertools.permutations(sides))
    with tempfile.TemporaryDirectory(prefix="tw-ab-pycache-") as cache:
        for _, tree, doctor in sides:  # warm-up: fills the bytecode cache (and the OS's file cache)
            one_fit(tree, doctor, cache)
        for i in range(args.rounds):
            for name, tree, doctor in orders[i % len(orders)]:
                runs[name].append(one_fit(tree, doctor, cache))
            print(f"  round {i + 1}: " + ", ".join(f"{k} {1e3 * v[-1]:.3f}" for k, v in runs.items())
                  + " ms a step (CPU)", flush=True)
    median = statistics.median
    for name in ("other", "this"):
        print(f"{name}: doctor on / off, median ratio {median(a / b for a, b in zip(runs[name], runs['plain'])):.3f}")
    print(f"this / other (doctor on): median ratio {median(a / b for a, b in zip(runs['this'], runs['other'])):.3f} "
          f"({args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
