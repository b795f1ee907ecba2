"""The dataset registry: ``@DATASETS.register(name, summary, recipe=..., needs_path=...)``.

A builder takes the validated :class:`~trainwell.config.DataConfig` and returns a
:class:`~trainwell.data.bundle.DataBundle`. ``recipe`` holds config defaults measured to
work well for that dataset; ``needs_path`` marks builders used as ``NAME:PATH``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trainwell._registry import Registry

DATASETS: Registry[Callable[..., Any]] = Registry("dataset")
