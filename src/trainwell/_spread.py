"""How a run spreads over processes: the strategy names and the defaults that config.py, the CLI, ``fit`` and the
strategies all read (no torch, no pydantic: ``trainwell --help`` reads them)."""

from __future__ import annotations

from typing import Literal, get_args

StrategyName = Literal["auto", "ddp", "fsdp"]
STRATEGIES: tuple[str, ...] = get_args(StrategyName)
EXCHANGE_TIMEOUT_S = 300.0  # train.timeout: how long an exchange between processes may wait
SHARD_MIN_SHARE = 0.1  # train.shard_min_share: the share of the parameters that makes a block an FSDP unit
