"""split-leakage tells continuous data (an exact repeat is a copy) from discrete data (rows recur by chance)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from trainwell.doctor.checks.leakage import _Continuity


def _decide(*batches: torch.Tensor) -> bool | None:
    values = _Continuity()
    for x in batches:
        if not values.full:
            values.add(x)
    return values.answer


def test_measured_features_are_continuous_even_with_copied_rows() -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(128, 12, generator=g)
    assert _decide(x) is True
    assert _decide(torch.cat([x[:64], x[:32], x[:32]])) is True  # oversampled copies among them


def test_discrete_values_are_not_continuous() -> None:
    g = torch.Generator().manual_seed(0)
    answers = torch.randint(0, 4, (256, 6), generator=g)
    one_hot = F.one_hot(answers, 4).flatten(1).float()
    assert _decide(one_hot) is False
    assert _decide((one_hot - one_hot.mean(0)) / one_hot.std(0)) is False  # standardized: still few values
    assert _decide(torch.randint(0, 256, (8, 784), generator=g).float() / 255) is False  # 8-bit pixels
    assert _decide(answers) is False  # integers
    assert _decide(torch.randn(256, 12, generator=g).to(torch.bfloat16)) is False  # 16-bit floats repeat values


def test_small_batches_are_decided_over_several_of_them() -> None:
    g = torch.Generator().manual_seed(1)
    codes = F.one_hot(torch.randint(0, 3, (200, 8), generator=g), 3).flatten(1).float()
    codes = (codes - codes.mean(0)) / codes.std(0)
    values = _Continuity()
    values.add(codes[:1])  # one row of 24 standardized codes: as many distinct values as columns
    assert values.answer is None  # not decided on 24 values
    for row in codes[1:].split(1):
        if not values.full:
            values.add(row)
    assert values.answer is False
    assert _decide(*torch.randn(100, 12, generator=g).split(1)) is True
