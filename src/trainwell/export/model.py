"""A run's model, rebuilt from its configuration and data payload (the checkpoint, or an export's metadata)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from torch import nn

    from trainwell._trust import Typed


def build_run_model(config: dict[str, Any], payload: dict[str, Any]) -> nn.Module:
    """The untrained model of a run: ``config`` is its configuration as a dict, ``payload`` the data
    facts every checkpoint carries (preprocessing, classes; the vocabulary of a text run)."""
    from trainwell.config import ModelConfig
    from trainwell.data import Preprocess

    # The architecture only: the trained weights come from the checkpoint, never downloaded again.
    model_cfg = ModelConfig.model_validate({**config["model"], "pretrained": None})
    if payload.get("task") == "text" and "hf" in payload:  # the configuration it keeps: nothing from the hub
        from trainwell.models.hf import build_hf_model

        return build_hf_model(payload["hf"]["config"], payload["hf"]["pad_id"], name=model_cfg.name)
    if payload.get("task") == "text":
        from trainwell.tasks.text import build_text_model

        return build_text_model(model_cfg, len(payload["vocab"]["itos"]), payload["num_classes"])
    pre = Preprocess.from_dict(payload["preprocess"])
    if payload.get("task") == "embedding":
        from trainwell.config import EmbeddingConfig
        from trainwell.models.embedding import build_embedding_model

        return build_embedding_model(model_cfg, EmbeddingConfig.model_validate(config["embedding"]),
                                     tuple(pre.input_shape))
    from trainwell.models import build_model

    return build_model(model_cfg, tuple(pre.input_shape), payload["num_classes"])


def load_run_model(run_dir: Path, checkpoint: str = "best",
                   typed: Typed | None = None) -> tuple[nn.Module, dict[str, Any], dict[str, Any]]:
    """The run's trained model on the CPU in eval mode, its data payload and its configuration (a dict).

    A model or tokenizer of the user's own is built only when ``typed`` (the names given on the command
    line) names it again; any other name outside trainwell is refused before anything is imported."""
    from trainwell._trust import check_file_names, code_names
    from trainwell.engine.checkpoint import load_checkpoint
    from trainwell.engine.run_folder import check_run_dir

    path = check_run_dir(run_dir) / "checkpoints" / f"{checkpoint}.pt"
    sharded = path.with_suffix(".shards")
    if checkpoint == "last" and not path.exists() and sharded.is_dir():  # an fsdp run's: its pieces put together
        from trainwell.engine.shards import read_model

        path, ckpt = sharded, read_model(sharded)
    else:
        ckpt = load_checkpoint(path)
    check_file_names(code_names(ckpt.get("config"), ckpt.get("data")), path, typed)
    model = build_run_model(ckpt["config"], ckpt["data"])
    model.load_state_dict(ckpt["model"])
    return model.eval(), ckpt["data"], ckpt["config"]
