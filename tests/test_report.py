"""Tests for the run report: smoothing, charts and the HTML page."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from trainwell.report.html import write_report
from trainwell.report.plots import accuracy_plot, loss_plot, lr_plot
from trainwell.engine.smoothing import MovingAverage, ema

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _run(n_epochs: int = 3, steps_per_epoch: int = 10) -> tuple[list[dict], list[dict]]:
    steps = [
        {"step": s, "loss": 2.3 / s, "lr": 0.001 * (1 - s / (n_epochs * steps_per_epoch + 1))}
        for s in range(1, n_epochs * steps_per_epoch + 1)
    ]
    epochs = [
        {
            "epoch": e,
            "step": e * steps_per_epoch,
            "train_loss": 0.4123 / e,
            "val_loss": 0.1234 / e,
            "val_accuracy": 0.9 + e / 100,
            "lr": 0.001,
            "seconds": 3.25 * e,
        }
        for e in range(1, n_epochs + 1)
    ]
    return epochs, steps


# --- smoothing -------------------------------------------------------------


def test_ema_first_value_equals_input() -> None:
    assert ema([5.0, 1.0, 1.0])[0] == 5.0
    assert MovingAverage(0.01).update(-3.5) == -3.5


def test_ema_constant_input_stays_constant() -> None:
    for alpha in (0.01, 0.1, 0.5, 1.0):
        assert ema([0.7] * 50, alpha) == [0.7] * 50


def test_ema_matches_debiased_formula() -> None:
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0]
    alpha, decay = 0.3, 0.7
    raw, expected = 0.0, []
    for n, v in enumerate(values, start=1):
        raw = decay * raw + alpha * v
        expected.append(raw / (1 - decay**n))
    assert ema(values, alpha) == pytest.approx(expected)


def test_ema_nan_and_inf_pass_through_without_poisoning() -> None:
    out = ema([1.0, math.nan, 1.0, math.inf, 1.0, -math.inf], 0.5)
    assert math.isnan(out[1])
    assert out[3] == math.inf and out[5] == -math.inf
    assert [out[0], out[2], out[4]] == [1.0, 1.0, 1.0]
    assert ema([1.0, math.nan, 3.0], 0.5)[2] == ema([1.0, 3.0], 0.5)[1]


def test_moving_average_value_and_validation() -> None:
    avg = MovingAverage(0.5)
    assert math.isnan(avg.value)
    avg.update(2.0)
    assert avg.update(math.nan) != avg.update(math.nan)  # NaN returned, state kept
    assert avg.value == 2.0
    assert avg.update(4.0) == pytest.approx(ema([2.0, 4.0], 0.5)[1])
    with pytest.raises(ValueError):
        MovingAverage(0.0)
    with pytest.raises(ValueError):
        ema([1.0], 1.5)


# --- plots -----------------------------------------------------------------


def test_plots_return_png_or_none() -> None:
    epochs, steps = _run()
    assert loss_plot(steps, epochs).startswith(PNG_MAGIC)
    assert (acc := accuracy_plot(epochs)) is not None and acc.startswith(PNG_MAGIC)
    assert (lr := lr_plot(steps)) is not None and lr.startswith(PNG_MAGIC)
    assert accuracy_plot([{"epoch": 1, "val_accuracy": None}]) is None
    assert lr_plot([{"step": 1, "loss": 1.0}]) is None
    assert loss_plot([], []).startswith(PNG_MAGIC)  # "no data yet" chart, no crash


def test_loss_plot_tolerates_nan_and_inf() -> None:
    steps = [{"step": 1, "loss": 1.0}, {"step": 2, "loss": math.nan}, {"step": 3, "loss": math.inf}]
    assert loss_plot(steps, []).startswith(PNG_MAGIC)


# --- html ------------------------------------------------------------------


def test_write_report_contents(tmp_path: Path) -> None:
    epochs, steps = _run()
    config = {"task": "mnist", "model": {"name": "mlp", "hidden": [128, 64]}, "optim": {"lr": 0.001}}
    summary = {
        "test_accuracy": 0.98765,
        "best_epoch": 3,
        "train_seconds": 12.345,
        "samples_per_second": 4321.5,
        "parameters": 1234567,
    }
    out = write_report(
        tmp_path / "sub" / "report.html",
        title="MNIST run ✓",
        epochs=epochs,
        steps=steps,
        config=config,
        summary=summary,
        extra_sections=[("Doctor", "<p>all good</p>")],
    )
    assert out == tmp_path / "sub" / "report.html"
    text = out.read_text(encoding="utf-8")

    assert '<meta charset="utf-8">' in text
    assert "<title>MNIST run ✓</title>" in text
    assert len(re.findall(r'src="data:image/png;base64,[A-Za-z0-9+/=]+"', text)) == 3
    assert "task: mnist\nmodel:\n  name: mlp\n  hidden:\n  - 128\n  - 64\n" in text
    for value in ("98.77%", "12.3 s", "4,321.5", "1,234,567", ">3<"):
        assert value in text
    for value in ("0.4123", "0.1234", "91.00%", "93.00%", "3.2", "9.8", ">30<", "0.001"):
        assert value in text
    assert "<h2>Doctor</h2>" in text and "<p>all good</p>" in text
    assert "http://" not in text and "https://" not in text
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # no temp file left behind


def test_write_report_escapes_text(tmp_path: Path) -> None:
    text = write_report(
        tmp_path / "r.html",
        title="<b>t</b>",
        epochs=[],
        steps=[],
        config={"note": "<script>alert(1)</script>"},
        summary={"comment": "a & b"},
        extra_sections=[("<i>h</i>", "<p>ok</p>")],
    ).read_text(encoding="utf-8")
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "<b>t</b>" not in text and "&lt;b&gt;t&lt;/b&gt;" in text
    assert "a &amp; b" in text and "&lt;i&gt;h&lt;/i&gt;" in text


@pytest.mark.parametrize("n_epochs", [0, 1])
def test_write_report_empty_steps_and_no_validation(tmp_path: Path, n_epochs: int) -> None:
    epochs = [
        {"epoch": e, "step": 63 * e, "train_loss": 0.5, "val_loss": None, "val_accuracy": None, "lr": 0.01}
        for e in range(1, n_epochs + 1)
    ]
    text = write_report(
        tmp_path / "r.html", title="empty", epochs=epochs, steps=[], config={}, summary={}
    ).read_text(encoding="utf-8")
    assert "no data yet" in text
    assert "data:image/png" not in text
    if n_epochs:
        assert ">63<" in text and "0.5" in text


def test_write_report_overwrites_existing(tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    target.write_text("old", encoding="utf-8")
    epochs, steps = _run(n_epochs=1)
    write_report(target, title="new", epochs=epochs, steps=steps, config={"a": 1}, summary={})
    assert "<title>new</title>" in target.read_text(encoding="utf-8")


# --- what the page shows ------------------------------------------------------


def test_worst_mistakes_are_the_most_confident_wrong_predictions() -> None:
    import numpy as np

    from trainwell.tasks.test_errors import confusion_matrix, worst_mistakes

    probs = np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.05, 0.05, 0.9], [0.6, 0.3, 0.1], [0.1, 0.8, 0.1],
                      [0.3, 0.3, 0.4]])
    labels = np.array([0, 0, 1, 1, 1, 0])  # wrong: 1 (p .7), 2 (p .9), 3 (p .6), 5 (p .4)
    worst = worst_mistakes(probs, labels, k=3)
    assert [(m.index, m.true, m.predicted) for m in worst] == [(2, 1, 2), (1, 0, 1), (3, 1, 0)]
    assert [m.probability for m in worst] == [0.9, 0.7, 0.6] and worst[0].true_probability == 0.05
    counts = confusion_matrix(labels, probs.argmax(1), 3)
    assert counts.tolist() == [[1, 1, 1], [1, 1, 1], [0, 0, 0]] and counts.sum() == len(labels)
    assert worst_mistakes(np.eye(3), np.arange(3)) == []


def test_legends_sit_outside_the_axes(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.report import plots
    from trainwell.verification.report import roc_plot

    figures = []
    real = plots.to_png
    monkeypatch.setattr(plots, "to_png", lambda fig: figures.append(fig) or real(fig))
    epochs, steps = _run()
    epochs = [{**row, "train_accuracy": 0.8, "train_ink": 0.3, "val_ink": 0.4} for row in epochs]
    plots.loss_plot(steps, epochs)
    plots.accuracy_plot(epochs)
    plots.task_loss_plot(epochs)
    plots.grad_norm_plot([{"step": 1, "a": 1.0, "b": 2.0}, {"step": 2, "a": 0.5, "b": 1.0}])
    import numpy as np

    roc_plot({"embedding": (np.array([0.0, 0.01, 1.0]), np.array([0.0, 0.9, 1.0]))})
    assert len(figures) == 5
    for fig in figures:
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        legend = ax.get_legend()
        assert legend is not None
        box, plot = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert box.x0 >= plot.x1, "the legend overlaps the plotting area"
        assert box.x1 <= fig.bbox.x1 + 1, "the legend is cut off"


def test_embedding_report_leads_with_its_own_figures(tmp_path: Path) -> None:
    epochs = [{"epoch": e, "step": 10 * e, "train_loss": 1.0 / e, "val_loss": 0.9 / e, "val_accuracy": None,
               "val_auc": 0.9 + e / 100, "val_tar_at_far1": 0.5 + e / 10, "lr": 0.01, "seconds": 1.0,
               "data_wait": 0.05} for e in (1, 2)]
    config = {"task": "embedding", "data": {"name": "mnist-5k"}, "embedding": {"dim": 64}, "text": {"max_len": 9}}
    summary = {"test_accuracy": None, "val_loss": 0.45, "best_epoch": 2, "test_auc": 0.987654, "threshold": 0.5}
    page = write_report(tmp_path / "r.html", title="emb", epochs=epochs, steps=[], config=config,
                        summary=summary).read_text(encoding="utf-8")
    heads = re.findall(r"<th>([^<]*)</th>", page[page.index("<h2>Epochs</h2>"):])
    assert heads == ["Epoch", "Step", "Training loss", "Validation loss", "Validation ROC AUC",
                     "Validation TAR at FAR 1 %", "Learning rate", "Seconds", "Data wait"]
    assert "Validation accuracy" not in page and "Test accuracy" not in page  # no rows of dashes
    rows = re.findall(r'<tr data-key="([^"]+)"', page)
    assert rows[0] == "test_auc" and ">0.9877<" in page and ">70.00%<" in page
    assert page.index('alt="validation scores per epoch"') < page.index('alt="loss curve"')
    config_part = page[page.index("<h2>Configuration</h2>"):]
    assert "embedding:\n  dim: 64" in config_part and "max_len" not in config_part


def test_an_epoch_chart_of_one_epoch_shows_whole_epochs_around_it() -> None:
    from trainwell.report.plots import epoch_axis, new_figure

    fig, ax = new_figure()
    ax.plot([1], [0.9], marker="o")
    epoch_axis(ax)
    assert ax.get_xlim() == (0.5, 1.5)  # not matplotlib's zoom into 0.945-1.055
    fig, ax = new_figure()
    ax.bar([1, 2, 3], [0.1, 0.2, 0.1], width=0.6)
    epoch_axis(ax)
    assert ax.get_xlim() == (0.5, 3.5)
