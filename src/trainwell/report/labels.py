"""Readable names for the keys of metrics.csv and summary.json (``val_tar_at_far1`` -> "Validation TAR at FAR 1 %")."""

from __future__ import annotations

# Whole keys whose words do not read well on their own.
_WHOLE = {
    "lr": "learning rate",
    "data_wait": "data wait",
    "peak_memory_mb": "peak memory (MB)",
    "train_seconds": "training time",
    "samples_per_second": "samples per second",
    "best_epoch": "best epoch",
    "world_size": "processes",
    "threshold": "verification threshold (cosine)",
}

# Leading words: the split a value was measured on, or the method it belongs to.
_PREFIXES = (("val_", "validation "), ("test_", "test "), ("train_", "training "), ("pixel_", "raw pixels: "))

# Metric names inside a key.
_METRICS = {
    "auc": "ROC AUC",
    "tar_at_far1": "TAR at FAR 1 %",
    "verify_accuracy": "verification accuracy",
    "loss": "loss",
    "accuracy": "accuracy",
}


def readable(key: str, *, capital: bool = True) -> str:
    """``key`` as words: the split spelled out, known metric names as people write them, underscores as spaces."""
    text = _words(key)
    return text[:1].upper() + text[1:] if capital else text


def _words(key: str) -> str:
    if key in _WHOLE:
        return _WHOLE[key]
    for prefix, words in _PREFIXES:
        if key.startswith(prefix):
            return words + _words(key.removeprefix(prefix))
    if key in _METRICS:
        return _METRICS[key]
    for name in sorted(_METRICS, key=len, reverse=True):  # accuracy_<head>: "accuracy (head)"
        if key.startswith(name + "_"):
            return f"{_METRICS[name]} ({key.removeprefix(name + '_').replace('_', ' ')})"
    return key.replace("_", " ")
