"""One generator seed from several integers: how every per-sample and per-epoch stream of trainwell is named
(the engine's augmentation draws, the loader's per-image photo augmentation). No torch: any layer may use it."""

from __future__ import annotations


def mix_seed(*parts: int) -> int:
    """A 64-bit seed that is a function of ``parts`` in order (seed, epoch, tag, index, ...)."""
    value = 0
    for part in parts:
        value = (value * 1_000_003 + part) % 2**64
    return value
