"""Tests for the per-layer model summary (trainwell.models.summary)."""

from __future__ import annotations

import json
from collections import OrderedDict

import pytest
import torch
from rich.console import Console
from torch import nn

from trainwell._errors import TrainwellError
from trainwell.models.summary import (
    LayerRow,
    ModelSummary,
    render_summary,
    summarize,
    summary_dict,
)


def small_cnn(linear_in: int = 32 * 14 * 14) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(1, 32, kernel_size=3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(linear_in, 10),
    )


def example() -> torch.Tensor:
    return torch.randn(1, 1, 28, 28)


def test_rows_have_correct_output_shapes() -> None:
    summary = summarize(small_cnn(), example())
    assert isinstance(summary, ModelSummary)
    assert all(isinstance(r, LayerRow) for r in summary.rows)
    got = [(r.name, r.type, r.output_shape, r.depth) for r in summary.rows]
    assert got == [
        ("0", "Conv2d", "(1, 32, 28, 28)", 0),
        ("1", "BatchNorm2d", "(1, 32, 28, 28)", 0),
        ("2", "ReLU", "(1, 32, 28, 28)", 0),
        ("3", "MaxPool2d", "(1, 32, 14, 14)", 0),
        ("4", "Flatten", "(1, 6272)", 0),
        ("5", "Linear", "(1, 10)", 0),
    ]
    assert summary.input_shape == (1, 1, 28, 28)
    assert summary.output_shape == "(1, 10)"
    assert summary.rows[0].params == 32 * 1 * 3 * 3 + 32
    assert summary.rows[1].params == 64  # weight + bias, buffers are not parameters
    assert summary.rows[2].params == 0


def test_nested_containers_get_dotted_names_depth_and_call_order() -> None:
    model = nn.Sequential(
        OrderedDict(
            features=nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU()),
            classifier=nn.Sequential(nn.Flatten(), nn.Linear(4 * 28 * 28, 3)),
        )
    )
    summary = summarize(model, example())
    assert [(r.name, r.depth) for r in summary.rows] == [
        ("features", 0),
        ("features.0", 1),
        ("features.1", 1),
        ("classifier", 0),
        ("classifier.0", 1),
        ("classifier.1", 1),
    ]
    assert summary.rows[0].output_shape == "(1, 4, 28, 28)"
    assert summary.rows[0].params == 0  # container owns no parameters itself


def test_total_params_matches_model() -> None:
    model = small_cnn()
    summary = summarize(model, example())
    expected = sum(p.numel() for p in model.parameters())
    assert summary.total_params == expected
    assert summary.trainable_params == expected
    assert sum(r.params for r in summary.rows) == expected
    assert summary.param_bytes == expected * 4


def test_frozen_layer_counts_as_non_trainable() -> None:
    model = small_cnn()
    for p in model[0].parameters():
        p.requires_grad_(False)
    summary = summarize(model, example())
    frozen = sum(p.numel() for p in model[0].parameters())
    assert summary.trainable_params == summary.total_params - frozen
    assert summary.non_trainable_params == frozen
    assert summary.rows[0].trainable == 0
    assert summary.rows[0].params == frozen


@pytest.mark.parametrize("training", [True, False])
def test_training_flag_restored(training: bool) -> None:
    model = small_cnn()
    model.train(training)
    summarize(model, example())
    assert model.training is training
    assert all(m.training is training for m in model.modules())


def test_per_module_training_flags_restored() -> None:
    model = small_cnn().train()
    model[1].eval()  # e.g. a frozen BatchNorm kept in eval mode
    summarize(model, example())
    assert model.training and model[0].training
    assert not model[1].training


def test_batchnorm_running_stats_untouched() -> None:
    model = small_cnn().train()
    before = model[1].running_mean.clone()
    summarize(model, example())
    assert torch.equal(model[1].running_mean, before)


def test_hooks_removed() -> None:
    model = small_cnn()
    summarize(model, example())
    for m in model.modules():
        assert not m._forward_hooks
        assert not m._forward_pre_hooks


def test_wrong_linear_in_features_names_the_layer() -> None:
    model = nn.Sequential(
        OrderedDict(
            features=nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2)),
            classifier=nn.Sequential(nn.Flatten(), nn.Linear(512, 10)),
        )
    )
    model.train()
    with pytest.raises(TrainwellError) as info:
        summarize(model, example())
    msg = str(info.value)
    assert "'classifier.1' (Linear)" in msg  # the module being called
    assert "(1, 1352)" in msg  # the input shape it received: 8 * 13 * 13
    assert "'classifier.0' (Flatten)" in msg  # the last module that ran successfully
    assert "mat1 and mat2" in msg  # the original error text
    assert "1352" in (info.value.fix or "")
    assert isinstance(info.value.__cause__, RuntimeError)
    # cleanup happens even when forward raises
    assert model.training
    for m in model.modules():
        assert not m._forward_hooks
        assert not m._forward_pre_hooks


def test_failure_before_any_layer_finished() -> None:
    model = small_cnn()
    with pytest.raises(TrainwellError) as info:
        summarize(model, torch.randn(1, 3, 28, 28))  # Conv2d expects 1 channel
    msg = str(info.value)
    assert "'0' (Conv2d)" in msg
    assert "(1, 3, 28, 28)" in msg
    assert "No layer had finished" in msg


class LSTMNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(input_size=8, hidden_size=16, batch_first=True)
        self.head = nn.Linear(16, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def test_lstm_tuple_outputs() -> None:
    model = LSTMNet()
    summary = summarize(model, torch.randn(4, 5, 8))
    rows = {r.name: r for r in summary.rows}
    assert rows["lstm"].type == "LSTM"
    assert rows["lstm"].output_shape == "(4, 5, 16), ..."
    assert rows["lstm"].params == sum(p.numel() for p in model.lstm.parameters())
    assert rows["head"].output_shape == "(4, 2)"
    assert summary.output_shape == "(4, 2)"
    assert summary.total_params == sum(p.numel() for p in model.parameters())


class SharedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Linear(6, 6)
        self.out = nn.Linear(6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.block(self.block(x)))


def test_shared_module_twice_counted_once() -> None:
    model = SharedNet()
    summary = summarize(model, torch.randn(2, 6))
    assert [r.name for r in summary.rows] == ["block", "block", "out"]
    assert summary.total_params == 6 * 6 + 6 + 6 + 1
    assert summary.total_params == sum(p.numel() for p in model.parameters())


def test_tied_weights_counted_once() -> None:
    emb = nn.Embedding(10, 4)
    head = nn.Linear(4, 10, bias=False)
    head.weight = emb.weight
    model = nn.Sequential(emb, head)
    summary = summarize(model, torch.tensor([[1, 2, 3]]))
    assert summary.total_params == 40
    assert summary.rows[-1].output_shape == "(1, 3, 10)"


class TwoInputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(3, 2)
        self.b = nn.Linear(5, 2)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"sum": self.a(x) + self.b(y)}


def test_tuple_example_and_non_tensor_output() -> None:
    summary = summarize(TwoInputs(), (torch.randn(1, 3), torch.randn(1, 5)))
    assert summary.input_shape == (1, 3)
    assert [r.output_shape for r in summary.rows] == ["(1, 2)", "(1, 2)"]
    assert summary.output_shape == "(1, 2), ..."


def test_render_summary_prints_table_and_footer() -> None:
    console = Console(record=True, width=120, color_system=None)
    render_summary(summarize(small_cnn(), example()), console=console)
    text = console.export_text()
    for needle in ("Layer", "Type", "Output shape", "Params", "Conv2d", "(1, 32, 14, 14)"):
        assert needle in text
    assert "62,730" in text  # Linear(6272, 10) params with thousands separator
    assert "Total params: 63,114" in text
    assert "Trainable params: 63,114" in text
    assert "Non-trainable params: 0" in text
    assert "Params size (MB): 0.25" in text


def test_render_summary_indents_by_depth() -> None:
    model = nn.Sequential(OrderedDict(block=nn.Sequential(nn.Linear(2, 2))))
    console = Console(record=True, width=120, color_system=None)
    render_summary(summarize(model, torch.randn(1, 2)), console=console)
    assert "  block.0" in console.export_text()


def test_summary_dict_is_json_serialisable() -> None:
    model = small_cnn()
    data = summary_dict(summarize(model, example()))
    round_trip = json.loads(json.dumps(data))
    assert round_trip["total_params"] == sum(p.numel() for p in model.parameters())
    assert round_trip["non_trainable_params"] == 0
    assert round_trip["input_shape"] == [1, 1, 28, 28]
    assert round_trip["rows"][0] == {
        "name": "0",
        "type": "Conv2d",
        "output_shape": "(1, 32, 28, 28)",
        "params": 320,
        "trainable": 320,
        "depth": 0,
    }
