"""Photos as pretrained image models expect them: the published weights' resize, centre crop and filter (from
torchvision's weights transforms and timm's pretrained_cfg, read without downloading), recorded so predict and
export do the same; photo augmentation (random resized crop, flip, TrivialAugmentWide) by default for library
models on image folders, each image's draws a function of (seed, epoch, index) whatever batch or loader worker it
is loaded in; image folders decoded in the loader's worker processes; a resumed run equal to an uninterrupted one."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import main_in
from PIL import Image

from trainwell._errors import TrainwellError
from trainwell.app.configure import resolve
from trainwell.data import build_data
from trainwell.data.folder import ImageFiles, load_image
from trainwell.data.geometry import ImageGeometry
from trainwell.data.loading import EpochLoader
from trainwell.data.photo import PhotoAugment, sample_key
from trainwell.models.library import published_preprocessing


def _photos(root: Path, per_class: int = 6, size: tuple[int, int] = (30, 40), seed: int = 0) -> Path:
    """A folder of random RGB photos (height, width ``size``), two classes."""
    rng = np.random.default_rng(seed)
    for label in ("cat", "dog"):
        (root / label).mkdir(parents=True)
        for i in range(per_class):
            Image.fromarray(rng.integers(0, 255, (*size, 3), dtype=np.uint8)).save(root / label / f"{i}.png")
    return root


def _config(path: Path, *sets: str, model: str = "torchvision:resnet18", pretrained: bool | None = None):
    flags = {"data.name": f"image-folder:{path}", "model.name": model, "model.pretrained": pretrained}
    return resolve(flags=flags, sets=list(sets))


# --------------------------------------------------------------------------- the weights' resize and crop


def test_torchvision_weights_give_their_resize_crop_and_filter() -> None:
    from torchvision import models

    for arch in ("resnet18", "efficientnet_v2_s"):
        expected = models.get_model_weights(arch).DEFAULT.transforms()  # metadata only: nothing is downloaded
        published = published_preprocessing(f"torchvision:{arch}")
        assert published is not None
        assert (published.crop_size, published.resize_size) == (expected.crop_size[0], expected.resize_size[0])
        assert published.interpolation == expected.interpolation.value
    resnet = published_preprocessing("torchvision:resnet18")
    assert resnet is not None and (resnet.crop_size, resnet.resize_size, resnet.interpolation) == (224, 256, "bilinear")
    assert resnet.mean == pytest.approx([0.485, 0.456, 0.406]) and resnet.std == pytest.approx([0.229, 0.224, 0.225])


def test_timm_pretrained_cfg_gives_input_size_crop_pct_and_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    timm = pytest.importorskip("timm")
    cfg = timm.get_pretrained_cfg("resnet18")  # timm's registry, not the hub
    published = published_preprocessing("timm:resnet18")
    assert published is not None and published.crop_size == cfg.input_size[-1] == 224
    assert published.resize_size == int(224 / cfg.crop_pct) and published.interpolation == cfg.interpolation
    from timm.models import PretrainedCfg

    stand_in = PretrainedCfg(input_size=(3, 160, 160), crop_pct=0.8, interpolation="bilinear", crop_mode="squash",
                             mean=(0.5, 0.5, 0.5), std=(0.25, 0.25, 0.25))
    monkeypatch.setattr(timm, "get_pretrained_cfg", lambda name: stand_in)
    published = published_preprocessing("timm:any_net")
    assert published is not None
    assert (published.crop_size, published.resize_size, published.interpolation) == (160, 200, "bilinear")
    assert published.crop_mode == "squash" and published.mean == [0.5, 0.5, 0.5]


def test_published_weights_set_the_geometry_in_the_config_unless_given(tmp_path: Path) -> None:
    from trainwell.app.pretrained import folder_geometry

    config = _config(tmp_path, pretrained=True)
    said = folder_geometry(config)
    assert (config.data.image_size, config.data.resize_size, config.data.interpolation) == (224, 256, "bilinear")
    assert said is not None and "shorter side resized to 256 (bilinear), centre 224 x 224 cropped" in said
    own = _config(tmp_path, "data.image_size=160", "data.interpolation=bicubic", pretrained=True)
    folder_geometry(own)  # the weights' ratio of resize to crop kept, the filter given kept
    assert (own.data.image_size, own.data.resize_size, own.data.interpolation) == (160, 182, "bicubic")
    straight = _config(tmp_path, "data.resize_size=null", pretrained=True)
    folder_geometry(straight)  # null given: resized straight to the weights' side
    assert (straight.data.image_size, straight.data.resize_size) == (224, None)
    with pytest.raises(TrainwellError, match="data.resize_size=200 is smaller than the 224 pixels"):
        folder_geometry(_config(tmp_path, "data.resize_size=200", pretrained=True))
    plain = _config(tmp_path)  # a library model without its published weights: nothing taken from them
    assert folder_geometry(plain) is None and plain.data.resize_size is None and plain.data.interpolation == "bilinear"


def test_resize_then_centre_crop_is_what_the_weights_transforms_give(tmp_path: Path) -> None:
    """A wide photo: the shorter side resized (the aspect kept), the centre cropped, with the weights' filter,
    equal to torchvision's own ``weights.transforms()`` on the same file once normalized alike."""
    from torchvision import models

    rng = np.random.default_rng(1)
    Image.fromarray(rng.integers(0, 255, (300, 420, 3), dtype=np.uint8)).save(tmp_path / "wide.png")
    transforms = models.get_model_weights("resnet18").DEFAULT.transforms()
    with Image.open(tmp_path / "wide.png") as img:
        theirs = transforms(img.convert("RGB"))
    ours = load_image(tmp_path / "wide.png", 3, ImageGeometry((224, 224), 256, "bilinear"))
    mean, std = torch.tensor(transforms.mean).view(3, 1, 1), torch.tensor(transforms.std).view(3, 1, 1)
    assert ours.shape == theirs.shape == (3, 224, 224)
    assert torch.allclose((ours - mean) / std, theirs, atol=1e-5)
    squashed = load_image(tmp_path / "wide.png", 3, (224, 224))  # the straight resize is another picture
    assert not torch.allclose(squashed, ours, atol=1e-2)


def test_predict_and_export_apply_the_runs_crop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run on published weights (torchvision's download standing in) records its resize, crop and filter in
    config.yaml and its checkpoints; predict, from the run folder and from an export, resizes and crops a new file
    the same way."""
    import json

    import torchvision
    import yaml

    torch.manual_seed(0)
    stand_in = torchvision.models.resnet18().state_dict()
    monkeypatch.setattr("torchvision.models._api.load_state_dict_from_url", lambda *args, **kwargs: stand_in)
    _photos(tmp_path / "photos", per_class=5)
    assert main_in(tmp_path, "train", "--data", "image-folder:photos", "--model", "torchvision:resnet18",
                   "--pretrained", "--epochs", "1", "--batch-size", "4", "--threads", "1", "--no-progress",
                   "--no-doctor", "--set", "data.image_size=32", "--set", "data.interpolation=bicubic", "--out",
                   "run") == 0
    recorded = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["data"]
    assert (recorded["image_size"], recorded["resize_size"], recorded["interpolation"]) == (32, 36, "bicubic")
    assert recorded["augment"] == "photo"
    pre = torch.load(tmp_path / "run" / "checkpoints" / "best.pt", weights_only=True)["data"]["preprocess"]
    assert (pre["input_shape"], pre["resize_size"], pre["interpolation"]) == ([3, 32, 32], 36, "bicubic")

    rng = np.random.default_rng(2)
    Image.fromarray(rng.integers(0, 255, (50, 80, 3), dtype=np.uint8)).save(tmp_path / "new.png")
    from torchvision.transforms import v2

    from trainwell.cli.predict import _inputs
    from trainwell.data import Preprocess

    expected = v2.Compose([v2.Resize(36, interpolation=v2.InterpolationMode.BICUBIC), v2.CenterCrop(32),
                           v2.PILToTensor(), v2.ToDtype(torch.float32, scale=True),
                           v2.Normalize(pre["mean"], pre["std"])])
    with Image.open(tmp_path / "new.png") as img:
        wanted = expected(img.convert("RGB"))
    x, *_ = _inputs([tmp_path / "new.png"], Preprocess.from_dict(pre))
    assert torch.allclose(x[0], wanted, atol=1e-5)

    assert main_in(tmp_path, "export", "run", "--format", "torchscript") == 0
    exported = next((tmp_path / "run" / "export").rglob("export.json"))
    payload = json.loads(exported.read_text())["payload"]["preprocess"]
    assert (payload["resize_size"], payload["interpolation"]) == (36, "bicubic")


# --------------------------------------------------------------------------- photo augmentation by default


def test_photo_augmentation_is_the_default_for_library_models_on_image_folders_only(tmp_path: Path) -> None:
    assert _config(tmp_path).data.augment == "photo"
    assert _config(tmp_path, model="cnn").data.augment == "none"  # the built-in models keep theirs
    assert _config(tmp_path, "data.augment=none").data.augment == "none"  # turned off
    digits = resolve(flags={"data.name": "mnist-5k", "model.name": "torchvision:resnet18"})
    assert digits.data.augment == "affine"  # a dataset's measured recipe is kept
    with pytest.raises(TrainwellError, match="data.augment=photo is for classification; the embedding task"):
        resolve(flags={"data.name": f"image-folder:{tmp_path}", "task": "embedding"}, sets=["data.augment=photo"])
    with pytest.raises(TrainwellError, match="augment=photo augments image files one by one"):
        resolve(flags={"data.name": "digits"}, sets=["data.augment=photo"])
    with pytest.raises(TrainwellError, match="resize_size=20 is smaller than image_size=32"):
        _config(tmp_path, "data.image_size=32", "data.resize_size=20")
    with pytest.raises(TrainwellError, match=r"problem:\n  - Value error, data.resize_size needs data.image_size"):
        _config(tmp_path, "data.resize_size=40", model="cnn")


def test_the_training_split_is_augmented_and_evaluation_is_not(tmp_path: Path) -> None:
    bundle = build_data(_config(_photos(tmp_path / "photos"), "data.image_size=16").data)
    train = bundle.train
    assert isinstance(train, ImageFiles) and train.draws_per_sample and bundle.val is not None
    assert not bundle.val.draws_per_sample
    assert "augmented as photos: random resized crop to 16 x 16 (bilinear)" in bundle.info["notes"][0]
    plain = train[0][0]  # a plain index: the image as evaluation sees it
    assert torch.equal(plain, load_image(train.items[0][0], 3, (16, 16)))
    drawn = [train[sample_key(0, epoch, 0)][0] for epoch in range(4)]
    assert all(x.shape == (3, 16, 16) and 0 <= x.min() and x.max() <= 1 for x in drawn)
    assert not all(torch.equal(drawn[0], x) for x in drawn[1:])  # other epochs, other draws
    cnn = build_data(_config(tmp_path / "photos", "data.image_size=16", model="cnn").data).train
    assert not cnn.draws_per_sample


def test_augmentation_draws_follow_the_sample_not_the_batch_worker_or_global_stream(tmp_path: Path) -> None:
    train = build_data(_config(_photos(tmp_path / "photos", per_class=7), "data.image_size=12").data).train

    def epoch_images(batch_size: int, workers: int, epoch: int) -> dict[int, torch.Tensor]:
        loader = EpochLoader(train, batch_size=batch_size, shuffle=True, seed=3, num_workers=workers)
        loader.set_epoch(epoch)
        out: dict[int, torch.Tensor] = {}
        for planned, (x, _) in loader.micro_batches():
            out.update({i: x[k] for k, i in enumerate(planned.indices)})
        return out

    torch.manual_seed(123)
    before = torch.get_rng_state()
    one = epoch_images(4, 0, epoch=1)
    assert torch.equal(torch.get_rng_state(), before)  # dropout's stream is left as it was
    other = epoch_images(3, 2, epoch=1)  # other batches, two worker processes
    assert one.keys() == other.keys() == set(range(len(train)))
    assert all(torch.equal(one[i], other[i]) for i in one)
    assert all(torch.equal(one[i], train[sample_key(3, 1, i)][0]) for i in one)
    later = epoch_images(4, 0, epoch=2)
    assert sum(torch.equal(one[i], later[i]) for i in one) < len(one) // 2


def test_grayscale_photos_8_and_16_bit_are_augmented(tmp_path: Path) -> None:
    """8-bit grayscale goes through Pillow's operations; 16-bit, which they refuse, as a float tensor."""
    ramp = np.linspace(0, 65535, 20 * 24, dtype=np.uint16).reshape(20, 24)
    Image.fromarray(ramp).save(tmp_path / "deep.png")
    Image.fromarray((ramp // 257).astype(np.uint8), mode="L").save(tmp_path / "plain.png")
    augment = PhotoAugment(ImageGeometry((8, 8)))
    from trainwell.data.folder import load_augmented

    for name in ("deep.png", "plain.png"):
        for channels in (1, 3):
            for seed in range(12):  # TrivialAugmentWide's operations, most of them
                x = load_augmented(tmp_path / name, channels, augment, seed=seed)
                assert x.shape == (channels, 8, 8) and x.dtype == torch.float32 and 0 <= x.min() and x.max() <= 1
            assert torch.equal(x, load_augmented(tmp_path / name, channels, augment, seed=11))


# --------------------------------------------------------------------------- loading in worker processes


def test_image_folders_load_in_persistent_workers_pinned_for_cuda(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.app.run import _loader_options
    from trainwell.machine import Machine
    from trainwell.tasks import get_task

    monkeypatch.setattr("trainwell.machine.this_machine", lambda *a, **k: Machine(cores=3))
    monkeypatch.setattr("trainwell.app.run.this_machine", lambda *a, **k: Machine(cores=3))
    config = _config(_photos(tmp_path / "photos"), "data.image_size=12")
    bundle = build_data(config.data)
    options = _loader_options(get_task("classification"), config, bundle.train, True, train=True)
    assert options["num_workers"] == 2 and options["persistent_workers"] and options["pin_memory"]
    loader = EpochLoader(bundle.train, batch_size=4, shuffle=True, seed=0, **options)
    assert loader.loader.num_workers == 2 and loader.loader.persistent_workers
    digits = build_data(resolve(flags={"data.name": "digits"}).data)  # in memory: no workers
    assert _loader_options(get_task("classification"), config, digits.train, False, train=True)["num_workers"] == 0


def test_a_slow_loader_is_said_on_the_epoch_line() -> None:
    from types import SimpleNamespace

    from trainwell.engine.progress import epoch_line

    trainer = SimpleNamespace(epochs=3)
    row = {"epoch": 1, "train_loss": 0.5, "val_loss": 0.6, "lr": 1e-3, "seconds": 2.0}
    assert "waiting for data" not in epoch_line(trainer, {**row, "data_wait": 0.05})  # type: ignore[arg-type]
    assert "waiting for data 45%" in epoch_line(trainer, {**row, "data_wait": 0.45})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- exact resume


@pytest.fixture
def _python_sigint() -> Iterator[None]:
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_an_image_folder_run_with_photo_augmentation_resumes_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   _python_sigint: None) -> None:
    """Interrupted mid-epoch and resumed, a library model on an image folder (photo augmentation, loader workers)
    ends with the weights of the uninterrupted run."""
    from test_interrupt import interrupt_after

    _photos(tmp_path / "photos", per_class=8, size=(20, 26))
    args = ["--data", "image-folder:photos", "--model", "torchvision:resnet18", "--epochs", "2", "--batch-size", "4",
            "--threads", "1", "--no-progress", "--no-doctor", "--set", "data.image_size=16", "--set",
            "data.num_workers=1", "--set", "data.val_fraction=0.25", "--set", "data.test_fraction=0.25"]
    assert main_in(tmp_path, "train", *args, "--out", "full") == 0
    with monkeypatch.context() as mp:
        interrupt_after(mp, 3)
        assert main_in(tmp_path, "train", *args, "--out", "cut") == 130
    state = torch.load(tmp_path / "cut" / "checkpoints" / "last.pt", weights_only=True)["state"]
    assert state["epoch"] == 1 and state["batch_in_epoch"] == 1  # mid-way through the second epoch
    assert main_in(tmp_path, "train", "--resume", "cut") == 0
    full = torch.load(tmp_path / "full" / "checkpoints" / "last.pt", weights_only=True)["model"]
    resumed = torch.load(tmp_path / "cut" / "checkpoints" / "last.pt", weights_only=True)["model"]
    assert full.keys() == resumed.keys() and all(torch.equal(full[k], resumed[k]) for k in full)
