"""report.html in a real browser (headless Chromium): it loads without script errors, every chart is drawn at a
size a reader sees, and the summary table shows the run's own figures. Skipped where Chromium is not installed
(`.ci/run` installs it where it can)."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from browser import chromium, open_page, uncaught_errors
from conftest import train_once

needs_chromium = pytest.mark.skipif(chromium() is None, reason="chromium is not on PATH (apt-get install chromium)")


@needs_chromium
def test_the_checker_reports_a_broken_image_and_a_script_error(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>bad</title></head><body>'
                    '<img src="data:image/png;base64,AAAA" alt="corrupt"><img src="missing.png" alt="missing">'
                    '<script>console.error("logged"); notDefined();</script></body></html>', encoding="utf-8")
    view = open_page(page)
    assert [i.alt for i in view.broken_images()] == ["corrupt", "missing"]
    assert any("logged" in e for e in view.errors)
    assert any("notDefined" in e for e in view.errors)
    assert not list(tmp_path.glob(".probe-*"))  # the probed copy is removed


@needs_chromium
def test_the_checker_passes_a_good_page(tmp_path: Path) -> None:
    from trainwell.report.html import png_img
    from trainwell.report.plots import lr_plot

    png = lr_plot([{"step": 1, "lr": 0.1}, {"step": 2, "lr": 0.05}])
    assert png is not None
    page = tmp_path / "good.html"
    page.write_text(f"<!DOCTYPE html><html><head><title>ok</title></head><body>{png_img(png, 'lr')}</body></html>",
                    encoding="utf-8")
    view = open_page(page)
    assert view.errors == [] and len(view.images) == 1 and view.broken_images() == []


def test_uncaught_errors_are_read_from_chromiums_console_lines() -> None:
    stderr = ('[1:1:1201/150849.094654:INFO:CONSOLE:4] "just a log line", source: file:///p.html (4)\n'
              '[1:1:1201/150849.094872:INFO:CONSOLE:4] "Uncaught ReferenceError: f is not defined", source: x (4)\n'
              '[2:2:0101/000000.000000:INFO:CONSOLE(9)] "Uncaught TypeError: boom", source: y (9)\n')
    assert uncaught_errors(stderr) == ["console: Uncaught ReferenceError: f is not defined",
                                       "console: Uncaught TypeError: boom"]


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_once(tmp_path_factory, ["--data", "digits", "--epochs", "2", "--set", "model.channels=[8]",
                                         "--set", "model.hidden=[16]", "--no-progress"])


def _summary_rows(dom: str) -> dict[str, str]:
    table = re.search(r'<table class="summary">(.*?)</table>', dom, flags=re.DOTALL)
    assert table is not None, "no summary table"
    return {unescape(k): unescape(v) for k, v in
            re.findall(r'<tr data-key="([^"]+)"><th>[^<]*</th><td>([^<]*)</td></tr>', table.group(1))}


@pytest.mark.slow
@needs_chromium
def test_report_in_chromium(digits_run: Path) -> None:
    from trainwell.report.html import format_value

    view = open_page(digits_run / "report.html")
    assert view.errors == []
    assert view.images and view.broken_images() == []
    charts = [i for i in view.images if i.alt != "confusion matrix of the test split"]
    widest = max(i.rendered[0] for i in view.images)
    assert widest > 0.7 * view.width  # the charts use the page's width
    assert all(i.rendered[0] == widest for i in charts)
    summary = json.loads((digits_run / "summary.json").read_text())
    shown = _summary_rows(view.dom)
    expected = {k: format_value(k, v) for k, v in summary.items()
                if v is not None and not isinstance(v, (dict, list))}
    assert shown == expected
    assert list(shown)[:2] == ["test_accuracy", "test_loss"]  # the result leads


@pytest.mark.slow
def test_report_shows_the_runs_figures_in_order(digits_run: Path) -> None:
    page = (digits_run / "report.html").read_text(encoding="utf-8")
    headings = re.findall(r"<h2>([^<]*)</h2>", page)
    assert headings[:2] == ["Summary", "Charts"] and headings[-2:] == ["Epochs", "Configuration"]
    assert {"Confusion matrix (test split)", "Most confident mistakes (test split)", "Doctor"} <= set(headings)
    for alt in ("loss curve", "accuracy per epoch", "data wait per epoch", "most confident wrong predictions"):
        assert f'alt="{alt}"' in page
    assert "<th>Training accuracy</th>" in page and "<th>Data wait</th>" in page
    config = page[page.index("<h2>Configuration</h2>"):]
    assert "task: classification" in config and "\nembedding:" not in config and "\ntext:" not in config
    summary = json.loads((digits_run / "summary.json").read_text())
    counts = summary["test_confusion_matrix"]["counts"]
    assert sum(map(sum, counts)) == summary["split_sizes"]["test"]
    assert sum(counts[i][i] for i in range(len(counts))) / summary["split_sizes"]["test"] == pytest.approx(
        summary["test_accuracy"])
