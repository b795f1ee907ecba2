"""Severity curves: from what strength a bug hurts, and from what strength the doctor says so.

Each sweep is one realistic plain-PyTorch script in benchmarks/sweeps/ (scikit-learn's digits or,
for padding, synthetic token texts; a validation split; the final accuracy printed as JSON) with the bug's strength as its argument.
For every strength the script runs under ``trainwell doctor run --json`` (in this process, through
the command-line entry point); the table shows whether the expected finding fired, the final
validation accuracy and its drop against the harmless end of the sweep.

    python benchmarks/doctor_sweep.py [--only lr-too-high ...] [--json out.json] [--write-docs]
    python benchmarks/doctor_sweep.py --from-json out.json --write-docs  # the docs from an earlier run

``--write-docs`` puts the table and docs/doctor_sweep.png into docs/DOCTOR.md (between the
markers of its section "Where each check stops seeing the bug"). Runs take about a second each.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SWEEPS_DIR = HERE / "sweeps"
DOCS = HERE.parent / "docs"
BEGIN, END = "<!-- sweep:begin -->", "<!-- sweep:end -->"
HURTS = 0.03  # an accuracy drop above this (3 points) is a bug that costs something


@dataclass(frozen=True)
class Sweep:
    check: str  # the finding expected
    script: str  # in benchmarks/sweeps/
    what: str  # what --strength means
    strengths: tuple[float, ...]  # harmless first
    quick: tuple[float, ...]  # the CI form: the harmless end and clearly harmful ones


SWEEPS = (
    # (quick points: x30 trains well on some CPUs, acc 0.95: the test's clearly harmful point is x100)
    Sweep("lr-too-high", "lr_high.py", "Adam lr = 1e-3 x", (1, 3, 10, 30, 100, 1000), (1, 100, 1000)),
    Sweep("lr-too-low", "lr_low.py", "Adam lr = 1e-3 /", (1, 3, 10, 30, 100, 1e3, 1e5), (1, 10, 1e5)),
    Sweep("unnormalized-input", "unnormalized.py", "pixels in [0, x]", (1, 4, 16, 64, 255, 1000), (1, 255)),
    Sweep("dead-relu", "dead_relu.py", "hidden biases start at -x", (0, 0.5, 1, 2, 3, 5), (0, 5)),
    Sweep("vanishing-gradients", "vanishing.py", "sigmoid layers", (2, 4, 8, 12, 16, 24), (2, 24)),
    Sweep("nonfinite-input", "nonfinite_input.py", "share of rows with a NaN", (0, 0.001, 0.01, 0.05, 0.2), (0, 0.01)),
    Sweep("zero-grad-missing", "zero_grad.py", "share of steps without zero_grad",
          (0, 0.125, 0.25, 0.5, 0.75, 0.9, 1), (0, 1)),
    Sweep("eval-mode-missing", "eval_mode.py", "Dropout p left on in evaluation", (0, 0.1, 0.2, 0.3, 0.5), (0, 0.5)),
    Sweep("padding-not-masked", "padding.py", "padding share, unmasked mean; drop vs no padding",
          (0, 0.2, 0.4, 0.6, 0.8), (0, 0.8)),
    Sweep("exploding-gradients", "exploding.py", "8 ReLU layers at x times Kaiming init, SGD",
          (1, 1.25, 1.5, 2, 4, 16), (1, 1.5, 16)),
    Sweep("saturated-activations", "saturated.py", "3 tanh layers, weights at x times the default scale, SGD",
          (1, 2, 4, 6, 8, 16, 32), (1, 8)),  # 8: found by the outputs' share alone
    Sweep("data-not-shuffled", "unshuffled.py", "digits in label order through a shuffle buffer of x samples",
          (1400, 400, 100, 32, 8, 1), (1400, 1)),
)


@dataclass(frozen=True)
class Point:
    strength: float
    fired: bool
    severity: str | None
    accuracy: float
    loss: float
    others: tuple[str, ...]  # other warnings / errors (false alarms unless the bug explains them)


def run_point(sweep: Sweep, strength: float) -> Point:
    """One script run under ``trainwell doctor run``: the findings and the script's final line."""
    from trainwell.cli import main

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "doctor.json"
        stdout = io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
            code = main(["doctor", "run", "--lang", "en", "--json", str(out), str(SWEEPS_DIR / sweep.script),
                         "--strength", f"{strength:g}"])
        if code != 0:
            raise RuntimeError(f"{sweep.script} --strength {strength:g} exited with {code}:\n{stdout.getvalue()}")
        report = json.loads(out.read_text())
    metric = json.loads(stdout.getvalue().strip().splitlines()[-1])
    found = {f["id"]: f["severity"] for f in report["findings"]}
    others = tuple(sorted(i for i, s in found.items() if i != sweep.check and s in ("error", "warning")))
    return Point(strength, sweep.check in found, found.get(sweep.check), metric["accuracy"], metric["loss"], others)


def run_sweep(sweep: Sweep, strengths: tuple[float, ...]) -> list[Point]:
    import torch

    threads = torch.get_num_threads()
    try:
        return [run_point(sweep, s) for s in strengths]
    finally:
        torch.set_num_threads(threads)  # the scripts pin one thread


def first(points: list[Point], hit: Any) -> str:
    """The first strength where ``hit(point)`` holds, or "never"."""
    return next((f"{p.strength:g}" for p in points if hit(p)), "never")


def table(results: dict[Sweep, list[Point]]) -> str:
    rows = ["| check | strength (" + "what it means" + ") | fired | accuracy | drop | bug hurts from | fires from |",
            "|---|---|---|---|---|---|---|"]
    for sweep, points in results.items():
        base = points[0].accuracy
        hurts = first(points, lambda p: base - p.accuracy > HURTS)
        fires = first(points, lambda p: p.fired)
        cells = [" ".join(f"{p.strength:g}" for p in points),
                 " ".join("**yes**" if p.fired else "no" for p in points),
                 " ".join(f"{p.accuracy:.2f}" for p in points),
                 " ".join(f"{100 * (base - p.accuracy):+.0f}" for p in points)]
        rows.append(f"| `{sweep.check}` | {cells[0]} ({sweep.what}) | {cells[1]} | {cells[2]} | {cells[3]} "
                    f"| {hurts} | {fires} |")
    return "\n".join(rows)


def plot(results: dict[Sweep, list[Point]], path: Path) -> None:
    from matplotlib.figure import Figure

    n = len(results)
    cols = 4
    fig = Figure(figsize=(3.2 * cols, 2.6 * ((n + cols - 1) // cols)), constrained_layout=True)
    axes = fig.subplots((n + cols - 1) // cols, cols, squeeze=False).ravel()
    for ax, (sweep, points) in zip(axes, results.items()):
        base = points[0].accuracy
        xs = range(len(points))
        ax.plot(xs, [100 * (base - p.accuracy) for p in points], "o-", color="tab:blue", label="accuracy drop (points)")
        ax.axhline(100 * HURTS, color="tab:blue", lw=0.6, ls=":")
        for x, p in zip(xs, points):
            if p.fired:
                ax.axvspan(x - 0.5, x + 0.5, color="tab:red", alpha=0.18, lw=0)
        ax.set_xticks(list(xs), [f"{p.strength:g}" for p in points], fontsize=7)
        ax.set_title(f"{sweep.check}\n({sweep.what})", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in axes[n:]:
        ax.set_visible(False)
    axes[0].set_ylabel("accuracy drop (points)", fontsize=7)
    fig.suptitle("Doctor sweeps: accuracy drop (line) and where the doctor fires (red)", fontsize=9)
    fig.savefig(path, dpi=110)


def write_docs(results: dict[Sweep, list[Point]]) -> None:
    plot(results, DOCS / "doctor_sweep.png")
    doc = DOCS / "DOCTOR.md"
    text = doc.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    body = f"\n{table(results)}\n\n![doctor sweeps](doctor_sweep.png)\n"
    doc.write_text(text[:start] + body + text[end:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="CHECK", help="sweep these checks only")
    parser.add_argument("--quick", action="store_true", help="the CI strengths only")
    parser.add_argument("--json", type=Path, help="write every point as JSON")
    parser.add_argument("--write-docs", action="store_true", help="put the table and the plot into docs/DOCTOR.md")
    parser.add_argument("--from-json", type=Path, help="read the points from an earlier --json instead of running")
    args = parser.parse_args()
    chosen = [s for s in SWEEPS if not args.only or s.check in args.only]
    saved = json.loads(args.from_json.read_text()) if args.from_json else {}
    results: dict[Sweep, list[Point]] = {}
    for sweep in chosen:
        if args.from_json:
            results[sweep] = [Point(**{**p, "others": tuple(p["others"])}) for p in saved[sweep.check]]
            continue
        results[sweep] = run_sweep(sweep, sweep.quick if args.quick else sweep.strengths)
        for p in results[sweep]:
            print(f"{sweep.check:22s} {p.strength:>8g}  fired={p.fired!s:5s} accuracy={p.accuracy:.3f} "
                  f"loss={p.loss:.3g}  others={','.join(p.others) or '-'}", flush=True)
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps({s.check: [p.__dict__ for p in ps] for s, ps in results.items()}, indent=2))
    if args.write_docs:
        write_docs(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
