"""``trainwell runs``, ``trainwell diff`` and the model card, on a folder of tiny real runs."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trainwell.cli import main

TINY = ["--data", "digits", "--epochs", "2", "--set", "model.channels=[8]", "--set", "model.hidden=[16]",
        "--no-progress", "--set", "data.limit=600"]
LRS = {"slow": 0.001, "fast": 0.02}
NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"  # 1,437 or 0.02 or 63.89


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """runs/slow and runs/fast (two learning rates, finished), runs/stopped (fast without summary.json),
    runs/crashed (stopped by an error the doctor kept) and runs/broken (summary.json cut short)."""
    root = tmp_path_factory.mktemp("runs") / "runs"
    for name, lr in LRS.items():
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("PYTHONHASHSEED", "0")
            assert main(["train", *TINY, "--set", f"train.lr={lr}", "--out", str(root / name)]) == 0
    stopped = root / "stopped"
    shutil.copytree(root / "fast", stopped)
    (stopped / "summary.json").unlink()
    crashed = root / "crashed"
    shutil.copytree(stopped, crashed)
    doctor = json.loads((crashed / "doctor.json").read_text())
    doctor["findings"].append({"id": "shape-mismatch", "severity": "error", "title": "shapes do not fit",
                               "message": "", "fix": "", "evidence": {"error": "mat1 and mat2 shapes cannot be multiplied"}})
    (crashed / "doctor.json").write_text(json.dumps(doctor))
    broken = root / "broken"
    shutil.copytree(root / "slow", broken)
    (broken / "summary.json").write_text('{"test_accuracy": 0.5,')
    (root / "not-a-run" / "notes").mkdir(parents=True)  # searched, listed only if it held a config.yaml
    return root


def _json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> object:
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def _summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())


# ------------------------------------------------------------------------------------------------ trainwell runs


def test_runs_lists_every_run_with_status_and_only_the_differing_config(runs: Path, capsys) -> None:
    rows = {r["name"]: r for r in _json(["runs", str(runs), "--json"], capsys)}
    assert set(rows) == {"slow", "fast", "stopped", "crashed", "broken"}
    assert {n: r["status"] for n, r in rows.items()} == {
        "slow": "finished", "fast": "finished", "stopped": "interrupted", "crashed": "failed", "broken": "unreadable"}
    assert "summary.json" in rows["broken"]["reason"] and "not valid JSON" in rows["broken"]["reason"]
    assert "mat1 and mat2" in rows["crashed"]["reason"]
    assert "stopped after epoch 2 of 2" in rows["stopped"]["reason"]
    # only the learning rate differs (out and name are each run's own, and not compared)
    for name in ("slow", "fast", "stopped"):
        assert rows[name]["config"] == {"train.lr": LRS.get(name, LRS["fast"])}
    fast = _summary(runs / "fast")
    assert rows["fast"]["val_accuracy"] == fast["val_accuracy"] and rows["fast"]["test_accuracy"] == fast["test_accuracy"]
    assert rows["fast"]["train_seconds"] == fast["train_seconds"] and rows["fast"]["data"] == "digits"
    assert rows["fast"]["date"] == fast["finished_at"]
    # a stopped run: val from metrics.csv's best epoch, no test figures, time as the epochs' sum
    epochs = [ln.split(",") for ln in (runs / "stopped" / "metrics.csv").read_text().splitlines()]
    head = epochs[0]
    best = min(epochs[1:], key=lambda r: float(r[head.index("val_loss")]))
    assert rows["stopped"]["val_loss"] == float(best[head.index("val_loss")])
    assert rows["stopped"]["test_accuracy"] is None
    assert rows["stopped"]["train_seconds"] == pytest.approx(sum(float(r[head.index("seconds")]) for r in epochs[1:]))


def test_runs_table(runs: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    capsys.readouterr()
    assert main(["runs", str(runs)]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("name "))
    assert header.split() == ["name", "date", "lr", "val_loss", "val_acc", "test_acc", "time", "status"]
    assert "5 runs in" in out and " · data digits · model cnn" in out.splitlines()[0]
    assert "broken unreadable: summary.json" in out
    assert f"{100 * _summary(runs / 'fast')['test_accuracy']:.2f}%" in out
    assert "Not shown" not in out


def test_runs_table_narrow_terminal(runs: Path, capsys, monkeypatch) -> None:
    """Too wide for the terminal: whole columns are left out, least important first, and named."""
    monkeypatch.setenv("COLUMNS", "50")
    capsys.readouterr()
    assert main(["runs", str(runs)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("name "))
    assert header.split() == ["name", "lr", "val_acc", "test_acc", "status"]
    assert "Not shown at 50 columns: date, val_loss, time (--wide" in " ".join(line.strip() for line in lines)
    assert all(len(line) <= 50 for line in lines)


def test_runs_sort(runs: Path, capsys) -> None:
    rows = _json(["runs", str(runs), "--json", "--sort", "val_accuracy"], capsys)
    values = [r["val_accuracy"] for r in rows]
    known = [v for v in values if v is not None]
    assert known == sorted(known, reverse=True) and len(known) == 4  # best first
    assert values[-1] is None and rows[-1]["name"] == "broken"  # no value: last
    rows = _json(["runs", str(runs), "--json", "--sort", "train.lr"], capsys)
    assert [r["name"] for r in rows][0] == "slow"
    rows = _json(["runs", str(runs), "--json", "--sort", "val_loss", "--reverse"], capsys)
    assert rows[0]["name"] == "slow" and rows[-1]["name"] == "broken"  # the worst loss first, the empty cell still last


def test_runs_sort_unknown_column(runs: Path, capsys) -> None:
    assert main(["runs", str(runs), "--sort", "val_accu"]) == 2
    err = capsys.readouterr().err
    assert "Did you mean 'val_accuracy'?" in err and "Traceback" not in err


def test_runs_missing_folder_and_empty_folder(tmp_path: Path, capsys) -> None:
    assert main(["runs", str(tmp_path / "nope")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert main(["runs", str(tmp_path)]) == 0
    assert "No run folders" in capsys.readouterr().out


def test_runs_diff_and_card_do_not_import_torch(runs: Path) -> None:
    code = ("import sys; from trainwell.cli import main; d = sys.argv[1]\n"
            "codes = [main(['runs', d]), main(['diff', d + '/slow', d + '/fast', '--json']), "
            "main(['card', d + '/stopped', '--stdout'])]\n"
            "assert 'torch' not in sys.modules, 'torch imported'; sys.exit(max(codes))")
    done = subprocess.run([sys.executable, "-c", code, str(runs)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_results_sits_between_the_app_and_the_report() -> None:
    from test_architecture import import_graph

    graph = import_graph()
    assert "results" in graph["app"] and not {"app", "cli", "tasks", "doctor"} & set(graph["results"])
    assert all("results" not in graph.get(part, {}) for part in ("engine", "report", "data", "models", "config"))


def test_status_diverged_and_short_summary(runs: Path) -> None:
    from trainwell.results.folder import read_run, status

    run = read_run(runs / "fast")
    run.epochs[-1]["train_loss"] = math.nan
    assert status(run) == ("failed", "diverged: train_loss nan at epoch 2")
    run = read_run(runs / "fast")
    run.summary["epochs"] = 1
    assert status(run) == ("failed", "summary.json records 1 of 2 epochs")


# ------------------------------------------------------------------------------------------------ trainwell diff


def test_diff_json_deltas(runs: Path, capsys) -> None:
    result = _json(["diff", str(runs / "slow"), str(runs / "fast"), "--json"], capsys)
    assert result["config"] == [{"key": "train.lr", "a": LRS["slow"], "b": LRS["fast"]}]
    a, b = _summary(runs / "slow"), _summary(runs / "fast")
    deltas = {d["name"]: d for d in result["deltas"]}
    assert set(deltas) == {"val_loss", "val_accuracy", "test_loss", "test_accuracy", "train_seconds", "parameters"}
    for name, d in deltas.items():
        assert (d["a"], d["b"]) == (a[name], b[name])
        assert d["change"] == pytest.approx(b[name] - a[name])
    assert deltas["parameters"]["change"] == 0


def test_diff_table_and_html(runs: Path, tmp_path: Path, capsys) -> None:
    page = tmp_path / "cmp.html"
    capsys.readouterr()
    assert main(["diff", str(runs / "slow"), str(runs / "stopped"), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"train\.lr\s+│\s+0\.001\s+│\s+0\.02", out)
    assert "per epoch" in out and "B val_accuracy" in out
    a, b = _summary(runs / "slow"), _json(["runs", str(runs / "stopped"), "--json"], capsys)[0]
    change = 100 * (b["val_accuracy"] - a["val_accuracy"])
    text = page.read_text()
    assert f"{'+' if change > 0 else '-'}{abs(change):.2f}%" in text
    assert text.count('src="data:image/png;base64,') == 2  # loss and accuracy, both runs on each
    assert "<td>train.lr</td><td>0.001</td><td>0.02</td>" in text
    assert "http" not in text.replace("http-equiv", "")  # self-contained
    assert "interrupted" in text


def test_diff_needs_run_folders(runs: Path, capsys) -> None:
    assert main(["diff", str(runs / "slow"), str(runs / "not-a-run")]) == 2
    assert "not a trainwell run folder" in capsys.readouterr().err
    assert main(["diff", str(runs / "slow"), str(runs / "broken")]) == 2
    assert "summary.json" in capsys.readouterr().err


def test_compare_accuracy_plot_needs_accuracy() -> None:
    from trainwell.report.plots import compare_accuracy_plot, compare_loss_plot

    assert compare_accuracy_plot([("A", [{"epoch": 1, "val_loss": 1.0}])]) is None
    assert compare_loss_plot([("A", [], [])]).startswith(b"\x89PNG")


# ------------------------------------------------------------------------------------------------ the model card


def _numbers_in_files(run: Path) -> set[str]:
    """Every number the run's files hold, written the ways the card writes numbers."""
    from trainwell.report.html import format_value

    texts: list[str] = [str(run)]
    values: list[object] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    texts.append(format_value(str(k), v))
        elif isinstance(node, list):
            for v in node:
                walk(v)
        else:
            values.append(node)

    import yaml

    walk(yaml.safe_load((run / "config.yaml").read_text()))
    for name in ("summary.json", "env.json", "doctor.json"):
        walk(json.loads((run / name).read_text()))
    walk([{k: float(v) for k, v in row.items() if v} for row in csv.DictReader((run / "metrics.csv").open())])
    summary = _summary(run)
    sizes = summary["split_sizes"]
    values.append(sum(sizes.values()))
    for v in values:
        texts += [str(v), json.dumps(v)]
        if isinstance(v, int) and not isinstance(v, bool):
            texts.append(f"{v:,}")
        if isinstance(v, float):
            texts += [format_value("accuracy", v), format_value("loss", v)]
    return {t for text in texts for t in re.findall(NUMBER, text)}


def test_card_written_by_the_run_and_every_number_from_its_files(runs: Path) -> None:
    run = runs / "fast"
    card = (run / "README.md").read_text()
    allowed = _numbers_in_files(run)
    stray = [n for n in re.findall(NUMBER, card) if n not in allowed]
    assert not stray, f"numbers in the card that the run's files do not hold: {stray}"
    s = _summary(run)
    sizes = s["split_sizes"]
    best = next(r for r in csv.DictReader((run / "metrics.csv").open()) if int(r["epoch"]) == s["best_epoch"])
    assert f"| loss | {float(best['train_loss']):.4g} | {s['val_loss']:.4g} | {s['test_loss']:.4g} |" in card
    assert (f"| accuracy | {100 * float(best['train_accuracy']):.2f}% | {100 * s['val_accuracy']:.2f}% | "
            f"{100 * s['test_accuracy']:.2f}% |") in card
    assert f"val (best epoch, {s['best_epoch']})" in card
    assert f"- parameters: {s['parameters']:,}" in card
    assert f"train {sizes['train']:,}, val {sizes['val']:,}, test {sizes['test']:,} ({sum(sizes.values()):,} samples)" in card
    assert f"- train.lr: {LRS['fast']}" in card and "- train.batch_size: 64" in card and "- augmentation: shift" in card
    env = json.loads((run / "env.json").read_text())
    assert f"- torch: {env['torch_version']}" in card and f"- Python: {env['python_version']}" in card
    assert "Trained on CPU only." in card and "handwritten digits from `digits`" in card
    assert f"trainwell predict {run} image.png" in card
    assert "None: the doctor watched the whole run" in card


def test_card_command_rewrites_and_describes_a_stopped_run(runs: Path, tmp_path: Path, capsys) -> None:
    stopped = tmp_path / "stopped"
    shutil.copytree(runs / "crashed", stopped)
    (stopped / "README.md").unlink()
    capsys.readouterr()
    assert main(["card", str(stopped)]) == 0
    card = (stopped / "README.md").read_text()
    assert capsys.readouterr().out.strip() == str(stopped / "README.md")
    assert "The run did not finish" in card and "| accuracy |" in card and "| — |" in card  # no test figures
    assert "This run failed: stopped by an error: mat1 and mat2" in card
    assert "**error** `shape-mismatch`: shapes do not fit" in card
    (stopped / "README.md").write_text("my own notes\n")
    assert main(["card", str(stopped)]) == 2
    assert "not a trainwell model card" in capsys.readouterr().err
    assert (stopped / "README.md").read_text() == "my own notes\n"
    assert main(["card", str(stopped), "--force"]) == 0
    assert "## Known limits" in (stopped / "README.md").read_text()


def test_card_of_a_fit_folder_without_config(tmp_path: Path) -> None:
    from trainwell.results.card import render_card
    from trainwell.results.folder import read_run

    (tmp_path / "summary.json").write_text(json.dumps({"val_accuracy": 0.75, "val_loss": 0.5, "best_epoch": 1,
                                                       "epochs": 1, "parameters": 418}))
    (tmp_path / "metrics.csv").write_text("epoch,step,train_loss,val_loss,val_accuracy,lr,seconds\n1,4,0.7,0.5,0.75,0.001,0.2\n")
    card = render_card(read_run(tmp_path))
    assert "A model trained with `trainwell.fit` (finished)." in card
    assert "| accuracy | — | 75.00% | — |" in card and "| loss | 0.7 | 0.5 | — |" in card and "- parameters: 418" in card
    assert "does not record the training data" in card and "torch.load" in card


def test_runs_on_one_run_folder(runs: Path, capsys) -> None:
    rows = _json(["runs", str(runs / "slow"), "--json"], capsys)
    assert [(r["name"], r["status"], r["config"]) for r in rows] == [("slow", "finished", {})]


# ------------------------------------------------------------------------------- early stop, and the terminal layout


@pytest.fixture(scope="module")
def early(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run stopped early: no epoch improves val_loss by more than 10, so patience 1 ends it after epoch 2."""
    run = tmp_path_factory.mktemp("early") / "early"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONHASHSEED", "0")
        assert main(["train", *TINY, "--epochs", "6", "--early-stop", "1", "--set", "train.early_stop.min_delta=10",
                     "--out", str(run)]) == 0
    summary = _summary(run)
    assert summary["stopped_early"] and summary["epochs"] == 2
    return run


def test_an_early_stopped_run_is_finished_in_runs_diff_and_its_card(early: Path, runs: Path, capsys,
                                                                   monkeypatch) -> None:
    from trainwell.results.folder import read_run, status

    assert status(read_run(early)) == ("finished", "stopped early at epoch 2 of 6")
    rows = _json(["runs", str(early), "--json"], capsys)
    assert (rows[0]["status"], rows[0]["reason"]) == ("finished", "stopped early at epoch 2 of 6")
    monkeypatch.setenv("COLUMNS", "120")
    capsys.readouterr()
    assert main(["runs", str(early)]) == 0
    out = capsys.readouterr().out
    assert "finished (early 2/6)" in out and "failed" not in out
    assert main(["diff", str(runs / "slow"), str(early)]) == 0
    out = capsys.readouterr().out
    assert f"B: {early}  (finished: stopped early at epoch 2 of 6)" in out and "failed" not in out
    assert _json(["diff", str(runs / "slow"), str(early), "--json"], capsys)["status"]["b"] == "finished"
    card = (early / "README.md").read_text()
    assert "(finished, stopped early at epoch 2 of 6" in card and "failed" not in card
    assert "- Training stopped early at epoch 2 of 6: val_loss has not improved" in card
    # summary.json recording fewer epochs than planned without an early stop is still a failure
    run = read_run(early)
    run.summary["stopped_early"] = False
    assert status(run) == ("failed", "summary.json records 2 of 6 epochs")


LONG_NAMES = ("digits-cnn-20261207-015710", "digits-cnn-20261207-020233", "digits-cnn-20261207-021145")


@pytest.fixture(scope="module")
def listing(runs: Path, early: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Image runs with the long names runs get by default: two learning rates, one run stopped early, and one
    whose config.yaml carries other text.* and embedding.* values (which an image run does not use)."""
    import yaml

    root = tmp_path_factory.mktemp("listing") / "runs"
    for name, source in zip(LONG_NAMES, (runs / "slow", runs / "fast", early)):
        shutil.copytree(source, root / name)
    other = root / "digits-cnn-20261207-023310"
    shutil.copytree(runs / "fast", other)
    config = yaml.safe_load((other / "config.yaml").read_text())
    config["text"]["max_len"], config["embedding"]["dim"] = 50, 64
    (other / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def _lines(argv: list[str], capsys, monkeypatch, width: int) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(width))
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("width", [80, 120])
def test_runs_fit_the_terminal_one_line_per_run(listing: Path, width: int, capsys, monkeypatch) -> None:
    from rich.cells import cell_len

    lines = _lines(["runs", str(listing)], capsys, monkeypatch, width)
    assert all(cell_len(line) <= width for line in lines), [line for line in lines if cell_len(line) > width]
    names = sorted(p.name for p in listing.iterdir())
    rows = [line for line in lines if line.split(" ", 1)[0] in names]
    assert [r.split(" ", 1)[0] for r in rows] == names  # one line per run, each name whole
    header = lines[lines.index(rows[0]) - 1].split()
    assert header[0] == "name" and header[-1] == "status"
    assert "val_acc" in header and "test_acc" in header  # (val_accuracy, test_accuracy)
    assert {"lr", "epochs"} <= set(header) if width == 120 else {"lr", "epochs"} & set(header)
    for row in rows:  # every column shown has its cell (no column shrunk to nothing)
        assert len(row.split()) >= len(header)
    assert "finished (early 2/6)" in "\n".join(rows)
    text = "\n".join(lines)
    assert "text." not in text and "embedding." not in text  # keys an image run does not use
    assert "config (differs)" not in text
    title = " ".join(lines[:lines.index(rows[0]) - 1])
    assert "data digits" in title and "model cnn" in title  # the same for every run: said once
    if width == 80:
        assert "--wide" in text  # the columns left out are named, with how to see them


def test_runs_wide_and_json_show_every_column(listing: Path, capsys, monkeypatch) -> None:
    lines = _lines(["runs", str(listing), "--wide"], capsys, monkeypatch, 80)
    header = next(line for line in lines if line.startswith("name "))
    differing = ["train.epochs", "train.lr", "train.early_stop.patience", "train.early_stop.min_delta"]
    assert sorted(header.split()) == sorted(["name", "date", "data", "model", "epochs", "lr", "patience", "min_delta",
                                             "val_loss", "val_acc", "test_acc", "time", "status"])
    assert header.split()[:4] == ["name", "date", "data", "model"] and header.split()[-2:] == ["time", "status"]
    rows = {r["name"]: r for r in _json(["runs", str(listing), "--json"], capsys)}
    assert all(sorted(r["config"]) == sorted(differing) for r in rows.values())
    assert rows[LONG_NAMES[2]]["reason"] == "stopped early at epoch 2 of 6"


def test_differing_keys_compare_a_task_section_among_that_task_only() -> None:
    from trainwell.results.catalog import differing_keys

    image = {"task": "classification", "train.lr": 0.1, "text.max_len": 200}
    configs = [image, {**image, "text.max_len": 50}, {**image, "task": "text", "text.max_len": 64},
               {**image, "task": "text", "text.max_len": 128}]
    assert differing_keys(configs[:2]) == []
    assert differing_keys(configs) == ["task", "text.max_len"]
