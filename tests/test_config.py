"""Tests for the run configuration: defaults, dataset recipes, layering, ``--set`` parsing and validation."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from trainwell._errors import ConfigError
from trainwell.app.configure import resolve
from trainwell.config import Config, parse_set
from trainwell.data.registry import DatasetRecipes


def recipe_for(name: str, task: str = "classification") -> dict:
    return DatasetRecipes().recipe(name, task)


def _leaves(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"train": {"lr": 1}} -> {"train.lr": 1}."""
    out: dict[str, Any] = {}
    for k, v in tree.items():
        if isinstance(v, dict) and k != "kwargs":
            out.update(_leaves(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _get(config: Config, dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        node = getattr(node, part)
    return node


def _problem_lines(err: ConfigError) -> list[str]:
    return [line for line in str(err).splitlines() if line.startswith("  - ")]


# --------------------------------------------------------------------------- defaults and recipes


def test_schema_defaults_are_the_guides_plain_recipe() -> None:
    c = Config()
    assert c.train.optimizer == "adam"
    assert c.train.lr == pytest.approx(1e-3)
    assert c.train.batch_size == 64
    assert c.train.epochs == 5
    assert c.train.scheduler == "none"
    assert c.data.name == "mnist-5k"
    assert c.model.name == "cnn"
    assert c.device == "auto"
    assert c.seed == 0


def test_no_recipe_when_base_is_given() -> None:
    c = resolve(base={})
    assert c.to_dict() == Config().to_dict()


def test_mnist5k_recipe_is_applied_when_nothing_is_given() -> None:
    recipe = _leaves(recipe_for("mnist-5k"))
    assert recipe, "mnist-5k should carry a measured recipe"
    defaults = Config()
    # The test only means something if the recipe changes at least one default.
    assert any(_get(defaults, k) != v for k, v in recipe.items())
    c = resolve()
    for key, value in recipe.items():
        assert _get(c, key) == value, key


def test_flags_win_over_the_recipe_and_the_rest_of_the_recipe_stays() -> None:
    recipe = _leaves(recipe_for("mnist-5k"))
    c = resolve(flags={"train.lr": 0.5, "train.epochs": 2, "train.optimizer": "sgd", "seed": None})
    assert c.train.lr == 0.5
    assert c.train.epochs == 2
    assert c.train.optimizer == "sgd"
    assert c.seed == 0  # a flag left at None does not override anything
    for key in ("train.scheduler", "model.channels", "data.augment"):
        if key in recipe:
            assert _get(c, key) == recipe[key]


def test_set_wins_over_flags_and_recipe() -> None:
    c = resolve(flags={"train.lr": 0.5}, sets=["train.lr=0.25", "model.channels=[4]", "model.hidden=[8]"])
    assert c.train.lr == 0.25
    assert c.model.channels == [4]
    assert c.model.hidden == [8]


def test_yaml_wins_over_recipe_flags_win_over_yaml_set_wins_over_all(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("train:\n  lr: 1e-4\n  epochs: 3\n  batch_size: 16\nmodel:\n  dropout: 0.4\n", encoding="utf-8")
    c = resolve(file=f)
    assert c.train.lr == pytest.approx(1e-4)  # YAML "1e-4" (a string to YAML 1.1) is read as a number
    assert c.train.epochs == 3
    assert c.train.batch_size == 16
    assert c.model.dropout == pytest.approx(0.4)
    c = resolve(file=f, flags={"train.epochs": 7}, sets=["train.batch_size=8"])
    assert c.train.epochs == 7
    assert c.train.batch_size == 8
    assert c.train.lr == pytest.approx(1e-4)


def test_the_recipe_follows_the_dataset_named_in_yaml(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("data:\n  name: digits\n", encoding="utf-8")
    recipe = _leaves(recipe_for("digits"))
    assert recipe
    c = resolve(file=f)
    assert c.data.name == "digits"
    for key, value in recipe.items():
        assert _get(c, key) == value, key


def test_data_name_with_colon_splits_into_name_and_path(tmp_path: Path) -> None:
    c = resolve(flags={"data.name": "csv:foo.csv"})
    assert c.data.name == "csv"
    assert c.data.path == "foo.csv"
    assert c.model.name == recipe_for("csv")["model"]["name"]  # the csv recipe, not mnist-5k's
    f = tmp_path / "c.yaml"
    f.write_text('data:\n  name: "image-folder:some/dir"\n', encoding="utf-8")
    c = resolve(file=f)
    assert (c.data.name, c.data.path) == ("image-folder", "some/dir")


# --------------------------------------------------------------------------- --set parsing


@pytest.mark.parametrize("item, key, value", [
    ("train.lr=3e-4", "train.lr", 3e-4),
    ("train.lr=1E-3", "train.lr", 1e-3),
    ("train.lr=0.01", "train.lr", 0.01),
    ("train.epochs=3", "train.epochs", 3),
    ("model.channels=[1,2]", "model.channels", [1, 2]),
    ("model.hidden=[]", "model.hidden", []),
    ("model.batch_norm=true", "model.batch_norm", True),
    ("model.batch_norm=false", "model.batch_norm", False),
    ("train.scheduler=cosine", "train.scheduler", "cosine"),
    ("device=cuda:1", "device", "cuda:1"),
    (" seed = 7", "seed", 7),
    ("name=", "name", None),
])
def test_parse_set(item: str, key: str, value: Any) -> None:
    k, v = parse_set(item)
    assert k == key
    if isinstance(value, float):
        assert isinstance(v, float) and math.isclose(v, value)
    else:
        assert v == value and type(v) is type(value)


@pytest.mark.parametrize("item", ["train.lr", "=3", ""])
def test_parse_set_rejects_non_key_value(item: str) -> None:
    with pytest.raises(ConfigError, match="key=value"):
        parse_set(item)


def test_dotted_set_keys_reach_nested_fields() -> None:
    c = resolve(sets=["train.scheduler=step", "train.step_size=2", "data.split_seed=5", "model.kwargs.depth=3",
                      "model.batch_norm=false", "deterministic=true"])
    assert c.train.scheduler == "step" and c.train.step_size == 2
    assert c.data.split_seed == 5
    assert c.model.kwargs == {"depth": 3}
    assert c.model.batch_norm is False
    assert c.deterministic is True


def test_bad_set_item_is_reported_with_the_other_problems() -> None:
    with pytest.raises(ConfigError) as e:
        resolve(sets=["nonsense", "train.lr=0"])
    lines = _problem_lines(e.value)
    assert len(lines) == 2
    assert "'nonsense'" in str(e.value) and "train.lr" in str(e.value)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("item, wrong, right", [
    ("train.lrr=0.1", "train.lrr", "lr"),
    ("trian.lr=0.1", "trian", "train"),
    ("seeed=1", "seeed", "seed"),
    ("model.chanels=[4]", "model.chanels", "channels"),
])
def test_unknown_key_gets_did_you_mean(item: str, wrong: str, right: str) -> None:
    with pytest.raises(ConfigError) as e:
        resolve(sets=[item])
    msg = str(e.value)
    assert wrong in msg
    assert "unknown key" in msg
    assert f"Did you mean {right!r}?" in msg


def test_every_bad_value_is_reported_in_one_error() -> None:
    with pytest.raises(ConfigError) as e:
        resolve(flags={"train.lr": 0, "train.epochs": 0, "train.batch_size": 0, "train.optimizer": "rmsprop",
                       "device": "gpu"})
    msg = str(e.value)
    assert len(_problem_lines(e.value)) == 5
    assert "5 problems" in msg
    for name in ("train.lr", "train.epochs", "train.batch_size", "train.optimizer", "device"):
        assert any(line.startswith(f"  - {name}:") for line in _problem_lines(e.value)), name
    assert "'rmsprop'" in msg and "'gpu'" in msg


@pytest.mark.parametrize("flags, field", [
    ({"train.lr": -1e-3}, "train.lr"),
    ({"train.lr": 0.0}, "train.lr"),
    ({"train.epochs": -2}, "train.epochs"),
    ({"device": "tpu"}, "device"),
    ({"device": "cud:0"}, "device"),
])
def test_single_bad_values(flags: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as e:
        resolve(flags=flags)
    assert [line.split(":")[0] for line in _problem_lines(e.value)] == [f"  - {field}"]


@pytest.mark.parametrize("device", ["auto", "cpu", "cuda", "cuda:1", "mps"])
def test_good_devices_pass_validation(device: str) -> None:
    assert resolve(flags={"device": device}).device == device


def test_unknown_dataset_lists_the_choices() -> None:
    from trainwell.data import DATASETS

    with pytest.raises(ConfigError) as e:
        resolve(flags={"data.name": "mnist5k"})
    msg = str(e.value)
    assert "data.name" in msg and "'mnist5k'" in msg
    assert "Did you mean 'mnist-5k'?" in msg
    for name in DATASETS.names():
        assert name in msg


def test_unknown_model_lists_the_choices() -> None:
    from trainwell.models import MODELS

    with pytest.raises(ConfigError) as e:
        resolve(flags={"model.name": "resnet"})
    msg = str(e.value)
    assert "model.name" in msg and "'resnet'" in msg
    for name in MODELS.names():
        assert name in msg
    assert "module:Class" in msg


def test_custom_model_spec_passes_validation() -> None:
    assert resolve(flags={"model.name": "mymodels:Net"}).model.name == "mymodels:Net"


@pytest.mark.parametrize("name", ["csv", "image-folder", "csv:"])
def test_dataset_that_needs_a_path_without_one(name: str) -> None:
    with pytest.raises(ConfigError) as e:
        resolve(flags={"data.name": name})
    msg = str(e.value)
    assert "data.path" in msg and "needs a path" in msg
    assert name.rstrip(":") in msg


# --------------------------------------------------------------------------- YAML files


def test_yaml_file_not_found(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match="does not exist") as e:
        resolve(file=missing)
    assert "nope.yaml" in str(e.value)


@pytest.mark.parametrize("text, kind", [("- 1\n- 2\n", "list"), ("just a string\n", "str"), ("3\n", "int")])
def test_yaml_file_not_a_mapping(tmp_path: Path, text: str, kind: str) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="mapping") as e:
        resolve(file=f)
    assert kind in str(e.value) and "c.yaml" in str(e.value)


def test_yaml_file_invalid(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("train: {lr: [1, 2\nmodel: :\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML") as e:
        resolve(file=f)
    assert "c.yaml" in str(e.value)


def test_yaml_file_empty_is_no_values(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("# nothing here\n", encoding="utf-8")
    assert resolve(file=f).to_dict() == resolve().to_dict()


def test_yaml_unknown_key_and_bad_value_reported_together(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("train:\n  lr: -1\n  epoch: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        resolve(file=f)
    msg = str(e.value)
    assert len(_problem_lines(e.value)) == 2
    assert "train.lr" in msg and "Did you mean 'epochs'?" in msg


# --------------------------------------------------------------------------- inputs that once crashed


def test_data_given_as_a_plain_value_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="data"):
        resolve(sets=["data=digits"])


def test_unknown_dataset_is_reported_together_with_bad_values() -> None:
    with pytest.raises(ConfigError) as e:
        resolve(flags={"data.name": "nope", "train.lr": 0})
    msg = str(e.value)
    assert "train.lr" in msg
    assert "'nope'" in msg


def test_device_with_a_bad_index_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="device"):
        resolve(flags={"device": "cuda:abc"})


def test_split_fractions_that_leave_no_training_data_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="fraction"):
        resolve(sets=["data.val_fraction=0.6", "data.test_fraction=0.5"])
