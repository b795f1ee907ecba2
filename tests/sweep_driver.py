"""benchmarks/doctor_sweep.py loaded as a module, for the tests that run sweep points."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

DRIVER = Path(__file__).parents[1] / "benchmarks" / "doctor_sweep.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("doctor_sweep", DRIVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["doctor_sweep"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module
