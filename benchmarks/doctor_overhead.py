"""What watching costs: the doctor's overhead, as median ratios of interleaved runs.

1. ``trainwell doctor run SCRIPT`` vs ``python SCRIPT`` on two plain-PyTorch training scripts,
   the whole process, start-up included, as CPU time (user + system) of the child:
   benchmarks/scripts/digits_cnn.py (a small CNN, about 3,400 steps of about 3 ms) and
   benchmarks/scripts/mlp_1ms.py (a 32-256-256-10 MLP, 3,000 steps of about 1 ms: the doctor's
   per-step cost shows most there). Both sides read compiled bytecode from a temporary cache, filled
   by a warm-up run of each, as an installed package does (this machine sets PYTHONDONTWRITEBYTECODE).
2. ``trainwell.fit(doctor=True)`` vs ``fit(doctor=False)``: CPU time of this process for the whole
   ``fit`` call (validation and set-up included) per optimizer step, on the same two models and data,
   in one process; the wall-clock time of the training epochs per step is printed beside it.

Runs alternate (A, B, B, A, ...) so drift on a shared machine hits both sides alike. Each median is
printed with a 95 % interval (the order statistics of the pairs' ratios around the median); on a busy
machine single pairs move by +-0.1, so it takes some 30 pairs to tell 1.05 from 1.10. Beside it, the
ratio of each side's fastest run (as ``timeit`` advises: load only adds time, so the fastest run is the
least disturbed one). Target (issue 26): both medians <= 1.05.

``--kinds`` gives ``fit``'s extra CPU time per kind of step (sampled, the step after one, between windows) from
interleaved runs, step by step. ``--calls`` adds, for ``fit``, the Python function calls per optimizer step with
the doctor off and on (``sys.setprofile``): exact, whatever the load. ``--opcodes`` counts bytecode instructions
per step the same way (``sys.settrace``, slow) and names the functions that add most. ``--samples`` gives the share of a
``fit(doctor=True)``'s time spent in the doctor's own code, from a sampling profiler (``pip install py-spy``).

    python benchmarks/doctor_overhead.py [--repeats 5] [--only mlp_1ms] [--part script fit] [--calls] [--opcodes]
        [--samples] [--kinds] [--json F]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
TARGET = 1.05  # the median ratio the doctor aims at on the 1 ms step
WORKLOADS = ("digits_cnn", "mlp_1ms")  # each a script in benchmarks/scripts/ and a model + data for fit


def time_process(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """CPU seconds (user + system) the child used: steadier than wall time on a shared machine,
    and the same thing for a single-threaded script (the script pins torch to one thread)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def script_pairs(workload: str, repeats: int) -> list[tuple[float, float]]:
    script = HERE / "scripts" / f"{workload}.py"
    plain = [sys.executable, str(script)]
    watched = [sys.executable, "-m", "trainwell", "doctor", "run", str(script)]
    # Both sides read compiled bytecode, as an installed package does. A machine that sets
    # PYTHONDONTWRITEBYTECODE (this one does) would otherwise make every doctor run compile trainwell's
    # modules again (about 0.1 s of CPU, 1-2 % of the mlp_1ms run), which no user's install pays.
    with tempfile.TemporaryDirectory(prefix="tw-pycache-") as cache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for cmd in (plain, watched):  # warm-up: fills the cache (and the OS's file cache)
            time_process(cmd, env)
        return _pairs(plain, watched, repeats, env)


def _pairs(plain: list[str], watched: list[str], repeats: int, env: dict[str, str]) -> list[tuple[float, float]]:
    pairs = []
    for i in range(repeats):
        order = (plain, watched) if i % 2 == 0 else (watched, plain)
        times = {id(cmd): time_process(cmd, env) for cmd in order}
        pairs.append((times[id(plain)], times[id(watched)]))
        print(f"  script repeat {i + 1}: python {pairs[-1][0]:.2f} s, doctor run {pairs[-1][1]:.2f} s (CPU)",
              flush=True)
    return pairs


def fit_workload(workload: str) -> tuple[Callable[[], Any], Any, Any, int, int]:
    """(model factory, training set, validation set, batch size, epochs) matching the script's steps."""
    import torch
    from torch import nn
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset

    if workload == "mlp_1ms":
        g = torch.Generator().manual_seed(0)
        x = torch.randn(16384 + 512, 32, generator=g)  # enough samples not to overfit in 3,000 steps
        y = (x[:, :10].argmax(1) + (x[:, 10] > 0).long()) % 10
        train = TensorDataset(x[:16384], y[:16384])
        # Whole batches indexed at once, as the script slices them: a per-sample loader would take longer
        # than the 1 ms step itself.
        batches = DataLoader(train, batch_size=None, sampler=BatchSampler(RandomSampler(train, generator=g), 64, False))

        def mlp() -> nn.Module:
            torch.manual_seed(0)
            return nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))

        return mlp, batches, TensorDataset(x[16384:], y[16384:]), 64, 12  # 256 steps an epoch: 3,072
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    x = (x - x.mean()) / x.std()
    y = torch.tensor(d.target)

    def cnn() -> nn.Module:
        torch.manual_seed(0)
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))

    return cnn, TensorDataset(x[:1500], y[:1500]), TensorDataset(x[1500:], y[1500:]), 32, 72  # 47 an epoch: 3,384


def run_fit(parts: tuple[Callable[[], Any], Any, Any, int, int], doctor: bool, epochs: int | None = None) -> Any:
    """One ``trainwell.fit`` of a workload (``fit_workload``'s parts) on the CPU, without a progress bar."""
    import trainwell

    model, train, val, batch_size, default_epochs = parts
    return trainwell.fit(model(), train, val, epochs=epochs or default_epochs, batch_size=batch_size, progress=False,
                         device="cpu", doctor=doctor)


def fit_pairs(workload: str, repeats: int) -> list[tuple[float, float]]:
    import torch

    torch.set_num_threads(1)
    parts = fit_workload(workload)

    walls: dict[bool, float] = {}

    def per_step(doctor: bool) -> float:
        started = time.process_time()  # CPU time: a busy shared machine moves wall time by +-20 %
        result = run_fit(parts, doctor)
        cpu = time.process_time() - started
        if doctor and result.findings:
            print("  doctor findings on a correct run:", [f.id for f in result.findings])
        walls[doctor] = result.train_seconds / len(result.steps)
        return cpu / len(result.steps)

    per_step(True)  # warm-up: first-call imports and allocations
    pairs = []
    for i in range(repeats):
        order = (False, True) if i % 2 == 0 else (True, False)
        times = {flag: per_step(flag) for flag in order}
        pairs.append((times[False], times[True]))
        print(f"  fit repeat {i + 1}: doctor off {1e3 * times[False]:.3f} ms/step, "
              f"on {1e3 * times[True]:.3f} ms/step (CPU; wall-clock of the epochs: {1e3 * walls[False]:.3f}, "
              f"{1e3 * walls[True]:.3f})", flush=True)
    return pairs


def _fit_watched(workload: str, doctor: bool, install: Callable[[Any], Any], hook: Any) -> int:
    """One whole ``fit`` of ``workload`` with ``hook`` installed by ``install`` (``sys.setprofile`` or
    ``sys.settrace``) for its duration; returns its optimizer steps."""
    parts = fit_workload(workload)
    install(hook)
    try:
        result = run_fit(parts, doctor)
    finally:
        install(None)
    return len(result.steps)


def fit_calls(workload: str) -> dict[str, float]:
    """Python calls per optimizer step of a whole ``fit`` call (validation and set-up included), doctor off / on."""
    import torch

    torch.set_num_threads(1)
    count = [0]

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            count[0] += 1

    def calls(doctor: bool) -> float:
        count[0] = 0
        steps = _fit_watched(workload, doctor, sys.setprofile, profile)
        return count[0] / steps

    calls(True)  # warm-up: first-call imports
    off, on = calls(False), calls(True)
    print(f"{workload}: fit, Python calls per step: doctor off {off:.1f}, on {on:.1f} (+{on - off:.1f}, "
          f"{on / off:.3f}x)")
    return {"calls_off": off, "calls_on": on}


def fit_opcodes(workload: str, top: int = 15) -> dict[str, float]:
    """Bytecode instructions per optimizer step of a whole ``fit`` call, doctor off / on (``sys.settrace`` with
    opcode events: exact, whatever the load, and closer to the time than call counts), and the functions that
    add most. Slow: each traced run takes about ten times a plain one."""
    import collections

    import torch

    torch.set_num_threads(1)
    counts: collections.Counter[tuple[str, str, int]] = collections.Counter()

    def trace(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        code = frame.f_code
        key = (code.co_filename.split("site-packages/")[-1].split("src/")[-1], code.co_name, code.co_firstlineno)

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "opcode":
                counts[key] += 1
            return local

        return local

    def opcodes(doctor: bool) -> collections.Counter[tuple[str, str, int]]:
        counts.clear()
        steps = _fit_watched(workload, doctor, sys.settrace, trace)
        return collections.Counter({k: v / steps for k, v in counts.items()})

    opcodes(True)  # warm-up: first-call imports
    off, on = opcodes(False), opcodes(True)
    total_off, total_on = sum(off.values()), sum(on.values())
    print(f"{workload}: fit, bytecodes per step: doctor off {total_off:.0f}, on {total_on:.0f} "
          f"(+{total_on - total_off:.0f}, {total_on / total_off:.3f}x); the functions that add most:")
    for extra, (file, name, line) in sorted(((on[k] - off[k], k) for k in on.keys() | off.keys()), reverse=True)[:top]:
        print(f"  {extra:+8.1f}  {name} ({file}:{line})")
    return {"opcodes_off": total_off, "opcodes_on": total_on}


def _measured_fit(parts: tuple[Callable[[], Any], Any, Any, int, int]) -> None:
    """The fit that ``--samples`` profiles (its name marks its samples)."""
    run_fit(parts, doctor=True)


def _fit_child(workload: str, repeats: int) -> None:
    """What ``--samples`` runs under py-spy: a one-epoch warm-up (imports, first allocations), then the fits."""
    import torch

    torch.set_num_threads(1)
    parts = fit_workload(workload)
    run_fit(parts, doctor=True, epochs=1)
    for _ in range(repeats):
        _measured_fit(parts)


def doctor_share(raw: str) -> tuple[int, int, dict[str, int]]:
    """From py-spy's raw stacks (``frame;frame;... count``): the samples taken in ``_measured_fit``, those of
    them spent in the doctor's own code, and those per outermost doctor function. A sample whose innermost
    doctor frame is one of its wrappers calling the function it wraps (``Tensor.backward``, the DataLoader's
    ``__next__``, a loss) is the wrapped function's work, which a plain run does too."""
    total, own, per = 0, 0, {}
    for line in raw.splitlines():
        stack, _, count = line.rstrip().rpartition(" ")
        if "_measured_fit" not in stack:
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        mine = [i for i, f in enumerate(frames) if "trainwell/doctor/" in f]
        if not mine:
            continue
        callee = frames[mine[-1] + 1] if mine[-1] + 1 < len(frames) else ""
        if "._wrap_" in frames[mine[-1]] and "torch/" in callee:
            continue
        own += n
        name = frames[mine[0]].split(" (")[0]
        per[name] = per.get(name, 0) + n
    return total, own, per


def fit_samples(workload: str, repeats: int) -> dict[str, float]:
    """The doctor's own share of a ``fit(doctor=True)``'s time, from a sampling profiler outside the process
    (py-spy, 200 samples a second, over ``repeats`` fits): each sample is charged to the code running, so the
    machine's load slows both shares alike. Indirect costs (a cache the doctor's work cools for the model's) are
    not in it."""
    import shutil

    spy = shutil.which("py-spy")
    if spy is None:
        raise SystemExit("--samples needs py-spy, a sampling profiler: pip install py-spy")
    with tempfile.TemporaryDirectory(prefix="tw-samples-") as folder:
        out = Path(folder) / "raw.txt"
        child = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import doctor_overhead; "
                 f"doctor_overhead._fit_child({workload!r}, {repeats})")
        done = subprocess.run([spy, "record", "--rate", "200", "--format", "raw", "--output", str(out), "--",
                               sys.executable, "-c", child],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0 or not out.is_file():
            raise SystemExit(f"py-spy failed (exit code {done.returncode}); it said:\n{done.stderr.strip()[-2000:]}\n"
                             "(py-spy needs ptrace: in a container, run it with --cap-add SYS_PTRACE)")
        total, own, per = doctor_share(out.read_text())
    if not total:
        raise SystemExit("py-spy recorded no sample of the fit: is ptrace allowed on this machine?")
    print(f"{workload}: fit(doctor=True), samples in the doctor's own code: {own} of {total} "
          f"({100 * own / total:.1f} %; a fit without them would take {1 - own / total:.3f} of the time)")
    for name, n in sorted(per.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {n:6d}  {name}")
    return {"samples": total, "doctor_samples": own, "doctor_share": own / total}


def median_interval(ratios: list[float]) -> tuple[float, float]:
    """A distribution-free 95 % interval for the median: the order statistics n/2 -+ 0.98 sqrt(n)."""
    r = sorted(ratios)
    n = len(r)
    k = int(0.98 * math.sqrt(n))
    lo, hi = max(0, (n - 1) // 2 - k), min(n - 1, n // 2 + k)
    return r[lo], r[hi]


def summarize(name: str, pairs: list[tuple[float, float]], per_step: bool) -> dict[str, float]:
    ratios = [b / a for a, b in pairs]
    lo, hi = median_interval(ratios)
    out = {"median_ratio": statistics.median(ratios), "min_ratio": min(ratios), "max_ratio": max(ratios),
           "interval_low": lo, "interval_high": hi, "pairs": len(pairs),
           "median_base": statistics.median(a for a, _ in pairs),
           "median_doctor": statistics.median(b for _, b in pairs),
           # The fastest run of each side: load only ever adds time, so the minimum is the least disturbed.
           "best_base": min(a for a, _ in pairs), "best_doctor": min(b for _, b in pairs)}
    out["best_ratio"] = out["best_doctor"] / out["best_base"]
    verdict = "OK" if out["median_ratio"] <= TARGET else "OVER TARGET"
    print(f"{name}: median ratio {out['median_ratio']:.3f} (95 % interval {lo:.3f}-{hi:.3f}; min "
          f"{out['min_ratio']:.3f}, max {out['max_ratio']:.3f}; {len(pairs)} pairs)  target <= {TARGET}  {verdict}")
    scale, unit = (1e3, "ms a step") if per_step else (1.0, "s")
    print(f"{name}: fastest of each side {scale * out['best_base']:.3f} and {scale * out['best_doctor']:.3f} {unit}: "
          f"ratio {out['best_ratio']:.3f}")
    return out


def fit_kinds(workload: str, repeats: int) -> dict[str, float]:
    """fit's extra CPU time per kind of step (sampled, the step after one, between windows in the first 250 steps
    and after; the set-up with step 0, and what follows the last step), doctor on minus off, step by step: the
    median over interleaved runs of each step's CPU time, from the end of the step before to the end of this one (a
    step that begins an epoch holds the evaluation before it)."""
    import time as _time

    import torch

    from doctor_hotpath import _kind as kind  # (this folder's: the kinds of step the script loop is measured by)

    from trainwell.engine.callbacks import Callback

    torch.set_num_threads(1)
    parts = fit_workload(workload)

    class Clock(Callback):
        def __init__(self) -> None:
            self.marks: list[float] = []

        def on_train_batch_end(self, trainer: Any, loss: Any) -> None:
            self.marks.append(_time.process_time())

    def steps(doctor: bool) -> list[float]:
        import trainwell

        model, train, val, batch_size, epochs = parts
        clock = Clock()
        net = model()
        started = _time.process_time()
        trainwell.fit(net, train, val, epochs=epochs, batch_size=batch_size, progress=False, device="cpu",
                      doctor=doctor, callbacks=[clock])
        ended = _time.process_time()
        # [k]: step k + 1 (counted from 0); then the set-up to the end of step 0, and what follows the last step
        return [b - a for a, b in zip(clock.marks, clock.marks[1:])] + [clock.marks[0] - started,
                                                                         ended - clock.marks[-1]]

    steps(True)  # warm-up
    runs: dict[bool, list[list[float]]] = {False: [], True: []}
    for i in range(repeats):
        for flag in ((False, True) if i % 2 == 0 else (True, False)):
            runs[flag].append(steps(flag))
    n = min(len(r) for rs in runs.values() for r in rs) - 2
    totals: dict[str, list[float]] = {}
    for k in [*range(n), -2, -1]:
        extra = statistics.median(r[k] for r in runs[True]) - statistics.median(r[k] for r in runs[False])
        entry = totals.setdefault({-2: "set-up and step 0", -1: "after the last step"}.get(k) or kind(k + 1),
                                  [0.0, 0])
        entry[0] += extra
        entry[1] += 1
    out = {}
    print(f"{workload}: fit, extra CPU per kind of step, doctor on minus off ({repeats} interleaved pairs):")
    for name, (extra, count) in totals.items():
        print(f"  {name:22s} {1e3 * extra:7.1f} ms over {count:5d} steps ({1e6 * extra / count:7.1f} us each)")
        out[f"{name}_ms"] = 1e3 * extra
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", choices=WORKLOADS, nargs="+", default=list(WORKLOADS))
    parser.add_argument("--part", choices=("script", "fit"), nargs="*", default=["script", "fit"],
                        help="what to time (none: with --calls, the call counts only)")
    parser.add_argument("--calls", action="store_true", help="fit's Python calls per step, doctor off / on")
    parser.add_argument("--opcodes", action="store_true", help="fit's bytecodes per step, doctor off / on (slow)")
    parser.add_argument("--samples", action="store_true", help="the doctor's share of fit's time (needs py-spy)")
    parser.add_argument("--kinds", action="store_true", help="fit's extra CPU per kind of step (sampled, between ...)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results: dict[str, dict[str, dict[str, float]]] = {}
    for workload in args.only:
        results[workload] = {}
        if "script" in args.part:
            print(f"1. {workload}.py: python vs trainwell doctor run ({args.repeats} interleaved pairs)")
            results[workload]["script"] = summarize(f"{workload}: doctor run / python",
                                                    script_pairs(workload, args.repeats), per_step=False)
        if "fit" in args.part:
            print(f"2. {workload}: fit(doctor=True) vs fit(doctor=False), CPU time per step "
                  f"({args.repeats} interleaved pairs)")
            results[workload]["fit"] = summarize(f"{workload}: fit doctor on / off", fit_pairs(workload, args.repeats),
                                               per_step=True)
        if args.calls:
            results[workload]["fit_calls"] = fit_calls(workload)
        if args.opcodes:
            results[workload]["fit_opcodes"] = fit_opcodes(workload)
        if args.samples:
            results[workload]["fit_samples"] = fit_samples(workload, args.repeats)
        if args.kinds:
            results[workload]["fit_kinds"] = fit_kinds(workload, args.repeats)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
