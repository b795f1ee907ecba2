"""The fine-tuning recipe (``train.finetune``, with ``model.pretrained``): the head alone trains for the first
``freeze_epochs`` epochs, the pretrained backbone frozen (no gradients; its BatchNorm layers keep their pretrained
statistics, in eval mode); then everything trains, the backbone at ``backbone_lr`` times the head's rate
(discriminative rates, one optimizer group each), so the new head's first large gradients do not wreck the
features the backbone learned. Schedules act on both groups alike (onecycle peaks each at its own rate)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from torch import nn

from trainwell.engine.callbacks import Callback

if TYPE_CHECKING:
    from trainwell.engine.trainer import Trainer


def param_groups(model: nn.Module, head: nn.Module, lr: float, backbone_lr: float,
                 others: list[nn.Parameter] | None = None) -> list[dict[str, Any]]:
    """The optimizer's groups: the head (and ``others``, a loss's own parameters) at ``lr``, first (the rate the
    run logs), then the backbone at ``lr * backbone_lr``."""
    return [{"params": [*head.parameters(), *(others or [])], "lr": lr},
            {"params": backbone(model, head), "lr": lr * backbone_lr}]


def backbone(model: nn.Module, head: nn.Module) -> list[nn.Parameter]:
    """The model's parameters outside its head."""
    mine = {id(p) for p in head.parameters()}
    return [p for p in model.parameters() if id(p) not in mine]


class FreezeBackbone(Callback):
    """Epochs before ``epochs`` train the head alone (see the module's docstring)."""

    def __init__(self, model: nn.Module, head: nn.Module, epochs: int) -> None:
        self.backbone = [p for p in backbone(model, head) if p.requires_grad]
        inside = {id(m) for m in head.modules()}
        self.norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)
                      and id(m) not in inside]
        self.epochs = epochs

    def on_epoch_start(self, trainer: Trainer) -> None:
        frozen = trainer.state.epoch < self.epochs
        for p in self.backbone:
            p.requires_grad_(not frozen)
        if frozen:
            for norm in self.norms:
                norm.eval()

    def on_fit_end(self, trainer: Trainer) -> None:
        for p in self.backbone:
            p.requires_grad_(True)
