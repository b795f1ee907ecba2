"""``trainwell doctor [--config FILE] [train options]``: check a run before spending hours on it.

1. data: split sizes, classes and their counts, non-finite inputs;
2. shapes: the per-layer table;
3. one trial step under the doctor (the initial loss should be near ln C);
4. overfit a tiny batch with the run's optimizer on the run's device: a working model gets every one of a
   few dozen samples right (judged by accuracy, not by the loss, whose floor label smoothing raises).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from trainwell.config import Config
from trainwell.doctor.findings import Finding
from trainwell.engine.device import resolve_device
from trainwell.engine.optim import build_optimizer
from trainwell.engine.trainer import Accuracy, call_model, split_loss, to_device

TINY = 32  # samples in the overfit test
MAX_STEPS = 400  # the budget that decides: a working model gets every tiny-batch sample right well within it
GAP_CLOSED = 0.75  # share of the way from the starting loss to its floor a working model covers
TIME_LIMIT = 180.0  # seconds; running out of time first makes the verdict inconclusive, never a failure

# What the preflight prints, per language (its findings are the checks' own, in the same language).
_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "data": "1. data", "shapes": "2. shapes", "trial": "3. one trial step", "overfit": "4. overfit {n} samples",
        "splits": "   splits {sizes}, {classes} classes, smallest class {smallest} / largest {largest} samples",
        "first_loss": "   first loss {loss:.4f} ({optimizer}, lr {lr:g}, {device})",
        "first_loss_chance": "   first loss {loss:.4f} (a model that knows nothing scores ln {classes} = {chance:.4f}); "
                             "{optimizer}, lr {lr:g}, {device}",
        "pairs": "same / different pairs ranked right", "samples": "samples right",
        "floor": " (its floor with label smoothing {smoothing:g} is {floor:.4f})",
        "result": "loss {start:.4f} -> {loss:.4f}{floor} in {steps} steps, {score:.0%} of {measure}",
        "learned": "   {summary}: [green]the model can learn[/]",
        "inconclusive": "   {summary}: [yellow]inconclusive[/]: the {limit:.0f} s limit ran out before the {budget}-step "
                        "budget (a busy machine or a large model), so this says nothing about the model. Run it again "
                        "on a quieter machine, or watch the training accuracy of a short `trainwell train --epochs 1`.",
    },
    "zh": {
        "data": "1. 数据", "shapes": "2. 形状", "trial": "3. 试运行一步", "overfit": "4. 过拟合 {n} 个样本",
        "splits": "   数据划分 {sizes}，{classes} 个类别，最小的类别 {smallest} 个样本 / 最大的 {largest} 个",
        "first_loss": "   第一步损失 {loss:.4f}（{optimizer}，学习率 {lr:g}，{device}）",
        "first_loss_chance": "   第一步损失 {loss:.4f}（什么都没学到的模型得分为 ln {classes} = {chance:.4f}）；"
                             "{optimizer}，学习率 {lr:g}，{device}",
        "pairs": "相同 / 不同样本对排序正确", "samples": "样本分类正确",
        "floor": "（标签平滑 {smoothing:g} 时它的下限是 {floor:.4f}）",
        "result": "损失 {start:.4f} -> {loss:.4f}{floor}，用了 {steps} 步，{score:.0%} 的{measure}",
        "learned": "   {summary}：[green]模型能够学习[/]",
        "inconclusive": "   {summary}：[yellow]无法判断[/]：在 {budget} 步的预算用完之前，{limit:.0f} 秒的时间限制先到了"
                        "（机器繁忙或模型较大），所以这说明不了模型的好坏。请在更空闲的机器上再运行一次，"
                        "或者看一次简短的 `trainwell train --epochs 1` 的训练准确率。",
    },
}


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

    from trainwell.doctor.render import live_printer
    from trainwell.doctor.session import Session
    from trainwell.engine.seed import seed_everything
    from trainwell.models.summary import render_summary, summarize
    from trainwell.tasks import get_task

    console = console or Console(stderr=True)
    words = _WORDS.get(lang, _WORDS["en"])
    seed_everything(config.seed)
    facts: dict[str, Any] = {}
    session = Session(lang=lang, on_finding=live_printer(console, lang))
    task = get_task(config.task)

    console.print(f"[bold]{words['data']}[/]")
    bundle = task.build_data(config)
    x, y = tiny_batch(task, config, bundle.train)
    _, eval_transform = task.transforms(config, bundle)
    if eval_transform is not None:
        x = eval_transform(x, None)
    counts = torch.bincount(_all_labels(bundle.train), minlength=bundle.num_classes).tolist()
    facts["data"] = {"sizes": bundle.info.get("sizes"), "classes": bundle.num_classes, "class_counts": counts,
                     "label_mapping": bundle.info.get("label_mapping")}
    console.print(words["splits"].format(sizes=bundle.info.get("sizes"), classes=bundle.num_classes,
                                         smallest=min(counts), largest=max(counts)), highlight=False)

    console.print(f"[bold]{words['shapes']}[/]")
    model = task.build_model(config, bundle)
    render_summary(summarize(model, first_sample(x)), console, lang=lang)

    console.print(f"[bold]{words['trial']}[/]")
    device = resolve_device(config.device)
    model.to(device)
    loss_fn = task.build_loss(config, bundle).to(device)
    x, y = to_device((x, y), device)
    initial_state = copy.deepcopy(model.state_dict())
    initial_loss_state = copy.deepcopy(loss_fn.state_dict())
    opt = _optimizer(config, model, loss_fn)
    with session:
        model.train()
        loss, _ = split_loss(loss_fn(call_model(model, x), y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        session.end()
    first = float(loss.detach())
    facts["trial_step"] = {"loss": first, "device": str(device), "optimizer": config.train.optimizer,
                           "lr": config.train.lr}
    run = {"loss": first, "optimizer": config.train.optimizer, "lr": config.train.lr, "device": device}
    if config.task == "embedding":
        console.print(words["first_loss"].format(**run), highlight=False)
    else:
        chance = math.log(bundle.num_classes)
        facts["trial_step"]["chance_loss"] = chance
        console.print(words["first_loss_chance"].format(classes=bundle.num_classes, chance=chance, **run),
                      highlight=False)

    console.print(f"[bold]{words['overfit'].format(n=len(y))}[/]")
    model.load_state_dict(initial_state)
    loss_fn.load_state_dict(initial_loss_state)
    judge = _pairs_ranked if config.task == "embedding" else _all_classified
    floor = _loss_floor(config, bundle.num_classes)
    result = _overfit(model, loss_fn, _optimizer(config, model, loss_fn), x, y, judge, floor)
    facts["overfit"] = {"samples": len(y), **result.__dict__}
    if floor is not None:
        facts["overfit"]["loss_floor"] = floor
    measure = words["pairs" if config.task == "embedding" else "samples"]
    shown_floor = (words["floor"].format(smoothing=config.train.label_smoothing, floor=floor)
                   if config.train.label_smoothing and floor is not None else "")
    summary = words["result"].format(start=result.start_loss, loss=result.loss, floor=shown_floor, steps=result.steps,
                                     score=result.score, measure=measure)
    if result.verdict == "learned":
        console.print(words["learned"].format(summary=summary), highlight=False)
    elif result.verdict == "inconclusive":
        console.print(words["inconclusive"].format(summary=summary, limit=TIME_LIMIT, budget=MAX_STEPS),
                      highlight=False)
    else:
        from trainwell.doctor.checks.cannot_overfit import CannotOverfit

        CannotOverfit(session).report(None, facts["overfit"], samples=len(y), steps=result.steps,
                                      loss=f"{result.loss:.4f}", start=f"{result.start_loss:.4f}",
                                      accuracy=f"{result.score:.0%}")  # printed once, by the session
    return session.sorted_findings(), facts  # a cause names the symptoms it explains (folding.py)


def _optimizer(config: Config, model: torch.nn.Module, loss_fn: torch.nn.Module) -> torch.optim.Optimizer:
    """The run's own optimizer and learning rate (without its schedule: a constant rate at the peak)."""
    tc = config.train
    return build_optimizer([*model.parameters(), *loss_fn.parameters()], tc.optimizer, tc.lr,
                           weight_decay=tc.weight_decay, momentum=tc.momentum)


def _loss_floor(config: Config, classes: int) -> float | None:
    """The lowest cross-entropy the targets allow (0, or with label smoothing the entropy of the smoothed
    target); None for the embedding losses, whose floor depends on their margin and scale."""
    eps = config.train.label_smoothing
    if config.task == "embedding":
        return None
    if eps <= 0:
        return 0.0
    right, other = 1 - eps + eps / classes, eps / classes
    return -(right * math.log(right) + (classes - 1) * other * math.log(other))


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


@dataclass
class Overfit:
    verdict: str  # learned | failed (the step budget ran out) | inconclusive (the time limit ran out first)
    steps: int
    start_loss: float
    loss: float
    score: float  # the judge's share right: samples classified, or same/different pairs ranked


def _overfit(model: torch.nn.Module, loss_fn: Any, opt: torch.optim.Optimizer, x: Any, y: torch.Tensor,
             judge: Callable[[Any, torch.Tensor], float], floor: float | None) -> Overfit:
    """Train on one batch until, in eval mode, the judge finds every sample right and the loss has closed
    most of the gap to its floor (``GAP_CLOSED``: a softmax before the loss classifies a tiny batch right
    but leaves the loss stuck far above zero), or MAX_STEPS pass. The floor, not zero: label smoothing keeps
    the loss of a perfect model well above 0.05. A wall-clock limit only makes the verdict inconclusive:
    how busy the machine is never decides whether the model can learn."""
    start, _ = _evaluate(model, loss_fn, x, y, judge)

    def learned(loss: float, score: float) -> bool:
        return score == 1.0 and (floor is None or loss - floor <= (1 - GAP_CLOSED) * (start - floor))

    deadline = time.perf_counter() + TIME_LIMIT
    steps = 0
    while steps < MAX_STEPS:
        if time.perf_counter() > deadline:
            return Overfit("inconclusive", steps, start, *_evaluate(model, loss_fn, x, y, judge))
        model.train()
        opt.zero_grad(set_to_none=True)
        split_loss(loss_fn(call_model(model, x), y))[0].backward()
        opt.step()
        steps += 1
        if steps % 10 == 0 and learned(*_evaluate(model, loss_fn, x, y, judge)):
            break
    loss, score = _evaluate(model, loss_fn, x, y, judge)
    return Overfit("learned" if learned(loss, score) else "failed", steps, start, loss, score)


def _evaluate(model: torch.nn.Module, loss_fn: Any, x: Any, y: torch.Tensor,
              judge: Callable[[Any, torch.Tensor], float]) -> tuple[float, float]:
    """The loss in eval mode and the judge's share right."""
    model.eval()
    with torch.inference_mode():
        out = call_model(model, x)
        return float(split_loss(loss_fn(out, y))[0]), judge(out, y)


def _all_classified(out: Any, y: torch.Tensor) -> float:
    accuracy = Accuracy()
    accuracy.update(out, y)
    return accuracy.compute().get("accuracy", 0.0)


def _pairs_ranked(out: torch.Tensor, y: torch.Tensor) -> float:
    """Embeddings: the ROC AUC of cosine similarity over every pair of the batch, same identity vs different
    (1.0: every same pair is closer than every different pair)."""
    from sklearn.metrics import roc_auc_score

    emb = torch.nn.functional.normalize(out.float(), dim=1)
    sims = emb @ emb.T
    upper = torch.triu_indices(len(y), len(y), offset=1, device=sims.device)
    same = (y[upper[0]] == y[upper[1]]).cpu().numpy()
    if same.all() or not same.any():
        return 0.0
    return float(roc_auc_score(same, sims[upper[0], upper[1]].cpu().numpy()))
