"""``trainwell doctor [--config FILE] [train options]``: check a run before spending hours on it.

1. data: split sizes, classes and their counts, non-finite inputs;
2. shapes: the per-layer table;
3. one trial step under the doctor (the initial loss should be near ln C);
4. overfit a tiny batch: a working model drives the loss on a few dozen samples close to zero.
"""

from __future__ import annotations

import copy
import math
import time
from pathlib import Path
from typing import Any

import torch

from trainwell.config import Config
from trainwell.doctor.findings import Finding
from trainwell.engine.trainer import Accuracy, call_model, split_loss

TINY = 32  # samples in the overfit test
MAX_STEPS = 400
TARGET_LOSS = 0.05


def preflight(config: Config, *, lang: str, json_path: Path | None, console: Any) -> int:
    """Run the preflight, print its verdict, write the JSON if asked; 1 when an error was found."""
    findings, lines = run_preflight(config, lang=lang, console=console)
    from trainwell.doctor.render import findings_json, print_summary, write_json

    print_summary(findings, console, lang)
    if json_path is not None:
        write_json(json_path, findings_json(findings, preflight=lines))
    return 1 if any(f.severity == "error" for f in findings) else 0


def run_preflight(config: Config, *, lang: str = "en", console: Any = None) -> tuple[list[Finding], dict[str, Any]]:
    """Run the four stages; returns the findings and the measured facts of each stage."""
    from rich.console import Console

    from trainwell.doctor.render import print_finding
    from trainwell.doctor.session import Session
    from trainwell.engine.seed import seed_everything
    from trainwell.models.summary import render_summary, summarize
    from trainwell.tasks import get_task

    console = console or Console(stderr=True)
    seed_everything(config.seed)
    facts: dict[str, Any] = {}
    session = Session(lang=lang, on_finding=lambda f: print_finding(f, console, lang))
    task = get_task(config.task)

    console.print("[bold]1. data[/]")
    bundle = task.build_data(config)
    x, y = tiny_batch(task, config, bundle.train)
    _, eval_transform = task.transforms(config, bundle)
    if eval_transform is not None:
        x = eval_transform(x, None)
    counts = torch.bincount(_all_labels(bundle.train), minlength=bundle.num_classes).tolist()
    facts["data"] = {"sizes": bundle.info.get("sizes"), "classes": bundle.num_classes, "class_counts": counts,
                     "label_mapping": bundle.info.get("label_mapping")}
    console.print(f"   splits {bundle.info.get('sizes')}, {bundle.num_classes} classes, "
                  f"smallest class {min(counts)} / largest {max(counts)} samples", highlight=False)

    console.print("[bold]2. shapes[/]")
    model = task.build_model(config, bundle)
    render_summary(summarize(model, first_sample(x)), console)

    console.print("[bold]3. one trial step[/]")
    loss_fn = task.build_loss(config, bundle)
    initial_state = copy.deepcopy(model.state_dict())
    initial_loss_state = copy.deepcopy(loss_fn.state_dict())
    opt = torch.optim.Adam([*model.parameters(), *loss_fn.parameters()], lr=1e-3)
    with session:
        model.train()
        loss, _ = split_loss(loss_fn(call_model(model, x), y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        session.end()
    first = float(loss.detach())
    facts["trial_step"] = {"loss": first}
    if config.task == "embedding":
        console.print(f"   first loss {first:.4f}", highlight=False)
    else:
        chance = math.log(bundle.num_classes)
        facts["trial_step"]["chance_loss"] = chance
        console.print(f"   first loss {first:.4f} (a model that knows nothing scores ln {bundle.num_classes} = "
                      f"{chance:.4f})", highlight=False)

    console.print(f"[bold]4. overfit {len(y)} samples[/]")
    model.load_state_dict(initial_state)
    loss_fn.load_state_dict(initial_loss_state)
    opt = torch.optim.Adam([*model.parameters(), *loss_fn.parameters()], lr=1e-3)
    # Embeddings are not class scores: for them the loss alone says whether the batch is learned.
    start_loss, steps, final, acc = _overfit(model, loss_fn, opt, x, y, classes=config.task != "embedding")
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
        right = "all samples right: " if config.task != "embedding" else ""
        console.print(f"   loss {start_loss:.4f} -> {final:.4f} in {steps} steps, {right}"
                      "[green]the model can learn[/]", highlight=False)
    return findings, facts


def tiny_batch(task: Any, config: Config, dataset: Any) -> tuple[Any, torch.Tensor]:
    """``TINY`` training samples in a random order (splits can be sorted by label), batched the
    way the task batches them (text: padded token ids and lengths)."""
    from trainwell.data.loading import EpochLoader

    options = task.loader_options(config, dataset, train=True)
    options.setdefault("num_workers", 0)
    loader = EpochLoader(dataset, batch_size=TINY, shuffle=True, seed=config.seed, **options)
    x, y = next(iter(loader))
    return x, torch.as_tensor(y)


def first_sample(x: Any) -> Any:
    """The first sample of a batch, kept as a batch of one (a tuple input stays a tuple)."""
    return tuple(t[:1] for t in x) if isinstance(x, tuple) else x[:1]


def _all_labels(dataset: Any) -> torch.Tensor:
    if hasattr(dataset, "y"):
        return torch.as_tensor(dataset.y)
    if hasattr(dataset, "labels"):
        return torch.as_tensor(dataset.labels)
    return torch.as_tensor([label for _, label in getattr(dataset, "items", [])], dtype=torch.long)


def _overfit(model: torch.nn.Module, loss_fn: Any, opt: torch.optim.Optimizer, x: Any,
             y: torch.Tensor, *, classes: bool = True) -> tuple[float, int, float, float]:
    """Train on one batch until its loss (in eval mode) is below TARGET_LOSS or MAX_STEPS pass."""
    start = _eval_loss(model, loss_fn, x, y, classes)[0]
    deadline = time.perf_counter() + 60  # a preflight must stay quick even for big models
    steps, loss, acc = 0, start, 0.0
    while steps < MAX_STEPS and time.perf_counter() < deadline:
        model.train()
        opt.zero_grad(set_to_none=True)
        split_loss(loss_fn(call_model(model, x), y))[0].backward()
        opt.step()
        steps += 1
        if steps % 20 == 0:
            loss, acc = _eval_loss(model, loss_fn, x, y, classes)
            if loss < TARGET_LOSS and acc == 1.0:
                break
    loss, acc = _eval_loss(model, loss_fn, x, y, classes)
    return start, steps, loss, acc


def _eval_loss(model: torch.nn.Module, loss_fn: Any, x: Any, y: torch.Tensor, classes: bool) -> tuple[float, float]:
    """Loss in eval mode, and the share of samples right (1.0 where accuracy does not apply: embeddings)."""
    model.eval()
    with torch.inference_mode():
        out = call_model(model, x)
        accuracy = Accuracy()
        accuracy.update(out, y)
        return float(split_loss(loss_fn(out, y))[0]), accuracy.compute().get("accuracy", 1.0) if classes else 1.0
