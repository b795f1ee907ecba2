"""Start from pretrained weights (``model.pretrained``): the best checkpoint of a trainwell run folder, or a local
state dict file (``.safetensors``, ``.pt``, ``.pth``), loaded into the freshly built model before training.

The classification head is the model's last ``nn.Linear`` (the built-in cnn's and mlp's, torchvision's ``fc``,
most models of one's own). It is replaced, that is, left as freshly initialized for this data's classes, unless
the source is a run folder trained on the same classes in the same order (then training simply goes on from its
weights). Every other weight must be there with its shape: keys that are missing, left over or of another shape
are an error that lists them. Reading is data only: ``weights_only=True`` for ``.pt`` / ``.pth``, safetensors for
``.safetensors``; nothing in the file is imported or executed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from trainwell._errors import TrainwellError
from trainwell.models.head import head_of, start_at_zero

if TYPE_CHECKING:
    from trainwell.config import Config

SUFFIXES = (".safetensors", ".pt", ".pth")


@dataclass
class Weights:
    """A state dict, where it came from (in words), and, from a run folder, the classes and the preprocessing it
    was trained with."""

    state: dict[str, torch.Tensor]
    described: str
    classes: list[Any] | None = None
    preprocess: dict[str, Any] | None = None


def read_weights(source: str | Path) -> Weights:
    """The weights in ``source`` (read once), with what a run folder also says about them."""
    path = Path(source).expanduser()
    if path.is_dir():
        from trainwell.engine.checkpoint import load_checkpoint
        from trainwell.engine.run_folder import check_run_dir

        best = check_run_dir(path) / "checkpoints" / "best.pt"
        ckpt = load_checkpoint(best)
        data = ckpt.get("data") or {}
        classes = data.get("class_names")
        return Weights(dict(ckpt["model"]), f"the run {path}", list(classes) if classes is not None else None,
                       data.get("preprocess"))
    if not path.is_file():
        raise TrainwellError(f"model.pretrained={str(source)!r}: no such file or run folder.",
                             fix="give a trainwell run folder, or a state dict file (" + ", ".join(SUFFIXES) + ")")
    if path.suffix not in SUFFIXES:
        raise TrainwellError(f"model.pretrained={str(source)!r}: a {path.suffix or 'suffix-less'} file is not a "
                             "state dict trainwell reads.",
                             fix="give a .safetensors, .pt or .pth file of weights, or a trainwell run folder")
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            state: Any = load_file(str(path))
        else:
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - damaged or foreign files raise several types
        raise TrainwellError(f"model.pretrained={str(source)!r} cannot be read ({type(e).__name__}: "
                             f"{str(e).splitlines()[0][:200]}).",
                             fix="give a state dict saved with torch.save(model.state_dict(), PATH) or safetensors") \
            from None
    if isinstance(state, dict) and isinstance(state.get("model"), dict) and "format" in state:
        state = state["model"]  # a trainwell checkpoint file itself
    elif isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]  # the common {"state_dict": ...} wrapping
    if not isinstance(state, dict) or not state or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise TrainwellError(f"model.pretrained={str(source)!r} does not hold a state dict (names to tensors).",
                             fix="save the weights with torch.save(model.state_dict(), PATH)")
    return Weights(dict(state), str(path))


def load_pretrained(model: nn.Module, source: str | Path | Weights, classes: list[Any] | None = None) -> str:
    """Load ``source``'s weights into ``model``; returns the line that says what was done.

    The head is replaced unless the classes are the same: at zero for classes, or, for a model whose
    ``head_starts_at_zero`` is False (an embedding layer), from its random initialization. A model with a
    ``pretrained_state(state)`` method (the embedding models) first takes the weights under its own names."""
    from trainwell.engine.checkpoint import weights_mismatch

    weights = source if isinstance(source, Weights) else read_weights(source)
    adopt = getattr(model, "pretrained_state", None)
    state = adopt(weights.state) if adopt is not None else weights.state
    head_name, head = head_of(model)
    own_head = {f"{head_name}.{k}" for k, _ in head.named_parameters()}
    if adopt is not None:  # an embedding: the head maps to the embedding, not to classes; kept when it fits
        keep_head = all(k in state and state[k].shape == v.shape for k, v in model.state_dict().items()
                        if k in own_head)
    else:
        keep_head = weights.classes is not None and classes is not None and list(weights.classes) == list(classes)
    head_keys = set() if keep_head else own_head
    body = {k: tuple(v.shape) for k, v in model.state_dict().items() if k not in head_keys}
    differ = weights_mismatch(body, {k: tuple(v.shape) for k, v in state.items() if k not in head_keys})
    if differ:
        raise TrainwellError(f"The weights of {weights.described} do not fit this model ({differ}).",
                             fix="build the architecture the weights come from: the same model name and options "
                                 "(model.channels, model.hidden, ...) and the same input size (data.image_size, "
                                 "data.channels) as the pretrained run or file")
    model.load_state_dict({k: v for k, v in state.items() if k in body}, strict=False)
    left = len(weights.state) - len(state) if adopt is not None else 0
    unused = f" ({left} tensors of its classifier not used)" if left else ""
    if keep_head:
        return f"pretrained: {len(body)} tensors from {weights.described}{unused}, head {head_name} kept " \
               f"({'the same embedding size' if adopt is not None else 'the same classes'})"
    at_zero = getattr(model, "head_starts_at_zero", True)
    if at_zero:
        start_at_zero(head)
    old = state.get(f"{head_name}.weight")
    was = f"Linear {old.shape[1]} -> {old.shape[0]}" if old is not None and old.ndim == 2 else "absent"
    return (f"pretrained: {len(body)} tensors from {weights.described}{unused}; head {head_name} ({was}) replaced "
            f"by {_new_head(head, at_zero)}")


def _new_head(head: nn.Linear, at_zero: bool) -> str:
    if at_zero:
        return f"a new Linear {head.in_features} -> {head.out_features} for this data's classes, starting at zero"
    return (f"a new embedding layer Linear {head.in_features} -> {head.out_features}, randomly initialized (at zero "
            "every image would get the same embedding)")


def apply_pretrained(model: nn.Module, bundle: Any, source: str | Path | bool, *, weights: bool = True,
                     name: str = "") -> list[str]:
    """``model.pretrained`` for a run: its weights into ``model`` (not when ``weights`` is False: a resumed run
    has its own; ``True``: the library's published weights, which the model was built with), and the input
    normalization the weights were learned with instead of this data's own (a run folder's; the library's for
    published weights); returns what was done, in words. An ``hf:`` model was built with its published or
    ``save_pretrained`` weights already (``models/hf.py``), which it says."""
    from trainwell._library_names import is_hf_model
    from trainwell.models.hf import is_hf_folder

    if is_hf_model(name) and (source is True or is_hf_folder(source)):
        return list(getattr(model, "notes", [])) if weights else []
    if source is True:
        from trainwell.models.library import published_preprocessing

        head, layer = head_of(model)
        said = [f"pretrained: the published weights of {name}; head {head} replaced by "
                f"{_new_head(layer, getattr(model, 'head_starts_at_zero', True))}"]
        published = published_preprocessing(name)
        stats = None if published is None else {"kind": "image", "mean": published.mean, "std": published.std}
        return said + _normalize_as(bundle.preprocess, stats, f"{name}'s weights expect", f"{name}'s weights")
    path = Path(source).expanduser()
    if not weights and not path.is_dir():
        return []  # a resumed run: a file carries no preprocessing to follow
    read = read_weights(path)
    said = [load_pretrained(model, read, bundle.class_names)] if weights else []
    return said + (_normalize_as(bundle.preprocess, read.preprocess, "the pretrained run's were", "the pretrained run")
                   if path.is_dir() and bundle.preprocess.kind != "text" else [])  # token ids are not normalized


def _normalize_as(pre: Any, theirs: dict[str, Any] | None, as_: str, source: str) -> list[str]:
    """This data normalized with ``theirs`` (mean and std), the statistics the weights learned with; said either
    way (``as_`` and ``source`` word it). Grayscale data takes the average of RGB statistics (torchvision models repeat it to three channels)."""
    mean, std = list((theirs or {}).get("mean") or []), list((theirs or {}).get("std") or [])
    if len(pre.mean) == 1 and len(mean) == 3:
        mean, std = [sum(mean) / 3], [sum(std) / 3]
    if theirs is None or theirs.get("kind") != pre.kind or not pre.mean or len(mean) != len(pre.mean):
        return [f"inputs keep this data's own normalization: {source} gives no mean and std for "
                f"{len(pre.mean)}-channel {pre.kind} inputs"]
    pre.mean, pre.std = [float(v) for v in mean], [float(v) for v in std]
    return [f"inputs normalized as {as_} (mean " + ", ".join(f"{v:.3f}" for v in pre.mean) + ", std "
            + ", ".join(f"{v:.3f}" for v in pre.std) + ")"]


def folder_geometry(config: Config) -> str | None:
    """An image folder's geometry, set in the run's config (so config.yaml records it). With the published weights
    of a library model, what of ``data.image_size``, ``data.resize_size`` and ``data.interpolation`` is not given
    comes from the weights' evaluation transforms: the shorter side resized, the centre square cropped, the
    weights' filter (an ``image_size`` of one's own keeps the weights' ratio of resize to crop). Returns what was
    taken from the weights, in words (None: nothing). Other image folders resize with ``bilinear`` unless told."""
    data = config.data
    if data.name != "image-folder":
        return None
    from trainwell._library_names import is_library_model

    if config.model.pretrained is not True or not is_library_model(config.model.name):
        data.interpolation = data.interpolation or "bilinear"
        return None
    from trainwell.models.library import published_preprocessing

    published = published_preprocessing(config.model.name)
    taken = [key for key in ("image_size", "resize_size", "interpolation") if key not in data.model_fields_set
             or (key != "resize_size" and getattr(data, key) is None)]
    if published is None:
        data.interpolation = data.interpolation or "bilinear"
        return (f"images keep their own size: {config.model.name} says none for its weights (data.image_size sets "
                "one)") if "image_size" in taken else None
    if not taken:
        return None
    if "image_size" in taken:
        if data.resize_size is not None and data.resize_size < published.crop_size:
            raise TrainwellError(f"data.resize_size={data.resize_size} is smaller than the {published.crop_size} "
                                 f"pixels {config.model.name}'s weights crop to (data.image_size).",
                                 fix=f"give data.resize_size {published.crop_size} or more, or a smaller "
                                     "data.image_size too")
        data.image_size = published.crop_size
    if "resize_size" in taken:
        data.resize_size = max(data.image_size or 0, published.resize_size * (data.image_size or 0)
                               // published.crop_size)
    if "interpolation" in taken:
        data.interpolation = published.interpolation  # type: ignore[assignment]
    side = data.image_size
    crop = (f"; {config.model.name}'s crop_mode {published.crop_mode!r} is done as a centre crop"
            if published.crop_mode != "center" else "")
    return (f"images: shorter side resized to {data.resize_size} ({data.interpolation}), centre {side} x {side} "
            f"cropped, as {config.model.name}'s weights were evaluated{crop} (data.image_size, data.resize_size and "
            "data.interpolation set others)")
