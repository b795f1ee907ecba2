"""Importing a user's own code named as ``package.module:name`` (models, tokenizers)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

from trainwell._errors import ConfigError


def import_module_of(spec: str, option: str, example: str, form: str = "package.module:name") -> tuple[ModuleType, str]:
    """``"mymodels:Net"`` -> (the imported ``mymodels``, ``"Net"``). The current folder is importable,
    as it is for ``python script.py``. ``option`` names the setting in errors (``--model``)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{option} {spec!r} is not {form}.", fix=f"e.g. {option} {example}")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(module_name), attr
    except ImportError as e:
        raise ConfigError(f"Cannot import {module_name!r} for {option} {spec}: {e}.",
                          fix="run from the folder that holds the module, or install its package") from None
