"""One self-contained HTML page per training run.

Everything is inline (CSS, PNG charts as base64 data URIs), so the file can be
mailed or opened offline; nothing in it refers to an external URL.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping
from html import escape
from pathlib import Path
from typing import Any

import yaml

from trainwell._files import atomic_write_text
from trainwell.report import plots
from trainwell.report.labels import readable
from trainwell.report.plots import as_float as _num

NO_DATA = "no data yet"
_DASH = "\u2014"

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto;
       max-width: 60em; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #eee; text-align: right; }
th { background: #f6f6f6; }
table.summary th { text-align: left; font-weight: normal; color: #555; }
table.summary td { font-weight: 600; }
img { width: 100%; height: auto; display: block; margin: 0.8em 0; }
img.square { max-width: 34em; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
.empty { color: #888; font-style: italic; }
""".strip()

# (row key, column heading, formatter) for the per-epoch table.
_EpochColumn = tuple[str, str, Callable[[Any], str]]


def _fmt_int(value: Any) -> str:
    x = _num(value)
    if x is None or not math.isfinite(x) or x != int(x):
        return _fmt_general(value)
    return f"{int(x):,}"


def _fmt_general(value: Any) -> str:
    if value is None:
        return _DASH
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    x = _num(value)
    if x is None:
        return str(value)
    if not math.isfinite(x):
        return str(x)
    if abs(x) >= 1000:
        return f"{x:,.1f}"
    return f"{x:.4g}"


def _finite(pattern: str) -> Callable[[Any], str]:
    """A formatter applying ``pattern`` to finite numbers and the general rule to anything else."""

    def fmt(value: Any) -> str:
        x = _num(value)
        if x is None or not math.isfinite(x):
            return _fmt_general(value)
        return pattern.format(x)

    return fmt


_fmt_percent = _finite("{:.2%}")
_fmt_1dp = _finite("{:,.1f}")
_fmt_duration = _finite("{:,.1f} s")
_fmt_lr = _finite("{:.3g}")
_fmt_4dp = _finite("{:.4f}")


def _summary_formatter(key: str) -> Callable[[Any], str]:
    """Pick a formatter from the key's name (e.g. ``*_accuracy`` is a fraction shown as percent)."""
    k = key.lower()
    if "accuracy" in k or k.endswith("tar_at_far1") or k == "data_wait":
        return _fmt_percent
    if k.endswith("_auc"):
        return _fmt_4dp
    if k == "seconds" or k.endswith("_seconds"):
        return _fmt_duration
    if k.endswith("_per_second"):
        return _fmt_1dp
    if k == "lr" or k.endswith("_lr"):
        return _fmt_lr
    return _fmt_general


def format_value(key: str, value: Any) -> str:
    """A summary value as the report shows it, chosen by its key (accuracy in percent, seconds with s, ...)."""
    return _summary_formatter(key)(value)


def format_change(key: str, change: Any) -> str:
    """A difference between two runs' values of ``key``, signed (``+1.25%``, ``-0.0312``); a dash without one."""
    x = _num(change)
    if x is None:
        return _DASH
    return ("+" if x > 0 else "-" if x < 0 else "\u00b1") + _summary_formatter(key)(abs(change))


def _lead(key: str) -> int:
    """Test figures first, then validation, then everything else (a stable order within each group)."""
    return 0 if key.startswith("test_") else 1 if key.startswith("val_") else 2


def _summary_html(summary: Mapping[str, Any]) -> str:
    shown = sorted(((str(k), v) for k, v in summary.items() if v is not None), key=lambda kv: _lead(kv[0]))
    if not shown:
        return f'<p class="empty">{NO_DATA}</p>'
    rows = "\n".join(
        f'<tr data-key="{escape(k)}"><th>{escape(readable(k))}</th><td>{escape(_summary_formatter(k)(v))}</td></tr>'
        for k, v in shown
    )
    return f'<table class="summary">\n{rows}\n</table>'


# The per-epoch columns in this order; any other train_* / val_* value goes after the validation ones.
_FIRST = ("epoch", "step", "train_loss", "train_accuracy", "val_loss", "val_accuracy")
_LAST = ("lr", "seconds", "data_wait", "skipped_steps", "loss_scale")


def _epoch_columns(epochs: list[dict]) -> list[_EpochColumn]:
    """Each value some epoch has (a column of dashes only says nothing: it is left out)."""
    seen = dict.fromkeys(k for row in epochs for k in row if k.startswith(("train_", "val_")))
    keys = [*_FIRST, *(k for k in seen if k not in _FIRST), *_LAST]
    present = [k for k in keys if any(_num(row.get(k)) is not None for row in epochs)]
    return [(k, readable(k), _fmt_int if k in ("epoch", "step", "skipped_steps") else _summary_formatter(k))
            for k in present]


def _epochs_html(epochs: list[dict]) -> str:
    if not epochs:
        return f'<p class="empty">{NO_DATA}</p>'
    cols = _epoch_columns(epochs)
    head = "".join(f"<th>{escape(heading)}</th>" for _, heading, _ in cols)
    body = "\n".join(
        "<tr>" + "".join(f"<td>{escape(fmt(row.get(key)))}</td>" for key, _, fmt in cols) + "</tr>"
        for row in epochs
    )
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def png_img(png: bytes, alt: str, css_class: str | None = None) -> str:
    """An ``<img>`` holding ``png`` inline (a data URI), with its alt text escaped."""
    data = base64.b64encode(png).decode("ascii")
    cls = f' class="{escape(css_class)}"' if css_class else ""
    return f'<img{cls} src="data:image/png;base64,{data}" alt="{escape(alt)}">'


def _scores(epochs: list[dict]) -> list[str]:
    """Per-epoch validation scores other than loss and accuracy (an embedding run's ``val_auc``, TAR at FAR)."""
    parts = set(plots.loss_parts(epochs))
    keys = dict.fromkeys(k for row in epochs for k in row if k.startswith("val_"))
    return [k for k in keys if k != "val_loss" and not k.startswith("val_accuracy")
            and k.removeprefix("val_") not in parts]


def _charts_html(epochs: list[dict], steps: list[dict]) -> str:
    has_loss = any(_num(r.get("loss")) is not None for r in steps) or any(
        _num(r.get("val_loss")) is not None for r in epochs
    )
    parts: list[str] = []
    scores = _scores(epochs)
    score_png = plots.score_plot(epochs, scores, [readable(k) for k in scores], "Validation scores per epoch")
    if score_png is not None:  # the task's own measure (verification) leads
        parts.append(png_img(score_png, "validation scores per epoch"))
    if has_loss:
        parts.append(png_img(plots.loss_plot(steps, epochs), "loss curve"))
    for png, alt in ((plots.task_loss_plot(epochs), "loss per task"), (plots.task_weight_plot(epochs), "task weights")):
        if png is not None:
            parts.append(png_img(png, alt))
    acc = plots.accuracy_plot(epochs)
    if acc is not None:
        parts.append(png_img(acc, "accuracy per epoch"))
    wait = plots.data_wait_plot(epochs)
    if wait is not None:
        parts.append(png_img(wait, "data wait per epoch"))
    lr = plots.lr_plot(steps)
    if lr is not None:
        parts.append(png_img(lr, "learning rate per step"))
    if not parts:
        return f'<p class="empty">{NO_DATA}</p>'
    return "\n".join(parts)


def _plain(obj: Any) -> Any:
    """Make ``obj`` safe for ``yaml.safe_dump`` (tuples to lists, paths and other objects to str)."""
    if isinstance(obj, Mapping):
        return {str(k) if not isinstance(k, (str, int, float, bool)) else k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_plain(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return str(obj)


def _config_html(config: Mapping[str, Any]) -> str:
    from trainwell.config import used_by_task

    if not config:
        return f'<p class="empty">{NO_DATA}</p>'
    own = {k: v for k, v in config.items() if used_by_task(str(k), config.get("task"))}  # a run's own task's
    text = yaml.safe_dump(_plain(own), sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"<pre>{escape(text)}</pre>"


# The report's own headings, per language (a task's and the doctor's sections bring their own).
_WORDS: dict[str, tuple[str, str]] = {  # key: (English, Chinese)
    "title": ("trainwell run: {name}", "trainwell 训练运行：{name}"),
    "summary": ("Summary", "概要"),
    "charts": ("Charts", "图表"),
    "epochs": ("Epochs", "各轮结果"),
    "config": ("Configuration", "配置"),
}


def run_title(name: str, lang: str = "en") -> str:
    """The report's title for the run folder ``name``."""
    from trainwell._lang import say

    return say(_WORDS, lang, "title", name=name)


def render_report(
    *,
    title: str,
    epochs: list[dict],
    steps: list[dict],
    config: dict,
    summary: dict,
    extra_sections: list[tuple[str, str]] | None = None,
    lang: str = "en",
) -> str:
    """Return the report page as a string (see :func:`write_report`)."""
    from trainwell._lang import say

    sections: list[tuple[str, str]] = [
        (say(_WORDS, lang, "summary"), _summary_html(summary)),
        (say(_WORDS, lang, "charts"), _charts_html(epochs, steps)),
        *(extra_sections or []),
        (say(_WORDS, lang, "epochs"), _epochs_html(epochs)),
        (say(_WORDS, lang, "config"), _config_html(config)),
    ]
    return render_page(title, sections, lang=lang)


def render_page(title: str, sections: list[tuple[str, str]], lang: str = "en") -> str:
    """A self-contained page: ``title`` and ``(heading, html)`` sections (headings escaped, html as given)."""
    body = "\n".join(f"<section>\n<h2>{escape(heading)}</h2>\n{content}\n</section>" for heading, content in sections)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{escape(lang)}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n"
        f"<body>\n<h1>{escape(title)}</h1>\n{body}\n</body>\n</html>\n"
    )




def write_report(
    path: Path,
    *,
    title: str,
    epochs: list[dict],
    steps: list[dict],
    config: dict,
    summary: dict,
    extra_sections: list[tuple[str, str]] | None = None,
    lang: str = "en",
) -> Path:
    """Write the run report to ``path`` atomically and return ``path``.

    ``extra_sections`` are ``(heading, html)`` pairs shown after the charts and before the per-epoch table and
    the configuration; the heading is escaped, the html is inserted as given (callers must escape it). ``lang``:
    the language of the report's own headings (``en`` / ``zh``).
    """
    path = Path(path)
    page = render_report(
        title=title, epochs=epochs, steps=steps, config=config, summary=summary, extra_sections=extra_sections,
        lang=lang,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, page)
    return path
