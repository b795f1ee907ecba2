"""The embedding task: ArcFace and triplet losses, pairs, threshold, ROC figures, protocols, and the CLI."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from trainwell._errors import ConfigError, DataError
from trainwell.config import DataConfig, EmbeddingConfig
from trainwell.losses import ArcFaceLoss, BatchHardTripletLoss
from trainwell.verification import best_threshold, make_pairs, roc_auc, tar_at_far
from trainwell.verification.roc import accuracy_at, roc_curve

# --------------------------------------------------------------------------- ArcFace


def _arcface_at_angle(theta: float, margin: float = 0.5) -> tuple[ArcFaceLoss, torch.Tensor]:
    """A 2-class ArcFace whose class-0 centre is e_x and an embedding at angle ``theta`` from it."""
    loss = ArcFaceLoss(dim=2, num_classes=2, margin=margin, scale=10.0)
    with torch.no_grad():
        loss.centres.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
    e = torch.tensor([[math.cos(theta), math.sin(theta)]], requires_grad=True)
    return loss, e


def test_arcface_margin_lowers_only_the_target_logit() -> None:
    loss, e = _arcface_at_angle(0.6)
    y = torch.tensor([0])
    with_margin = loss.logits(e, y)
    plain = ArcFaceLoss(dim=2, num_classes=2, margin=0.0, scale=10.0)
    with torch.no_grad():
        plain.centres.copy_(loss.centres)
    without = plain.logits(e, y)
    assert with_margin[0, 0] < without[0, 0]  # the target has to win by the margin
    assert torch.allclose(with_margin[0, 0], torch.tensor(10.0 * math.cos(0.6 + 0.5)), atol=1e-5)
    assert torch.allclose(with_margin[0, 1], without[0, 1])  # other classes unchanged


@pytest.mark.parametrize("theta", [0.0, 1e-4, math.pi - 1e-4, math.pi])
def test_arcface_gradient_is_finite_at_the_extreme_angles(theta: float) -> None:
    loss, e = _arcface_at_angle(theta)
    value = loss(e, torch.tensor([0]))
    value.backward()
    assert torch.isfinite(value)
    assert torch.isfinite(e.grad).all() and torch.isfinite(loss.centres.grad).all()


def test_arcface_target_logit_keeps_falling_past_pi_minus_margin() -> None:
    """cos(theta + m) turns upward after theta = pi - m; the fallback keeps the logit monotone."""
    thetas = np.linspace(0.0, math.pi, 50)
    target = []
    for t in thetas:
        loss, e = _arcface_at_angle(float(t))
        target.append(float(loss.logits(e.detach(), torch.tensor([0]))[0, 0].detach()))
    assert all(a >= b - 1e-5 for a, b in zip(target, target[1:]))


def test_arcface_scores_unknown_identities_against_batch_centres() -> None:
    loss = ArcFaceLoss(dim=4, num_classes=2)
    e = F.normalize(torch.randn(6, 4, generator=torch.Generator().manual_seed(0)), dim=1)
    value = loss(e, torch.tensor([5, 5, 6, 6, 0, 1]))  # 5 and 6 have no centre (open protocol validation)
    assert torch.isfinite(value) and float(value.detach()) > 0


# --------------------------------------------------------------------------- triplet


def test_triplet_batch_hard_picks_the_farthest_positive_and_nearest_negative() -> None:
    # On a line: identity 0 at 0.0, 0.1, 1.0; identity 1 at 1.2, 3.0.
    e = torch.tensor([[0.0], [0.1], [1.0], [1.2], [3.0]])
    y = torch.tensor([0, 0, 0, 1, 1])
    margin = 0.5
    # anchor: (hardest positive, hardest negative)
    by_hand = {0: (1.0, 1.2), 1: (0.9, 1.1), 2: (1.0, 0.2), 3: (1.8, 0.2), 4: (1.8, 2.0)}
    expected = np.mean([max(0.0, p - n + margin) for p, n in by_hand.values()])
    got = BatchHardTripletLoss(margin)(e, y)
    assert float(got) == pytest.approx(expected, abs=1e-5)


def test_triplet_ignores_anchors_without_a_positive_and_keeps_gradients_finite() -> None:
    e = torch.tensor([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]], requires_grad=True)  # a duplicate: distance 0
    value = BatchHardTripletLoss(0.3)(e, torch.tensor([0, 0, 1]))  # anchor 2 has no positive
    value.backward()
    assert float(value.detach()) == pytest.approx(0.0, abs=1e-5)  # d(ap) = 0, d(an) = sqrt(2) > margin
    assert torch.isfinite(e.grad).all()
    single = BatchHardTripletLoss(0.3)(e, torch.tensor([0, 0, 0]))
    assert float(single.detach()) == 0.0 and single.requires_grad


# --------------------------------------------------------------------------- threshold and ROC


def test_threshold_selection_matches_the_hand_computation() -> None:
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    same = np.array([1, 1, 0, 1, 0, 1, 0, 0], dtype=bool)
    # "same" when score >= t. Candidates are the midpoints; TA = same pairs accepted, TR = different rejected:
    #   t     -0.8  0.25  0.35  0.45  0.55  0.65  0.75  0.85  1.9
    #   TA      4     4     4     3     3     2     2     1    0
    #   TR      0     1     2     2     3     3     4     4    4
    #   acc    4/8   5/8   6/8   5/8   6/8   5/8   6/8   5/8  4/8   -> best 6/8, lowest tie t = 0.35
    threshold, accuracy = best_threshold(scores, same)
    assert threshold == pytest.approx(0.35)
    assert accuracy == pytest.approx(6 / 8)
    assert accuracy_at(scores, same, threshold) == pytest.approx(6 / 8)
    perfect = best_threshold(np.array([0.1, 0.2, 0.8, 0.9]), np.array([0, 0, 1, 1], dtype=bool))
    assert perfect == (pytest.approx(0.5), pytest.approx(1.0))


def test_roc_auc_and_tar_at_far_match_sklearn_and_hand_values() -> None:
    from sklearn.metrics import roc_auc_score
    from sklearn.metrics import roc_curve as sk_roc_curve

    # By hand: positives 0.9, 0.6; negatives 0.8, 0.1 -> pairs (pos > neg): 0.9>0.8, 0.9>0.1, 0.6>0.1 = 3/4.
    assert roc_auc(np.array([0.9, 0.6, 0.8, 0.1]), np.array([1, 1, 0, 0], dtype=bool)) == pytest.approx(0.75)
    rng = np.random.default_rng(0)
    same = rng.random(400) < 0.5
    scores = np.round(rng.normal(size=400) + 1.5 * same, 1)  # rounded: many ties
    assert roc_auc(scores, same) == pytest.approx(roc_auc_score(same, scores), abs=1e-12)
    far, tar, _ = roc_curve(scores, same)
    sk_far, sk_tar, _ = sk_roc_curve(same, scores, drop_intermediate=False)
    assert np.allclose(far, sk_far) and np.allclose(tar, sk_tar)
    assert tar_at_far(scores, same, 0.01) == pytest.approx(sk_tar[sk_far <= 0.01].max())
    # 100 negatives, one of them above every positive: FAR 1 % allows exactly that one.
    s = np.concatenate([np.linspace(0.5, 0.9, 10), [0.95], np.linspace(0.0, 0.4, 99)])
    y = np.concatenate([np.ones(10, bool), np.zeros(100, bool)])
    assert tar_at_far(s, y, 0.01) == 1.0 and tar_at_far(s, y, 0.0) == 0.0


# --------------------------------------------------------------------------- pairs


def test_pairs_are_balanced_unique_and_deterministic() -> None:
    labels = np.repeat(np.arange(5), 20)
    a, b = make_pairs(labels, 300, seed=3), make_pairs(labels, 300, seed=3)
    assert np.array_equal(a.left, b.left) and np.array_equal(a.right, b.right)
    assert len(a) == 300 and a.same.sum() == 150
    assert np.array_equal(labels[a.left] == labels[a.right], a.same)
    assert (a.left != a.right).all()
    assert len({tuple(sorted(p)) for p in zip(a.left, a.right)}) == 300
    assert not np.array_equal(make_pairs(labels, 300, seed=4).left, a.left)
    small = make_pairs(np.array([0, 0, 1, 1, 2]), 100, seed=0)  # only 2 same pairs exist
    assert small.same.sum() == 2 and len(small) == 4


def test_pairs_need_two_identities_and_a_repeated_one() -> None:
    with pytest.raises(DataError, match="at least 2"):
        make_pairs(np.zeros(10, dtype=int), 10, seed=0)
    with pytest.raises(DataError, match="two images"):
        make_pairs(np.arange(10), 10, seed=0)


# --------------------------------------------------------------------------- protocols


def _digits(**emb: object) -> object:
    from trainwell.data import build_data
    from trainwell.data.identities import identity_bundle

    data = DataConfig(name="mnist-5k", limit=600)
    return identity_bundle(build_data(data), EmbeddingConfig(**emb), data)


def test_open_protocol_keeps_held_out_identities_out_of_training() -> None:
    b = _digits(protocol="open")
    assert b.info["heldout_identities"] == ["7", "8", "9"]
    assert b.info["train_identities"] == 7
    assert set(b.train.y.tolist()) == set(range(7))  # training identities are the classes 0..6
    assert set(b.val.y.tolist()) == set(b.test.y.tolist()) == {7, 8, 9}
    assert b.class_names[7:] == ["7", "8", "9"]
    val_rows = {bytes(x.numpy()) for x in b.val.x}
    assert not val_rows & {bytes(x.numpy()) for x in b.test.x}  # different images in val and test
    custom = _digits(protocol="open", open_classes=["0", "1"])
    assert custom.class_names[-2:] == ["0", "1"] and set(custom.train.y.tolist()) == set(range(8))


def test_open_protocol_rejects_unknown_or_too_few_held_out_identities() -> None:
    with pytest.raises(ConfigError, match="did you mean|not an identity"):
        _digits(protocol="open", open_classes=["seven"])
    with pytest.raises(ConfigError, match="at least 2"):
        _digits(protocol="open", open_classes=["7"])


# --------------------------------------------------------------------------- model


def test_avg_pool_feeds_one_value_per_channel_to_the_embedding_layer() -> None:
    from trainwell._errors import TrainwellError
    from trainwell.config import ModelConfig
    from trainwell.models.embedding import build_embedding_model

    cnn = ModelConfig(name="cnn", channels=[8, 16], batch_norm=True)
    flat = build_embedding_model(cnn, EmbeddingConfig(dim=32), (1, 28, 28))
    pooled = build_embedding_model(cnn, EmbeddingConfig(dim=32, pool="avg"), (1, 28, 28))
    assert flat.head[-1].in_features == 16 * 7 * 7
    assert pooled.head[-1].in_features == 16  # the 7x7 map averaged to one value per channel
    out = pooled.eval()(torch.randn(3, 1, 28, 28))
    assert out.shape == (3, 32) and torch.allclose(out.norm(dim=1), torch.ones(3), atol=1e-5)
    with pytest.raises(TrainwellError, match="cnn only"):
        build_embedding_model(ModelConfig(name="mlp"), EmbeddingConfig(dim=32, pool="avg"), (1, 28, 28))


def _write_faces(root: Path, counts: dict[str, int]) -> None:
    from PIL import Image

    rng = np.random.default_rng(0)
    for person, n in counts.items():
        (root / person).mkdir(parents=True)
        for i in range(n):
            Image.fromarray(rng.integers(0, 255, (12, 12), dtype=np.uint8)).save(root / person / f"{i}.png")


def test_single_image_identities_are_an_error_or_skipped_and_counted(tmp_path: Path) -> None:
    from trainwell._errors import DataError
    from trainwell.app.configure import resolve
    from trainwell.tasks import get_task

    _write_faces(tmp_path, {"ann": 6, "bob": 6, "cid": 6, "dan": 1, "eve": 6})
    sets = [f"data.name=image-folder:{tmp_path}", "task=embedding", "embedding.protocol=open"]
    with pytest.raises(DataError, match=r"1 identity has a single image \('dan'\)") as e:
        get_task("embedding").build_data(resolve(sets=sets))
    assert "data.skip_bad=true" in str(e.value)
    sets.append("data.skip_bad=true")
    bundle = get_task("embedding").build_data(resolve(sets=sets))
    assert bundle.info["skipped_identities"] == 1 and bundle.info["skipped_identity_names"] == ["dan"]
    assert any("skipped 1 identity with a single image (dan)" in n for n in bundle.info["notes"])
    assert bundle.class_names == ["ann", "bob", "cid", "eve"] and bundle.info["heldout_identities"] == ["cid", "eve"]
    assert {p.parent.name for p, _ in bundle.train.items} == {"ann", "bob"}
    with pytest.raises(ConfigError, match="leaves 1 identity"):
        get_task("embedding").build_data(resolve(sets=[*sets, "embedding.open_classes=[bob,cid,eve]"]))


def test_fewer_than_two_identities_is_a_clear_error(tmp_path: Path) -> None:
    from trainwell.app.configure import resolve
    from trainwell.tasks import get_task

    _write_faces(tmp_path, {"ann": 5, "bob": 1})
    config = resolve(sets=[f"data.name=image-folder:{tmp_path}", "task=embedding", "data.skip_bad=true"])
    with pytest.raises(DataError, match="only 1 identity has two or more images"):
        get_task("embedding").build_data(config)


def test_face_sets_offline_give_a_clear_error(tmp_path: Path) -> None:
    from trainwell.data import build_data

    for name in ("olivetti-faces", "lfw"):
        with pytest.raises(DataError, match="data.download=false") as info:
            build_data(DataConfig(name=name, root=str(tmp_path), download=False))
        assert str(tmp_path) in str(info.value) and "mnist-5k" in str(info.value)


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_cli_train_embed_verify(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from PIL import Image

    from trainwell.cli import main

    tiny = ["--no-progress", "--set", "data.limit=400", "--set", "model.channels=[8,16]", "--epochs", "2",
            "--set", "embedding.dim=16", "--set", "embedding.pairs=200"]
    assert main(["train", "--task", "embedding", "--out", str(tmp_path / "emb"), *tiny]) == 0
    run = tmp_path / "emb"
    summary = json.loads((run / "summary.json").read_text())
    for key in ("test_auc", "test_tar_at_far1", "test_verify_accuracy", "threshold", "pixel_test_auc",
                "pixel_test_tar_at_far1", "pixel_test_verify_accuracy", "val_auc"):
        assert isinstance(summary[key], float), key
    assert summary["test_auc"] > summary["pixel_test_auc"] and summary["below_pixel_baseline"] is False
    doctor = json.loads((run / "doctor.json").read_text())
    assert doctor["findings"] == [] and doctor["internal_errors"] == []
    report = (run / "report.html").read_text()
    assert "ROC curve" in report and "stand in for identities" in report
    assert "stand in for identities" in capsys.readouterr().err  # said plainly in the run output
    ckpt = torch.load(run / "checkpoints" / "best.pt", weights_only=True)
    assert ckpt["data"]["verification"]["threshold"] == pytest.approx(summary["threshold"])

    from trainwell.data import build_data

    digits = build_data(DataConfig(name="mnist-5k", limit=100)).test
    files = []
    for i in range(3):
        files.append(tmp_path / f"{i}.png")
        Image.fromarray(digits.x[i, 0].numpy()).save(files[-1])
    capsys.readouterr()
    assert main(["embed", str(run), *map(str, files), "--out", str(tmp_path / "e.npy")]) == 0
    emb = np.load(tmp_path / "e.npy")
    assert emb.shape == (3, 16) and emb.dtype == np.float32
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert (tmp_path / "e.files.txt").read_text().splitlines() == [str(f) for f in files]
    capsys.readouterr()
    assert main(["verify", str(run), str(files[0]), str(files[0]), "--json"]) == 0
    same = json.loads(capsys.readouterr().out)
    assert same["same"] is True and same["similarity"] == pytest.approx(1.0, abs=1e-5)

    bad = tmp_path / "broken.png"
    bad.write_bytes(b"not an image")
    assert main(["verify", str(run), str(files[0]), str(bad)]) == 2
    assert "broken.png" in capsys.readouterr().err
    assert main(["embed", str(run), str(files[0]), str(bad), "--out", str(tmp_path / "e.npy")]) == 2
    assert np.array_equal(np.load(tmp_path / "e.npy"), emb)  # the earlier output is untouched

    assert main(["train", "--out", str(tmp_path / "cls"), "--no-doctor", "--no-progress", "--set", "data.limit=100",
                 "--set", "model.channels=[4]", "--set", "model.hidden=[8]", "--epochs", "1"]) == 0
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "cls"), str(files[0]), str(files[1])]) == 2
    err = capsys.readouterr().err
    assert "not an embedding run" in err and "Traceback" not in err
    assert main(["predict", str(run), str(files[0])]) == 2
    assert "trainwell verify" in capsys.readouterr().err
    assert os.environ.get("CUDA_VISIBLE_DEVICES", "") == ""


# --------------------------------------------------------------------------- below its own baseline


BELOW = {"test_auc": 0.75, "test_tar_at_far1": 0.1, "test_verify_accuracy": 0.7, "threshold": 0.5,
         "pixel_test_auc": 0.83, "pixel_test_tar_at_far1": 0.2, "pixel_test_verify_accuracy": 0.76,
         "pixel_threshold": 0.6, "best_epoch": 2, "train_seconds": 1.0, "parameters": 100}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_embedding_below_its_raw_pixel_baseline_says_so_at_the_end(lang: str) -> None:
    import io

    from rich.console import Console

    from trainwell.cli.train import _print_summary
    from trainwell.verification.report import below_baseline, verification_sections

    line = below_baseline(BELOW, lang)
    assert line is not None and "0.7500" in line and "0.8300" in line
    assert ("raw-pixel baseline" in line) if lang == "en" else ("原始像素基线" in line)
    assert below_baseline({**BELOW, "test_auc": 0.9}, lang) is None
    assert below_baseline({"test_auc": 0.9}, lang) is None  # no baseline measured: nothing to say
    out = io.StringIO()
    _print_summary(Console(file=out, width=80), BELOW, 2.0, lang)
    printed = out.getvalue().strip().splitlines()
    folder = "Run folder" if lang == "en" else "运行文件夹"
    assert printed[-2] == line and printed[-1].startswith(folder)  # one line, at the end of the output
    out = io.StringIO()
    _print_summary(Console(file=out, width=80), {**BELOW, "test_auc": 0.9}, 2.0, lang)
    assert line.split(":")[0] not in out.getvalue()
    curve = (np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    html = verification_sections(BELOW, {"embedding": curve}, "note")[0][1]
    assert below_baseline(BELOW, "en").split(":")[0] in html


def test_the_card_of_an_embedding_run_below_its_baseline_says_so(tmp_path: Path) -> None:
    from trainwell.results.card import render_card
    from trainwell.results.folder import read_run
    from trainwell.verification.report import baseline_entries

    summary = {**BELOW, **baseline_entries(BELOW), "epochs": 2}
    assert summary["below_pixel_baseline"] is True and baseline_entries({**BELOW, "test_auc": 0.9}) == {
        "below_pixel_baseline": False}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    card = render_card(read_run(tmp_path))
    assert "- " + summary["pixel_baseline_note"] in card
