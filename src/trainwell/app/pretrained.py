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

from pathlib import Path
from typing import Any

import torch
from torch import nn

from trainwell._errors import TrainwellError
from trainwell.models.head import head_of

SUFFIXES = (".safetensors", ".pt", ".pth")


def read_weights(source: str | Path) -> tuple[dict[str, torch.Tensor], list[Any] | None, str]:
    """The weights in ``source``, the classes they were trained on when known (a run folder), and the source
    described in words."""
    path = Path(source).expanduser()
    if path.is_dir():
        from trainwell.engine.checkpoint import load_checkpoint
        from trainwell.engine.run_folder import check_run_dir

        best = check_run_dir(path) / "checkpoints" / "best.pt"
        ckpt = load_checkpoint(best)
        classes = (ckpt.get("data") or {}).get("class_names")
        return dict(ckpt["model"]), list(classes) if classes is not None else None, f"the run {path}"
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
    return dict(state), None, str(path)


def load_pretrained(model: nn.Module, source: str | Path, classes: list[Any] | None = None) -> str:
    """Load ``source``'s weights into ``model`` (head replaced unless the classes are the same); returns the line
    that says what was done."""
    weights, their_classes, described = read_weights(source)
    head_name, head = head_of(model)
    keep_head = their_classes is not None and classes is not None and list(their_classes) == list(classes)
    own = model.state_dict()
    head_keys = {f"{head_name}.{k}" for k, _ in head.named_parameters()}
    body = [k for k in own if keep_head or k not in head_keys]
    missing = [k for k in body if k not in weights]
    extra = [k for k in weights if k not in own]
    shapes = [f"{k} {tuple(weights[k].shape)} (this model: {tuple(own[k].shape)})" for k in body
              if k in weights and weights[k].shape != own[k].shape]
    if missing or extra or shapes:
        parts = [f"{label}: {', '.join(keys[:8])}{' ...' if len(keys) > 8 else ''}" for label, keys in
                 (("missing", missing), ("not in this model", extra), ("other shapes", shapes)) if keys]
        raise TrainwellError(f"The weights of {described} do not fit this model ({'; '.join(parts)}).",
                             fix="build the architecture the weights come from: the same model name and options "
                                 "(model.channels, model.hidden, ...) and the same input size (data.image_size, "
                                 "data.channels) as the pretrained run or file")
    model.load_state_dict({k: v for k, v in weights.items() if k in body}, strict=False)
    loaded = len(body)
    if not keep_head:  # a new head starts at zero: every class at the same score, so its first gradients are the
        with torch.no_grad():  # data's, not a random head's noise pushed back into the pretrained features
            for value in head.parameters():
                value.zero_()
    if keep_head:
        return f"pretrained: {loaded} tensors from {described}, head {head_name} kept (the same classes)"
    old = weights.get(f"{head_name}.weight")
    was = f"Linear {old.shape[1]} -> {old.shape[0]}" if old is not None and old.ndim == 2 else "absent"
    return (f"pretrained: {loaded} tensors from {described}; head {head_name} ({was}) replaced by a new "
            f"Linear {head.in_features} -> {head.out_features} for this data's classes, starting at zero")


def apply_pretrained(model: nn.Module, bundle: Any, source: str | Path | bool, *, weights: bool = True,
                     name: str = "") -> list[str]:
    """``model.pretrained`` for a run: its weights into ``model`` (not when ``weights`` is False: a resumed run
    has its own; ``True``: the library's published weights, which the model was built with), and the input
    normalization the weights were learned with instead of this data's own (a run folder's; the library's for
    published weights); returns what was done, in words."""
    if source is True:
        return _published(model, bundle, name)
    said = [load_pretrained(model, source, bundle.class_names)] if weights else []
    path = Path(source).expanduser()
    if path.is_dir():
        from trainwell.engine.checkpoint import load_checkpoint
        from trainwell.engine.run_folder import check_run_dir

        theirs = (load_checkpoint(check_run_dir(path) / "checkpoints" / "best.pt").get("data") or {}).get("preprocess")
        pre = bundle.preprocess
        if theirs and theirs.get("kind") == pre.kind and len(theirs.get("mean") or []) == len(pre.mean) > 0:
            pre.mean, pre.std = [float(v) for v in theirs["mean"]], [float(v) for v in theirs["std"]]
            said.append("inputs normalized as the pretrained run's were (mean "
                        + ", ".join(f"{v:.3f}" for v in pre.mean) + ", std "
                        + ", ".join(f"{v:.3f}" for v in pre.std) + ")")
    return said


def _published(model: nn.Module, bundle: Any, name: str) -> list[str]:
    head, layer = head_of(model)
    said = [f"pretrained: the published weights of {name}; head {head} replaced by a new Linear "
            f"{layer.in_features} -> {layer.out_features} for this data's classes, starting at zero"]
    from trainwell.models.library import library_statistics

    stats = library_statistics(name)
    pre = bundle.preprocess
    if stats is not None and pre.kind == "image" and len(pre.mean) in (1, 3):
        mean, std = stats
        if len(pre.mean) == 1:  # grayscale repeated to RGB: the channels' average
            mean, std = [sum(mean) / 3], [sum(std) / 3]
        pre.mean, pre.std = [float(v) for v in mean], [float(v) for v in std]
        said.append(f"inputs normalized as {name}'s weights expect (mean "
                    + ", ".join(f"{v:.3f}" for v in pre.mean) + ", std " + ", ".join(f"{v:.3f}" for v in pre.std)
                    + ")")
    return said
