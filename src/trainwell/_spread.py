"""How a run uses its hardware: the strategy and precision names and the defaults that config.py, the CLI, ``fit``,
the strategies and the precision plugins all read, written once here (no torch, no pydantic: ``trainwell --help``
reads them)."""

from __future__ import annotations

from typing import Literal, get_args

StrategyName = Literal["auto", "ddp", "fsdp"]
STRATEGIES: tuple[str, ...] = get_args(StrategyName)
# train.precision: the plugins of trainwell.engine.precision registered under these names (a test checks both).
PrecisionName = Literal["32", "16-mixed", "bf16-mixed"]
PRECISIONS: tuple[str, ...] = get_args(PrecisionName)
EXCHANGE_TIMEOUT_S = 300.0  # train.timeout: how long an exchange between processes may wait
SHARD_MIN_SHARE = 0.1  # train.shard_min_share: the share of the parameters that makes a block an FSDP unit
