"""The image libraries' models by name (``torchvision:NAME``, ``timm:NAME``): built for the data's classes and
channels, published weights that cannot be downloaded said in one paragraph with the way out, a local state dict
of the library's architecture loaded with its head replaced, the weights' own normalization, and names a file may
hold (a registry entry is not code). Published weights themselves were not downloaded here (no network)."""

from __future__ import annotations

import urllib.error
from pathlib import Path

import pytest
import torch

from conftest import main_in
from trainwell._errors import TrainwellError
from trainwell.config import ModelConfig
from trainwell.models import build_model
from trainwell.app.pretrained import load_pretrained
from trainwell.models.head import head_of
from trainwell.models.library import published_preprocessing

FAST = ["--data", "digits", "--epochs", "1", "--threads", "1", "--no-progress", "--no-doctor", "--set",
        "data.limit=200"]


def test_a_torchvision_model_is_built_for_the_data_and_takes_grayscale() -> None:
    model = build_model(ModelConfig(name="torchvision:resnet18"), (1, 8, 8), 7)
    assert head_of(model)[0] == "fc" and model.fc.out_features == 7
    assert model(torch.zeros(2, 1, 8, 8)).shape == (2, 7)  # repeated to the 3 channels conv1 takes
    with pytest.raises(TrainwellError, match="Did you mean 'resnet18'"):
        build_model(ModelConfig(name="torchvision:resnet181"), (3, 8, 8), 7)
    with pytest.raises(TrainwellError, match="is an image model"):
        build_model(ModelConfig(name="torchvision:resnet18"), (13,), 3)


def test_published_weights_that_cannot_be_downloaded_are_one_paragraph(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))

    def offline(*args: object, **kwargs: object) -> None:
        raise urllib.error.URLError("[Errno -2] Name or service not known")

    monkeypatch.setattr("torchvision.models._api.load_state_dict_from_url", offline)  # what the weights call
    with pytest.raises(TrainwellError, match="published weights of torchvision:resnet18 are not in this machine's "
                                             "cache and could not be downloaded") as caught:
        build_model(ModelConfig(name="torchvision:resnet18", pretrained=True), (3, 32, 32), 4)
    assert str(tmp_path / "torch") in caught.value.fix and "--pretrained PATH" in caught.value.fix


def test_published_weights_are_for_library_models_only() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="pretrained=true takes the published weights"):
        ModelConfig(name="cnn", pretrained=True)
    assert ModelConfig(name="cnn", pretrained=False).pretrained is None


def test_a_local_file_of_the_library_architecture_gets_a_new_head(tmp_path: Path) -> None:
    import torchvision

    torch.manual_seed(0)
    imagenet = torchvision.models.resnet18(num_classes=1000)
    torch.save(imagenet.state_dict(), tmp_path / "resnet18.pth")
    model = build_model(ModelConfig(name="torchvision:resnet18"), (3, 16, 16), 5)
    said = load_pretrained(model, tmp_path / "resnet18.pth")
    assert "head fc (Linear 512 -> 1000) replaced by a new Linear 512 -> 5" in said
    assert torch.equal(model.layer1[0].conv1.weight, imagenet.layer1[0].conv1.weight)
    assert torch.equal(model.bn1.running_mean, imagenet.bn1.running_mean)


def test_the_published_weights_normalization_is_the_librarys() -> None:
    published = published_preprocessing("torchvision:resnet18")
    assert published is not None
    assert published.mean == pytest.approx([0.485, 0.456, 0.406])
    assert published.std == pytest.approx([0.229, 0.224, 0.225])


def test_a_timm_model_is_built_for_the_data_channels() -> None:
    pytest.importorskip("timm")
    model = build_model(ModelConfig(name="timm:resnet18"), (1, 16, 16), 3)
    assert model(torch.zeros(2, 1, 16, 16)).shape == (2, 3)
    with pytest.raises(TrainwellError, match="timm: "):
        build_model(ModelConfig(name="timm:no_such_net"), (3, 16, 16), 3)


def test_a_run_with_a_library_model_trains_predicts_and_may_be_named_by_its_files(tmp_path: Path) -> None:
    assert main_in(tmp_path, "train", *FAST, "--model", "torchvision:resnet18", "--out", "run") == 0
    from trainwell.cli.predict import load_predictor

    model, _ = load_predictor(tmp_path / "run")  # no --model typed again: a library's name is not code
    assert model(torch.zeros(1, 1, 8, 8)).shape == (1, 10)
    from trainwell._trust import check_file_names

    check_file_names([("model.name", "torchvision:resnet18"), ("model.name", "timm:convnext_tiny")], "config.yaml")
    with pytest.raises(TrainwellError):
        check_file_names([("model.name", "torchvision_extras:resnet18")], "config.yaml")


def test_published_weights_end_to_end_with_the_download_stood_in(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The published-weights path, offline: torchvision's download returns weights made here. The head is
    replaced, the images take the weights' size and normalization, and predict rebuilds the model without
    downloading anything."""
    import numpy as np
    import torchvision
    from PIL import Image

    torch.manual_seed(0)
    stand_in = torchvision.models.resnet18().state_dict()
    monkeypatch.setattr("torchvision.models._api.load_state_dict_from_url", lambda *args, **kwargs: stand_in)
    rng = np.random.default_rng(0)
    for label in ("cat", "dog"):
        (tmp_path / "photos" / label).mkdir(parents=True)
        for i in range(6):
            Image.fromarray(rng.integers(0, 255, (20, 30, 3), dtype=np.uint8)).save(tmp_path / "photos" / label /
                                                                                   f"{i}.png")
    assert main_in(tmp_path, "train", "--data", "image-folder:photos", "--model", "torchvision:resnet18",
                   "--pretrained", "--epochs", "1", "--batch-size", "4", "--threads", "1", "--no-progress",
                   "--no-doctor", "--set", "data.val_fraction=0.2", "--set", "data.test_fraction=0.2", "--out",
                   "run") == 0
    err = capsys.readouterr().err
    assert "the published weights of torchvision:resnet18; head fc replaced by a new Linear 512 -> 2" in err
    assert "images: shorter side resized to 256 (bilinear), centre 224 x 224 cropped" in err
    assert "(mean 0.485, 0.456, 0.406, std 0.229, 0.224, 0.225)" in err
    ckpt = torch.load(tmp_path / "run" / "checkpoints" / "best.pt", weights_only=True)
    assert ckpt["config"]["data"]["image_size"] == 224 and ckpt["config"]["model"]["pretrained"] is True
    assert ckpt["config"]["data"]["resize_size"] == 256 and ckpt["data"]["preprocess"]["resize_size"] == 256
    assert ckpt["data"]["preprocess"]["mean"] == pytest.approx([0.485, 0.456, 0.406])

    def no_download(*args: object, **kwargs: object) -> None:
        raise AssertionError("predict downloaded weights")

    monkeypatch.setattr("torchvision.models._api.load_state_dict_from_url", no_download)
    from trainwell.cli.predict import load_predictor

    model, data = load_predictor(tmp_path / "run")
    assert model(torch.zeros(1, 3, 224, 224)).shape == (1, 2) and data["preprocess"]["input_shape"] == [3, 224, 224]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["torchvision:mobilenet_v3_small", "timm:resnet18"])
def test_a_library_model_from_a_local_state_dict_trains_exports_with_parity_and_predicts(tmp_path: Path,
                                                                                        name: str) -> None:
    """A small torchvision and a timm architecture, end to end: from weights saved to a local file (the head
    replaced), a run, ONNX export with parity checked by `trainwell export`, and predict."""
    import json

    if name.startswith("timm"):
        pytest.importorskip("timm")
    torch.manual_seed(0)
    source = build_model(ModelConfig(name=name), (1, 8, 8), 1000)
    torch.save(source.state_dict(), tmp_path / "weights.pt")
    assert main_in(tmp_path, "train", *FAST, "--model", name, "--pretrained", "weights.pt", "--out", "run") == 0
    assert main_in(tmp_path, "export", "run", "--format", "onnx") == 0
    report = json.loads((tmp_path / "run" / "export" / "onnx" / "export.json").read_text())
    assert report["parity"]["passed"] and report["parity"]["top1_agreement"] == 1.0, report["parity"]
    from trainwell.cli.predict import load_predictor

    model, _ = load_predictor(tmp_path / "run")
    assert model(torch.zeros(1, 1, 8, 8)).shape == (1, 10)
