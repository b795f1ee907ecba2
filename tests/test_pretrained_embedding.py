"""The embedding task on a pretrained backbone: a classifier's weights under the embedding model's names (the
built-in cnn's conv blocks, a library model's whole network but its head), the classifier's head left out and the
embedding layer new and random (never at zero, which would give every image the same embedding), an embedding
run's weights taken whole, and a run end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from conftest import main_in, train_once
from trainwell.app.pretrained import load_pretrained
from trainwell.config import EmbeddingConfig, ModelConfig
from trainwell.models import build_model
from trainwell.models.embedding import build_embedding_model
from trainwell.models.head import head_of, replace_head

SMALL = ["--threads", "1", "--no-progress", "--no-doctor", "--set", "model.channels=[8,16]",
         "--set", "model.hidden=[16]"]


@pytest.fixture(scope="module")
def classifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_once(tmp_path_factory, ["--data", "digits", "--epochs", "1", *SMALL])


def _best(run: Path) -> dict[str, torch.Tensor]:
    return torch.load(run / "checkpoints" / "best.pt", weights_only=True)["model"]


@pytest.mark.parametrize("pool", ["flatten", "avg"])
def test_a_classifier_run_gives_the_embedding_its_conv_blocks_and_a_random_new_layer(classifier: Path,
                                                                                     pool: str) -> None:
    model = build_embedding_model(ModelConfig(channels=[8, 16], hidden=[16]), EmbeddingConfig(dim=12, pool=pool),
                                  (1, 8, 8))
    torch.manual_seed(0)
    said = load_pretrained(model, classifier)
    theirs = _best(classifier)
    blocks = model.backbone if pool == "flatten" else model.backbone[0]
    for key, value in blocks.state_dict().items():
        assert torch.equal(value, theirs[f"features.{key}"]), key
    name, layer = head_of(model)
    assert layer.out_features == 12 and layer.weight.abs().sum() > 0  # random, not zero
    assert "4 tensors of its classifier not used" in said and "a new embedding layer Linear" in said
    assert "randomly initialized" in said and "starting at zero" not in said
    z = model.eval()(torch.randn(4, 1, 8, 8))
    assert torch.allclose(z.norm(dim=1), torch.ones(4), atol=1e-5)  # unit rows, not the zero vector


def test_an_embedding_run_is_taken_whole_head_included(tmp_path: Path) -> None:
    torch.manual_seed(1)
    first = build_embedding_model(ModelConfig(channels=[8]), EmbeddingConfig(dim=6), (1, 8, 8))
    torch.save(first.state_dict(), tmp_path / "emb.pt")
    second = build_embedding_model(ModelConfig(channels=[8]), EmbeddingConfig(dim=6), (1, 8, 8))
    said = load_pretrained(second, tmp_path / "emb.pt")
    assert "kept (the same embedding size)" in said
    for key, value in second.state_dict().items():
        assert torch.equal(value, first.state_dict()[key]), key


def test_a_library_classifier_file_gives_the_embedding_all_but_its_head(tmp_path: Path) -> None:
    torch.manual_seed(2)
    cfg = ModelConfig(name="torchvision:resnet18")
    classifier = build_model(cfg, (3, 32, 32), 1000)
    torch.save(classifier.state_dict(), tmp_path / "resnet18.pth")
    model = build_embedding_model(cfg, EmbeddingConfig(dim=32), (3, 32, 32))
    said = load_pretrained(model, tmp_path / "resnet18.pth")
    assert "head model.fc (Linear 512 -> 1000) replaced by a new embedding layer Linear 512 -> 32" in said
    mine = model.state_dict()
    for key, value in classifier.state_dict().items():
        if not key.startswith("fc."):
            assert torch.equal(mine[f"model.{key}"], value), key
    assert mine["model.fc.weight"].abs().sum() > 0


def test_a_head_replaced_for_an_embedding_is_not_at_zero() -> None:
    from torchvision import models

    net = models.resnet18()
    replace_head(net, 16, at_zero=False)
    assert net.fc.out_features == 16 and net.fc.weight.abs().sum() > 0
    replace_head(net, 3)
    assert not net.fc.weight.any() and not net.fc.bias.any()


def test_weights_of_another_architecture_are_refused_for_an_embedding_too(classifier: Path) -> None:
    from trainwell._errors import TrainwellError

    model = build_embedding_model(ModelConfig(channels=[4, 16]), EmbeddingConfig(dim=12), (1, 8, 8))
    with pytest.raises(TrainwellError, match="do not fit this model") as caught:
        load_pretrained(model, classifier)
    assert "backbone.0.weight" in str(caught.value)


@pytest.mark.slow
def test_an_embedding_run_starts_from_a_classifier_run(tmp_path: Path, classifier: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["train", "--task", "embedding", "--data", "digits", "--epochs", "2", *SMALL, "--set", "embedding.dim=16",
            "--set", "embedding.pairs=200", "--pretrained", str(classifier), "--out", "emb"]
    assert main_in(tmp_path, *argv) == 0
    err = capsys.readouterr().err
    assert "a new embedding layer Linear" in err and "inputs normalized as the pretrained run's were" in err
    summary = json.loads((tmp_path / "emb" / "summary.json").read_text())
    assert 0.5 < summary["test_auc"] <= 1.0
    ckpt = torch.load(tmp_path / "emb" / "checkpoints" / "best.pt", weights_only=True)
    assert len(ckpt["optimizer"]["param_groups"]) == 2  # the embedding layer's rate and the backbone's


def test_published_weights_give_an_embedding_a_random_layer_on_the_pooled_features(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """torchvision's download stands in with weights made here: everything but fc is theirs, fc is the embedding
    layer, random."""
    import torchvision

    from trainwell.app.pretrained import apply_pretrained
    from trainwell.data import Preprocess

    torch.manual_seed(3)
    stand_in = torchvision.models.resnet18().state_dict()
    monkeypatch.setattr("torchvision.models._api.load_state_dict_from_url", lambda *args, **kwargs: stand_in)
    model = build_embedding_model(ModelConfig(name="torchvision:resnet18", pretrained=True), EmbeddingConfig(dim=8),
                                  (3, 32, 32))
    mine = model.state_dict()
    assert all(torch.equal(mine[f"model.{k}"], v) for k, v in stand_in.items() if not k.startswith("fc."))
    assert mine["model.fc.weight"].shape == (8, 512) and mine["model.fc.weight"].abs().sum() > 0

    class Bundle:
        preprocess = Preprocess(kind="image", input_shape=[3, 32, 32], mean=[0.5] * 3, std=[0.2] * 3)

    said = apply_pretrained(model, Bundle(), True, name="torchvision:resnet18")
    assert "head model.fc replaced by a new embedding layer Linear 512 -> 8, randomly initialized" in said[0]
    assert Bundle.preprocess.mean == pytest.approx([0.485, 0.456, 0.406])


@pytest.mark.parametrize("zero_head", [True, False])
def test_timms_published_head_starts_at_zero_for_classes_and_at_random_for_an_embedding(
        monkeypatch: pytest.MonkeyPatch, zero_head: bool) -> None:
    """timm initializes a new head at random; trainwell's classes start it at zero, as the run says (timm's
    download stands in as a no-op: its random weights are the 'published' ones)."""
    pytest.importorskip("timm")
    from trainwell.models.library import build_library_model

    monkeypatch.setattr("timm.models._builder.load_pretrained", lambda *args, **kwargs: None)
    model = build_library_model("timm:resnet18", (3, 32, 32), 5, published=True, zero_head=zero_head)
    name, head = head_of(model)
    assert name == "fc" and head.out_features == 5
    assert bool(head.weight.abs().sum() == 0) is zero_head
