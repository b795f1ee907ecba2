"""The doctor's per-step cost on a cheap step, measured in one process so that load matters less.

The 1 ms step of ``scripts/mlp_1ms.py`` (a 32-256-256-10 MLP, batch 64, Adam, one CPU thread),
run for ``--steps`` steps without the doctor and inside a ``Session`` (all checks, the hooks alone,
or one check at a time), and reported as:

- Python function calls per step (``sys.setprofile``, "call" events): they do not depend on the
  machine's load. The median step is a step that is not sampled; the mean includes the sampled ones.
- CPU time (``time.process_time``) of the whole loop, doctor on / off, in interleaved pairs
  (off, on, on, off, ...): the median ratio of the pairs.

``--opcodes`` counts bytecode instructions instead (``sys.settrace``; slow, exact), doctor on and off, per kind of
step: sampled, the step after one, between windows (in the first 250 steps, where some handlers still act on
every step, and after), and the end of the run; then the functions that add most between windows.

``--loader`` takes the batches from a DataLoader (as ``fit`` does: a BatchSampler over a TensorDataset)
instead of slicing tensors (as the script does), so ``on_batch`` handlers run too.

    python benchmarks/doctor_hotpath.py [--steps 3000] [--repeats 7] [--loader] [--per-check [--checks ID ...]] [--time-checks] [--no-time]
        [--opcodes]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset


def make_loop(steps: int, loader: bool) -> Callable[[Callable[[int], None] | None], None]:
    """A training loop of ``steps`` 1 ms steps; ``tick(step)`` (if given) is called before each step."""
    torch.manual_seed(0)
    x = torch.randn(4096, 32)
    y = (x[:, :10].argmax(1) + (x[:, 10] > 0).long()) % 10

    def run(tick: Callable[[int], None] | None = None) -> None:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = nn.CrossEntropyLoss()
        if loader:
            data = TensorDataset(x, y)
            g = torch.Generator().manual_seed(0)
            batches = DataLoader(data, batch_size=None, sampler=BatchSampler(RandomSampler(data, generator=g), 64, False))
            source = _cycle(batches)
        else:
            source = ((x[i:i + 64], y[i:i + 64]) for i in ((s * 64) % 4096 for s in range(steps)))
        for step in range(steps):
            if tick is not None:
                tick(step)
            xb, yb = next(source)
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()

    return run


def _cycle(loader: DataLoader) -> Any:
    while True:
        yield from loader


def watched(run: Callable[..., None], checks: list[str] | None, mark_end: bool = False) -> Callable[..., None]:
    """``run`` inside a doctor session with ``checks`` (None: all), ended as ``doctor run`` ends it (``mark_end``:
    ``tick(-1)`` before the session's end)."""
    from trainwell.doctor.session import Session

    def go(tick: Callable[[int], None] | None = None) -> list[str]:
        session = Session(checks=checks)
        with session:
            run(tick)
            if tick is not None and mark_end:
                tick(-1)  # the end of the run
            session.end()
        return [f.id for f in session.findings] + session.internal_errors

    return go


def calls_per_step(fn: Callable[..., Any]) -> tuple[float, float, Any]:
    """(median, mean) Python calls per step while ``fn`` runs, and what it returned."""
    count = [0]
    marks: list[int] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            count[0] += 1

    def tick(step: int) -> None:
        marks.append(count[0])

    sys.setprofile(profile)
    try:
        out = fn(tick)
    finally:
        sys.setprofile(None)
    marks.append(count[0])
    per = [b - a for a, b in zip(marks, marks[1:])]
    return statistics.median(per), statistics.fmean(per), out


def _kind(step: int) -> str:
    from trainwell.doctor.session import Session

    if step < 0:
        return "end"
    if Session.sampled_at(step):
        return "sampled"
    if step and Session.sampled_at(step - 1):
        return "after"
    return "between (first 250)" if step < 250 else "between"


def opcodes_by_kind(fn: Callable[..., Any]) -> tuple[Counter[str], Counter[tuple[str, str]]]:
    """Bytecode instructions while ``fn`` runs, per kind of step (``_kind``, and "end" after the last step), and
    per (kind, function)."""
    kinds: Counter[str] = Counter()
    functions: Counter[tuple[str, str]] = Counter()
    now = ["set-up"]

    def trace(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        code = frame.f_code
        name = (code.co_filename.split("site-packages/")[-1].split("/src/")[-1], code.co_name)

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode":
                kinds[now[0]] += 1
                functions[(now[0], f"{name[1]} ({name[0]})")] += 1
            return local

        return local

    def tick(step: int) -> None:
        now[0] = _kind(step)

    sys.settrace(trace)
    try:
        fn(tick)
    finally:
        sys.settrace(None)
    return kinds, functions


def print_opcodes(run: Callable[..., Any], doctor: Callable[..., Any], steps: int) -> None:
    plain, plain_fns = opcodes_by_kind(run)
    watched_kinds, watched_fns = opcodes_by_kind(doctor)
    counts = Counter(_kind(s) for s in range(steps))
    print("bytecode instructions, doctor on minus off (per step of each kind; the end: in all)")
    for kind in ("sampled", "after", "between (first 250)", "between", "end"):
        extra = watched_kinds[kind] - plain[kind]
        per = f"{extra / counts[kind]:9.0f} a step, {counts[kind]:5d} steps" if counts[kind] else ""
        print(f"  {kind:20s} {extra:10d} {per}")
    total = sum(watched_kinds.values()) - sum(plain.values())
    print(f"  all: +{total} over {sum(plain.values())} ({total / max(sum(plain.values()), 1):.1%})")
    print("  between windows, the functions that add most (a step):")
    rows = [(watched_fns[k] - plain_fns[k], k[1]) for k in watched_fns if k[0] == "between"]
    for extra, name in sorted(rows, reverse=True)[:12]:
        print(f"    {extra / counts['between']:+7.1f}  {name}")


def cpu_seconds(fn: Callable[..., Any]) -> tuple[float, list[float]]:
    """(CPU seconds of the whole run, CPU seconds of each step)."""
    marks: list[float] = []
    clock = time.process_time
    started = clock()
    fn(lambda step: marks.append(clock()))
    ended = clock()
    return ended - started, [b - a for a, b in zip(marks, marks[1:])]


def ratio(plain: Callable[..., Any], doctor: Callable[..., Any], repeats: int) -> dict[str, float]:
    """Interleaved pairs: the median ratio of whole runs (and min, max), the median ratio of the steps
    not sampled (each run's median step), the extra CPU time of the sampled steps and of the rest
    (set-up, the end), and the plain run's median step."""
    from trainwell.doctor.session import Session

    pairs = []
    for i in range(repeats):
        if i % 2 == 0:
            a = cpu_seconds(plain)
            b = cpu_seconds(doctor)
        else:
            b = cpu_seconds(doctor)
            a = cpu_seconds(plain)
        pairs.append((a, b))
    runs = [b[0] / a[0] for a, b in pairs]
    med = statistics.median
    sampled = [i for i in range(len(pairs[0][0][1])) if Session.sampled_at(i)]
    return {"run": med(runs), "min": min(runs), "max": max(runs),
            "step": med(med(b[1]) / med(a[1]) for a, b in pairs),
            "sampled_extra": med(sum(b[1][i] - a[1][i] for i in sampled) for a, b in pairs),
            "other_extra": med((b[0] - sum(b[1])) - (a[0] - sum(a[1])) for a, b in pairs),
            "base_step": med(med(a[1]) for a, _ in pairs), "sampled_steps": len(sampled)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--loader", action="store_true", help="batches from a DataLoader, as fit() takes them")
    parser.add_argument("--per-check", action="store_true", help="calls per step with one check at a time")
    parser.add_argument("--time-checks", action="store_true", help="with --per-check: CPU-time ratio per check too")
    parser.add_argument("--checks", nargs="+", help="with --per-check: only these checks")
    parser.add_argument("--no-time", action="store_true", help="calls only")
    parser.add_argument("--opcodes", action="store_true", help="bytecodes per kind of step instead (slow)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    from trainwell.doctor import checks as _builtin  # noqa: F401
    from trainwell.doctor.check import CHECKS

    run = make_loop(args.steps, args.loader)
    everything = watched(run, None)
    everything()  # warm-up: imports, first-call allocations
    run()
    if args.opcodes:
        print_opcodes(run, watched(run, None, mark_end=True), args.steps)
        return 0
    base_med, base_mean, _ = calls_per_step(run)
    med, mean, found = calls_per_step(everything)
    hooks_med, hooks_mean, _ = calls_per_step(watched(run, []))
    print(f"{args.steps} steps of the 1 ms MLP ({'DataLoader' if args.loader else 'sliced tensors'})")
    if found:
        print("  findings / internal errors on this correct loop:", found)
    print(f"Python calls per step (median = a step not sampled; mean over the run):")
    print(f"  no doctor       {base_med:7.0f} {base_mean:9.1f}")
    print(f"  hooks, no check {hooks_med:7.0f} {hooks_mean:9.1f}")
    print(f"  all checks      {med:7.0f} {mean:9.1f}   (+{med - base_med:.0f} / +{mean - base_mean:.1f})")
    if args.per_check:
        print("per check, extra calls over the hooks alone (median, mean):")
        rows = []
        for name in args.checks or CHECKS.names():
            m, a, _ = calls_per_step(watched(run, [name]))
            rows.append((m - hooks_med, a - hooks_mean, name))
        for m, a, name in sorted(rows, reverse=True):
            line = f"  {name:36s} {m:+6.0f} {a:+8.1f}"
            if args.time_checks:
                r = ratio(run, watched(run, [name]), max(3, args.repeats // 2))
                line += (f"   CPU ratio: run {r['run']:.3f}, step {r['step']:.3f}; sampled steps "
                         f"+{1e3 * r['sampled_extra']:.0f} ms, set-up and end +{1e3 * r['other_extra']:.0f} ms")
            print(line, flush=True)
    if not args.no_time:
        print(f"CPU time, doctor on / off, {args.repeats} interleaved pairs (whole run: median, min-max; "
              "median step: median of the pairs)")
        for name, checks in (("all checks", None), ("hooks alone", [])):
            r = ratio(run, watched(run, checks), args.repeats)
            print(f"  {name:12s} run {r['run']:.3f} ({r['min']:.3f}-{r['max']:.3f}), step {r['step']:.3f}; "
                  f"the {r['sampled_steps']} sampled steps +{1e3 * r['sampled_extra']:.0f} ms, set-up and end "
                  f"+{1e3 * r['other_extra']:.0f} ms; off: {1e3 * r['base_step']:.3f} ms a step", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
