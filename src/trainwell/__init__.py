"""trainwell: train PyTorch models the way experienced practitioners do.

Public API (imported lazily, so ``import trainwell`` and ``trainwell --help`` stay fast)::

    from trainwell import fit, seed_everything
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from trainwell.engine.callbacks import Callback
    from trainwell.app.fit import FitResult, fit
    from trainwell.engine.seed import seed_everything

_LAZY = {
    "fit": ("trainwell.app.fit", "fit"),
    "FitResult": ("trainwell.app.fit", "FitResult"),
    "seed_everything": ("trainwell.engine.seed", "seed_everything"),
    "Callback": ("trainwell.engine.callbacks", "Callback"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'trainwell' has no attribute {name!r}")


__all__ = ["Callback", "FitResult", "__version__", "fit", "seed_everything"]
