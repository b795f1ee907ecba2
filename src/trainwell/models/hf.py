"""Hugging Face sequence classifiers by name: ``hf:NAME_OR_PATH`` (any model that transformers'
``AutoModelForSequenceClassification`` builds; the ``[hf]`` extra), for the text task.

``NAME_OR_PATH`` is a model on the Hugging Face hub or a local folder written by ``save_pretrained``. Its own
tokenizer turns the texts into ids (``trainwell.data.text_hf``). The weights: ``model.pretrained: true`` takes the
published ones (the user's cache, downloading when online; offline with nothing cached is one error naming the cache
and ``--pretrained PATH``), a folder written by ``save_pretrained`` takes those, and without ``model.pretrained`` the
same architecture starts from random weights. The classification head, the layers after the base model (BERT's
``classifier``), is sized to the data's classes and its last ``nn.Linear`` starts at zero; any other weight that is
missing, left over or of another shape is an error that lists them. ``trust_remote_code`` is always False: the
configuration and the tokenizer are read as JSON data, and a model whose code lives in its repository is refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn

from trainwell._errors import TrainwellError

INSTALL = 'pip install "trainwell[hf]"'
_LISTED = 8  # keys named in a mismatch error


def transformers_module() -> Any:
    """transformers, or one error naming the extra that installs it."""
    try:
        import transformers
    except ImportError:
        raise TrainwellError("hf: models need the transformers package, which is not installed.",
                             fix=INSTALL) from None
    return transformers


@contextlib.contextmanager
def quiet_transformers() -> Iterator[Any]:
    """transformers with its own load reports and progress bars kept off the terminal (the run says what it
    loaded, in one line)."""
    transformers = transformers_module()
    logging = transformers.utils.logging
    level, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield transformers
    finally:
        logging.set_verbosity(level)
        if bars:
            logging.enable_progress_bar()


def hf_name(name: str) -> str:
    """The hub name or folder of ``hf:NAME_OR_PATH``; a path that names no folder is an error here."""
    arch = name.partition(":")[2]
    looks_like_path = arch.startswith(("/", "./", "../", "~")) or Path(arch).expanduser().exists()
    if looks_like_path and not (Path(arch).expanduser() / "config.json").is_file():
        raise TrainwellError(f"--model {name}: {arch!r} is not a folder written by save_pretrained (no config.json "
                             "in it).", fix="give the folder that holds config.json, or a model name on the hub")
    return str(Path(arch).expanduser()) if looks_like_path else arch


def is_hf_folder(path: Any) -> bool:
    """A folder written by ``save_pretrained`` (it holds config.json)."""
    return isinstance(path, str) and (Path(path).expanduser() / "config.json").is_file()


def weights_source(name: str, pretrained: Any) -> str | None:
    """Where an ``hf:`` model's weights come from: the hub's published ones (``pretrained: true``), a
    ``save_pretrained`` folder, or None (random weights; a trainwell run folder or state dict is loaded later)."""
    if pretrained is True:
        return hf_name(name)
    return str(Path(pretrained).expanduser()) if is_hf_folder(pretrained) else None


def _load(what: str, name: str, load: Any) -> Any:
    """``load()`` under the offline rule of the image libraries (one paragraph naming the cache); a model that
    transformers cannot build without running the repository's own code is one paragraph too."""
    from trainwell.models.library import download

    with quiet_transformers():
        try:
            return download(load, name, what=what)
        except (ValueError, KeyError) as e:
            text = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
            raise TrainwellError(f"transformers cannot build the {what} of {name}: {text}",
                                 fix="use a model transformers builds without code from its repository "
                                     "(trainwell never sets trust_remote_code)") from None


def load_config(name: str, source: str) -> Any:
    """The model's configuration (config.json, read as data)."""
    return _load("configuration", name, lambda: transformers_module().AutoConfig.from_pretrained(
        source, trust_remote_code=False))


def set_classes(config: Any, class_names: list[str]) -> None:
    """A configuration's head sized to ``class_names``, which name its outputs (``id2label``)."""
    config.num_labels = len(class_names)
    config.id2label = dict(enumerate(class_names))
    config.label2id = {c: i for i, c in enumerate(class_names)}


def load_tokenizer(name: str, source: str) -> Any:
    """The model's own tokenizer; it must have a tokenizer.json (a fast tokenizer), which is read as data."""
    tokenizer = _load("tokenizer", name, lambda: transformers_module().AutoTokenizer.from_pretrained(
        source, trust_remote_code=False))
    if getattr(tokenizer, "backend_tokenizer", None) is None:
        raise TrainwellError(f"{name}'s tokenizer ({type(tokenizer).__name__}) has no tokenizer.json form, which "
                             "trainwell reads its tokenizers from (as data, never as code).",
                             fix="use a model with a fast tokenizer (tokenizer.json)")
    return tokenizer


def max_positions(config: Any, tokenizer: Any = None) -> int | None:
    """The longest input the model takes: its position embeddings, and the tokenizer's model_max_length when it
    says one (RoBERTa's 514 positions hold 512 tokens)."""
    limits = [getattr(config, key) for key in ("max_position_embeddings", "n_positions", "max_seq_len")
              if isinstance(getattr(config, key, None), int)]
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 1_000_000:
        limits.append(limit)
    return min(limits) if limits else None


class HfClassifier(nn.Module):
    """A Hugging Face sequence classifier called as trainwell's text models are, ``model(tokens, lengths)``: the
    attention mask is 1 on each text's ``lengths`` first positions, the padding after them is the tokenizer's pad id,
    and the output is the logits."""

    def __init__(self, model: nn.Module, pad_id: int) -> None:
        super().__init__()
        self.model = model
        self.pad_id = int(pad_id)
        self.notes: list[str] = []  # what loading the weights did, in words

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        mask = positions.unsqueeze(0) < lengths.to(tokens.device).unsqueeze(1)
        ids = tokens.masked_fill(~mask, self.pad_id)
        return self.model(input_ids=ids, attention_mask=mask.long()).logits  # type: ignore[no-any-return]

    def classification_head(self) -> nn.Module:
        """The layers after the base model (BERT's dropout and ``classifier``), which fine-tuning trains at the
        head's rate."""
        base = self.model.base_model_prefix
        return nn.ModuleList([m for n, m in self.model.named_children() if n != base])


def build_hf_model(config: Any, pad_id: int, *, name: str = "", weights: str | None = None) -> HfClassifier:
    """The classifier of ``config`` (a transformers config, or its dict as a checkpoint keeps it): random weights,
    or those of ``weights`` (a hub name or a ``save_pretrained`` folder) with the head new for this data."""
    with quiet_transformers() as transformers:
        if isinstance(config, dict):
            config = transformers.AutoConfig.for_model(**config)
        auto = transformers.AutoModelForSequenceClassification
        if weights is None:
            return HfClassifier(auto.from_config(config, trust_remote_code=False).float(), pad_id)
    model, info = _load("weights", name, lambda: auto.from_pretrained(
        weights, config=config, trust_remote_code=False, ignore_mismatched_sizes=True, output_loading_info=True))
    wrapped = HfClassifier(model.float(), pad_id)
    wrapped.notes = _loaded(model, info, name, weights)
    return wrapped


def _loaded(model: nn.Module, info: dict[str, Any], name: str, weights: str) -> list[str]:
    """Check what loading kept and left out (the base model whole; the head new) and say it in one line."""
    from trainwell.models.head import head_of, start_at_zero

    base = getattr(model, "base_model_prefix", "")
    missing, unexpected = set(info.get("missing_keys") or ()), set(info.get("unexpected_keys") or ())
    mismatched = {str(m[0]): m[1:] for m in info.get("mismatched_keys") or ()}

    def in_base(key: str) -> bool:
        return bool(base) and key.startswith(base + ".")

    new_pooler = sorted(k for k in missing if in_base(k) and ".pooler." in k)  # a checkpoint saved without it
    wrong = ([f"{k} (missing)" for k in sorted(missing) if in_base(k) and k not in new_pooler]
             + [f"{k} (not in the model)" for k in sorted(unexpected) if in_base(k)]
             + [f"{k} (shape {tuple(s[0])} in the weights, {tuple(s[1])} in the model)"
                for k, s in sorted(mismatched.items()) if in_base(k)])
    if wrong:
        shown = "; ".join(wrong[:_LISTED]) + (f"; and {len(wrong) - _LISTED} more" if len(wrong) > _LISTED else "")
        raise TrainwellError(f"The weights of {weights} do not fit {name} outside its classification head: {shown}.",
                             fix="give weights saved from the same architecture (the config.json beside them "
                                 "builds it), or train from random weights without --pretrained")
    head_name, head = head_of(model)
    old = mismatched.get(f"{head_name}.weight")
    was = (f"Linear {old[0][1]} -> {old[0][0]} in the weights" if old is not None and len(old[0]) == 2
           else "absent from the weights" if f"{head_name}.weight" in missing else "in the weights")
    start_at_zero(head)
    loaded = len(model.state_dict()) - len(missing) - len(mismatched)
    line = (f"pretrained: {loaded} tensors of {weights}; head {head_name} ({was}) replaced by a new Linear "
            f"{head.in_features} -> {head.out_features} for this data's classes, starting at zero")
    left = sorted({k.split(".")[0] for k in unexpected if not in_base(k)})
    if left:
        line += "; the weights' own head (" + ", ".join(f"{k}.*" for k in left) + ") left out"
    if new_pooler:
        line += f"; {new_pooler[0].rpartition('.')[0].rpartition('.')[0]} starts new (the weights have none)"
    return [line]
