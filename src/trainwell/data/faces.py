"""Face datasets for the embedding task, through scikit-learn's fetchers (downloaded once, then cached).

* ``olivetti-faces``: 400 grayscale 64x64 faces, 40 people with 10 images each.
* ``lfw``: Labeled Faces in the Wild, people with at least 20 images (62 people, about 3,000
  grayscale 62x47 faces at scikit-learn's default half resolution).

Both need the network the first time; offline, with nothing cached, the error names the cache
folder and the offline alternative (``--data mnist-5k``, digits standing in for identities).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from trainwell._errors import DataError
from trainwell.config import DataConfig
from trainwell.data.bundle import DataBundle
from trainwell.data.images import in_memory_bundle
from trainwell.data.registry import LFW_MIN_FACES


def _cache(cfg: DataConfig) -> Path:
    return Path(cfg.root).expanduser() if cfg.root else Path.home() / ".cache" / "trainwell" / "datasets"


def fetch_faces(fetch: Callable[..., Any], label: str, cfg: DataConfig, **kwargs: Any) -> Any:
    """Call a scikit-learn fetcher, turning a missing download (offline, or download disabled) into a DataError."""
    root = _cache(cfg)
    try:
        return fetch(data_home=str(root), download_if_missing=cfg.download, **kwargs)
    except Exception as e:  # noqa: BLE001 - URLError, OSError "Data not found", HTTP and checksum errors
        first = (str(e).splitlines() or [type(e).__name__])[0]
        how = ("downloading is switched off (data.download=false)" if not cfg.download
               else "the download failed (is this machine offline?)")
        raise DataError(f"Could not load {label} from {root}: {how}: {first} ({type(e).__name__}).",
                        fix="go online once so scikit-learn can download it into that folder (or set data.root to "
                            "where it is cached), or train offline on the built-in digits, which stand in for "
                            "identities: --data mnist-5k --task embedding") from None


def _bundle(images: np.ndarray, target: np.ndarray, names: list[str], cfg: DataConfig, source: str) -> DataBundle:
    x = np.asarray(images, dtype=np.float32)
    if x.max() <= 1.0:  # scikit-learn gives floats in [0, 1]; keep raw uint8 pixels like every image set
        x = x * 255.0
    x = np.clip(np.rint(x), 0, 255).astype(np.uint8)[:, None]  # (N, 1, H, W)
    labels = np.array([names[int(t)] for t in target], dtype=object)
    return in_memory_bundle(x, labels, cfg, scale=255.0, source=source)


def olivetti_faces(cfg: DataConfig) -> DataBundle:
    from sklearn.datasets import fetch_olivetti_faces

    d = fetch_faces(fetch_olivetti_faces, "the Olivetti faces", cfg)
    names = [f"person{i:02d}" for i in range(int(d.target.max()) + 1)]
    return _bundle(d.images, d.target, names, cfg, source="scikit-learn fetch_olivetti_faces")


def lfw(cfg: DataConfig) -> DataBundle:
    from sklearn.datasets import fetch_lfw_people

    d = fetch_faces(fetch_lfw_people, "LFW (Labeled Faces in the Wild)", cfg, min_faces_per_person=LFW_MIN_FACES)
    names = [str(n).replace(" ", "_") for n in d.target_names]
    return _bundle(d.images, d.target, names, cfg, source=f"scikit-learn fetch_lfw_people(min_faces_per_person={LFW_MIN_FACES})")
