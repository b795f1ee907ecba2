"""Small building blocks shared by the built-in models."""

from __future__ import annotations

import torch
from torch import nn

ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
    "tanh": nn.Tanh,
    "leaky_relu": nn.LeakyReLU,
}


def activation(name: str) -> nn.Module:
    return ACTIVATIONS[name]()


def mlp_blocks(in_features: int, hidden: list[int], act: str, dropout: float) -> list[list[nn.Module]]:
    """Linear -> activation (-> dropout) for each hidden size: never two Linears without a non-linearity."""
    blocks: list[list[nn.Module]] = []
    for width in hidden:
        block = [nn.Linear(in_features, width), activation(act)]
        if dropout > 0:
            block.append(nn.Dropout(dropout))
        blocks.append(block)
        in_features = width
    return blocks


def mlp_layers(in_features: int, hidden: list[int], act: str, dropout: float) -> list[nn.Module]:
    """The layers of :func:`mlp_blocks`, one after the other."""
    return [layer for block in mlp_blocks(in_features, hidden, act, dropout) for layer in block]


class Blocks(nn.Sequential):
    """An ``nn.Sequential`` whose layers are grouped into blocks, each of which can be activation-checkpointed.

    The layers stay flat (the parameter names are those of a plain ``nn.Sequential``); ``blocks`` holds the
    ``(start, end)`` layer ranges that form one block. With ``checkpoint=True``, in training mode with
    gradients on, each block runs under ``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``: its
    inner activations are freed after the forward pass and recomputed during backward. The recomputation
    replays dropout with the same random numbers, and batch norm layers do not update their running
    statistics a second time, so the model trains exactly as without checkpointing.
    """

    def __init__(self, groups: list[list[nn.Module]], *, before: list[nn.Module] | None = None,
                 after: list[nn.Module] | None = None, checkpoint: bool = False) -> None:
        layers = list(before or [])
        blocks: list[tuple[int, int]] = []
        for group in groups:
            blocks.append((len(layers), len(layers) + len(group)))
            layers += group
        super().__init__(*layers, *(after or []))
        self.blocks = blocks
        self.checkpoint = checkpoint
        self.channels_last = False  # 4-D inputs are converted to channels_last (set by models.memory)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.channels_last and x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
        if not (self.checkpoint and self.training and torch.is_grad_enabled()):
            return super().forward(x)
        from torch.utils.checkpoint import checkpoint

        layers = list(self)
        done = 0
        for start, end in self.blocks:
            x = _run(layers[done:start], x)
            x = checkpoint(_Recomputable(layers[start:end]), x, use_reentrant=False)
            done = end
        return _run(layers[done:], x)


def _run(layers: list[nn.Module], x: torch.Tensor) -> torch.Tensor:
    for layer in layers:
        x = layer(x)
    return x


class _Recomputable:
    """One checkpointed block: the first call is the forward pass, any later one the recomputation in backward,
    which must leave batch norm's running statistics (and its batch counter) as the first call left them."""

    def __init__(self, layers: list[nn.Module]) -> None:
        self.layers = layers
        self.calls = 0

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls == 1:
            return _run(self.layers, x)
        norms = [m for m in self.layers if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        saved = [[b.clone() for b in m.buffers()] for m in norms]
        try:
            return _run(self.layers, x)
        finally:  # the recomputation normalizes with batch statistics as before; its update is undone
            with torch.no_grad():
                for m, kept in zip(norms, saved, strict=True):
                    for b, k in zip(m.buffers(), kept, strict=True):
                        b.copy_(k)
