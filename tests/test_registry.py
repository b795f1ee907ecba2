"""Tests for the name registry, the built-in models and users' own ``module:Class`` models."""

from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path

import pytest
import torch
from torch import nn

from trainwell._errors import TrainwellError
from trainwell._registry import Registry, did_you_mean, unknown_name_message
from trainwell.config import ModelConfig
from trainwell.models import MODELS, build_model

# --------------------------------------------------------------------------- Registry


def _registry() -> Registry:
    reg: Registry = Registry("widget")

    @reg.register("alpha", "the first one", size=3)
    def alpha() -> str:
        return "a"

    @reg.register("beta")
    def beta() -> str:
        """Second widget.

        More text that is not the summary.
        """
        return "b"

    return reg


def test_register_get_names() -> None:
    reg = _registry()
    assert reg.names() == ["alpha", "beta"]
    assert reg.get("alpha")() == "a"
    assert reg.get("beta")() == "b"
    assert "alpha" in reg and "gamma" not in reg
    entry = reg.entry("alpha")
    assert entry.summary == "the first one"
    assert entry.meta == {"size": 3}
    assert reg.entry("beta").summary == "Second widget."  # first docstring line when no summary is given
    assert [e.name for e in reg] == ["alpha", "beta"]


def test_register_returns_the_object_unchanged() -> None:
    reg: Registry = Registry("widget")

    def f() -> int:
        return 1

    assert reg.register("f")(f) is f


def test_duplicate_registration_is_an_error() -> None:
    reg = _registry()
    with pytest.raises(ValueError, match="'alpha' is registered twice"):
        reg.register("alpha")(lambda: None)
    assert reg.get("alpha")() == "a"  # the first registration stays


def test_unknown_name_lists_choices_and_suggests() -> None:
    reg = _registry()
    with pytest.raises(TrainwellError) as e:
        reg.get("alpah")
    msg = str(e.value)
    assert "Unknown widget 'alpah'." in msg
    assert "Did you mean 'alpha'?" in msg
    assert "Choose one of: alpha, beta." in msg


def test_unknown_name_without_a_close_match_has_no_suggestion() -> None:
    msg = unknown_name_message("widget", "zzzzzz", ["alpha", "beta"])
    assert "Did you mean" not in msg
    assert "alpha, beta" in msg
    assert did_you_mean("zzzzzz", ["alpha"]) == ""
    assert did_you_mean("mlpp", ["cnn", "mlp"]) == " Did you mean 'mlp'?"


# --------------------------------------------------------------------------- built-in models


SMALL = ModelConfig(channels=[4], hidden=[8])


def _check_trains(model: nn.Module, input_shape: tuple[int, ...], num_classes: int, batch: int = 3) -> None:
    torch.manual_seed(0)
    model.train()
    x = torch.randn(batch, *input_shape)
    logits = model(x)
    assert logits.shape == (batch, num_classes)
    loss = nn.functional.cross_entropy(logits, torch.arange(batch) % num_classes)
    loss.backward()
    params = list(model.named_parameters())
    assert params
    for name, p in params:
        assert p.grad is not None, f"{name} got no gradient"
        assert torch.isfinite(p.grad).all(), f"{name} has a non-finite gradient"
    assert any(p.grad.abs().sum() > 0 for _, p in params)


# Models for image / table inputs (text models read token ids: tests/test_text.py).
DENSE_MODELS = [n for n in MODELS.names() if MODELS.entry(n).meta.get("task", "classification") == "classification"]


@pytest.mark.parametrize("name", DENSE_MODELS)
@pytest.mark.parametrize("input_shape", [(1, 28, 28), (3, 8, 8)])
def test_builtin_models_on_images(name: str, input_shape: tuple[int, ...]) -> None:
    cfg = SMALL.model_copy(update={"name": name})
    model = build_model(cfg, input_shape, 10)
    _check_trains(model, input_shape, 10)


@pytest.mark.parametrize("name", DENSE_MODELS)
def test_builtin_models_with_options(name: str) -> None:
    cfg = ModelConfig(name=name, channels=[3, 5], hidden=[6, 4], batch_norm=False, activation="gelu", dropout=0.3)
    _check_trains(build_model(cfg, (1, 12, 12), 4), (1, 12, 12), 4)


def test_mlp_on_tabular_input() -> None:
    model = build_model(ModelConfig(name="mlp", hidden=[8]), (13,), 3)
    _check_trains(model, (13,), 3, batch=5)


def test_mlp_without_hidden_layers_is_linear() -> None:
    model = build_model(ModelConfig(name="mlp", hidden=[]), (13,), 3)
    assert [type(m) for m in model.modules() if not isinstance(m, nn.Sequential)] == [nn.Flatten, nn.Linear]
    _check_trains(model, (13,), 3)


def test_cnn_on_tabular_input_says_use_mlp() -> None:
    with pytest.raises(TrainwellError) as e:
        build_model(ModelConfig(name="cnn", channels=[4], hidden=[8]), (13,), 3)
    assert "--model mlp" in str(e.value)
    assert "(13,)" in str(e.value)


# --------------------------------------------------------------------------- users' models


@pytest.fixture()
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Write a module into tmp_path, chdir there, and forget the module afterwards."""
    monkeypatch.chdir(tmp_path)
    names: list[str] = []

    def write(source: str) -> str:
        name = f"tw_user_models_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        names.append(name)
        return name

    yield write
    for name in names:
        sys.modules.pop(name, None)


NET_SOURCE = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self, input_shape, num_classes, width=5):
            super().__init__()
            self.input_shape = input_shape
            self.num_classes = num_classes
            self.width = width
            n = 1
            for s in input_shape:
                n *= s
            self.body = nn.Sequential(nn.Flatten(), nn.Linear(n, width), nn.ReLU(), nn.Linear(width, num_classes))

        def forward(self, x):
            return self.body(x)

    class OnlyClasses(nn.Module):
        def __init__(self, num_classes):
            super().__init__()
            self.num_classes = num_classes
            self.fc = nn.LazyLinear(num_classes)

        def forward(self, x):
            return self.fc(x.flatten(1))

    class NotAModule:
        def __init__(self):
            pass
"""


def test_custom_model_gets_input_shape_and_num_classes(user_module) -> None:
    mod = user_module(NET_SOURCE)
    model = build_model(ModelConfig(name=f"{mod}:Net"), (1, 6, 6), 4)
    assert type(model).__name__ == "Net"
    assert model.input_shape == (1, 6, 6)
    assert model.num_classes == 4
    assert model.width == 5
    _check_trains(model, (1, 6, 6), 4)


def test_custom_model_kwargs_are_passed(user_module) -> None:
    mod = user_module(NET_SOURCE)
    model = build_model(ModelConfig(name=f"{mod}:Net", kwargs={"width": 7}), (13,), 2)
    assert model.width == 7
    assert model.body[1].out_features == 7


def test_custom_model_with_only_some_arguments(user_module) -> None:
    mod = user_module(NET_SOURCE)
    model = build_model(ModelConfig(name=f"{mod}:OnlyClasses"), (13,), 3)
    assert model.num_classes == 3
    assert model(torch.randn(2, 13)).shape == (2, 3)


def test_custom_model_missing_module(user_module) -> None:
    with pytest.raises(TrainwellError) as e:
        build_model(ModelConfig(name="tw_no_such_module_xyz:Net"), (13,), 2)
    assert "Cannot import 'tw_no_such_module_xyz'" in str(e.value)


def test_custom_model_missing_class_lists_the_modules_there(user_module) -> None:
    mod = user_module(NET_SOURCE)
    with pytest.raises(TrainwellError) as e:
        build_model(ModelConfig(name=f"{mod}:Nett"), (13,), 2)
    msg = str(e.value)
    assert f"{mod!r} has no 'Nett'" in msg
    assert "Net" in msg and "OnlyClasses" in msg
    assert "NotAModule" not in msg


def test_custom_model_that_is_not_a_module(user_module) -> None:
    mod = user_module(NET_SOURCE)
    with pytest.raises(TrainwellError, match="not a torch.nn.Module"):
        build_model(ModelConfig(name=f"{mod}:NotAModule"), (13,), 2)


def test_custom_model_bad_kwargs(user_module) -> None:
    mod = user_module(NET_SOURCE)
    with pytest.raises(TrainwellError, match="model.kwargs"):
        build_model(ModelConfig(name=f"{mod}:Net", kwargs={"depth": 3}), (13,), 2)


@pytest.mark.parametrize("spec", [":Net", "mod:"])
def test_custom_model_spec_malformed(spec: str) -> None:
    with pytest.raises(TrainwellError, match="package.module:Class"):
        build_model(ModelConfig(name=spec), (13,), 2)
