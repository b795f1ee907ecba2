"""Starting from pretrained weights (``--pretrained`` / ``model.pretrained``): a run folder or a state dict file
loaded into the model, the head replaced (at zero) for other classes and kept for the same ones, the data
normalized as the pretrained run's, weights of another architecture refused by name, and the fine-tuning recipe
(the backbone frozen with its BatchNorm statistics for the first epochs, then trained at its own lower rate)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from conftest import main_in, train_once
from trainwell._errors import TrainwellError
from trainwell.engine.finetune import FreezeBackbone, param_groups
from trainwell.engine.optim import build_optimizer, build_scheduler
from trainwell.app.pretrained import load_pretrained, read_weights
from trainwell.models.head import head_of

FAST = ["--data", "digits", "--epochs", "1", "--threads", "1", "--no-progress", "--no-doctor",
        "--set", "model.channels=[8]", "--set", "model.hidden=[16]"]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_once(tmp_path_factory, FAST)


def _net(classes: int = 10) -> nn.Module:
    torch.manual_seed(1)
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 8),
                         nn.ReLU(), nn.Linear(8, classes))


def _best(run: Path) -> dict[str, torch.Tensor]:
    return torch.load(run / "checkpoints" / "best.pt", weights_only=True)["model"]


def test_a_run_on_other_classes_gets_every_weight_but_a_new_head_starting_at_zero(tmp_path: Path, source: Path) -> None:
    from trainwell.config import ModelConfig
    from trainwell.models import build_model

    model = build_model(ModelConfig(channels=[8], hidden=[16]), (1, 8, 8), 10)
    said = load_pretrained(model, source, classes=[f"digit {i}" for i in range(10)])
    name, head = head_of(model)
    assert name == "classifier.3" and "Linear 16 -> 10) replaced" in said and "starting at zero" in said
    assert not head.weight.any() and not head.bias.any()
    theirs = _best(source)
    for key, value in model.state_dict().items():
        if not key.startswith(name):
            assert torch.equal(value, theirs[key]), key
    # The same classes, in the same order: the head is the run's too (training goes on from it).
    again = build_model(ModelConfig(channels=[8], hidden=[16]), (1, 8, 8), 10)
    classes = torch.load(source / "checkpoints" / "best.pt", weights_only=True)["data"]["class_names"]
    assert "kept (the same classes)" in load_pretrained(again, source, classes=classes)
    assert torch.equal(again.state_dict()[f"{name}.weight"], theirs[f"{name}.weight"])


@pytest.mark.parametrize("form", ["pt", "pth-wrapped", "safetensors", "trainwell-checkpoint"])
def test_a_state_dict_file_is_read_as_data(tmp_path: Path, form: str) -> None:
    original = _net()
    state = original.state_dict()
    if form == "pt":
        path = tmp_path / "w.pt"
        torch.save(state, path)
    elif form == "pth-wrapped":
        path = tmp_path / "w.pth"
        torch.save({"state_dict": state, "epoch": 3}, path)
    elif form == "safetensors":
        from safetensors.torch import save_file

        path = tmp_path / "w.safetensors"
        save_file({k: v.contiguous() for k, v in state.items()}, path)
    else:
        path = tmp_path / "best.pt"
        torch.save({"format": "trainwell-checkpoint/1", "model": state}, path)
    read = read_weights(path)
    assert read.classes is None and read.state.keys() == state.keys()
    fresh = _net(classes=3)  # another number of classes: everything but the head
    said = load_pretrained(fresh, path)
    assert "head 6 (Linear 8 -> 10) replaced by a new Linear 8 -> 3" in said
    assert torch.equal(fresh[4].weight, original[4].weight) and torch.equal(fresh[1].running_var, original[1].running_var)


def test_files_that_are_not_weights_are_refused_with_the_way_out(tmp_path: Path) -> None:
    with pytest.raises(TrainwellError, match="no such file or run folder"):
        read_weights(tmp_path / "nothing.pt")
    (tmp_path / "w.onnx").write_bytes(b"x")
    with pytest.raises(TrainwellError, match=r"\.onnx file is not a state dict"):
        read_weights(tmp_path / "w.onnx")
    torch.save(_net(), tmp_path / "whole.pt")  # a pickled module: weights_only refuses to execute it
    with pytest.raises(TrainwellError, match="cannot be read") as caught:
        read_weights(tmp_path / "whole.pt")
    assert "state_dict()" in caught.value.fix
    torch.save({"lr": 0.1}, tmp_path / "other.pt")
    with pytest.raises(TrainwellError, match="does not hold a state dict"):
        read_weights(tmp_path / "other.pt")


def test_weights_of_another_architecture_are_refused_naming_the_keys(tmp_path: Path) -> None:
    torch.save(_net().state_dict(), tmp_path / "w.pt")
    wider = nn.Sequential(nn.Conv2d(1, 6, 3), nn.BatchNorm2d(6), nn.ReLU(), nn.Flatten(), nn.Linear(6 * 6 * 6, 8),
                          nn.ReLU(), nn.Linear(8, 10))
    with pytest.raises(TrainwellError, match=r"other shapes: 0\.weight \(4, 1, 3, 3\) \(this model: \(6, 1, 3, 3\)\)"):
        load_pretrained(wider, tmp_path / "w.pt")
    normed = nn.Sequential(*list(_net())[:6], nn.BatchNorm1d(8), nn.Linear(8, 10))  # a layer where the head was
    with pytest.raises(TrainwellError, match=r"missing: 6\.running_mean, 6\.running_var, 6\.num_batches_tracked; "
                                             r"other shapes: 6\.weight \(10, 8\) \(this model: \(8,\)\)") as caught:
        load_pretrained(normed, tmp_path / "w.pt")
    shorter = nn.Sequential(*list(_net())[:4], nn.Linear(4 * 6 * 6, 10))
    with pytest.raises(TrainwellError, match=r"not in this model: 6\.weight, 6\.bias"):
        load_pretrained(shorter, tmp_path / "w.pt")
    assert "model.channels" in caught.value.fix
    no_linear = nn.Sequential(nn.Conv2d(1, 2, 3))
    with pytest.raises(TrainwellError, match="no nn.Linear layer"):
        load_pretrained(no_linear, tmp_path / "w.pt")


def test_the_backbone_is_frozen_with_its_statistics_then_trains_at_its_own_rate() -> None:
    model = _net()
    _, head = head_of(model)
    groups = param_groups(model, head, 0.01, 0.1)
    optimizer = build_optimizer(groups, "adam", 0.01)
    assert [g["lr"] for g in optimizer.param_groups] == pytest.approx([0.01, 0.001])  # the head's first
    scheduler, _ = build_scheduler(optimizer, "onecycle", epochs=1, steps_per_epoch=10)
    assert [g["max_lr"] for g in optimizer.param_groups] == pytest.approx([0.01, 0.001])  # each its own peak
    assert scheduler is not None

    class State:
        epoch = 0

    class Trainer:
        state = State()

    freeze = FreezeBackbone(model, head, epochs=1)
    before = {k: v.clone() for k, v in model.state_dict().items()}

    def step() -> None:
        model.train()
        freeze.on_epoch_start(Trainer())  # type: ignore[arg-type]
        optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
        nn.functional.cross_entropy(model(torch.randn(8, 1, 8, 8)), torch.randint(0, 10, (8,))).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()
    after = model.state_dict()
    for key in ("0.weight", "1.weight", "1.running_mean", "1.running_var", "4.weight"):
        assert torch.equal(after[key], before[key]), key  # frozen: weights and BatchNorm statistics
    assert not torch.equal(after["6.weight"], before["6.weight"])  # the head trains
    Trainer.state.epoch = 1
    step()
    assert not torch.equal(model.state_dict()["0.weight"], before["0.weight"])
    assert not torch.equal(model.state_dict()["1.running_mean"], before["1.running_mean"])


def test_a_fine_tuning_run_says_what_it_loaded_and_keeps_the_pretrained_normalization(tmp_path: Path, source: Path,
                                                                                      capsys: pytest.CaptureFixture[str]
                                                                                      ) -> None:
    assert main_in(tmp_path, "train", *FAST, "--epochs", "2", "--out", "tuned", "--pretrained", str(source)) == 0
    err = capsys.readouterr().err
    assert "pretrained: 10 tensors from the run" in err and "head classifier.3 kept (the same classes)" in err
    assert "inputs normalized as the pretrained run's were" in err
    theirs = torch.load(source / "checkpoints" / "best.pt", weights_only=True)["data"]["preprocess"]
    mine = torch.load(tmp_path / "tuned" / "checkpoints" / "best.pt", weights_only=True)
    assert mine["data"]["preprocess"]["mean"] == theirs["mean"] and mine["config"]["model"]["pretrained"] == str(source)
    assert len(mine["optimizer"]["param_groups"]) == 2  # the backbone's rate and the head's
    # predict applies the same preprocessing
    from trainwell.cli.predict import load_predictor

    _, data = load_predictor(tmp_path / "tuned")
    assert data["preprocess"]["std"] == theirs["std"]


def test_freezing_is_refused_under_several_processes_with_the_way_out() -> None:
    from trainwell._errors import ConfigError
    from trainwell.engine.strategy import Strategy

    class Two(Strategy):
        world_size = 2

    with pytest.raises(ConfigError, match="runs in one process for now") as caught:
        Two().check_freezing()
    assert "train.finetune.freeze_epochs=0" in caught.value.fix
    Strategy().check_freezing()  # one process: fine


def test_normalization_the_weights_do_not_give_is_said_not_assumed() -> None:
    """Where the weights' source gives no mean and std for this data's inputs, the data keeps its own, and the run
    says so (not a silent fallback); grayscale data takes the average of RGB statistics."""
    from trainwell.app.pretrained import _normalize_as
    from trainwell.data import Preprocess

    pre = Preprocess(kind="image", input_shape=[1, 8, 8], mean=[0.3], std=[0.4])
    said = _normalize_as(pre, None, "x's weights expect", "x's weights")
    assert pre.mean == [0.3] and said == ["inputs keep this data's own normalization: x's weights gives no mean and "
                                          "std for 1-channel image inputs"]
    said = _normalize_as(pre, {"kind": "tabular", "mean": [0.1], "std": [0.2]}, "a run's were", "a run")
    assert pre.mean == [0.3] and "keep this data's own normalization" in said[0]
    said = _normalize_as(pre, {"kind": "image", "mean": [0.3, 0.6, 0.9], "std": [0.3, 0.3, 0.3]}, "rgb expects", "rgb")
    assert pre.mean == pytest.approx([0.6]) and pre.std == pytest.approx([0.3]) and "normalized as rgb expects" in said[0]
