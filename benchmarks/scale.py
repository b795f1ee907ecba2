"""Throughput and peak memory of the hardware knobs, side by side in one run: fp32, bf16-mixed, 16-mixed,
compiled, and 1 vs 2 processes, each through the real ``trainwell train`` command.

What is measured
    A conv net (``--set model.channels=...``, default [64, 128, 256]) on the offline mnist-5k digits,
    no augmentation, no doctor, the same global batch (default 256) and epochs for every variant. Each
    variant runs in its own process (so peak memory is its own), writes a run folder, and is read back
    from its summary.json: ``samples_per_second`` (training samples over training seconds, first steps and
    compilation included) and ``peak_memory_mb`` (CUDA: the allocator's peak for tensors; CPU: the
    process's peak RSS). Ratios are against fp32 in one process, measured in the same run.

    On a GPU the script also reports the model FLOP utilization (MFU): the FLOPs of one training step
    counted by ``torch.utils.flop_counter`` for one forward and backward, times steps per second, over the
    device's peak dense throughput (``--peak-tflops``, or a known value for the H100 / H200 / A100).

Run
    python benchmarks/scale.py                                  # CPU: 32, bf16-mixed, 16-mixed, compile, 2 processes
    python benchmarks/scale.py --device cuda --epochs 3 --json scale.json
    python benchmarks/scale.py --variants 32 bf16-mixed --batch-size 512
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

VARIANTS: dict[str, list[str]] = {
    "32": ["--precision", "32"],
    "bf16-mixed": ["--precision", "bf16-mixed"],
    "16-mixed": ["--precision", "16-mixed"],
    "compile": ["--precision", "32", "--compile"],
    "bf16+compile": ["--precision", "bf16-mixed", "--compile"],
    "2 processes": ["--precision", "32", "--nproc", "2"],
}
DEFAULT_VARIANTS = ["32", "bf16-mixed", "16-mixed", "compile", "2 processes"]
# Dense peak throughput in TFLOP/s by device name fragment: (bf16/fp16, fp32 without TF32).
PEAK_TFLOPS = {"H200": (989.0, 67.0), "H100": (989.0, 67.0), "A100": (312.0, 19.5)}


def run_variant(name: str, cfg: argparse.Namespace, root: Path) -> dict[str, Any]:
    out = root / name.replace(" ", "-").replace("+", "-")
    cmd = [sys.executable, "-m", "trainwell", "train", "--data", "mnist-5k", "--model", "cnn",
           "--epochs", str(cfg.epochs), "--batch-size", str(cfg.batch_size), "--device", cfg.device,
           "--out", str(out), "--no-doctor", "--no-progress", "--threads", str(cfg.threads),
           "--set", f"model.channels={cfg.channels}", "--set", "data.augment=none",
           "--set", "train.scheduler=none", *VARIANTS[name]]
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=cfg.timeout)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        return {"variant": name, "error": (done.stderr or done.stdout).strip().splitlines()[-1:], "wall_s": wall}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return {"variant": name, "samples_per_second": summary.get("samples_per_second"),
            "peak_memory_mb": summary.get("peak_memory_mb"), "peak_memory_kind": summary.get("peak_memory_kind"),
            "test_accuracy": summary.get("test_accuracy"), "train_seconds": summary.get("train_seconds"),
            "steps": summary.get("steps"), "wall_s": wall}


def step_flops(cfg: argparse.Namespace) -> float:
    """FLOPs of one training step (forward + backward) of the benchmarked model at the global batch."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from trainwell.config import ModelConfig
    from trainwell.models import build_model

    model = build_model(ModelConfig(name="cnn", channels=json.loads(cfg.channels)), (1, 28, 28), 10)
    x = torch.randn(cfg.batch_size, 1, 28, 28)
    y = torch.randint(0, 10, (cfg.batch_size,))
    with FlopCounterMode(display=False) as counter:
        torch.nn.functional.cross_entropy(model(x), y).backward()
    return float(counter.get_total_flops())


def peak_tflops(cfg: argparse.Namespace, variant: str) -> float | None:
    if cfg.peak_tflops:
        return cfg.peak_tflops
    import torch

    name = torch.cuda.get_device_name() if torch.cuda.is_available() else ""
    for key, (half, single) in PEAK_TFLOPS.items():
        if key in name:
            return half if "16" in variant else single
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variants", nargs="+", default=DEFAULT_VARIANTS, choices=list(VARIANTS))
    p.add_argument("--device", default="cpu")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--channels", default="[64,128,256]", help="the conv net's widths (default [64,128,256])")
    p.add_argument("--threads", type=int, default=1, help="CPU threads per process (default 1)")
    p.add_argument("--peak-tflops", type=float, help="the device's peak dense TFLOP/s for MFU (GPU)")
    p.add_argument("--timeout", type=int, default=1800, help="seconds per variant")
    p.add_argument("--json", metavar="PATH")
    cfg = p.parse_args(argv)
    import torch

    import trainwell

    print(f"trainwell {trainwell.__version__}, torch {torch.__version__}, python {platform.python_version()}, "
          f"device {cfg.device}, {cfg.threads} thread(s) per process, {os.cpu_count()} CPUs")
    print(f"mnist-5k, cnn {cfg.channels}, batch {cfg.batch_size}, {cfg.epochs} epochs, no augmentation")
    flops = step_flops(cfg) if cfg.device.startswith("cuda") else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="trainwell-scale-") as tmp:
        for name in cfg.variants:
            row = run_variant(name, cfg, Path(tmp))
            rows.append(row)
            print(f"  {name}: {row.get('samples_per_second') or row.get('error')}", flush=True)
    base = next((r for r in rows if r["variant"] == "32" and r.get("samples_per_second")), None)
    print(f"\n{'variant':<14} {'samples/s':>10} {'vs fp32':>8} {'peak MB':>9} {'test acc':>9}"
          + (f" {'MFU':>6}" if flops else ""))
    for r in rows:
        if r.get("samples_per_second") is None:
            print(f"{r['variant']:<14} failed: {r.get('error')}")
            continue
        ratio = r["samples_per_second"] / base["samples_per_second"] if base else float("nan")
        r["vs_fp32"] = ratio
        line = (f"{r['variant']:<14} {r['samples_per_second']:>10,.0f} {ratio:>7.2f}x {r['peak_memory_mb'] or 0:>9,.0f}"
                f" {r['test_accuracy'] or 0:>9.4f}")
        if flops:
            peak = peak_tflops(cfg, r["variant"])
            steps_per_s = r["samples_per_second"] / cfg.batch_size
            r["mfu"] = flops * steps_per_s / (peak * 1e12) if peak else None
            line += f" {r['mfu']:>6.1%}" if r["mfu"] is not None else "      -"
        print(line)
    if rows and rows[0].get("peak_memory_kind"):
        print(f"(peak memory: {rows[0]['peak_memory_kind']})")
    if cfg.json:
        Path(cfg.json).write_text(json.dumps({"benchmark": "scale", "config": vars(cfg), "rows": rows,
                                              "step_flops": flops}, indent=2), encoding="utf-8")
        print(f"wrote {cfg.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
