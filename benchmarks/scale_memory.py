"""What each process holds (the memory side of benchmarks/scale.py): the bytes of parameters, gradients and
optimizer state per process, for one process, DDP on 2 and FSDP on 2, side by side in one run (gloo on the CPU
here; on a GPU machine add ``--device cuda`` for the CUDA peak as well).

The model is an MLP wide enough that the difference is not noise (by default 1024 -> 4 x 2048 -> 10, about 14.7
million parameters, 59 MB in float32). Each configuration takes one Adam step on a random batch through trainwell's
own strategy (``SingleDevice``, ``DDP``, ``FSDP``) and counts the tensors this process holds: for FSDP a
parameter's local shard (``DTensor.to_local()``). On the CPU the process's resident memory is dominated by torch
itself, so the tensors' bytes are the figure; the CUDA peak (``torch.cuda.max_memory_allocated``) is printed where
there is a GPU. For FSDP it also reports the two checkpoints: the bytes each process writes for the sharded last
checkpoint, and the bytes rank 0 receives for a consolidated best.pt, with their times.

    python benchmarks/scale_memory.py [--width 2048] [--layers 4] [--device cpu] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"


def _local_bytes(t: Any) -> int:
    local = t.to_local() if hasattr(t, "to_local") else t
    return int(local.numel() * local.element_size())


def measure(strategy_name: str, width: int, layers: int, device_name: str, out: Path) -> dict[str, Any]:
    """One process's share, after one Adam step (run in each worker)."""
    import torch
    from torch import nn

    from trainwell.engine import distributed

    device = distributed.device_for(torch.device(device_name))
    strategy = distributed.strategy_for(device, name=strategy_name)
    torch.manual_seed(0)
    blocks: list[nn.Module] = [nn.Linear(1024, width), nn.ReLU()]
    for _ in range(layers - 1):
        blocks += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*blocks, nn.Linear(width, 10)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    forward = strategy.wrap(model)
    strategy.rebind(optimizer, model)
    x = torch.randn(64, 1024, device=device)
    y = torch.randint(0, 10, (64,), device=device)
    nn.functional.cross_entropy(forward(x), y).backward()
    optimizer.step()
    params = sum(_local_bytes(p) for p in model.parameters())
    grads = sum(_local_bytes(p.grad) for p in model.parameters() if p.grad is not None)
    state = sum(_local_bytes(v) for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v))
    row = {"strategy": strategy.name, "rank": strategy.rank, "world_size": strategy.world_size,
           "parameters": sum(p.numel() for p in model.parameters()), "param_bytes": params, "grad_bytes": grads,
           "optimizer_bytes": state, "total_bytes": params + grads + state}
    if device.type == "cuda":
        row["cuda_peak_bytes"] = torch.cuda.max_memory_allocated(device)
    if strategy.shards_model:
        row.update(_checkpoint_costs(strategy, model, optimizer, out))
    distributed.close()
    return row


def _checkpoint_costs(strategy: Any, model: Any, optimizer: Any, out: Path) -> dict[str, Any]:
    """FSDP's two checkpoints: the sharded last one (this process writes its part) and the consolidated best.pt
    (rank 0 receives every tensor): bytes this process writes or receives, and seconds."""
    import time

    import torch

    from trainwell.engine.shards import SHARDS, save_shards, sharded_state

    strategy.barrier()
    start = time.perf_counter()
    tensors, rest = sharded_state(model, optimizer)
    save_shards(out / SHARDS, tensors, rest, main=strategy.is_main, barrier=strategy.barrier)
    sharded_s = time.perf_counter() - start
    mine = next((out / SHARDS).glob(f"shard-{strategy.rank + 1:05d}-*.safetensors"))
    strategy.barrier()
    start = time.perf_counter()
    whole = {"model": strategy.model_state(model), "optimizer": strategy.optimizer_state(model, optimizer)}
    consolidated_s = time.perf_counter() - start
    received = sum(v.numel() * v.element_size() for v in whole["model"].values()) + sum(
        v.numel() * v.element_size() for entry in whole["optimizer"].get("state", {}).values()
        for v in entry.values() if torch.is_tensor(v))
    return {"sharded_file_bytes": mine.stat().st_size, "sharded_save_s": sharded_s,
            "consolidated_bytes": received, "consolidated_s": consolidated_s}


def _run(strategy: str, nproc: int, args: argparse.Namespace, out: Path) -> list[dict[str, Any]]:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", strategy, "--width", str(args.width),
               "--layers", str(args.layers), "--device", args.device, "--out", str(out)]
    if nproc > 1:
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc),
                   *command[1:]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"{strategy} on {nproc} failed:\n{done.stderr[-9000:]}")
    return [json.loads(p.read_text()) for p in sorted(out.glob(f"{strategy}-*.json"))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        row = measure(args.worker, args.width, args.layers, args.device, Path(args.out))
        Path(args.out, f"{args.worker}-{row['rank']}.json").write_text(json.dumps(row))
        return
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="tw-scale-") as folder:
        for strategy, nproc in (("auto", 1), ("ddp", 2), ("fsdp", 2)):
            rows += _run(strategy, nproc, args, Path(folder))
    single = next(r for r in rows if r["world_size"] == 1)["total_bytes"]
    print(f"{rows[0]['parameters']:,} parameters; bytes held per process after one Adam step ({args.device})")
    print(f"{'strategy':<8} {'rank':>4} {'params MB':>10} {'grads MB':>9} {'Adam MB':>8} {'total MB':>9} {'vs 1':>6}")
    for r in rows:
        print(f"{r['strategy']:<8} {r['rank']:>4} {r['param_bytes'] / 1e6:>10.1f} {r['grad_bytes'] / 1e6:>9.1f} "
              f"{r['optimizer_bytes'] / 1e6:>8.1f} {r['total_bytes'] / 1e6:>9.1f} {r['total_bytes'] / single:>6.2f}"
              + (f"  CUDA peak {r['cuda_peak_bytes'] / 1e6:.1f} MB" if "cuda_peak_bytes" in r else ""))
    for r in rows:
        if "sharded_file_bytes" in r:
            print(f"fsdp rank {r['rank']} checkpoints: sharded last writes {r['sharded_file_bytes'] / 1e6:.1f} MB in "
                  f"{r['sharded_save_s']:.2f} s; a consolidated best.pt has it receive "
                  f"{r['consolidated_bytes'] / 1e6:.1f} MB in {r['consolidated_s']:.2f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
