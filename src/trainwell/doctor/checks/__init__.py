"""The built-in checks, one small module per check (or per tight family of checks).

Every module in this package is imported here, so adding a check is adding a file.
"""

from __future__ import annotations

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
