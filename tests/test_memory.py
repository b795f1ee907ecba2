"""Memory options of the built-in models: activation checkpointing (``model.checkpoint``) and
``model.channels_last``: the same numbers as without them, and checkpointing only while training."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from trainwell._errors import ConfigError
from trainwell.config import ModelConfig, resolve
from trainwell.models import build_model
from trainwell.models.layers import Blocks
from trainwell.models.memory import use_channels_last


def _twins(cfg: dict, shape: tuple[int, ...]) -> tuple[nn.Module, nn.Module]:
    """The same model (same weights) without and with checkpointing."""
    torch.manual_seed(0)
    plain = build_model(ModelConfig(**cfg), shape, 5)
    checked = build_model(ModelConfig(**cfg, checkpoint=True), shape, 5)
    checked.load_state_dict(plain.state_dict())
    return plain, checked


def _step(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    torch.manual_seed(1)  # dropout draws the same masks in both models
    out = model(x)
    nn.functional.cross_entropy(out, y).backward()
    return out.detach(), {n: p.grad.clone() for n, p in model.named_parameters()}


CASES = [({"name": "cnn", "channels": [4, 8], "hidden": [16]}, (3, 12, 12)),
         ({"name": "cnn", "channels": [4, 8], "batch_norm": False, "dropout": 0.3}, (1, 8, 8)),
         ({"name": "mlp", "hidden": [32, 16], "dropout": 0.5}, (20,))]


@pytest.mark.parametrize(("cfg", "shape"), CASES, ids=["cnn-bn", "cnn-dropout", "mlp-dropout"])
def test_checkpointing_gives_the_same_outputs_gradients_and_running_stats(cfg: dict, shape: tuple[int, ...]) -> None:
    plain, checked = _twins(cfg, shape)
    x, y = torch.randn(6, *shape), torch.randint(0, 5, (6,))
    out_a, grads_a = _step(plain.train(), x, y)
    out_b, grads_b = _step(checked.train(), x, y)
    torch.testing.assert_close(out_b, out_a, atol=1e-6, rtol=0)
    for name, g in grads_a.items():
        torch.testing.assert_close(grads_b[name], g, atol=1e-6, rtol=0, msg=name)
    # batch norm's running statistics (and batch counter) are updated once per step, not again in the recomputation
    for (name, a), b in zip(plain.state_dict().items(), checked.state_dict().values(), strict=True):
        torch.testing.assert_close(b, a, atol=1e-6, rtol=0, msg=name)


def _count_calls(model: nn.Module) -> tuple[list[str], list[str]]:
    """Forward calls of each block's first layer, split into those in the forward pass and those in backward."""
    forward: list[str] = []
    backward: list[str] = []
    phase = forward
    for name, m in model.named_modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            m.register_forward_hook(lambda mod, args, out, name=name: phase.append(name))
    out = model(torch.randn(4, 3, 12, 12))
    phase = backward
    if out.requires_grad:
        out.sum().backward()
    return forward, backward


def test_checkpointing_recomputes_the_blocks_in_backward_in_training_only() -> None:
    _, checked = _twins(CASES[0][0], CASES[0][1])
    blocks = ["features.0", "features.4"]  # the two conv layers; the head is not checkpointed
    forward, backward = _count_calls(checked.train())
    assert forward[:2] == blocks and sorted(backward) == blocks  # each conv block runs again in backward
    forward, backward = _count_calls(checked.eval())
    assert forward[:2] == blocks and backward == []  # eval mode: a plain forward pass
    checked.train()
    with torch.no_grad():
        forward, backward = _count_calls(checked)
    assert backward == []
    plain, _ = _twins(CASES[0][0], CASES[0][1])
    assert _count_calls(plain.train())[1] == []  # and without model.checkpoint nothing is recomputed


def test_checkpointing_keeps_the_parameter_names() -> None:
    plain, checked = _twins(CASES[0][0], CASES[0][1])
    assert list(checked.state_dict()) == list(plain.state_dict())
    assert "features.0.weight" in checked.state_dict()
    mlp = build_model(ModelConfig(name="mlp", hidden=[8]), (4,), 2)
    assert isinstance(mlp, Blocks) and list(mlp.state_dict()) == ["1.weight", "1.bias", "3.weight", "3.bias"]


def test_checkpoint_with_a_recurrent_or_custom_model_is_a_config_error() -> None:
    for name in ("lstm", "gru", "mymodels:Net"):
        with pytest.raises(ConfigError, match="checkpoint=true applies to the built-in cnn and mlp only"):
            resolve(sets=[f"model.name={name}", "model.checkpoint=true"])
    with pytest.raises(ConfigError, match="fused"):
        resolve(sets=["task=text", "model.checkpoint=true"])
    assert resolve(sets=["model.checkpoint=true"]).model.checkpoint is True


def test_channels_last_forced_on_cpu_gives_the_same_outputs() -> None:
    torch.manual_seed(0)
    plain = build_model(ModelConfig(channels=[4, 8], hidden=[16]), (3, 12, 12), 5).eval()
    other = copy.deepcopy(plain)
    assert use_channels_last(other, True, "cpu") is True
    assert other.features[0].weight.is_contiguous(memory_format=torch.channels_last)
    seen: list[bool] = []
    other.features[0].register_forward_pre_hook(
        lambda m, args: seen.append(args[0].is_contiguous(memory_format=torch.channels_last)))
    x = torch.randn(2, 3, 12, 12)
    torch.testing.assert_close(other(x), plain(x), atol=1e-6, rtol=0)
    assert seen == [True]  # the batch was converted on the way in


def test_channels_last_auto_is_on_for_cuda_only_and_true_needs_the_cnn() -> None:
    cnn = build_model(ModelConfig(channels=[4]), (1, 8, 8), 3)
    assert use_channels_last(cnn, "auto", "cpu") is False and use_channels_last(cnn, False, "cuda") is False
    assert cnn.features.channels_last is False
    assert use_channels_last(cnn, "auto", "cuda") is True  # (no GPU needed: it only changes the layout)
    assert cnn.features.channels_last is True
    mlp = build_model(ModelConfig(name="mlp"), (4,), 2)
    assert use_channels_last(mlp, "auto", "cuda") is False
    with pytest.raises(ConfigError, match="channels_last"):
        use_channels_last(mlp, True, "cpu")
    with pytest.raises(ConfigError, match="channels_last=true applies to the built-in cnn only"):
        resolve(sets=["model.name=mlp", "model.channels_last=true"])
    assert resolve(sets=["model.channels_last=false"]).model.channels_last is False


@pytest.mark.cuda
def test_channels_last_on_cuda_matches_the_plain_model() -> None:
    torch.manual_seed(0)
    plain = build_model(ModelConfig(channels=[8, 16]), (3, 16, 16), 5).cuda().eval()
    other = copy.deepcopy(plain)
    assert use_channels_last(other, "auto", "cuda") is True
    x = torch.randn(4, 3, 16, 16, device="cuda")
    torch.testing.assert_close(other(x), plain(x), atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------------ the out-of-memory explanation


def _oom_finding(tmp_path, sets: list[str]) -> dict:  # type: ignore[no-untyped-def]
    """The doctor's oom finding when a `trainwell train` run runs out of GPU memory in the model's forward pass."""
    import json

    from trainwell.app.configure import resolve
    from trainwell.app.run import train_from_config

    def explode(module: nn.Module, args: tuple, out: torch.Tensor) -> None:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
                                     "of 79.19 GiB of which 1.06 GiB is free.")

    config = resolve(flags={"data.name": "digits", "train.batch_size": 128, "device": "cpu", "train.epochs": 1},
                     sets=["model.hidden=[8]", "data.limit=200", *sets])
    tmp_path.mkdir()
    with pytest.raises(torch.OutOfMemoryError):
        train_from_config(config, tmp_path, progress="none", doctor=True, console=_quiet(),
                          on_ready=lambda trainer, bundle: trainer.model.features.register_forward_hook(explode))
    (finding,) = json.loads((tmp_path / "doctor.json").read_text(encoding="utf-8"))["findings"]
    assert finding["id"] == "oom"
    return finding


def _quiet():  # type: ignore[no-untyped-def]
    import io

    from rich.console import Console

    return Console(file=io.StringIO())


def test_oom_in_a_trainwell_run_names_the_flags_that_save_memory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    finding = _oom_finding(tmp_path / "a", ["model.channels=[4]"])
    fix = finding["fix"]
    assert "--batch-size 64 (add --accumulate 2 to keep 128 samples per optimizer step)" in fix
    assert "--precision bf16-mixed" in fix and "--set model.checkpoint=true" in fix
    assert fix.index("--batch-size") < fix.index("--precision") < fix.index("model.checkpoint")
    # what is already on is not suggested again
    fix = _oom_finding(tmp_path / "b", ["model.channels=[4]", "model.checkpoint=true"])["fix"]
    assert "model.checkpoint" not in fix and "--batch-size 64" in fix


@pytest.mark.slow
def test_a_checkpointed_channels_last_run_trains_exactly_like_a_plain_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Same losses with model.checkpoint and channels_last as without; and the recomputation in backward (the
    blocks' forward runs again) is not mistaken for anything by the doctor's hooks."""
    import json

    from trainwell.app.configure import resolve
    from trainwell.app.run import train_from_config

    def run(folder: str, sets: list[str], doctor: bool) -> dict:
        config = resolve(flags={"data.name": "digits", "device": "cpu", "train.epochs": 2},
                         sets=["model.channels=[4,8]", "model.hidden=[8]", "data.limit=300", *sets])
        (tmp_path / folder).mkdir()
        result = train_from_config(config, tmp_path / folder, progress="none", doctor=doctor, console=_quiet())
        return result.summary

    plain = run("plain", [], False)
    saved = run("saved", ["model.checkpoint=true", "model.channels_last=true"], True)
    for key in ("val_loss", "test_loss"):
        assert saved[key] == pytest.approx(plain[key], abs=1e-6)
    assert json.loads((tmp_path / "saved" / "doctor.json").read_text(encoding="utf-8"))["findings"] == []
