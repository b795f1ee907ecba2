"""Small PNG charts for the run report.

Each function builds its own ``matplotlib.figure.Figure`` rendered by the Agg
canvas (no pyplot global state), so charts can be drawn from any thread.
matplotlib is imported inside the functions to keep importing this module cheap.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from trainwell.engine.smoothing import ema

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# 9.6 x 3.4 inches at 100 dpi: 960 pixels, the report page's width (report.html shows each chart at 100 %).
FIGSIZE: tuple[float, float] = (9.6, 3.4)
DPI: int = 100
SMOOTHING_ALPHA: float = 0.1

_TRAIN_COLOR = "#1f77b4"
_VAL_COLOR = "#d62728"
_LR_COLOR = "#2ca02c"
_WAIT_COLOR = "#9467bd"


def as_float(value: Any) -> float | None:
    """``value`` as a float, or None when it is missing, boolean or not numeric."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _series(rows: Iterable[Mapping[str, Any]], x_key: str, y_key: str) -> tuple[list[float], list[float]]:
    """(x, y) pairs from rows that have a numeric x and y; non-finite y becomes NaN (a gap)."""
    xs: list[float] = []
    ys: list[float] = []
    for row in rows:
        x = as_float(row.get(x_key))
        y = as_float(row.get(y_key))
        if x is None or y is None:
            continue
        xs.append(x)
        ys.append(y if math.isfinite(y) else math.nan)
    return xs, ys


def _has_finite(values: Iterable[float]) -> bool:
    return any(math.isfinite(v) for v in values)


def new_figure(figsize: tuple[float, float] = FIGSIZE) -> tuple[Figure, Axes]:
    """A figure on its own Agg canvas (no pyplot state) with one gridded set of axes; constrained layout makes room
    for a legend outside the axes (:func:`legend_outside`)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.grid(True, alpha=0.3)
    return fig, ax


def epoch_axis(ax: Axes) -> None:
    """Whole epochs on the x axis, half an epoch of margin each side (one epoch is a point in the middle, not a
    zoom into 0.95-1.05)."""
    from matplotlib.ticker import MaxNLocator

    lines = [x for line in ax.get_lines() for x in line.get_xdata()]
    bars = [patch.get_x() + patch.get_width() / 2 for patch in ax.patches]
    xs = [float(x) for x in lines + bars if math.isfinite(float(x))]
    if xs:
        ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def legend_outside(ax: Axes, **options: Any) -> None:
    """The legend to the right of the axes, where it never covers a curve."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small", **options)


def to_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, without the metadata that would carry a URL."""
    buf = io.BytesIO()
    # Drop the default "Software" metadata: it carries a URL and adds bytes.
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def loss_plot(steps: list[dict], epochs: list[dict]) -> bytes:
    """Training loss per optimizer step (raw and smoothed) with per-epoch val_loss.

    Validation points sit at the step where each epoch ended (``epochs[i]["step"]``).
    With nothing to draw, the chart says "no data yet".
    """
    fig, ax = new_figure()
    step_x, step_loss = _series(steps, "step", "loss")
    val_x, val_loss = _series(epochs, "step", "val_loss")
    drew = False

    if _has_finite(step_loss):
        ax.plot(step_x, step_loss, color=_TRAIN_COLOR, alpha=0.25, linewidth=0.8, label="training loss")
        if len(step_loss) > 1:
            ax.plot(
                step_x,
                ema(step_loss, SMOOTHING_ALPHA),
                color=_TRAIN_COLOR,
                linewidth=1.6,
                label="training loss (smoothed)",
            )
        drew = True
    if _has_finite(val_loss):
        ax.plot(val_x, val_loss, color=_VAL_COLOR, marker="o", markersize=4, linewidth=1.4, label="validation loss")
        drew = True

    return _loss_png(fig, ax, drew, "optimizer step")


def _loss_png(fig: Figure, ax: Axes, drew: bool, xlabel: str) -> bytes:
    """Finish a loss chart: the legend, or "no data yet" when nothing was drawn."""
    if drew:
        legend_outside(ax)
    else:
        ax.text(0.5, 0.5, "no data yet", ha="center", va="center", transform=ax.transAxes, color="gray")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("loss")
    ax.set_title("Loss")
    return to_png(fig)


def accuracy_plot(epochs: list[dict]) -> bytes | None:
    """val_accuracy (and train_accuracy if present) per epoch, in percent; None without any."""
    val_x, val_acc = _series(epochs, "epoch", "val_accuracy")
    train_x, train_acc = _series(epochs, "epoch", "train_accuracy")
    heads = sorted({k for row in epochs for k in row if k.startswith("val_accuracy_")})  # multi-head models
    head_series = {k: _series(epochs, "epoch", k) for k in heads}
    if not (_has_finite(val_acc) or _has_finite(train_acc) or any(_has_finite(y) for _, y in head_series.values())):
        return None

    fig, ax = new_figure()
    if _has_finite(train_acc):
        ax.plot(train_x, [v * 100 for v in train_acc], color=_TRAIN_COLOR, marker="o", markersize=4,
                label="training accuracy (the epoch's batches)")
    if _has_finite(val_acc):
        ax.plot(val_x, [v * 100 for v in val_acc], color=_VAL_COLOR, marker="o", markersize=4,
                label="validation accuracy")
    cmap = _colormap(len(heads))
    for i, (key, (x, y)) in enumerate(head_series.items()):
        if _has_finite(y):
            ax.plot(x, [v * 100 for v in y], color=cmap(i), marker="s", markersize=4,
                    label=f"validation accuracy ({key.removeprefix('val_accuracy_')})")
    return _accuracy_png(fig, ax, "Accuracy: training and validation" if _has_finite(train_acc) else "Accuracy")


def _accuracy_png(fig: Figure, ax: Axes, title: str) -> bytes:
    """Finish an accuracy-per-epoch chart (values drawn in percent)."""
    from matplotlib.ticker import PercentFormatter

    ax.yaxis.set_major_formatter(PercentFormatter(100))
    epoch_axis(ax)
    legend_outside(ax)
    ax.set_xlabel("epoch")
    ax.set_ylabel("accuracy")
    ax.set_title(title)
    return to_png(fig)


def loss_parts(epochs: list[dict]) -> list[str]:
    """Names of the loss parts in the history (``train_<part>`` columns other than loss, accuracy
    and learned task weights), in order of first appearance."""
    names: dict[str, None] = {}
    for row in epochs:
        for key in row:
            name = key.removeprefix("train_")
            if key.startswith("train_") and name not in ("loss", "accuracy") and not name.startswith(
                    ("weight_", "accuracy")):
                names[name] = None
    return list(names)


def task_loss_plot(epochs: list[dict]) -> bytes | None:
    """Each loss part per epoch, train (solid) and val (dashed), one colour per task; None without parts.

    The y axis is logarithmic when every value is positive, since tasks often differ in scale.
    """
    names = loss_parts(epochs)
    if not names:
        return None
    fig, ax = new_figure()
    cmap = _colormap(len(names))
    values: list[float] = []
    for i, name in enumerate(names):
        for split, style in (("train", "-"), ("val", "--")):
            x, y = _series(epochs, "epoch", f"{split}_{name}")
            if _has_finite(y):
                ax.plot(x, y, color=cmap(i), linestyle=style, marker="o", markersize=3, label=f"{split} {name}")
                values += [v for v in y if math.isfinite(v)]
    if values and min(values) > 0:
        ax.set_yscale("log")
    epoch_axis(ax)
    legend_outside(ax)
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss (unweighted)")
    ax.set_title("Loss per task")
    return to_png(fig)


def task_weight_plot(epochs: list[dict]) -> bytes | None:
    """Learned task weights (``train_weight_<task>``, the epoch's mean) per epoch; None without any."""
    keys = sorted({k for row in epochs for k in row if k.startswith("train_weight_")})
    series = {k.removeprefix("train_weight_"): _series(epochs, "epoch", k) for k in keys}
    if not any(_has_finite(y) for _, y in series.values()):
        return None
    fig, ax = new_figure()
    cmap = _colormap(len(series))
    for i, (name, (x, y)) in enumerate(series.items()):
        ax.plot(x, y, color=cmap(i), marker="o", markersize=3, label=name)
    epoch_axis(ax)
    legend_outside(ax)
    ax.set_xlabel("epoch")
    ax.set_ylabel("weight")
    ax.set_title("Learned task weights")
    return to_png(fig)


def data_wait_plot(epochs: list[dict]) -> bytes | None:
    """Each epoch's share of training time spent waiting for the data loader, in percent; None without any."""
    x, wait = _series(epochs, "epoch", "data_wait")
    if not _has_finite(wait):
        return None
    from matplotlib.ticker import PercentFormatter

    fig, ax = new_figure()
    ax.bar(x, [v * 100 for v in wait], color=_WAIT_COLOR, width=0.6)
    ax.yaxis.set_major_formatter(PercentFormatter(100))
    epoch_axis(ax)
    ax.set_ylim(0, max(10.0, max(v * 100 for v in wait if math.isfinite(v)) * 1.15))
    ax.set_xlabel("epoch")
    ax.set_ylabel("share of training time")
    ax.set_title("Data wait: time spent waiting for the next batch")
    return to_png(fig)


def score_plot(epochs: list[dict], keys: list[str], labels: list[str], title: str) -> bytes | None:
    """Scores between 0 and 1 (``keys`` of the epoch rows, e.g. ``val_auc``) per epoch; None without any."""
    series = [(label, _series(epochs, "epoch", key)) for key, label in zip(keys, labels)]
    if not any(_has_finite(y) for _, (_, y) in series):
        return None

    fig, ax = new_figure()
    cmap = _colormap(len(series))
    for i, (label, (x, y)) in enumerate(series):
        if _has_finite(y):
            ax.plot(x, y, color=cmap(i), marker="o", markersize=4, label=label)
    epoch_axis(ax)
    legend_outside(ax)
    ax.set_xlabel("epoch")
    ax.set_title(title)
    return to_png(fig)


def lr_plot(steps: list[dict]) -> bytes | None:
    """Learning rate per optimizer step; None when no step has one."""
    x, lr = _series(steps, "step", "lr")
    if not _has_finite(lr):
        return None
    fig, ax = new_figure()
    ax.plot(x, lr, color=_LR_COLOR, linewidth=1.4)
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("learning rate")
    ax.set_title("Learning rate")
    return to_png(fig)


def grad_norm_plot(rows: list[dict]) -> bytes | None:
    """Per-layer gradient norm over optimizer steps (log scale); ``rows`` are ``{"step": s, layer: norm}``."""
    layers = [k for k in (rows[0] if rows else {}) if k != "step"]
    if not layers:
        return None
    fig, ax = new_figure()
    cmap = _colormap(len(layers))
    for i, layer in enumerate(layers):
        x, y = _series(rows, "step", layer)
        y = [v if v > 0 else math.nan for v in y]  # log scale: a zero norm is a gap
        if _has_finite(y):
            ax.plot(x, y, color=cmap(i), linewidth=1.2, label=layer)
    ax.set_yscale("log")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("gradient norm")
    ax.set_title("Gradient norm per layer (first layer darkest)")
    if len(layers) <= 12:
        legend_outside(ax, ncol=1 if len(layers) <= 6 else 2)
    return to_png(fig)


def _colormap(n: int) -> Any:
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    return lambda i: cmap(i / max(1, n - 1) * 0.9)


# One colour per run in comparison charts (run A blue, run B orange, then more).
RUN_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")


def _in_epochs(steps: list[dict], epochs: list[dict]) -> list[dict]:
    """Step rows with an ``epoch`` position (step / steps per epoch): runs of other batch sizes share the x axis."""
    per_epoch = as_float(epochs[0].get("step")) if epochs else None
    if not per_epoch:
        return []
    return [{**row, "epoch": row["step"] / per_epoch} for row in steps if as_float(row.get("step")) is not None]


def compare_loss_plot(runs: list[tuple[str, list[dict], list[dict]]]) -> bytes:
    """Each run's ``(label, steps, epochs)`` on one set of axes over epochs: training loss smoothed (solid)
    and val loss per epoch (dashed, markers), one colour per run."""
    fig, ax = new_figure()
    drew = False
    for i, (label, steps, epochs) in enumerate(runs):
        color = RUN_COLORS[i % len(RUN_COLORS)]
        x, y = _series(_in_epochs(steps, epochs), "epoch", "loss")
        if _has_finite(y):
            ax.plot(x, ema(y, SMOOTHING_ALPHA) if len(y) > 1 else y, color=color, linewidth=1.4,
                    label=f"{label}: train loss (smoothed)")
            drew = True
        x, y = _series(epochs, "epoch", "val_loss")
        if _has_finite(y):
            ax.plot(x, y, color=color, linestyle="--", marker="o", markersize=4, label=f"{label}: val loss")
            drew = True
    return _loss_png(fig, ax, drew, "epoch")


def compare_accuracy_plot(runs: list[tuple[str, list[dict]]]) -> bytes | None:
    """Each run's ``(label, epochs)`` val accuracy per epoch (percent) on one set of axes; None without any."""
    series = [(label, _series(epochs, "epoch", "val_accuracy")) for label, epochs in runs]
    if not any(_has_finite(y) for _, (_, y) in series):
        return None
    fig, ax = new_figure()
    for i, (label, (x, y)) in enumerate(series):
        if _has_finite(y):
            ax.plot(x, [v * 100 for v in y], color=RUN_COLORS[i % len(RUN_COLORS)], marker="o", markersize=4,
                    label=f"{label}: val accuracy")
    return _accuracy_png(fig, ax, "Validation accuracy")


def lr_find_plot(lrs: list[float], losses: list[float], smoothed: list[float], *, suggestion: float | None,
                 diverged_at: float | None) -> bytes:
    """The learning-rate range test: loss (raw and smoothed) against the learning rate on a log axis, with the
    suggestion and the rate where the loss diverged marked."""
    fig, ax = new_figure()
    raw = [v if math.isfinite(v) else math.nan for v in losses]
    kept = [(x, y) for x, y in zip(lrs, smoothed) if y is not None and math.isfinite(y)]
    if _has_finite(raw):
        ax.plot(lrs[:len(raw)], raw, color=_TRAIN_COLOR, alpha=0.25, linewidth=0.8, label="loss")
    if kept:
        ax.plot([x for x, _ in kept], [y for _, y in kept], color=_TRAIN_COLOR, linewidth=1.6,
                label="loss (smoothed)")
        top = max(y for _, y in kept)
        bottom = min(y for _, y in kept)
        ax.set_ylim(bottom - 0.1 * (top - bottom + 1e-12), top + 0.5 * (top - bottom + 1e-12))  # the tail off-chart
    if suggestion is not None:
        ax.axvline(suggestion, color=_LR_COLOR, linewidth=1.4, label=f"suggestion {suggestion:.2g}")
    if diverged_at is not None:
        ax.axvline(diverged_at, color=_VAL_COLOR, linestyle="--", linewidth=1.0, label=f"diverged at {diverged_at:.2g}")
    ax.set_xscale("log")
    ax.set_xlabel("learning rate")
    ax.set_ylabel("loss")
    ax.set_title("Learning-rate range test")
    if kept or _has_finite(raw):
        legend_outside(ax)
    return to_png(fig)
