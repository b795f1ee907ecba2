"""Text classification: texts -> tokens -> vocabulary ids -> ``lstm`` / ``gru`` -> one class per text; or, with
``--model hf:NAME_OR_PATH``, texts -> the Hugging Face model's own tokenizer -> its classifier (``tasks/text_hf.py``).

The vocabulary (or the model's tokenizer.json) and the tokenizer settings travel in every checkpoint (``payload``),
so ``trainwell predict`` turns new texts into exactly the same ids as training did.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell._errors import ConfigError
from trainwell._library_names import is_hf_model
from trainwell.tasks.base import TASKS, Task

if TYPE_CHECKING:
    import torch
    from torch import nn

    from trainwell.config import Config, ModelConfig
    from trainwell.data.bundle import DataBundle
    from trainwell.data.vocab import Vocab
    from trainwell.engine.trainer import InputTransform
    from trainwell.tasks.text_hf import HfText


@TASKS.register("text", "texts -> one class per text (tokenizer, vocabulary, lstm / gru over packed sequences)")
class TextTask(Task):
    """Builds the vocabulary with the data; the model's embedding size follows it. A Hugging Face model brings its
    own tokenizer instead (``self.hf``)."""

    def __init__(self) -> None:
        self.vocab: Vocab | None = None
        self.hf: HfText | None = None

    def build_data(self, config: Config) -> DataBundle:
        if is_hf_model(config.model.name):
            from trainwell.tasks.text_hf import HfText

            if self.hf is None:
                self.hf = HfText.load(config.model.name, config.model.pretrained)
            return self.hf.data(config)
        from trainwell.data.text import build_text_data

        bundle, self.vocab = build_text_data(config)
        return bundle

    def adopt(self, payload: dict[str, Any]) -> None:
        if "hf" in payload:
            from trainwell.tasks.text_hf import HfText

            self.hf = HfText.from_payload(payload["hf"])

    def write_files(self, run_dir: Path) -> None:
        if self.hf is not None:
            self.hf.write_files(run_dir)

    def build_model(self, config: Config, bundle: DataBundle) -> nn.Module:
        if self.hf is not None:
            return self.hf.model(config, bundle)
        if self.vocab is None:
            raise RuntimeError("TextTask.build_data must run before build_model (the model needs the vocabulary)")
        model = build_text_model(config.model, len(self.vocab), bundle.num_classes)
        if config.text.pretrain == "ppmi":
            init_ppmi_embedding(model, bundle, config)
        return model

    def transforms(self, config: Config, bundle: DataBundle) -> tuple[InputTransform | None, InputTransform | None]:
        return None, None  # token ids go to the model as they are

    def loader_options(self, config: Config, dataset: Any, *, train: bool) -> dict[str, Any]:
        """``EpochLoader`` options: pad per batch, keep lengths, bucket by length (``text.bucket``)."""
        from trainwell.data.text_batch import text_loader_options

        batch = config.train.batch_size if train else max(256, config.train.batch_size)
        opts = text_loader_options(dataset, batch, shuffle=train, seed=config.seed, bucket=config.text.bucket)
        if config.data.num_workers is not None:
            opts["num_workers"] = config.data.num_workers
        return opts

    def shown_input(self, raw: Any) -> Any:
        """The text as the model read it: its tokens (``<unk>`` for those outside the vocabulary), joined."""
        if self.hf is not None:
            return self.hf.tokens.decode([int(i) for i in raw])
        assert self.vocab is not None
        return join_tokens([self.vocab.itos[int(i)] for i in raw])

    def payload(self, config: Config, bundle: DataBundle) -> dict[str, Any]:
        if self.hf is not None:  # no "tokenizer" key: a file's tokenizer.json is data, never a function to import
            return {**super().payload(config, bundle), "task": "text", "hf": self.hf.payload(),
                    "max_len": config.text.max_len, "truncate": config.text.truncate,
                    "head_fraction": config.text.head_fraction}
        assert self.vocab is not None
        return {**super().payload(config, bundle), "task": "text", "vocab": self.vocab.to_dict(),
                "tokenizer": config.text.tokenizer, "max_len": config.text.max_len,
                "truncate": config.text.truncate, "head_fraction": config.text.head_fraction}


def join_tokens(tokens: list[str]) -> str:
    """Tokens back into a line: CJK characters and symbols close up, words get a space between them."""
    def cjk(ch: str) -> bool:
        return "\u3000" <= ch <= "\u9fff" or "\uf900" <= ch <= "\uffef"

    text = ""
    for token in tokens:
        spaced = text and not (cjk(text[-1]) or cjk(token[0]) or not token[0].isalnum() or not text[-1].isalnum())
        text += (" " if spaced else "") + token
    return text


def init_ppmi_embedding(model: nn.Module, bundle: DataBundle, config: Config) -> None:
    """``text.pretrain: ppmi``: copy PPMI + SVD vectors of the training split's token ids into ``model.embed``."""
    import torch
    from torch import nn

    from trainwell.data.embeddings_ppmi import ppmi_embeddings

    embed = getattr(model, "embed", None)
    if not isinstance(embed, nn.Embedding):
        raise ConfigError("text.pretrain=ppmi initialises the model's `embed` (an nn.Embedding); this model has none.",
                          fix="--set text.pretrain=none, or give your model an `embed` attribute")
    vectors = ppmi_embeddings(bundle.train.ids, embed.num_embeddings, embed.embedding_dim, seed=config.data.split_seed)
    with torch.no_grad():
        embed.weight.copy_(vectors)


def build_text_model(cfg: ModelConfig, vocab_size: int, num_classes: int) -> nn.Module:
    """A registered sequence model (``lstm``, ``gru``) or a user's ``package.module:Class``
    (given ``vocab_size`` and ``num_classes`` when its constructor takes them, called as ``model(tokens, lengths)``)."""
    from trainwell.models import MODELS

    if ":" in cfg.name:
        from trainwell.models.custom import load_user_model

        return load_user_model(cfg.name, (vocab_size,), num_classes, dict(cfg.kwargs), {"vocab_size": vocab_size})
    builder = MODELS.get(cfg.name)
    if cfg.name not in ("lstm", "gru"):
        raise ConfigError(f"--model {cfg.name} does not read token ids; task text trains lstm or gru "
                          "(or your package.module:Class called as model(tokens, lengths)).",
                          fix="--model lstm")
    return builder(cfg, (vocab_size,), num_classes, vocab_size=vocab_size)


def encode_texts(payload: dict[str, Any], texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """New texts -> (tokens (B, T), lengths (B,)) with the run's tokenizer, vocabulary and max_len (a Hugging Face
    model's: its tokenizer.json, kept in the payload)."""
    import torch

    from trainwell.data.text_batch import pad_batch
    from trainwell.data.tokenize import get_tokenizer, truncate
    from trainwell.data.vocab import Vocab

    mode, head = payload.get("truncate", "head"), payload.get("head_fraction", 0.5)  # older runs: head
    if "hf" in payload:
        from trainwell.data.text_hf import HfTokens

        ids = HfTokens(payload["hf"]["tokenizer_json"]).encode(texts, payload["max_len"], mode, head)
    else:
        vocab = Vocab.from_dict(payload["vocab"])
        tokenize = get_tokenizer(payload["tokenizer"])
        ids = [vocab.encode(truncate(tokenize(t), payload["max_len"], mode, head)) for t in texts]
    items = [(torch.tensor(i, dtype=torch.long), torch.tensor(0)) for i in ids]
    (tokens, lengths), _ = pad_batch(items)
    return tokens, lengths
