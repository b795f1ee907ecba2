"""Text task units: tokenizers, vocabulary, per-batch padding, length buckets, and padding that never
changes a prediction (lstm and gru, every pooling)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from trainwell.config import ModelConfig
from trainwell.data.loading import EpochLoader
from trainwell.data.text_batch import BucketBatchSampler, TextData, pad_batch, text_loader_options
from trainwell.data.tokenize import char_tokens, get_tokenizer, truncate, word_tokens
from trainwell.data.vocab import PAD_ID, UNK_ID, Vocab
from trainwell.models.rnn import RNNClassifier


def test_char_tokens_split_cjk_keep_latin_words_and_numbers_whole() -> None:
    assert char_tokens("质量很好 Good, 5 stars!") == ["质", "量", "很", "好", "good", ",", "5", "stars", "!"]
    assert char_tokens("iPhone12真棒！！") == ["iphone12", "真", "棒", "！", "！"]
    assert char_tokens("   ") == []


def test_word_tokens_segment_chinese_with_jieba_and_split_latin_on_spaces(capfd: pytest.CaptureFixture[str]) -> None:
    tokens = word_tokens("这个东西质量很好 Great value!")
    assert tokens[:3] == ["这个", "东西", "质量"]
    assert tokens[-3:] == ["great", "value", "!"]
    assert "" not in tokens and " " not in tokens
    assert "prefix dict" not in capfd.readouterr().err  # jieba's start-up chatter is silenced


def test_user_tokenizer_is_imported_and_checked(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mytok.py").write_text("def split(s):\n    return s.split('|')\n\ndef bad(s):\n    return 3\n")
    monkeypatch.chdir(tmp_path)
    assert get_tokenizer("mytok:split")("a|b") == ["a", "b"]
    from trainwell._errors import ConfigError

    with pytest.raises(ConfigError, match="list of strings"):
        get_tokenizer("mytok:bad")("a")
    with pytest.raises(ConfigError, match="char, word or package.module:function"):
        get_tokenizer("chars")


def test_vocab_pad_is_zero_unknown_words_map_to_unk_and_limits_apply() -> None:
    texts = [["好", "好", "好", "差", "差", "一般"], ["好"]]
    v = Vocab.build(texts, min_freq=2)
    assert v.itos == ["<pad>", "<unk>", "好", "差"]  # most frequent first; 一般 is below min_freq
    assert (PAD_ID, UNK_ID) == (0, 1)
    assert v.encode(["好", "一般", "新词"]) == [2, UNK_ID, UNK_ID]
    assert v.encode(["好", "差", "好"], max_len=2) == [2, 3]  # truncated
    assert v.encode([]) == [UNK_ID]  # never an empty sequence (packing needs length >= 1)
    assert Vocab.build(texts, min_freq=1, max_size=3).itos == ["<pad>", "<unk>", "好"]
    assert Vocab.from_dict(v.to_dict()).stoi == v.stoi


def _items(*lengths: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(torch.arange(2, 2 + n), torch.tensor(i % 2)) for i, n in enumerate(lengths)]


def test_pad_batch_pads_to_the_longest_in_the_batch_and_keeps_lengths() -> None:
    (tokens, lengths), labels = pad_batch(_items(3, 5, 1))
    assert tokens.shape == (3, 5) and tokens.dtype == torch.long
    assert lengths.tolist() == [3, 5, 1]
    assert tokens[0].tolist() == [2, 3, 4, PAD_ID, PAD_ID]
    assert labels.tolist() == [0, 1, 0]


def test_bucket_batches_cover_every_sample_once_depend_on_seed_and_epoch_and_resume() -> None:
    lengths = [(i * 37) % 50 + 1 for i in range(1000)]
    s = BucketBatchSampler(lengths, 32, shuffle=True, seed=3)
    epoch0 = s.batches()
    assert sorted(i for b in epoch0 for i in b) == list(range(1000))
    assert len(epoch0) == s.batches_per_epoch == 32
    assert epoch0 == BucketBatchSampler(lengths, 32, shuffle=True, seed=3).batches()
    s.set_epoch(1)
    assert s.batches() != epoch0
    s.set_epoch(0, 5)
    assert list(s) == epoch0[5:] and len(s) == 27  # resume skips the batches already trained on
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in epoch0) / len(epoch0)
    plain = BucketBatchSampler(lengths, 32, shuffle=True, seed=3, bucket=False).batches()
    plain_spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in plain) / len(plain)
    assert spread < plain_spread / 5  # similar lengths batched together: little padding


def test_epoch_loader_with_text_options_yields_padded_batches_in_a_resumable_order() -> None:
    data = TextData([torch.arange(1, 1 + (i % 7) + 1) for i in range(100)], torch.arange(100) % 2)
    loader = EpochLoader(data, batch_size=16, shuffle=True, seed=0,
                         **text_loader_options(data, 16, shuffle=True, seed=0, bucket=True))
    loader.set_epoch(2)
    batches = list(loader)
    assert len(batches) == loader.batches_per_epoch == 7
    (tokens, lengths), labels = batches[0]
    assert tokens.shape == (len(lengths), int(lengths.max())) and labels.shape == lengths.shape
    loader.set_epoch(2, 3)
    assert all(torch.equal(a[0][0], b[0][0]) for a, b in zip(list(loader), batches[3:]))


@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("pooling", ["last", "mean", "max", "attention", "last_max"])
@pytest.mark.parametrize("bidirectional", [True, False])
def test_padding_never_changes_a_prediction(kind: str, pooling: str, bidirectional: bool) -> None:
    torch.manual_seed(0)
    model = RNNClassifier(50, 3, kind=kind, embed_dim=8, hidden_size=6, layers=2, bidirectional=bidirectional,
                          pooling=pooling, dropout=0.3, embed_dropout=0.2).eval()  # type: ignore[arg-type]
    text = torch.tensor([5, 9, 11, 4])
    others = [torch.randint(2, 50, (n,)) for n in (9, 2, 13)]
    alone = model(text[None], torch.tensor([4]))
    (tokens, lengths), _ = pad_batch([(s, torch.tensor(0)) for s in [others[0], text, *others[1:]]])
    assert tokens.shape[1] == 13  # the text is padded with 9 zeros in the batch
    batched = model(tokens, lengths)
    torch.testing.assert_close(batched[1], alone[0], rtol=1e-5, atol=1e-6)
    longer = torch.cat([text, torch.zeros(20, dtype=torch.long)])[None]
    torch.testing.assert_close(model(longer, torch.tensor([4]))[0], alone[0], rtol=1e-5, atol=1e-6)


def test_rnn_model_registry_builds_with_the_vocabulary_size_and_refuses_without_it() -> None:
    from trainwell._errors import ConfigError
    from trainwell.models import MODELS

    cfg = ModelConfig(name="lstm", embed_dim=8, hidden_size=4)
    model = MODELS.get("lstm")(cfg, (10,), 2, vocab_size=30)
    assert model.embed.num_embeddings == 30 and model.embed.padding_idx == 0
    assert model.rnn.batch_first
    out = model(torch.tensor([[3, 4, 0], [5, 0, 0]]), torch.tensor([2, 1]))
    assert out.shape == (2, 2)
    with pytest.raises(ConfigError, match="--task text"):
        MODELS.get("gru")(cfg, (10,), 2)


def test_training_gives_every_parameter_a_gradient() -> None:
    model = RNNClassifier(20, 2, embed_dim=4, hidden_size=3, layers=2, pooling="max", embed_dropout=0.1)
    (tokens, lengths), labels = pad_batch(_items(3, 5, 1, 4))
    torch.nn.functional.cross_entropy(model(tokens, lengths), labels).backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    assert model.embed.weight.grad[PAD_ID].abs().sum() == 0  # padding_idx=0: the pad row never learns


@pytest.mark.parametrize("pooling", ["attention", "last_max"])
def test_attention_and_last_max_pooling_train_every_parameter(pooling: str) -> None:
    model = RNNClassifier(20, 2, embed_dim=4, hidden_size=3, pooling=pooling)  # type: ignore[arg-type]
    assert model.head.in_features == (12 if pooling == "last_max" else 6)
    (tokens, lengths), labels = pad_batch(_items(3, 5, 1, 4))
    torch.nn.functional.cross_entropy(model(tokens, lengths), labels).backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name


@pytest.mark.parametrize("pooling", ["last", "mean", "max", "attention", "last_max"])
def test_steps_past_the_length_get_zero_weight_whatever_they_hold(pooling: str) -> None:
    """Past ``lengths`` a batch may hold anything: no pooling reads it (attention weight 0 there)."""
    torch.manual_seed(0)
    model = RNNClassifier(20, 2, embed_dim=4, hidden_size=3, pooling=pooling).eval()  # type: ignore[arg-type]
    clean = model(torch.tensor([[3, 4, 5, 0, 0]]), torch.tensor([3]))
    junk = model(torch.tensor([[3, 4, 5, 17, 9]]), torch.tensor([3]))
    torch.testing.assert_close(junk, clean, rtol=1e-5, atol=1e-6)


def test_truncate_keeps_head_tail_or_both_ends() -> None:
    tokens = list("abcdefghij")
    assert truncate(tokens, 4) == list("abcd")
    assert truncate(tokens, 4, "tail") == list("ghij")
    assert truncate(tokens, 4, "head+tail") == list("abij")
    assert truncate(tokens, 5, "head+tail", head_fraction=0.2) == list("aghij")
    assert truncate(tokens, 5, "head+tail", head_fraction=1.0) == list("abcde")
    assert truncate(tokens, 20, "head+tail") == tokens  # short texts are untouched


def _ppmi_texts() -> list[torch.Tensor]:
    """Two 'topics' (ids 2-5 and 6-9) that never share a text, plus a rare token (10) and <unk> (1)."""
    g = torch.Generator().manual_seed(0)
    texts = [torch.randint(2, 6, (12,), generator=g) for _ in range(30)]
    texts += [torch.randint(6, 10, (12,), generator=g) for _ in range(30)]
    return [*texts, torch.tensor([10, 1, 2])]


def test_ppmi_embeddings_are_deterministic_shaped_by_the_vocabulary_with_a_zero_pad_row() -> None:
    from trainwell.data.embeddings_ppmi import cooccurrence, ppmi_embeddings

    texts = _ppmi_texts()
    vectors = ppmi_embeddings(texts, 12, 6)
    assert vectors.shape == (12, 6) and vectors.dtype == torch.float32
    assert torch.equal(vectors, ppmi_embeddings(texts, 12, 6))  # same input, same vectors
    assert vectors[PAD_ID].abs().sum() == 0
    assert vectors[11].abs().sum() == 0  # never seen in training: no vector
    assert torch.isfinite(vectors).all() and abs(float(vectors[1:].std(unbiased=False)) - 1) < 1e-4
    counts = cooccurrence(texts, 12, window=2)
    assert (counts != counts.T).nnz == 0 and counts[0].nnz == 0  # symmetric; pad never counted
    unit = torch.nn.functional.normalize(vectors[2:10], dim=1)
    sims = unit @ unit.T  # words of the same topic are closer than words of different topics
    assert sims[:4, :4].mean() > sims[:4, 4:].mean() and sims[4:, 4:].mean() > sims[4:, :4].mean()
    wide = ppmi_embeddings(texts, 12, 20)  # more dimensions than the matrix rank: the rest are zero
    assert wide.shape == (12, 20) and wide[PAD_ID].abs().sum() == 0


def test_text_pretrain_ppmi_initialises_the_embedding_and_padding_still_never_changes_a_prediction() -> None:
    from types import SimpleNamespace

    from trainwell.config import Config
    from trainwell.data.embeddings_ppmi import ppmi_embeddings
    from trainwell.tasks.text import init_ppmi_embedding

    config = Config.model_validate({"task": "text", "text": {"pretrain": "ppmi"}})
    texts = _ppmi_texts()
    bundle = SimpleNamespace(train=TextData(texts, torch.zeros(len(texts), dtype=torch.long)))
    model = RNNClassifier(12, 2, embed_dim=6, hidden_size=4, pooling="last_max").eval()
    init_ppmi_embedding(model, bundle, config)  # type: ignore[arg-type]
    torch.testing.assert_close(model.embed.weight.detach(), ppmi_embeddings(texts, 12, 6))
    text = torch.tensor([3, 7, 10])
    alone = model(text[None], torch.tensor([3]))
    (tokens, lengths), _ = pad_batch([(s, torch.tensor(0)) for s in [torch.tensor([2, 3, 4, 5, 6, 7]), text]])
    torch.testing.assert_close(model(tokens, lengths)[1], alone[0], rtol=1e-5, atol=1e-6)
    (tokens, lengths), labels = pad_batch(_items(3, 5, 1))
    torch.nn.functional.cross_entropy(model.train()(tokens, lengths), labels).backward()
    assert model.embed.weight.grad is not None and model.embed.weight.grad[PAD_ID].abs().sum() == 0  # fine-tuned


def _ema_trainer(folder: Any, *, stop_at: int | None = None) -> Any:
    """A tiny lstm with ``train.ema`` on random token data; checkpoints every 3 steps; optionally stops early."""
    from trainwell.engine.callbacks import Callback
    from trainwell.engine.checkpointing import Checkpointer
    from trainwell.engine.ema import Ema
    from trainwell.engine.seed import seed_everything
    from trainwell.engine.trainer import StopTraining, Trainer

    class Stop(Callback):
        def on_train_batch_end(self, trainer: Any, loss: Any) -> None:
            if stop_at is not None and trainer.state.step == stop_at:
                raise StopTraining

    seed_everything(0)
    g = torch.Generator().manual_seed(0)
    data = TextData([torch.randint(2, 30, (int(n),), generator=g) for n in torch.randint(1, 9, (80,), generator=g)],
                    torch.randint(0, 2, (80,), generator=g))
    loader = EpochLoader(data, batch_size=16, shuffle=True, seed=0,
                         **text_loader_options(data, 16, shuffle=True, seed=0, bucket=True))
    val = EpochLoader(data, batch_size=64, shuffle=False, seed=0,
                      **text_loader_options(data, 64, shuffle=False, seed=0, bucket=True))
    model = RNNClassifier(30, 2, embed_dim=6, hidden_size=4, pooling="last_max", dropout=0.3)
    trainer = Trainer(model, torch.nn.CrossEntropyLoss(), torch.optim.Adam(model.parameters(), 1e-2), loader,
                      val_loader=val, epochs=2, monitor="val_accuracy",
                      callbacks=[Ema(0.9), Checkpointer(folder, every_steps=3), Stop()])
    return trainer, trainer.callbacks[0]


def test_ema_validates_and_saves_the_average_and_resumes_exactly(tmp_path: Any) -> None:
    from trainwell.engine.checkpoint import load_checkpoint

    full, ema = _ema_trainer(tmp_path / "full")
    full.fit()
    ckpt = load_checkpoint(tmp_path / "full" / "last.pt")
    trained = full.model.state_dict()
    for name, avg in ema.shadow.items():  # model: the average; train_model: the weights as trained
        assert torch.equal(ckpt["model"][name], avg) and torch.equal(ckpt["train_model"][name], trained[name])
    assert any(not torch.equal(ema.shadow[k], trained[k]) for k in trained)
    ema.swap(full)
    assert full.evaluate(full.val_loader)["accuracy"] == full.state.history[-1]["val_accuracy"]  # validated on it
    ema.swap(full)

    stopped, _ = _ema_trainer(tmp_path / "cut", stop_at=7)  # last.pt holds step 6: mid-epoch 1 (5 batches an epoch)
    stopped.fit()
    resumed, _ = _ema_trainer(tmp_path / "cut")
    resumed.load_state_dict(load_checkpoint(tmp_path / "cut" / "last.pt"))
    assert resumed.state.step == 6
    resumed.fit()
    end = load_checkpoint(tmp_path / "cut" / "last.pt")
    for key in ("model", "train_model"):
        assert all(torch.equal(end[key][k], ckpt[key][k]) for k in ckpt[key]), key
    assert [r["val_accuracy"] for r in resumed.state.history] == [r["val_accuracy"] for r in full.state.history]
