"""The text task with a Hugging Face model (``--model hf:NAME_OR_PATH``): the data follows the model.

Its tokenizer and configuration are read once, with the data (from the hub, the user's cache or a
``save_pretrained`` folder), or taken back from a checkpoint's payload (``predict``, ``export``: no hub, no
network). The payload keeps the tokenizer.json text, the model's configuration and the pad id; the run folder's
``hf/`` holds the same as the files transformers reads (tokenizer.json, tokenizer_config.json, config.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell._errors import TrainwellError

if TYPE_CHECKING:
    from trainwell.config import Config
    from trainwell.data.bundle import DataBundle
    from trainwell.data.text_hf import HfTokens
    from trainwell.models.hf import HfClassifier

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt")  # a folder that holds its tokenizer
FOLDER = "hf"  # the run folder's copy of the tokenizer and configuration
HIGH_LR = 1e-4  # above this, fine-tuning a transformer is said to risk wrecking it


@dataclass
class HfText:
    name: str  # hf:NAME_OR_PATH
    tokens: HfTokens
    config: Any  # the transformers configuration (a dict when taken back from a payload)
    pad_id: int
    limit: int | None  # the longest input the model takes
    files: dict[str, bytes] = field(default_factory=dict)  # the tokenizer's files, for the run folder
    notes: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, name: str, pretrained: Any) -> HfText:
        """The tokenizer and configuration of ``name`` (or of the ``save_pretrained`` folder ``pretrained``)."""
        import tempfile

        from trainwell.data.text_hf import HfTokens
        from trainwell.models.hf import (
            hf_name,
            load_config,
            load_tokenizer,
            max_positions,
            weights_source,
        )

        hub = hf_name(name)
        weights = weights_source(name, pretrained)
        own = weights is not None and any((Path(weights) / f).is_file() for f in TOKENIZER_FILES)
        tokenizer = load_tokenizer(name, weights if own and weights is not None else hub)
        config = load_config(name, weights or hub)  # its classes are set with the model
        notes = []
        pad = tokenizer.pad_token_id
        if pad is None and tokenizer.eos_token_id is None:
            raise TrainwellError(f"{name}'s tokenizer has neither a pad token nor an end-of-text token to pad "
                                 "batches with.", fix="use a model whose tokenizer has a pad token")
        if pad is None:
            pad = tokenizer.eos_token_id
            notes.append(f"{name}'s tokenizer has no pad token: batches are padded with its end-of-text token")
        if getattr(config, "pad_token_id", None) is None:
            config.pad_token_id = pad  # classifiers that read the last real token find it by the pad id
        with tempfile.TemporaryDirectory() as folder:
            tokenizer.save_pretrained(folder)
            files = {p.name: p.read_bytes() for p in Path(folder).iterdir() if p.is_file()}
        return cls(name, HfTokens(tokenizer.backend_tokenizer.to_str()), config, int(pad),
                   max_positions(config, tokenizer), files, notes)

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> HfText:
        """What a checkpoint recorded: nothing is read from the hub."""
        from trainwell.data.text_hf import HfTokens

        return cls(payload["name"], HfTokens(payload["tokenizer_json"]), payload["config"], int(payload["pad_id"]),
                   None)

    def data(self, config: Config) -> DataBundle:
        from trainwell.data.text_hf import build_hf_text_data

        bundle = build_hf_text_data(config, self.tokens, self.name, self.limit)
        bundle.info["notes"] += self.notes
        if config.text.pretrain != "none":
            bundle.info["notes"].append(f"text.pretrain={config.text.pretrain} left out: {self.name} brings its own "
                                        "embeddings")
        if config.train.lr != "auto" and config.train.lr > HIGH_LR:
            bundle.info["notes"].append(f"train.lr {config.train.lr:g} is high for fine-tuning a transformer "
                                        "(1e-5 to 5e-5 is usual): --lr 3e-5")
        return bundle

    def model(self, config: Config, bundle: DataBundle) -> HfClassifier:
        """The classifier for the data's classes: published or ``save_pretrained`` weights, or random ones."""
        from trainwell.models.hf import build_hf_model, set_classes, weights_source

        if not isinstance(self.config, dict):
            set_classes(self.config, [str(c) for c in bundle.class_names])
        return build_hf_model(self.config, self.pad_id, name=self.name,
                              weights=weights_source(self.name, config.model.pretrained))

    def payload(self) -> dict[str, Any]:
        config = self.config if isinstance(self.config, dict) else self.config.to_dict()
        return {"name": self.name, "tokenizer_json": self.tokens.json, "config": config, "pad_id": self.pad_id}

    def write_files(self, run_dir: Path) -> None:
        """The tokenizer's files and config.json into ``run_dir/hf`` (transformers reads that folder)."""
        from trainwell._files import atomic_write, atomic_write_json

        folder = run_dir / FOLDER
        folder.mkdir(exist_ok=True)
        for name, content in self.files.items():
            atomic_write(folder / name, lambda f, content=content: f.write(content))
        atomic_write_json(folder / "config.json", self.payload()["config"])
