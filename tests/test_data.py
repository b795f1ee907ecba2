"""Tests for datasets: label encoding, splits, built-in sets, CSV and image folders, samplers, augmentation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from trainwell._errors import DataError
from trainwell.config import DataConfig
from trainwell.data import DataBundle, TensorData, build_data
from trainwell.data.augment import random_shift
from trainwell.data.loading import EpochLoader, EpochSampler
from trainwell.data.splits import encode_labels, split_indices

# --------------------------------------------------------------------------- encode_labels


def test_encode_labels_identity_has_no_mapping() -> None:
    y, names, mapping = encode_labels([2, 0, 1, 1, 0])
    assert y.tolist() == [2, 0, 1, 1, 0]
    assert y.dtype == np.int64
    assert names == ["0", "1", "2"]
    assert mapping is None


def test_encode_labels_one_to_ten_are_mapped() -> None:
    values = [10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1]
    y, names, mapping = encode_labels(values)
    assert names == [str(i) for i in range(1, 11)]  # numeric order, not text order
    assert y.tolist() == [9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0]
    assert mapping == {str(i): i - 1 for i in range(1, 11)}


def test_encode_labels_with_a_gap_is_mapped() -> None:
    y, names, mapping = encode_labels(np.array([0, 2, 2, 0]))
    assert y.tolist() == [0, 1, 1, 0]
    assert mapping == {"0": 0, "2": 1}


def test_encode_labels_strings() -> None:
    y, names, mapping = encode_labels(["dog", "cat", "dog", "bird"])
    assert names == ["bird", "cat", "dog"]
    assert y.tolist() == [2, 1, 2, 0]
    assert mapping == {"bird": 0, "cat": 1, "dog": 2}


def test_encode_labels_integral_floats_are_named_as_integers() -> None:
    y, names, mapping = encode_labels(np.array([1.0, 0.0, 1.0]))
    assert names == ["0", "1"]
    assert mapping is None
    assert y.tolist() == [1, 0, 1]


# --------------------------------------------------------------------------- split_indices


def _balanced_labels(classes: int = 10, each: int = 100) -> np.ndarray:
    return np.repeat(np.arange(classes), each)


def test_split_indices_are_disjoint_cover_everything_and_have_the_asked_sizes() -> None:
    labels = _balanced_labels()
    parts = split_indices(labels, [0.1, 0.2], seed=0)
    assert [len(p) for p in parts] == [700, 100, 200]
    joined = np.concatenate(parts)
    assert sorted(joined.tolist()) == list(range(len(labels)))
    for p in parts:
        assert np.all(np.diff(p) > 0)  # sorted, no duplicates


def test_split_indices_deterministic_per_seed() -> None:
    labels = _balanced_labels()
    a = split_indices(labels, [0.1, 0.1], seed=3)
    b = split_indices(labels, [0.1, 0.1], seed=3)
    c = split_indices(labels, [0.1, 0.1], seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[1], c[1])


def test_split_indices_zero_fraction_gives_an_empty_part() -> None:
    labels = _balanced_labels(2, 10)
    train, val, test = split_indices(labels, [0.2, 0.0], seed=0)
    assert len(test) == 0
    assert len(train) + len(val) == 20


def test_split_indices_too_few_samples_for_a_split() -> None:
    with pytest.raises(DataError) as e:
        split_indices(_balanced_labels(2, 2), [0.1, 0.1], seed=0, names=("data.val_fraction", "data.test_fraction"))
    msg = str(e.value)
    assert "4 samples are too few to split" in msg and "data.val_fraction=0.1 of 4 rounds to 0" in msg
    assert "at least 6 samples" in msg and "all 2 classes" in msg and "data.test_fraction" in msg
    with pytest.raises(DataError, match="leaving none to train on"):
        split_indices(_balanced_labels(2, 1), [0.5, 0.5], seed=0)


def test_csv_too_small_to_split(tmp_path: Path) -> None:
    p = _csv(tmp_path, "f1,label\n1,0\n2,1\n3,0\n4,1\n5,0\n")
    with pytest.raises(DataError, match="5 samples are too few to split"):
        build_data(DataConfig(name="csv", path=str(p)))
    b = build_data(DataConfig(name="csv", path=str(p), val_fraction=0.2, test_fraction=0.2))  # the fix it names
    assert b.info["sizes"] == {"train": 3, "val": 1, "test": 1}


def test_split_indices_are_stratified() -> None:
    labels = _balanced_labels(10, 100)
    for seed in (0, 1):
        train, val, test = split_indices(labels, [0.1, 0.1], seed=seed)
        assert np.bincount(labels[val], minlength=10).tolist() == [10] * 10
        assert np.bincount(labels[test], minlength=10).tolist() == [10] * 10
        assert np.bincount(labels[train], minlength=10).tolist() == [80] * 10


# --------------------------------------------------------------------------- built-in sets


@pytest.fixture(scope="module")
def mnist5k() -> DataBundle:
    return build_data(DataConfig())


def test_mnist5k_splits(mnist5k: DataBundle) -> None:
    b = mnist5k
    assert (len(b.train), len(b.val), len(b.test)) == (4000, 500, 500)
    assert b.info["sizes"] == {"train": 4000, "val": 500, "test": 500}
    assert b.num_classes == 10
    assert b.class_names == [str(i) for i in range(10)]
    assert b.input_shape == (1, 28, 28)
    assert b.in_memory
    assert b.train.x.dtype == torch.uint8 and b.train.y.dtype == torch.int64
    assert b.preprocess.kind == "image" and b.preprocess.scale == 255.0
    assert "label_mapping" not in b.info


def test_mnist5k_normalization_uses_the_training_split_only(mnist5k: DataBundle) -> None:
    b = mnist5k
    train = b.train.x.double() / 255
    everything = torch.cat([b.train.x, b.val.x, b.test.x]).double() / 255
    (mean,), (std,) = b.preprocess.mean, b.preprocess.std
    assert mean == pytest.approx(train.mean().item(), abs=1e-9)
    assert std == pytest.approx(train.std().item(), abs=1e-9)
    # The whole set gives measurably different numbers: the stats really come from train alone.
    assert abs(mean - everything.mean().item()) > 1e-6
    # The normalized training pixels have mean 0 and std 1.
    z = b.preprocess(b.train.x).double()
    assert z.mean().item() == pytest.approx(0.0, abs=1e-5)
    assert z.std().item() == pytest.approx(1.0, abs=1e-5)


def test_mnist5k_splits_are_disjoint(mnist5k: DataBundle) -> None:
    def keys(d: TensorData) -> set[bytes]:
        return {row.numpy().tobytes() for row in d.x.flatten(1)}

    tr, va, te = keys(mnist5k.train), keys(mnist5k.val), keys(mnist5k.test)
    assert len(tr) + len(va) + len(te) == 5000  # mnist_5k has no duplicate images, so any overlap is a leak
    assert not (tr & va) and not (tr & te) and not (va & te)


def test_limit_keeps_only_n_samples() -> None:
    b = build_data(DataConfig(name="digits", limit=200))
    assert len(b.train) + len(b.val) + len(b.test) == 200
    assert b.info["sizes"] == {"train": 160, "val": 20, "test": 20}


def test_digits_loads() -> None:
    b = build_data(DataConfig(name="digits"))
    assert b.input_shape == (1, 8, 8)
    assert b.num_classes == 10
    assert len(b.train) + len(b.val) + len(b.test) == 1797
    assert b.preprocess.scale == 16.0
    x, y = b.train[[0, 1, 2]]
    assert x.shape == (3, 1, 8, 8) and y.shape == (3,)
    assert float(b.train.x.max()) <= 16.0


def test_same_split_seed_same_split_other_seed_other_split() -> None:
    a = build_data(DataConfig(name="digits"))
    b = build_data(DataConfig(name="digits"))
    c = build_data(DataConfig(name="digits", split_seed=1))
    assert torch.equal(a.val.x, b.val.x) and torch.equal(a.val.y, b.val.y)
    assert not torch.equal(a.val.x, c.val.x)


# --------------------------------------------------------------------------- csv


def _csv(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _good_csv_text(rows: int = 40) -> str:
    rng = np.random.default_rng(0)
    lines = ["f1,f2,label"]
    for i in range(rows):
        label = 1 + i % 2  # labels 1 and 2: need a mapping
        lines.append(f"{rng.normal() + label:.4f},{rng.normal():.4f},{label}")
    return "\n".join(lines) + "\n"


def test_csv_good_file(tmp_path: Path) -> None:
    p = _csv(tmp_path, _good_csv_text(40))
    b = build_data(DataConfig(name="csv", path=str(p)))
    assert b.input_shape == (2,)
    assert b.preprocess.kind == "tabular"
    assert b.preprocess.features == ["f1", "f2"]
    assert b.num_classes == 2
    assert b.class_names == ["1", "2"]
    assert b.info["label_mapping"] == {"1": 0, "2": 1}
    assert sum(b.info["sizes"].values()) == 40
    assert len(b.train) + len(b.val) + len(b.test) == 40
    assert b.train.x.dtype == torch.float32
    assert set(b.train.y.tolist()) <= {0, 1}
    # per-feature stats from the training rows
    assert b.preprocess.mean == pytest.approx(b.train.x.double().mean(0).tolist(), abs=1e-6)


def test_csv_label_column_by_name_and_string_labels(tmp_path: Path) -> None:
    lines = ["kind,a,b"] + [f"{'cat' if i % 2 else 'dog'},{i},{i * 2}" for i in range(20)]
    p = _csv(tmp_path, "\n".join(lines) + "\n")
    b = build_data(DataConfig(name="csv", path=str(p), label="kind"))
    assert b.class_names == ["cat", "dog"]
    assert b.preprocess.features == ["a", "b"]


def test_csv_missing_label_column_names_the_columns(tmp_path: Path) -> None:
    p = _csv(tmp_path, _good_csv_text(10))
    with pytest.raises(DataError) as e:
        build_data(DataConfig(name="csv", path=str(p), label="target"))
    msg = str(e.value)
    assert "'target'" in msg
    assert "f1, f2, label" in msg


def test_csv_non_numeric_value_names_line_and_column(tmp_path: Path) -> None:
    p = _csv(tmp_path, "f1,f2,label\n1,2,0\n3,abc,1\n5,6,0\n")
    with pytest.raises(DataError) as e:
        build_data(DataConfig(name="csv", path=str(p)))
    msg = str(e.value)
    assert "line 3" in msg
    assert "'f2'" in msg
    assert "'abc'" in msg
    assert "t.csv" in msg


@pytest.mark.parametrize("cell", ["nan", "NaN", "inf", ""])
def test_csv_nan_or_empty_value(tmp_path: Path, cell: str) -> None:
    p = _csv(tmp_path, f"f1,f2,label\n1,2,0\n3,4,1\n5,{cell},0\n")
    with pytest.raises(DataError) as e:
        build_data(DataConfig(name="csv", path=str(p)))
    msg = str(e.value)
    assert "line 4" in msg and "'f2'" in msg


def test_csv_empty_cell_says_it_is_empty(tmp_path: Path) -> None:
    p = _csv(tmp_path, "f1,f2,label\n1,2,0\n3,,1\n5,6,0\n")
    with pytest.raises(DataError) as e:
        build_data(DataConfig(name="csv", path=str(p)))
    msg = str(e.value)
    assert "line 3, column 'f2': the cell is empty" in msg and "drop that row" in msg
    assert "encode categories" not in msg


def test_csv_with_semicolons_is_read_by_its_header(tmp_path: Path) -> None:
    p = _csv(tmp_path, _good_csv_text(40).replace(",", ";"))
    b = build_data(DataConfig(name="csv", path=str(p)))
    assert b.preprocess.features == ["f1", "f2"] and b.class_names == ["1", "2"]
    assert any("semicolons" in n for n in b.info["notes"])


def test_csv_with_semicolons_and_decimal_commas_says_how_to_write_decimals(tmp_path: Path) -> None:
    p = _csv(tmp_path, "f1;f2;label\n1,5;2;0\n3;4;1\n")
    with pytest.raises(DataError, match=r"(?s)'1,5' is not a number.*semicolons.*1\.5"):
        build_data(DataConfig(name="csv", path=str(p)))


def test_text_csv_with_semicolons(tmp_path: Path) -> None:
    from trainwell.data.text_files import read_text_file

    p = _csv(tmp_path, "text;label\ngood, really;pos\nbad;neg\n")
    raw = read_text_file(p, "csv", "text", "label")
    assert raw.texts == ["good, really", "bad"] and raw.labels == ["pos", "neg"]
    assert "semicolons" in raw.source


def test_csv_empty_label(tmp_path: Path) -> None:
    p = _csv(tmp_path, "f1,label\n1,0\n2,\n3,1\n")
    with pytest.raises(DataError, match="line 3") as e:
        build_data(DataConfig(name="csv", path=str(p)))
    assert "label" in str(e.value)


def test_csv_single_class(tmp_path: Path) -> None:
    p = _csv(tmp_path, "f1,label\n1,7\n2,7\n3,7\n")
    with pytest.raises(DataError, match="single class"):
        build_data(DataConfig(name="csv", path=str(p)))


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("\n\n", "empty"),
    ("f1,label\n", "no data rows"),
])
def test_csv_empty(tmp_path: Path, text: str, words: str) -> None:
    p = _csv(tmp_path, text)
    with pytest.raises(DataError, match=words):
        build_data(DataConfig(name="csv", path=str(p)))


def test_csv_ragged_row(tmp_path: Path) -> None:
    p = _csv(tmp_path, "f1,f2,label\n1,2,0\n3,1\n")
    with pytest.raises(DataError, match="line 3"):
        build_data(DataConfig(name="csv", path=str(p)))


def test_csv_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist") as e:
        build_data(DataConfig(name="csv", path=str(tmp_path / "gone.csv")))
    assert "gone.csv" in str(e.value)


# --------------------------------------------------------------------------- image folders


def _png(path: Path, value: int, mode: str = "L") -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(value)
    arr = np.clip(rng.normal(value, 20, size=(8, 8)), 0, 255).astype(np.uint8)
    Image.fromarray(arr, mode="L").convert(mode).save(path)


def _class_folder(root: Path, per_class: int = 5, classes: tuple[str, ...] = ("ants", "bees")) -> None:
    for c, name in enumerate(classes):
        for i in range(per_class):
            _png(root / name / f"{i}.png", 60 + 120 * c + i)


def test_image_folder_one_folder_is_split(tmp_path: Path) -> None:
    _class_folder(tmp_path / "imgs", per_class=5)
    b = build_data(DataConfig(name="image-folder", path=str(tmp_path / "imgs")))
    assert b.class_names == ["ants", "bees"]
    assert b.num_classes == 2
    assert b.input_shape == (1, 8, 8)
    assert b.preprocess.kind == "image"
    sizes = b.info["sizes"]
    assert sum(sizes.values()) == 10
    assert sizes["val"] >= 1 and sizes["test"] >= 1
    assert len(b.train) == sizes["train"]
    x, y = b.train[0]
    assert x.shape == (1, 8, 8) and x.dtype == torch.float32
    assert 0.0 <= float(x.min()) and float(x.max()) <= 1.0
    assert y in (0, 1)
    all_items = {p for p, _ in b.train.items + b.val.items + b.test.items}
    assert len(all_items) == 10  # disjoint and complete


def test_image_folder_train_val_layout(tmp_path: Path) -> None:
    _class_folder(tmp_path / "imgs" / "train", per_class=4)
    _class_folder(tmp_path / "imgs" / "val", per_class=2)
    b = build_data(DataConfig(name="image-folder", path=str(tmp_path / "imgs")))
    assert b.info["sizes"] == {"train": 8, "val": 4, "test": 0}
    assert b.test is None
    assert b.class_names == ["ants", "bees"]
    assert all("val" in p.parts for p, _ in b.val.items)
    assert all("train" in p.parts for p, _ in b.train.items)


def test_image_folder_rgb_and_resize(tmp_path: Path) -> None:
    for c, name in enumerate(("a", "b")):
        for i in range(5):
            _png(tmp_path / "imgs" / name / f"{i}.png", 50 + 100 * c, mode="RGB")
    b = build_data(DataConfig(name="image-folder", path=str(tmp_path / "imgs"), image_size=6))
    assert b.input_shape == (3, 6, 6)
    assert b.train[0][0].shape == (3, 6, 6)
    assert len(b.preprocess.mean) == 3


def _corrupt(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(np.random.default_rng(1).integers(0, 256, 300, dtype=np.uint8).tobytes())


def test_image_folder_corrupt_image_names_the_file(tmp_path: Path) -> None:
    _class_folder(tmp_path / "imgs", per_class=5)
    _corrupt(tmp_path / "imgs" / "bees" / "broken.png")
    with pytest.raises(DataError) as e:
        build_data(DataConfig(name="image-folder", path=str(tmp_path / "imgs")))
    assert "broken.png" in str(e.value)
    assert "skip_bad" in str(e.value)


def test_image_folder_skip_bad_counts_the_skipped(tmp_path: Path) -> None:
    _class_folder(tmp_path / "imgs", per_class=5)
    _corrupt(tmp_path / "imgs" / "bees" / "broken.png")
    _corrupt(tmp_path / "imgs" / "ants" / "also-broken.png")
    b = build_data(DataConfig(name="image-folder", path=str(tmp_path / "imgs"), skip_bad=True))
    assert b.info["skipped_unreadable"] == 2
    assert sum(b.info["sizes"].values()) == 10
    used = {p.name for p, _ in b.train.items + b.val.items + b.test.items}
    assert "broken.png" not in used and "also-broken.png" not in used


def test_image_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        build_data(DataConfig(name="image-folder", path=str(tmp_path / "nope")))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no class sub-folders"):
        build_data(DataConfig(name="image-folder", path=str(tmp_path / "empty")))
    (tmp_path / "noimg" / "a").mkdir(parents=True)
    (tmp_path / "noimg" / "a" / "x.txt").write_text("hi")
    with pytest.raises(DataError, match="no images"):
        build_data(DataConfig(name="image-folder", path=str(tmp_path / "noimg")))


# --------------------------------------------------------------------------- EpochSampler / EpochLoader


def test_epoch_sampler_order_depends_on_seed_and_epoch_only() -> None:
    a = EpochSampler(50, shuffle=True, seed=1)
    b = EpochSampler(50, shuffle=True, seed=1)
    a.set_epoch(3)
    b.set_epoch(3)
    torch.manual_seed(123)  # the global RNG must not matter
    first = list(a)
    torch.manual_seed(456)
    assert list(b) == first
    assert sorted(first) == list(range(50))
    assert first != list(range(50))
    b.set_epoch(4)
    assert list(b) != first
    c = EpochSampler(50, shuffle=True, seed=2)
    c.set_epoch(3)
    assert list(c) != first


def test_epoch_sampler_start_gives_the_tail_of_the_same_permutation() -> None:
    s = EpochSampler(30, shuffle=True, seed=0)
    s.set_epoch(2)
    full = list(s)
    s.set_epoch(2, 12)
    assert list(s) == full[12:]
    assert len(s) == 18
    s.set_epoch(2)
    assert list(s) == full and len(s) == 30


def test_epoch_sampler_without_shuffle() -> None:
    s = EpochSampler(7, shuffle=False, seed=0)
    s.set_epoch(5, 3)
    assert list(s) == [3, 4, 5, 6]


def test_epoch_loader_skip_batches() -> None:
    data = TensorData(torch.arange(10).float().unsqueeze(1), torch.arange(10))
    loader = EpochLoader(data, batch_size=3, shuffle=True, seed=0)
    loader.set_epoch(1)
    full = [y.tolist() for _, y in loader]
    assert [len(b) for b in full] == [3, 3, 3, 1]
    assert loader.batches_per_epoch == 4
    loader.set_epoch(1, skip_batches=2)
    assert [y.tolist() for _, y in loader] == full[2:]


# --------------------------------------------------------------------------- augmentation


def test_random_shift_keeps_shape_and_zero_is_identity() -> None:
    x = torch.rand(4, 2, 9, 7)
    g = torch.Generator().manual_seed(0)
    y = random_shift(x, 2, g)
    assert y.shape == x.shape
    assert torch.equal(random_shift(x, 0, torch.Generator().manual_seed(0)), x)
    # the same generator state gives the same shift
    assert torch.equal(random_shift(x, 2, torch.Generator().manual_seed(0)), y)


def test_random_shift_moves_content_without_changing_it() -> None:
    x = torch.zeros(1, 1, 9, 9)
    x[0, 0, 4, 4] = 1.0  # one bright pixel in the middle
    for seed in range(5):
        y = random_shift(x, 2, torch.Generator().manual_seed(seed))
        assert y.sum() == 1.0  # the pixel moved by at most 2 and stays inside the image
        r, c = (y[0, 0] == 1).nonzero()[0].tolist()
        assert abs(r - 4) <= 2 and abs(c - 4) <= 2
