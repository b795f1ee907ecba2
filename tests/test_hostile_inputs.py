"""Hostile or broken inputs to the config, the data and the environment: each ends quickly in one clear message
and exit code 2, never a hang, a traceback or a run on the wrong settings.

The tests that could hang run the command line in a subprocess with a timeout, so a regression fails instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import train_once
from trainwell._errors import ConfigError, DataError
from trainwell.cli import main
from trainwell.config import parse_set, resolve, save_yaml

TINY = ["--set", "data.limit=200", "--epochs", "1", "--set", "model.channels=[4]", "--set", "model.hidden=[8]",
        "--device", "cpu", "--no-progress", "--no-doctor"]
LAUNCH_VARS = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
               "TORCHELASTIC_RUN_ID")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    for key in LAUNCH_VARS:
        monkeypatch.delenv(key, raising=False)


def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run the CLI in this process, expect exit code 2 and one message without a traceback; return the message."""
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert rc == 2, f"exit code {rc}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}"
    assert "Traceback" not in out + err
    assert err.count("trainwell: error: ") == 1, err
    return err.split("trainwell: error: ", 1)[1]


def cli(*argv: str, env: dict[str, str] | None = None, timeout: float = 30) -> tuple[int, str]:
    """``trainwell ARGV`` in a subprocess that must end within ``timeout`` seconds: (exit code, its output)."""
    base = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARS}
    done = subprocess.run([sys.executable, "-m", "trainwell", *argv], capture_output=True, text=True,
                          timeout=timeout, env={**base, **(env or {})})
    return done.returncode, done.stdout + done.stderr


def billion_laughs() -> str:
    """About 600 bytes of YAML whose aliases expand to ten billion strings."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def saved_run(folder: Path, **files: str | bytes) -> Path:
    """A run folder with a valid config.yaml (digits) and the given other files (name with '_' for '.')."""
    folder.mkdir(parents=True)
    save_yaml(resolve(sets=["data.name=digits"]), folder / "config.yaml")
    for name, content in files.items():
        path = folder / name.replace("_", ".")
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content, encoding="utf-8")
    return folder


# --------------------------------------------------------------------------- YAML


def test_a_config_file_with_aliases_is_refused_at_once(tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(billion_laughs(), encoding="utf-8")
    assert len(billion_laughs()) < 700
    rc, err = cli("train", "--config", "bomb.yaml")
    assert rc == 2 and "Traceback" not in err, err
    assert "'bomb.yaml', line 2, column 10: an alias (*a0)" in err and "Fix: write the value out in full" in err


@pytest.mark.parametrize("command", ["runs", "card", "diff", "resume"])
def test_a_run_folder_whose_config_yaml_has_aliases_is_refused_at_once(tmp_path: Path, command: str) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(billion_laughs(), encoding="utf-8")
    argv = {"runs": ["runs", "a"], "card": ["card", "a"], "diff": ["diff", "a", "b"],
            "resume": ["train", "--resume", "a"]}[command]
    rc, err = cli(*argv)
    assert "Traceback" not in err, err
    assert "config.yaml" in err and "alias (*a0)" in err, err
    assert rc == (0 if command == "runs" else 2)  # `runs` lists the folder as unreadable, with the reason


def test_set_refuses_aliases() -> None:
    with pytest.raises(ConfigError, match=r"--set .*alias \(\*a\)"):
        parse_set("model.kwargs={a: &a [1, 2], b: [*a, *a]}")


def test_a_config_file_nested_too_deeply_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "deep.yaml").write_text("model:\n  kwargs: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        resolve(file=tmp_path / "deep.yaml")
    assert "deep.yaml', line 2" in str(e.value) and "nested more than 32 levels" in str(e.value)


def test_an_empty_config_yaml_is_not_resumed_with_the_defaults(capsys, tmp_path: Path) -> None:
    run = saved_run(tmp_path / "run")
    (run / "config.yaml").write_text("# emptied\n", encoding="utf-8")
    err = fails(capsys, "train", "--resume", "run")
    assert "config.yaml" in err and "empty" in err and "Fix: restore config.yaml" in err


@pytest.mark.parametrize("text, what", [("3\n", "not int"), ("- a\n", "not list"), ("train: [1\n", "not valid YAML")])
def test_a_broken_config_yaml_on_resume_names_the_file(capsys, tmp_path: Path, text: str, what: str) -> None:
    run = saved_run(tmp_path / "run")
    (run / "config.yaml").write_text(text, encoding="utf-8")
    err = fails(capsys, "train", "--resume", "run")
    assert "run/config.yaml" in err and what in err and "Fix: restore config.yaml" in err


# --------------------------------------------------------------------------- numbers out of range


@pytest.mark.parametrize("argv, key, allowed", [
    (["--set", "train.batch_size=999999999999999999999999"], "train.batch_size", "from 1 to 2147483647"),
    (["--epochs", "99999999999999999999"], "train.epochs", "from 1 to 1000000"),
    (["--set", "data.num_workers=100000000000000000000"], "data.num_workers", "from 0 to 256"),
    (["--set", "data.image_size=100000"], "data.image_size", "from 4 to 2048"),
    (["--set", "model.hidden=[100000000000000000000]"], "model.hidden", "from 1 to 65536"),
    (["--seed", "99999999999999999999"], "seed", "from 0 to 4294967295"),
])
def test_huge_numbers_are_refused_with_the_allowed_range(capsys, argv: list[str], key: str, allowed: str) -> None:
    err = fails(capsys, "train", "--data", "digits", *argv)
    assert key in err and allowed in err


# --------------------------------------------------------------------------- CSV


def _wide_csv(path: Path, columns: int, rows: int) -> None:
    header = ",".join(f"f{i}" for i in range(columns)) + ",label\n"
    row = ",".join(["1"] * columns)
    path.write_text(header + "".join(f"{row},{r % 2}\n" for r in range(rows)), encoding="utf-8")


def test_a_csv_of_a_million_columns_is_refused_quickly(tmp_path: Path) -> None:
    _wide_csv(tmp_path / "wide.csv", 1_000_000, 3)
    rc, err = cli("train", "--data", "csv:wide.csv", "--epochs", "1", "--device", "cpu", timeout=60)
    assert rc == 2 and "Traceback" not in err, err
    assert "wide.csv: the header has 1,000,001 columns" in err and "up to 100,000 columns" in err


def test_reading_a_csv_is_linear_in_its_header(tmp_path: Path) -> None:
    """99,999 feature columns: read in about a second (a scan of the header per column took many minutes)."""
    _wide_csv(tmp_path / "wide.csv", 99_999, 4)
    code = ("from pathlib import Path\nfrom trainwell.data.tabular import read_feature_csv\n"
            "x, labels, names, _ = read_feature_csv(Path('wide.csv'), 'label')\n"
            "y, *_ = read_feature_csv(Path('wide.csv'), None, names[::-1])\n"
            "print(x.shape, y[0, 0] == x[0, -1])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["(4,", "99999)", "True"], done.stderr[-2000:]


def test_a_csv_value_over_the_field_limit_names_the_line(capsys, tmp_path: Path) -> None:
    lines = ["a,b,label"] + [f"{i},{i},{i % 2}" for i in range(20)] + ['3,"4,1'] + ["5,6,1"] * 30_000
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    err = fails(capsys, "train", "--data", "csv:t.csv", *TINY)
    assert "t.csv, line 22: a value longer than 131,072 characters" in err and "never closed" in err


def test_a_text_file_value_over_the_field_limit_names_the_line(tmp_path: Path) -> None:
    from trainwell.data.text_files import read_text_file

    (tmp_path / "t.csv").write_text('text,label\ngood,1\n"no end,0\n' + "more,1\n" * 30_000, encoding="utf-8")
    with pytest.raises(DataError, match=r"t\.csv, line 3: a value longer than 131,072 characters"):
        read_text_file(tmp_path / "t.csv", "csv", "text", "label")


# --------------------------------------------------------------------------- torchrun's variables


def test_a_stray_world_size_says_what_is_missing_instead_of_waiting() -> None:
    rc, err = cli("train", "--data", "digits", "--epochs", "1", env={"WORLD_SIZE": "2"})
    assert rc == 2 and "Traceback" not in err, err
    assert "WORLD_SIZE=2" in err and "RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT are not set" in err
    assert "--nproc N" in err and "unset WORLD_SIZE" in err


@pytest.mark.parametrize("env, said", [
    ({"WORLD_SIZE": "abc"}, "WORLD_SIZE='abc' is not a whole number"),
    ({"RANK": "x"}, "RANK='x' is not a whole number"),
    ({"LOCAL_RANK": "-1"}, "LOCAL_RANK=-1 is out of range"),
    ({"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0", "MASTER_ADDR": "localhost", "MASTER_PORT": "http"},
     "MASTER_PORT='http' is not a whole number"),
    ({"WORLD_SIZE": "2", "RANK": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "localhost", "MASTER_PORT": "29500"},
     "RANK=2 is not below WORLD_SIZE=2"),
])
def test_malformed_torchrun_variables_are_one_clear_error(capsys, monkeypatch: pytest.MonkeyPatch,
                                                          env: dict[str, str], said: str) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    err = fails(capsys, "train", "--data", "digits", *TINY)
    assert said in err and "Fix:" in err


def test_trainwell_env_reports_unusable_torchrun_variables() -> None:
    from trainwell.env import check_env
    from trainwell.machine import launch_problem

    assert launch_problem({}) is None and launch_problem({"WORLD_SIZE": "1"}) is None
    full = {"WORLD_SIZE": "2", "RANK": "1", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "h",
            "MASTER_PORT": "29500"}
    assert launch_problem(full) is None
    problem = launch_problem({"WORLD_SIZE": "2", "MASTER_ADDR": "h"})
    assert problem is not None and "RANK, LOCAL_RANK, MASTER_PORT are not set" in problem
    found = [p for p in check_env({"launch_problem": problem}) if "torchrun" in p.what]
    assert len(found) == 1 and "WORLD_SIZE=2" in found[0].what and "--nproc N" in found[0].fix


# --------------------------------------------------------------------------- a run folder's files on --resume


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A tiny finished run (digits, 200 samples, 1 epoch) whose end files are removed, as when a run is stopped
    after its last checkpoint but before summary.json: ``--resume`` finishes it."""
    run = train_once(tmp_path_factory, ["--data", "digits", *TINY])
    for name in ("summary.json", "README.md", "report.html"):
        (run / name).unlink()
    yield run


def _copy(run: Path, to: Path) -> Path:
    shutil.copytree(run, to / "run")
    return to / "run"


@pytest.mark.parametrize("content, said", [
    ('{"epochs": 1, "best_ep', "not valid JSON"), ("", "not valid JSON"), (b"\x89PNG\r\n\x1a\n\xff\xfe", "utf-8"),
    ("[1, 2]", "holds list, not a mapping"),
])
def test_an_unreadable_summary_json_on_resume_names_the_file(capsys, stopped_run: Path, tmp_path: Path,
                                                              content: str | bytes, said: str) -> None:
    run = _copy(stopped_run, tmp_path)
    path = run / "summary.json"
    path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content, encoding="utf-8")
    err = fails(capsys, "train", "--resume", str(run))
    assert "summary.json cannot be read" in err and said in err and "Fix: restore summary.json" in err
    assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())  # left as it was


def test_a_corrupt_env_json_does_not_stop_a_resume(capsys, stopped_run: Path, tmp_path: Path) -> None:
    run = _copy(stopped_run, tmp_path)
    (run / "env.json").write_text('{"python_version": "3.1', encoding="utf-8")
    assert main(["train", "--resume", str(run)]) == 0, capsys.readouterr().err[-3000:]
    err = capsys.readouterr().err
    assert "env.json: not valid JSON" in err and "set aside as env.json.unreadable" in err
    assert (run / "env.json.unreadable").read_text(encoding="utf-8") == '{"python_version": "3.1'  # kept
    assert "python_version" in json.loads((run / "env.json").read_text(encoding="utf-8"))  # written again
    assert (run / "README.md").is_file() and (run / "summary.json").is_file()


# --------------------------------------------------------------------------- image folders


def _png(path: Path, size: tuple[int, int], seed: int = 0) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    arr = np.random.default_rng(seed).integers(0, 256, (size[1], size[0]), dtype=np.uint8)
    Image.fromarray(arr, mode="L").save(path)


def test_a_huge_first_training_image_asks_for_an_image_size(capsys, tmp_path: Path) -> None:
    from PIL import Image

    for split in ("train", "val"):
        for c in ("a", "b"):
            for i in range(1, 6):
                _png(tmp_path / "imgs" / split / c / f"{i}.png", (8, 8), seed=i)
    Image.new("L", (3000, 3000)).save(tmp_path / "imgs" / "train" / "a" / "0.png")  # sorted first
    err = fails(capsys, "train", "--data", "image-folder:imgs", *TINY)
    assert "train/a/0.png: the first training image is 3000 x 3000 pixels" in err
    assert "Fix: choose the side images are resized to, e.g. --set data.image_size=224" in err


def test_image_statistics_are_those_of_the_whole_sample(tmp_path: Path) -> None:
    """The per-channel statistics, summed image by image, equal those of the stacked sample."""
    import torch

    from trainwell.config import DataConfig
    from trainwell.data.bundle import fit_stats
    from trainwell.data.folder import image_folder

    for c in ("a", "b"):
        for i in range(8):
            _png(tmp_path / "imgs" / c / f"{i}.png", (7, 5), seed=i + 10 * ord(c))
    bundle = image_folder(DataConfig(name="image-folder", path=str(tmp_path / "imgs")))
    stack = torch.stack([bundle.train[i][0] for i in range(len(bundle.train))])
    mean, std = fit_stats(stack, "image", 1.0)
    assert np.allclose(bundle.preprocess.mean, mean, atol=1e-12)
    assert np.allclose(bundle.preprocess.std, std, atol=1e-12)
