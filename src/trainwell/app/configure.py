"""A run's configuration with everything the registries know: recipes and name checks.

``trainwell.config`` holds the schema and the layering; the datasets' recipes and the names of
datasets and models live with their registries. This module puts the two together. It imports
no torch, so a mistyped key or name is reported in well under a second.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainwell.config import Config, DataConfig, ModelConfig, get_dotted
from trainwell.config import resolve as resolve_layers
from trainwell.data.registry import DatasetRecipes, check_dataset
from trainwell.models.registry import check_model


def check_names(tree: dict[str, Any]) -> list[str]:
    """Dataset and model names against their registries (on the raw values, so they are reported with
    every other problem)."""
    return (check_dataset(get_dotted(tree, "data.name", DataConfig().name), get_dotted(tree, "data.path", None))
            + check_model(get_dotted(tree, "model.name", ModelConfig().name)))


def resolve(*, file: Path | None = None, flags: dict[str, Any] | None = None, sets: list[str] | None = None,
            base: dict[str, Any] | None = None) -> Config:
    """Defaults < the dataset's recipe < ``file`` < ``flags`` < ``sets``, validated at once (see
    :func:`trainwell.config.resolve`).

    ``file`` may not choose code: a model or tokenizer of the user's own that ends up in the config must
    be named on the command line (``flags`` or ``sets``), or this raises before anything is imported."""
    from trainwell._trust import check_file_names, code_names, typed_names

    config = resolve_layers(file=file, flags=flags, sets=sets, base=base, recipes=DatasetRecipes(),
                            checks=[check_names])
    if file is not None:
        flags = flags or {}
        typed = typed_names(flags.get("model.name"), flags.get("text.tokenizer"), sets or [])
        check_file_names(code_names(config.to_dict()), file, typed)
    return config
