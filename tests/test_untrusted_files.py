"""Files people share never run code (docs/SECURITY.md).

Every command that reads a file someone else may have made (a checkpoint, a run's config.yaml, a ``--config``
file, an export's metadata, a ``.pt2`` archive) is tried here with a crafted copy whose payload would create a
marker file: the model named ``os:system`` with ``kwargs: {command: touch MARKER}``, the tokenizer named
``os:system`` with the text ``touch MARKER`` to predict, or a pickle that calls ``os.system``. Each must end with
exit code 2, one message naming the file and the fix, no traceback, and no marker. A new format or command that
reads files gets a row in ``CASES``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from conftest import main_in
from trainwell._errors import TrainwellError

TINY = ["--epochs", "1", "--device", "cpu", "--no-progress", "--no-doctor"]
IMAGE = ["--data", "digits", "--set", "data.limit=200", "--set", "model.channels=[4]", "--set", "model.hidden=[8]"]
TEXT = ["--task", "text", "--data", "tsv:t.tsv", "--set", "model.embed_dim=8", "--set", "model.hidden_size=4",
        "--set", "text.tokenizer=char"]

OWN_NET = '''
from torch import nn


class Net(nn.Module):
    def __init__(self, input_shape, num_classes, width=8):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(64, width), nn.ReLU(), nn.Linear(width, num_classes))

    def forward(self, x):
        return self.body(x)
'''


@dataclass
class Runs:
    root: Path  # x.png, t.tsv
    image: Path  # a finished digits run
    text: Path  # a finished text run (char tokens)
    exports: dict[str, Path]  # "image.safetensors", "image.pt2", "text.safetensors", "text.pt" -> file


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    from PIL import Image

    root = tmp_path_factory.mktemp("shared")
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (8, 8), dtype=np.uint8)).save(root / "x.png")
    good, bad = ["very good", "great", "love it"], ["very bad", "broken", "hate it"]
    lines = [f"{t} {i}\t{label}\n" for i in range(12) for label, ts in (("pos", good), ("neg", bad)) for t in ts]
    (root / "t.tsv").write_text("text\tlabel\n" + "".join(lines), encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONHASHSEED", "0")
        assert main_in(root, "train", "--out", "image", *IMAGE, *TINY) == 0
        assert main_in(root, "train", "--out", "text", *TEXT, *TINY) == 0
    names = ("image.safetensors", "image.pt2", "text.safetensors", "text.pt")
    exports = {name: root / "exports" / name.replace(".", "-") / name for name in names}  # each beside its export.json
    formats = {".safetensors": "safetensors", ".pt2": "exported", ".pt": "torchscript"}
    for name, path in exports.items():
        assert main_in(root, "export", name.split(".")[0], "--format", formats[path.suffix], "--out", str(path)) == 0
    yield Runs(root, root / "image", root / "text", exports)


# --------------------------------------------------------------------------- crafting the payloads


def evil_model(marker: Path) -> dict[str, object]:
    return {"name": "os:system", "kwargs": {"command": f"touch {marker}"}}


def crafted_run(run: Path, dst: Path, marker: Path, *, tokenizer: bool = False) -> Path:
    """A copy of ``run`` whose checkpoints name ``os:system`` as the model (or, ``tokenizer``, as the tokenizer)."""
    shutil.copytree(run, dst, ignore=shutil.ignore_patterns("export"))
    for ckpt_path in (dst / "checkpoints").glob("*.pt"):
        ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=True)
        if tokenizer:
            ckpt["data"]["tokenizer"] = "os:system"
        else:
            ckpt["config"]["model"] = evil_model(marker)
        torch.save(ckpt, ckpt_path)
    return dst


def crafted_config_yaml(run: Path, dst: Path, marker: Path) -> Path:
    """A copy of ``run`` whose config.yaml names ``os:system`` as the model, left unfinished so resume trains."""
    shutil.copytree(run, dst, ignore=shutil.ignore_patterns("export"))
    config = yaml.safe_load((dst / "config.yaml").read_text())
    config["model"] = evil_model(marker)
    (dst / "config.yaml").write_text(yaml.safe_dump(config))
    (dst / "summary.json").unlink()
    return dst


def crafted_safetensors(src: Path, dst: Path, marker: Path, *, tokenizer: bool = False) -> Path:
    """``src`` with its embedded trainwell metadata naming ``os:system`` as the model (or tokenizer)."""
    from safetensors.torch import load, save

    blob = src.read_bytes()
    (size,) = struct.unpack("<Q", blob[:8])
    metadata = json.loads(json.loads(blob[8:8 + size])["__metadata__"]["trainwell"])
    if tokenizer:
        metadata["payload"]["tokenizer"] = "os:system"
    else:
        metadata["config"]["model"] = evil_model(marker)
    dst.write_bytes(save(load(blob), metadata={"trainwell": json.dumps(metadata)}))
    return dst


def rewritten_zip(src: Path, dst: Path, replace: Callable[[str, bytes], bytes]) -> Path:
    """``src`` (a zip archive) with each member's bytes passed through ``replace(name, data)``."""
    with zipfile.ZipFile(src) as old, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as new:
        for info in old.infolist():
            new.writestr(info.filename, replace(info.filename, old.read(info.filename)))
    return dst


def crafted_torchscript_tokenizer(src: Path, dst: Path, marker: Path) -> Path:
    """A TorchScript export whose extra file trainwell.json names ``os:system`` as the tokenizer."""
    def replace(name: str, data: bytes) -> bytes:
        if not name.endswith("/extra/trainwell.json"):
            return data
        metadata = json.loads(data)
        metadata["payload"]["tokenizer"] = "os:system"
        return json.dumps(metadata).encode()

    return rewritten_zip(src, dst, replace)


class _Touch:
    """Unpickling this calls ``os.system("touch MARKER")``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


def crafted_pt2(src: Path, dst: Path, marker: Path) -> Path:
    """A real torch.export archive whose sample inputs are a pickle that runs ``touch MARKER`` when loaded
    (torch.export.load falls back to ``weights_only=False`` for them)."""
    buffer = io.BytesIO()
    torch.save(_Touch(marker), buffer)
    return rewritten_zip(src, dst, lambda name, data: buffer.getvalue() if "/sample_inputs/" in name else data)


# --------------------------------------------------------------------------- the table


@dataclass
class Case:
    """``argv(runs, tmp_path, marker)`` crafts its file in ``tmp_path`` and returns (argv, the file, the fix)."""

    argv: Callable[[Runs, Path, Path], tuple[list[str], str, str]]


def _checkpoint(command: list[str], extra: tuple[str, ...] = ()) -> Case:
    """``command[0] BAD_RUN command[1:] extra`` on a copy of the image run whose checkpoints name os:system."""

    def argv(r: Runs, tmp: Path, marker: Path) -> tuple[list[str], str, str]:
        bad = crafted_run(r.image, tmp / "bad", marker)
        return [*command[:1], str(bad), *command[1:], *extra], str(bad / "checkpoints"), "--model os:system"

    return Case(argv)


def _text_checkpoint(r: Runs, tmp: Path, marker: Path) -> tuple[list[str], str, str]:
    bad = crafted_run(r.text, tmp / "bad", marker, tokenizer=True)
    return ["predict", str(bad), f"touch {marker}"], str(bad / "checkpoints" / "best.pt"), "--tokenizer os:system"


def _resume(r: Runs, tmp: Path, marker: Path) -> tuple[list[str], str, str]:
    bad = crafted_config_yaml(r.image, tmp / "bad", marker)
    return ["train", "--resume", str(bad), "--no-progress"], str(bad / "config.yaml"), "--model os:system"


def _config_file(r: Runs, tmp: Path, marker: Path) -> tuple[list[str], str, str]:
    (tmp / "evil.yaml").write_text(yaml.safe_dump({"model": evil_model(marker)}))
    return (["train", "--config", str(tmp / "evil.yaml"), *IMAGE, *TINY, "--out", str(tmp / "new")],
            str(tmp / "evil.yaml"), "--model os:system")


def _summary(r: Runs, tmp: Path, marker: Path) -> tuple[list[str], str, str]:
    bad = crafted_config_yaml(r.image, tmp / "bad", marker)
    return ["summary", str(bad), "--input-shape", "1,8,8"], str(bad / "config.yaml"), "--model os:system"


def _export_file(key: str, craft: Callable[[Path, Path, Path], Path], text: bool, fix: str) -> Case:
    def argv(r: Runs, tmp: Path, marker: Path) -> tuple[list[str], str, str]:
        src = r.exports[key]
        bad = craft(src, tmp / f"bad{src.suffix}", marker)
        inputs = [f"touch {marker}"] if text else [str(r.root / "x.png")]
        return ["predict", str(bad), *inputs], str(bad), fix

    return Case(argv)


CASES: dict[str, Case] = {
    "predict-checkpoint-model": _checkpoint(["predict", "{x}"]),
    "predict-checkpoint-tokenizer": Case(_text_checkpoint),
    "export-torchscript-checkpoint-model": _checkpoint(["export"], ("--format", "torchscript", "--out", "{tmp}/m.pt")),
    "export-safetensors-checkpoint-model": _checkpoint(["export"], ("--format", "safetensors", "--out",
                                                                    "{tmp}/m.safetensors")),
    "embed-checkpoint-model": _checkpoint(["embed", "{x}"], ("--out", "{tmp}/e.npy")),
    "verify-checkpoint-model": _checkpoint(["verify", "{x}", "{x}"]),
    "resume-config-yaml-model": Case(_resume),
    "train-config-file-model": Case(_config_file),
    "summary-config-yaml-model": Case(_summary),
    "predict-safetensors-metadata-model": _export_file(
        "image.safetensors", crafted_safetensors, False, "--model os:system"),
    "predict-safetensors-metadata-tokenizer": _export_file(
        "text.safetensors", lambda s, d, m: crafted_safetensors(s, d, m, tokenizer=True), True,
        "--tokenizer os:system"),
    "predict-torchscript-metadata-tokenizer": _export_file(
        "text.pt", crafted_torchscript_tokenizer, True, "--tokenizer os:system"),
    "predict-pt2-pickled-sample-inputs": _export_file("image.pt2", crafted_pt2, False, "--format onnx"),
}


def run_cli(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-m", "trainwell", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=180, env=env)


@pytest.mark.parametrize("name", list(CASES))
def test_a_crafted_file_never_runs_code(runs: Runs, tmp_path: Path, name: str) -> None:
    marker = tmp_path / "marker"
    argv, named_file, fix = CASES[name].argv(runs, tmp_path, marker)
    argv = [a.replace("{x}", str(runs.root / "x.png")).replace("{tmp}", str(tmp_path)) for a in argv]
    done = run_cli(argv, tmp_path)
    shown = f"{argv}\nstdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-3000:]}"
    assert not marker.exists(), "the payload ran: " + shown
    assert done.returncode == 2, shown
    assert "Traceback" not in done.stdout + done.stderr, shown
    message = done.stderr.split("trainwell: error: ", 1)[-1]
    assert named_file in message and fix in message, shown


# --------------------------------------------------------------------------- the user's own code, named again


@pytest.fixture(scope="module")
def own_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A finished digits run of the user's own class ``tw_own_net:Net`` (a module in the run's folder)."""
    root = tmp_path_factory.mktemp("own")
    (root / "tw_own_net.py").write_text(OWN_NET)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONHASHSEED", "0")
        assert main_in(root, "train", "--out", "run", *IMAGE, *TINY, "--model", "tw_own_net:Net",
                       "--set", "model.kwargs.width=6") == 0
    from PIL import Image

    Image.fromarray(np.zeros((8, 8), dtype=np.uint8)).save(root / "x.png")
    yield root / "run"


def test_a_run_of_the_users_own_class_predicts_when_named_again(own_run: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    root = own_run.parent
    assert main_in(root, "predict", "run", "x.png") == 2
    err = capsys.readouterr().err
    assert "run/checkpoints/best.pt names the model 'tw_own_net:Net'" in err and "--model tw_own_net:Net" in err
    assert main_in(root, "predict", "run", "x.png", "--model", "tw_own_net:Other") == 2  # exact text only
    capsys.readouterr()
    assert main_in(root, "predict", "run", "x.png", "--model", "tw_own_net:Net", "--json") == 0
    assert json.loads(capsys.readouterr().out)[0]["input"] == "x.png"


def test_a_run_of_the_users_own_class_resumes_when_named_again(own_run: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = own_run.parent
    shutil.copytree(own_run, root / "again")
    (root / "again" / "summary.json").unlink()  # unfinished: resume trains (here: finishes the run)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONHASHSEED", "0")
        assert main_in(root, "train", "--resume", "again", "--no-progress") == 2
        assert "--model tw_own_net:Net" in capsys.readouterr().err
        assert main_in(root, "train", "--resume", "again", "--model", "mlp") == 2  # cannot change the model
        assert "cannot change it" in capsys.readouterr().err
        assert main_in(root, "train", "--resume", "again", "--no-progress", "--model", "tw_own_net:Net") == 0
    assert (root / "again" / "summary.json").is_file()


def test_a_config_file_names_code_only_with_the_command_line(tmp_path: Path) -> None:
    from trainwell.app.configure import resolve

    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump({"model": {"name": "tw_own_net:Net"}, "text": {"tokenizer": "char"}}))
    with pytest.raises(TrainwellError, match=r"(?s)exp.yaml names the model 'tw_own_net:Net'.*--model tw_own_net:Net"):
        resolve(file=path)
    assert resolve(file=path, flags={"model.name": "tw_own_net:Net"}).model.name == "tw_own_net:Net"
    assert resolve(file=path, sets=["model.name=tw_own_net:Net"]).model.name == "tw_own_net:Net"
    assert resolve(file=path, flags={"model.name": "cnn"}).model.name == "cnn"  # the file's choice is not used
    path.write_text(yaml.safe_dump({"text": {"tokenizer": "mytok:split"}}))
    with pytest.raises(TrainwellError, match="--tokenizer mytok:split"):
        resolve(file=path)
    assert resolve(file=path, flags={"text.tokenizer": "mytok:split"}).text.tokenizer == "mytok:split"


@pytest.mark.slow
def test_nproc_workers_train_the_users_own_class_named_on_the_command_line(own_run: Path) -> None:
    """The workers of --nproc read the run's config.yaml; the launcher names the user's class to them again."""
    done = run_cli(["train", "--nproc", "2", "--out", "ddp", *IMAGE, *TINY, "--threads", "1",
                    "--model", "tw_own_net:Net"], own_run.parent)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (own_run.parent / "ddp" / "summary.json").is_file()


# --------------------------------------------------------------------------- nothing is lost, bad predict input


def test_export_never_replaces_a_run_folders_file_and_needs_force_for_another(
        runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    shutil.copytree(runs.image, run, ignore=shutil.ignore_patterns("export"))
    best = (run / "checkpoints" / "best.pt").read_bytes()
    for extra in ([], ["--force"]):
        assert main_in(runs.root, "export", str(run), "--format", "torchscript",
                       "--out", str(run / "checkpoints" / "best.pt"), *extra) == 2
        err = capsys.readouterr().err
        assert "is a file of the run folder" in err and "Traceback" not in err
    assert (run / "checkpoints" / "best.pt").read_bytes() == best
    other = tmp_path / "mine.pt"
    other.write_bytes(b"keep me")
    assert main_in(runs.root, "export", str(run), "--format", "torchscript", "--out", str(other)) == 2
    assert "exists already" in capsys.readouterr().err and other.read_bytes() == b"keep me"
    assert main_in(runs.root, "export", str(run), "--format", "torchscript", "--out", str(other), "--force") == 0
    assert other.read_bytes() != b"keep me"


def _png_header_only(path: Path, width: int, height: int) -> None:
    """A PNG that declares ``width`` x ``height`` pixels (a decompression bomb's header), with one empty IDAT."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) +
                     chunk(b"IEND", b""))


def test_predict_refuses_a_decompression_bomb_image_clearly(runs: Runs, tmp_path: Path) -> None:
    _png_header_only(tmp_path / "bomb.png", 20_000, 20_000)
    done = run_cli(["predict", str(runs.image), "bomb.png"], tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "bomb.png" in done.stderr and "too large" in done.stderr


@pytest.mark.parametrize("k", ["0", "-5"])
def test_predict_refuses_a_top_k_below_one(runs: Runs, k: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_in(runs.root, "predict", "image", "x.png", "--top-k", k) == 2
    err = capsys.readouterr().err
    assert f"--top-k {k}" in err and "at least 1" in err and "Traceback" not in err
