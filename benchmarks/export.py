"""How fast does an exported model predict on the CPU, next to the eager PyTorch model?

What is measured
    trainwell's built-in ``cnn`` (default: channels [32, 64], hidden [128], batch norm) for 1×28×28
    inputs and 10 classes, or the ``mlp`` (``--model mlp``), in eval mode, exported exactly as
    ``trainwell export`` does it (the same format modules, written in memory and loaded back):

    eager        the nn.Module under ``torch.inference_mode``
    torchscript  ``torch.jit.trace``, saved and loaded (``.pt``)
    exported     ``torch.export``, saved and loaded (``.pt2``), its ``.module()``
    onnxruntime  ``torch.onnx.export(dynamo=True)``, run by onnxruntime's CPU provider with the same
                 number of intra-op threads as PyTorch

    For batch 1 and batch 64: the median wall time of one call over ``--rounds`` rounds, each
    round running every variant in turn for ``--seconds`` (so drifting machine load hits all alike),
    after a warm-up. Reported per variant: predictions per second, latency per sample (the call's
    time / batch size), and both as ratios to eager (throughput ratio > 1: faster than eager).
    The weights are random (speed does not depend on them); every variant's outputs must equal
    eager's within 1e-4 on the benchmark batches, or the script says so.

Run
    python benchmarks/export.py                        # cnn, 1 thread, 3 rounds of 0.3 s
    python benchmarks/export.py --model mlp --threads 2 --rounds 5 --json export.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from trainwell.config import ModelConfig
from trainwell.export.formats import Signature, format_module
from trainwell.models import build_model

VARIANTS = {"torchscript": "torchscript", "exported": "exported", "onnxruntime": "onnx"}  # name -> format
BATCHES = (1, 64)


def build(name: str) -> tuple[torch.nn.Module, tuple[int, ...]]:
    torch.manual_seed(0)
    shape = (1, 28, 28)
    model = build_model(ModelConfig(name=name), shape, 10).eval()
    return model, shape


def runners(model: torch.nn.Module, shape: tuple[int, ...]) -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    """eager, and each exported variant as ``trainwell export`` writes and reads it."""
    found: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {"eager": model}
    example = (torch.randn(2, *shape),)
    for name, fmt in VARIANTS.items():
        module = format_module(fmt)
        found[name] = module.load(module.save(model, example, Signature(text=False), {}))[0]
    return found


def time_call(run: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, seconds: float) -> float:
    """Median seconds per call over as many calls as fit in ``seconds``."""
    times = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 5:
        start = time.perf_counter()
        run(x)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["cnn", "mlp"], default="cnn")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.3, help="per variant, batch size and round")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    model, shape = build(args.model)
    variants = runners(model, shape)
    results: dict[str, Any] = {"model": args.model, "threads": args.threads, "torch": torch.__version__,
                               "machine": platform.processor() or platform.machine(), "batches": {}}
    with torch.inference_mode():
        for batch in BATCHES:
            x = torch.randn(batch, *shape)
            expected = model(x)
            parity = {n: float((r(x) - expected).abs().max()) for n, r in variants.items()}
            for run in variants.values():  # warm-up
                for _ in range(3):
                    run(x)
            rounds: dict[str, list[float]] = {n: [] for n in variants}
            for _ in range(args.rounds):
                for name, run in variants.items():
                    rounds[name].append(time_call(run, x, args.seconds))
            call = {n: statistics.median(t) for n, t in rounds.items()}
            results["batches"][batch] = {n: {"per_second": batch / call[n], "ms_per_sample": 1e3 * call[n] / batch,
                                             "speed_vs_eager": call["eager"] / call[n], "max_abs_diff": parity[n]}
                                         for n in variants}

    print(f"{args.model}, {args.threads} thread(s), torch {torch.__version__}, median of {args.rounds} rounds")
    print(f"{'batch':>5}  {'variant':<12} {'predictions/s':>14} {'ms/sample':>10} {'vs eager':>9} {'max|diff|':>10}")
    for batch, rows in results["batches"].items():
        for name, r in rows.items():
            print(f"{batch:>5}  {name:<12} {r['per_second']:>14,.0f} {r['ms_per_sample']:>10.4f} "
                  f"{r['speed_vs_eager']:>8.2f}x {r['max_abs_diff']:>10.1e}")
    worst = max(r["max_abs_diff"] for rows in results["batches"].values() for r in rows.values())
    print(f"outputs equal eager's within 1e-4: {'yes' if worst <= 1e-4 else 'NO'} (largest |difference| {worst:.1e})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
