"""Small building blocks shared by the built-in models."""

from __future__ import annotations

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


def mlp_layers(in_features: int, hidden: list[int], act: str, dropout: float) -> list[nn.Module]:
    """Linear -> activation (-> dropout) for each hidden size: never two Linears without a non-linearity."""
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(in_features, width), activation(act)]
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
        in_features = width
    return layers
