"""Every bad input to the CLI ends in one clear message and exit code 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conftest import train_once
from trainwell.cli import main

TINY = ["--set", "data.limit=200", "--epochs", "1", "--set", "model.channels=[4]", "--set", "model.hidden=[8]",
        "--device", "cpu", "--no-progress"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # runs/ and any --out land here, never in the repository
    monkeypatch.setenv("PYTHONHASHSEED", "0")  # seed_everything sets it; restore afterwards


def fails(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run the CLI, expect exit code 2 and a message without a traceback; return the message."""
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert rc == 2, f"exit code {rc}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}"
    assert "Traceback" not in out + err
    # The error is the last thing printed (data is checked before the config is shown).
    assert "trainwell: error: " in err, err
    assert err.count("trainwell: error: ") == 1
    return err.split("trainwell: error: ", 1)[1]


def _png(path: Path, seed: int) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    arr = np.random.default_rng(seed).integers(0, 256, (8, 8), dtype=np.uint8)
    Image.fromarray(arr, mode="L").save(path)


# --------------------------------------------------------------------------- config problems


def test_misspelt_command_did_you_mean(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["trian"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "'trian'" in err and "Did you mean 'train'?" in err and "Traceback" not in err


def test_unknown_dataset(capsys) -> None:
    err = fails(capsys, "train", "--data", "mnist5k", *TINY)
    assert "'mnist5k'" in err and "Did you mean 'mnist-5k'?" in err and "Choose one of" in err


def test_unknown_model(capsys) -> None:
    err = fails(capsys, "train", "--model", "resnet50", *TINY)
    assert "'resnet50'" in err and "cnn" in err and "mlp" in err


def test_unknown_optimizer(capsys) -> None:
    err = fails(capsys, "train", "--optimizer", "rmsprop", *TINY)
    assert "train.optimizer" in err and "'rmsprop'" in err
    assert "adam" in err


def test_zero_learning_rate(capsys) -> None:
    err = fails(capsys, "train", "--lr", "0", *TINY)
    assert "train.lr" in err and "greater than 0" in err


def test_zero_epochs(capsys) -> None:
    err = fails(capsys, "train", *TINY, "--epochs", "0")
    assert "train.epochs" in err


def test_several_problems_in_one_message(capsys) -> None:
    err = fails(capsys, "train", *TINY, "--lr", "0", "--epochs", "0", "--batch-size", "0")
    assert "3 problems" in err
    assert "train.lr" in err and "train.epochs" in err and "train.batch_size" in err


def test_set_unknown_key_did_you_mean(capsys) -> None:
    err = fails(capsys, "train", *TINY, "--set", "train.optimiser=sgd")
    assert "train.optimiser" in err and "unknown key" in err and "Did you mean 'optimizer'?" in err


def test_config_file_missing(capsys, tmp_path: Path) -> None:
    err = fails(capsys, "train", "--config", "nope.yaml", *TINY)
    assert "nope.yaml" in err and "does not exist" in err


def test_config_file_not_a_mapping(capsys, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("- a\n- b\n", encoding="utf-8")
    err = fails(capsys, "train", "--config", "c.yaml", *TINY)
    assert "c.yaml" in err and "mapping" in err


def test_config_file_yaml_syntax_error_names_file_line_and_column(capsys, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("train:\n  lr: 0.01\n epochs: 3\n", encoding="utf-8")
    err = fails(capsys, "train", "--config", "c.yaml", *TINY)
    assert "'c.yaml', line 3, column 2: not valid YAML" in err
    assert "<unicode string>" not in err


def test_nothing_is_created_for_a_config_error(capsys, tmp_path: Path) -> None:
    fails(capsys, "train", "--lr", "0", *TINY)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- data problems


def test_csv_without_a_path(capsys) -> None:
    err = fails(capsys, "train", "--data", "csv", *TINY)
    assert "csv" in err and "needs a path" in err


def test_csv_file_missing(capsys) -> None:
    err = fails(capsys, "train", "--data", "csv:missing.csv", "--out", "run", *TINY)
    assert "missing.csv" in err and "does not exist" in err


def test_csv_missing_label_column(capsys, tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("a,b,target\n1,2,0\n3,4,1\n", encoding="utf-8")
    err = fails(capsys, "train", "--data", "csv:t.csv", "--out", "run", *TINY)
    assert "'label'" in err and "a, b, target" in err and "data.label" in err


def test_csv_non_numeric_cell(capsys, tmp_path: Path) -> None:
    rows = ["x1,x2,label"] + [f"{i},{i * 2},{i % 2}" for i in range(10)]
    rows[6] = "5,five,1"  # file line 7
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    err = fails(capsys, "train", "--data", "csv:t.csv", "--out", "run", *TINY)
    assert "line 7" in err and "'x2'" in err and "'five'" in err


def test_text_data_too_small_to_split(capsys, tmp_path: Path) -> None:
    lines = "".join(f"{t}\t{lab}\n" for t, lab in [("good", "pos"), ("fine", "pos"), ("ok", "pos"),
                                                   ("bad", "neg"), ("awful", "neg")] * 3)  # 5 unique texts
    (tmp_path / "t.tsv").write_text("text\tlabel\n" + lines, encoding="utf-8")
    err = fails(capsys, "train", "--data", "tsv:t.tsv", "--out", "run", "--epochs", "1", "--no-progress")
    assert "5 samples are too few to split" in err and "data.val_fraction" in err
    assert not (tmp_path / "run").exists()


def test_image_folder_with_a_corrupt_image(capsys, tmp_path: Path) -> None:
    for c in ("a", "b"):
        for i in range(4):
            _png(tmp_path / "imgs" / c / f"{i}.png", i)
    (tmp_path / "imgs" / "b" / "bad.png").write_bytes(bytes(range(256)) * 2)
    err = fails(capsys, "train", "--data", "image-folder:imgs", "--out", "run", *TINY)
    assert "bad.png" in err and "skip_bad" in err


# --------------------------------------------------------------------------- run folders


def test_out_existing_non_empty_folder_is_left_untouched(capsys, tmp_path: Path) -> None:
    out = tmp_path / "precious"
    (out / "sub").mkdir(parents=True)
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    (out / "sub" / "data.bin").write_bytes(b"\x00\x01\x02")
    before = sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*"))
    err = fails(capsys, "train", "--out", "precious", *TINY)
    assert "precious" in err and "not empty" in err
    after = sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*"))
    assert after == before
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"
    assert (out / "sub" / "data.bin").read_bytes() == b"\x00\x01\x02"


def test_out_that_is_a_file(capsys, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    err = fails(capsys, "train", "--out", "f", *TINY)
    assert "'f'" in err
    assert (tmp_path / "f").read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize("out", ["f/run", "/proc/trainwell-run"])
def test_out_that_cannot_be_created(capsys, tmp_path: Path, out: str) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    err = fails(capsys, "train", "--out", out, *TINY)
    assert f"Cannot write to {out!r}" in err and "Fix:" in err


def test_out_on_a_read_only_file_system(capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    real_mkdir = Path.mkdir

    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        if self.name == "ro-run":
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    err = fails(capsys, "train", "--out", "ro-run", *TINY)
    assert "'ro-run'" in err and "Read-only file system" in err


def test_embed_out_that_cannot_be_written(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import trainwell.cli.embed as embed

    monkeypatch.setattr(embed, "load_embedder", lambda *args: (None, {}))  # the writing is what is tested
    monkeypatch.setattr(embed, "embed_images", lambda *args: np.zeros((1, 4), dtype=np.float32))
    (tmp_path / "f").write_text("x", encoding="utf-8")
    _png(tmp_path / "x.png", 0)
    err = fails(capsys, "embed", "run", "x.png", "--out", "f/e.npy")
    assert "Cannot write to 'f/e.npy'" in err


def test_resume_a_folder_that_is_not_a_run(capsys, tmp_path: Path) -> None:
    (tmp_path / "notarun").mkdir()
    (tmp_path / "notarun" / "x.txt").write_text("x", encoding="utf-8")
    err = fails(capsys, "train", "--resume", "notarun")
    assert "notarun" in err and "not a trainwell run folder" in err


def test_resume_a_file_asks_for_the_run_folder(capsys, trained_run: Path) -> None:
    err = fails(capsys, "train", "--resume", str(trained_run / "checkpoints" / "last.pt"))
    assert "is a file" in err and "the run folder" in err and f"give {str(trained_run)!r}" in err
    assert "does not exist" not in err


def test_resume_a_missing_folder(capsys) -> None:
    err = fails(capsys, "train", "--resume", "gone")
    assert "gone" in err and "does not exist" in err


def test_predict_on_a_folder_that_is_not_a_run(capsys, tmp_path: Path) -> None:
    (tmp_path / "notarun").mkdir()
    _png(tmp_path / "x.png", 0)
    err = fails(capsys, "predict", "notarun", "x.png")
    assert "notarun" in err and "not a trainwell run folder" in err


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One tiny real run (digits, 200 samples, 1 epoch) for the tests that need a run folder."""
    yield train_once(tmp_path_factory, ["--data", "digits", *TINY])


def test_predict_with_a_missing_input_file(capsys, trained_run: Path) -> None:
    err = fails(capsys, "predict", str(trained_run), "no-such-image.png")
    assert "no-such-image.png" in err


def test_predict_works_on_the_same_run(capsys, trained_run: Path, tmp_path: Path) -> None:
    """The positive control for the test above: the run folder itself is fine."""
    _png(tmp_path / "x.png", 3)
    assert main(["predict", str(trained_run), "x.png", "--json"]) == 0
    out, _ = capsys.readouterr()
    assert '"input": "x.png"' in out


def test_predict_with_a_corrupt_input_image(capsys, trained_run: Path, tmp_path: Path) -> None:
    (tmp_path / "bad.png").write_bytes(b"not an image at all")
    err = fails(capsys, "predict", str(trained_run), "bad.png")
    assert "bad.png" in err
    assert "skip_bad" not in err and "leave this file out" in err  # predict takes no --set


def test_resume_with_other_options_is_refused(capsys, trained_run: Path) -> None:
    err = fails(capsys, "train", "--resume", str(trained_run), "--lr", "0.5")
    assert "--resume" in err


# --------------------------------------------------------------------------- the real process


def test_subprocess_error_has_exit_code_2_and_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "trainwell", "train", "--data", "nope", "--optimizer", "rmsprop"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "trainwell: error:" in proc.stderr
    assert "'rmsprop'" in proc.stderr
    assert not (tmp_path / "runs").exists()


# --------------------------------------------------------------------------- inputs that once crashed


def test_set_data_to_a_plain_value(capsys) -> None:
    # last, so that TINY's --set data.limit does not turn 'data' back into a mapping
    err = fails(capsys, "train", "--out", "run", *TINY, "--set", "data=digits")
    assert "data" in err


def test_split_fractions_over_one(capsys) -> None:
    err = fails(capsys, "train", "--data", "digits", "--out", "run", *TINY,
                "--set", "data.val_fraction=0.6", "--set", "data.test_fraction=0.5")
    assert "fraction" in err


def test_device_with_a_bad_index(capsys) -> None:
    err = fails(capsys, "train", "--data", "digits", "--out", "run", *TINY, "--device", "cuda:abc")
    assert "cuda:abc" in err
