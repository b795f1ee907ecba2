"""Hugging Face text classifiers (``--model hf:NAME_OR_PATH``): a tiny BERT written here with ``save_pretrained``
(hidden 32, 2 layers, 2 heads, a WordPiece vocabulary of the reviews' characters), its own tokenizer turning the
texts into ids, the head sized to the data's classes and said, weights that do not fit refused by key, the offline
and missing-package errors, and end to end: training, predict on raw text and an ONNX export with parity, with the
model's folder gone and the hub out of reach. No published model is downloaded (no network here)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

pytest.importorskip("transformers")

from conftest import main_in

from trainwell._errors import TrainwellError

POSITIVE = ["质量很好", "很喜欢", "不错", "好用", "满意", "推荐", "物美价廉"]
NEGATIVE = ["太差了", "失望", "不好用", "质量差", "退货", "坏了", "后悔"]
SUBJECTS = ["这个东西", "手机", "衣服", "书", "快递", "", "这次"]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def reviews(n: int = 120) -> list[tuple[str, str]]:
    r = random.Random(0)
    rows = []
    for i in range(n):
        words = POSITIVE if i % 2 else NEGATIVE
        text = r.choice(SUBJECTS) + "".join(r.sample(words, 2)) + r.choice(["", "！", "。"]) + str(i)
        rows.append((text, "positive" if i % 2 else "negative"))
    return rows


def tiny_bert(folder: Path, rows: list[tuple[str, str]], *, labels: int | None = None, masked_lm: bool = False,
              **config: int) -> Path:
    """A tiny BERT and its WordPiece tokenizer (one token per character of the reviews) in ``folder``: the base
    model, a classifier of ``labels`` classes, or a masked language model (its own head, no pooler)."""
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        BertForSequenceClassification,
        BertModel,
        BertTokenizerFast,
    )

    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab-source.txt"
    vocab.write_text("\n".join(SPECIAL + sorted({c for t, _ in rows for c in t})) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(vocab))
    sizes = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
             "max_position_embeddings": 64, **config}
    torch.manual_seed(0)
    bert = BertConfig(vocab_size=tokenizer.vocab_size, **sizes)
    if masked_lm:
        model = BertForMaskedLM(bert)
    elif labels is None:
        model = BertModel(bert)
    else:
        model = BertForSequenceClassification(BertConfig(**bert.to_dict(), num_labels=labels))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def rows() -> list[tuple[str, str]]:
    return reviews()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, str]]) -> Path:
    return tiny_bert(tmp_path_factory.mktemp("hf") / "tiny-bert", rows)


def write_tsv(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("text\tlabel\n" + "".join(f"{t}\t{lb}\n" for t, lb in rows), encoding="utf-8")
    return path


def test_the_model_tokenizer_keeps_its_special_tokens_and_cuts_the_text_between_them(tiny: Path) -> None:
    from transformers import AutoTokenizer

    from trainwell.data.text_hf import HfTokens

    reference = AutoTokenizer.from_pretrained(tiny)
    tokens = HfTokens(reference.backend_tokenizer.to_str())
    cls, sep = reference.cls_token_id, reference.sep_token_id
    text = "质量很好推荐"
    assert tokens.encode([text], 64) == [reference(text)["input_ids"]]  # what transformers gives
    own = reference(text, add_special_tokens=False)["input_ids"]
    assert tokens.encode([text], 5) == [[cls, *own[:3], sep]]  # head: max_len counts the special tokens
    assert tokens.encode([text], 5, "tail") == [[cls, *own[-3:], sep]]
    assert tokens.encode([text], 6, "head+tail") == [[cls, *own[:2], *own[-2:], sep]]
    assert tokens.decode(tokens.encode([text], 64)[0]).replace(" ", "") == text
    with pytest.raises(TrainwellError, match="no room for a text"):
        tokens.encode([text], 2)


def test_the_classifier_reads_tokens_and_lengths_and_never_the_padding(tiny: Path) -> None:
    from trainwell.models.hf import build_hf_model, set_classes
    from trainwell.tasks.text_hf import HfText

    hf = HfText.load(f"hf:{tiny}", None)
    set_classes(hf.config, ["a", "b", "c"])
    model = build_hf_model(hf.config, hf.pad_id).eval()
    ids = torch.tensor(hf.tokens.encode(["质量很好", "太差了失望后悔"], 64)[0])
    long = torch.tensor(hf.tokens.encode(["太差了失望后悔"], 64)[0])
    batch = torch.full((2, len(long)), 7)  # whatever lies past a text's length
    batch[0, :len(ids)], batch[1] = ids, long
    with torch.no_grad():
        alone = model(ids.unsqueeze(0), torch.tensor([len(ids)]))
        padded = model(batch, torch.tensor([len(ids), len(long)]))
    assert padded.shape == (2, 3)
    torch.testing.assert_close(padded[0], alone[0], atol=1e-5, rtol=0)


def test_the_head_is_sized_to_the_classes_and_said_with_its_old_size(tmp_path: Path,
                                                                     rows: list[tuple[str, str]]) -> None:
    from trainwell.engine.finetune import FreezeBackbone, param_groups
    from trainwell.models.head import head_module
    from trainwell.models.hf import build_hf_model, set_classes
    from trainwell.tasks.text_hf import HfText

    folder = tiny_bert(tmp_path / "five", rows, labels=5)  # a classifier of five classes
    hf = HfText.load(f"hf:{folder}", str(folder))
    set_classes(hf.config, ["negative", "positive"])
    model = build_hf_model(hf.config, hf.pad_id, name=f"hf:{folder}", weights=str(folder))
    [line] = model.notes
    assert "head classifier (Linear 32 -> 5 in the weights) replaced by a new Linear 32 -> 2" in line, line
    assert model.model.classifier.weight.abs().sum() == 0 and model.model.classifier.bias.abs().sum() == 0
    from safetensors.torch import load_file

    saved = load_file(str(folder / "model.safetensors"))  # the base model's weights are the folder's
    key = next(k for k in saved if k.endswith("embeddings.word_embeddings.weight"))
    torch.testing.assert_close(model.model.bert.embeddings.word_embeddings.weight, saved[key])
    head = head_module(model)  # the layers after the base model: dropout and classifier
    assert {id(p) for p in head.parameters()} == {id(p) for p in model.model.classifier.parameters()}
    groups = param_groups(model, head, 1e-3, 0.3)
    assert len(groups[0]["params"]) == 2 and groups[1]["lr"] == pytest.approx(3e-4)
    assert len(groups[0]["params"]) + len(groups[1]["params"]) == len(list(model.parameters()))
    freeze = FreezeBackbone(model, head, 1)
    freeze.on_epoch_start(SimpleNamespace(state=SimpleNamespace(epoch=0)))  # type: ignore[arg-type]
    assert not any(p.requires_grad for p in model.model.bert.parameters())
    assert all(p.requires_grad for p in model.model.classifier.parameters())
    freeze.on_epoch_start(SimpleNamespace(state=SimpleNamespace(epoch=1)))  # type: ignore[arg-type]
    assert all(p.requires_grad for p in model.parameters())


def test_a_masked_language_model_leaves_its_own_head_out_and_says_the_new_pooler(
        tmp_path: Path, rows: list[tuple[str, str]]) -> None:
    from trainwell.models.hf import build_hf_model, set_classes
    from trainwell.tasks.text_hf import HfText

    folder = tiny_bert(tmp_path / "mlm", rows, masked_lm=True)
    hf = HfText.load(f"hf:{folder}", str(folder))
    set_classes(hf.config, ["negative", "positive"])
    [line] = build_hf_model(hf.config, hf.pad_id, name=f"hf:{folder}", weights=str(folder)).notes
    assert "head classifier (absent from the weights)" in line
    assert "the weights' own head (cls.*) left out" in line and "bert.pooler starts new" in line, line


def test_weights_that_do_not_fit_outside_the_head_are_an_error_listing_them(tmp_path: Path,
                                                                            rows: list[tuple[str, str]]) -> None:
    from trainwell.models.hf import build_hf_model
    from trainwell.tasks.text_hf import HfText

    folder = tiny_bert(tmp_path / "other", rows)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "intermediate_size": 48}))  # not the weights' size
    hf = HfText.load(f"hf:{folder}", str(folder))
    with pytest.raises(TrainwellError, match=r"do not fit .* outside its classification head: "
                                             r"bert\.encoder\.layer\.0\.intermediate\.dense\.bias \(shape \(64,\) in "
                                             r"the weights, \(48,\) in the model\)") as caught:
        build_hf_model(hf.config, hf.pad_id, name=f"hf:{folder}", weights=str(folder))
    assert "same architecture" in caught.value.fix


def test_offline_with_nothing_cached_is_one_paragraph(monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers import AutoTokenizer

    from trainwell.tasks.text_hf import HfText

    def offline(*args: object, **kwargs: object) -> None:  # what the hub client raises with no network
        raise OSError("We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them "
                      "in the cached files.")

    monkeypatch.setattr(AutoTokenizer, "from_pretrained", offline)
    with pytest.raises(TrainwellError, match="published tokenizer of hf:bert-base-chinese is not in this "
                                             "machine's cache") as caught:
        HfText.load("hf:bert-base-chinese", True)
    assert "huggingface" in caught.value.fix and "--pretrained PATH" in caught.value.fix


@pytest.mark.slow
def test_offline_with_an_empty_cache_stops_the_cli_with_exit_2(tmp_path: Path, rows: list[tuple[str, str]]) -> None:
    data = write_tsv(tmp_path / "reviews.tsv", rows)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf-home"),
           "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    env.pop("HF_HUB_CACHE", None)
    done = subprocess.run([sys.executable, "-c", "import sys; from trainwell.cli import main; sys.exit(main())",
                           "train", "--data", f"tsv:{data}", "--model", "hf:bert-base-chinese", "--pretrained",
                           "--threads", "1", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("trainwell: error:") == 1
    assert str(tmp_path / "hf-home" / "hub") in done.stderr and "--pretrained PATH" in done.stderr


def test_a_missing_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.tasks.text_hf import HfText

    monkeypatch.setitem(sys.modules, "transformers", None)  # as if not installed
    with pytest.raises(TrainwellError, match="need the transformers package") as caught:
        HfText.load("hf:bert-base-chinese", True)
    assert caught.value.fix == 'pip install "trainwell[hf]"'


def test_hf_names_are_text_models_that_a_file_may_name(tmp_path: Path) -> None:
    from trainwell._trust import check_file_names
    from trainwell.config import ModelConfig
    from trainwell.models import build_model
    from trainwell.models.hf import hf_name, load_config

    with pytest.raises(TrainwellError, match="is a text model"):
        build_model(ModelConfig(name="hf:bert-base-chinese"), (1, 8, 8), 3)
    check_file_names([("model.name", "hf:bert-base-chinese")], tmp_path / "config.yaml")  # a name, not code
    assert ModelConfig(name="hf:bert-base-chinese", pretrained=True).pretrained is True
    with pytest.raises(TrainwellError, match="not a folder written by save_pretrained"):
        hf_name(f"hf:{tmp_path}")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "mine", "auto_map": {
        "AutoConfig": "configuration_mine.MineConfig"}}))  # code in the folder: never run
    with pytest.raises(TrainwellError, match="cannot build the configuration of .*custom code") as caught:
        load_config(f"hf:{tmp_path}", str(tmp_path))
    assert "trust_remote_code" in caught.value.fix


@pytest.mark.slow
def test_train_predict_and_export_from_the_run_folder_alone(tmp_path: Path, rows: list[tuple[str, str]],
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnxruntime")
    folder = tiny_bert(tmp_path / "tiny-bert", rows)
    write_tsv(tmp_path / "reviews.tsv", rows)
    assert main_in(tmp_path, "train", "--data", "tsv:reviews.tsv", "--model", "hf:tiny-bert", "--pretrained",
                   "tiny-bert", "--epochs", "1", "--batch-size", "16", "--lr", "3e-3", "--threads", "1",
                   "--no-progress", "--no-doctor", "--out", "run") == 0
    said = "".join(capsys.readouterr())  # the notes go to stderr
    assert "head classifier (absent from the weights) replaced by a new Linear 32 -> 2" in said
    assert "text.max_len lowered from 200 to 64" in said and "hf:tiny-bert's own tokenizer" in said
    run = tmp_path / "run"
    recorded = (run / "config.yaml").read_text()
    assert "max_len: 64" in recorded and "name: hf:tiny-bert" in recorded
    assert {"tokenizer.json", "config.json"} <= {p.name for p in (run / "hf").iterdir()}
    assert main_in(tmp_path, "train", "--data", "tsv:reviews.tsv", "--model", "hf:tiny-bert", "--pretrained", "run",
                   "--epochs", "1", "--threads", "1", "--no-progress", "--no-doctor", "--out", "again") == 0
    said = "".join(capsys.readouterr())  # a run folder of an hf: run is a --pretrained source like any other
    assert "head model.classifier kept (the same classes)" in said and "normalization" not in said
    shutil.rmtree(folder)  # predict and export read the run folder only, never the model's folder or the hub
    import transformers

    def no_hub(*args: object, **kwargs: object) -> None:
        raise AssertionError("the hub or the model's folder was read")

    for auto in (transformers.AutoTokenizer, transformers.AutoConfig, transformers.AutoModelForSequenceClassification):
        monkeypatch.setattr(auto, "from_pretrained", no_hub)
    texts = ["这个东西质量很好推荐", "太差了失望"]
    assert main_in(tmp_path, "predict", "run", *texts, "--json") == 0
    from_run = json.loads(capsys.readouterr().out)
    assert [r["input"] for r in from_run] == texts
    for fmt in ("onnx", "torchscript", "exported", "safetensors"):  # each written only when parity holds
        assert main_in(tmp_path, "export", "run", "--format", fmt) == 0
        assert json.loads((tmp_path / "run" / "export" / fmt / "export.json").read_text())["parity"]["passed"]
    capsys.readouterr()
    assert main_in(tmp_path, "predict", "run/export/onnx/model.onnx", *texts, "--json") == 0
    from_onnx = json.loads(capsys.readouterr().out)
    for a, b in zip(from_run, from_onnx):
        assert a["top"][0]["class"] == b["top"][0]["class"]
        assert a["top"][0]["probability"] == pytest.approx(b["top"][0]["probability"], abs=1e-4)
