"""``trainwell doctor [--config FILE] [train options]``: check a run before spending hours on it.

1. data: split sizes, classes and their counts, non-finite inputs;
2. shapes: the per-layer table;
3. one trial step under the doctor (the initial loss should be near ln C);
4. overfit a tiny batch: a working model drives the loss on a few dozen samples close to zero.
"""

from __future__ import annotations

import argparse
import copy
import math
import time
from pathlib import Path
from typing import Any

import torch

from trainwell.config import Config
from trainwell.doctor.findings import Finding

TINY = 32  # samples in the overfit test
MAX_STEPS = 400
TARGET_LOSS = 0.05


def preflight_from_args(args: argparse.Namespace, *, lang: str, json_path: Path | None, console: Any) -> int:
    from trainwell.cli.train import config_flags
    from trainwell.config import resolve

    config = resolve(file=Path(args.config) if args.config else None, flags=config_flags(args), sets=args.set)
    findings, lines = run_preflight(config, lang=lang, console=console)
    from trainwell.doctor.render import findings_json, print_summary, write_json

    print_summary(findings, console, lang)
    if json_path is not None:
        write_json(json_path, findings_json(findings, preflight=lines))
    return 1 if any(f.severity == "error" for f in findings) else 0


def run_preflight(config: Config, *, lang: str = "en", console: Any = None) -> tuple[list[Finding], dict[str, Any]]:
    """Run the four stages; returns the findings and the measured facts of each stage."""
    from rich.console import Console

    from trainwell.data import build_data
    from trainwell.doctor.render import print_finding
    from trainwell.doctor.session import Session
    from trainwell.engine.seed import seed_everything
    from trainwell.models import build_model
    from trainwell.models.summary import render_summary, summarize
    from trainwell.tasks.classification import make_loss

    console = console or Console(stderr=True)
    seed_everything(config.seed)
    facts: dict[str, Any] = {}
    session = Session(lang=lang, on_finding=lambda f: print_finding(f, console, lang))

    console.print("[bold]1. data[/]")
    bundle = build_data(config.data)
    x, y = _tiny_batch(bundle.train, TINY, config.seed)
    pre = bundle.preprocess
    x = pre(x)
    counts = torch.bincount(_all_labels(bundle.train), minlength=bundle.num_classes).tolist()
    facts["data"] = {"sizes": bundle.info.get("sizes"), "classes": bundle.num_classes, "class_counts": counts,
                     "label_mapping": bundle.info.get("label_mapping")}
    console.print(f"   splits {bundle.info.get('sizes')}, {bundle.num_classes} classes, "
                  f"smallest class {min(counts)} / largest {max(counts)} samples", highlight=False)

    console.print("[bold]2. shapes[/]")
    model = build_model(config.model, bundle.input_shape, bundle.num_classes)
    render_summary(summarize(model, x[:1]), console)

    console.print("[bold]3. one trial step[/]")
    loss_fn = make_loss(0.0)
    initial_state = copy.deepcopy(model.state_dict())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    with session:
        model.train()
        loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        session.end()
    chance = math.log(bundle.num_classes)
    first = float(loss.detach())
    facts["trial_step"] = {"loss": first, "chance_loss": chance}
    console.print(f"   first loss {first:.4f} (a model that knows nothing scores ln {bundle.num_classes} = "
                  f"{chance:.4f})", highlight=False)

    console.print(f"[bold]4. overfit {len(y)} samples[/]")
    model.load_state_dict(initial_state)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    start_loss, steps, final, acc = _overfit(model, loss_fn, opt, x, y)
    facts["overfit"] = {"samples": len(y), "steps": steps, "start_loss": start_loss, "loss": final,
                        "accuracy": acc}
    findings = list(session.findings)
    if final > TARGET_LOSS or acc < 1.0:
        from trainwell.doctor.checks.cannot_overfit import CannotOverfit

        check = CannotOverfit(session)
        check.report(None, facts["overfit"], samples=len(y), steps=steps, loss=final, start=start_loss,
                     accuracy=f"{acc:.0%}")
        findings = list(session.findings)
        print_finding(findings[-1], console, lang)
    else:
        console.print(f"   loss {start_loss:.4f} -> {final:.4f} in {steps} steps, all samples right: "
                      "[green]the model can learn[/]", highlight=False)
    return findings, facts


def _tiny_batch(dataset: Any, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` samples drawn at random (splits can be sorted by label)."""
    idx = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed))[:n].tolist()
    try:
        x, y = dataset[idx]  # in-memory data: one gather
    except (TypeError, IndexError):
        items = [dataset[i] for i in idx]
        x, y = torch.stack([torch.as_tensor(i[0]) for i in items]), torch.as_tensor([int(i[1]) for i in items])
    return x, torch.as_tensor(y)


def _all_labels(dataset: Any) -> torch.Tensor:
    if hasattr(dataset, "y"):
        return dataset.y
    return torch.as_tensor([label for _, label in getattr(dataset, "items", [])], dtype=torch.long)


def _overfit(model: torch.nn.Module, loss_fn: Any, opt: torch.optim.Optimizer, x: torch.Tensor,
             y: torch.Tensor) -> tuple[float, int, float, float]:
    """Train on one batch until its loss (in eval mode) is below TARGET_LOSS or MAX_STEPS pass."""
    start = _eval_loss(model, loss_fn, x, y)[0]
    deadline = time.perf_counter() + 60  # a preflight must stay quick even for big models
    steps, loss, acc = 0, start, 0.0
    while steps < MAX_STEPS and time.perf_counter() < deadline:
        model.train()
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
        steps += 1
        if steps % 20 == 0:
            loss, acc = _eval_loss(model, loss_fn, x, y)
            if loss < TARGET_LOSS and acc == 1.0:
                break
    loss, acc = _eval_loss(model, loss_fn, x, y)
    return start, steps, loss, acc


def _eval_loss(model: torch.nn.Module, loss_fn: Any, x: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    model.eval()
    with torch.inference_mode():
        out = model(x)
        return float(loss_fn(out, y)), float((out.argmax(1) == y).float().mean())
