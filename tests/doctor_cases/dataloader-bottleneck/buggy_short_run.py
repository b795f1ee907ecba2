# A quick 12-step smoke run of a text classifier whose Dataset tokenizes and counts n-grams in pure
# Python for every item, every time it is read.
import random

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

random.seed(0)
torch.manual_seed(0)
WORDS = [f"w{i}" for i in range(400)]
DOCS = [" ".join(random.choices(WORDS, k=300)) for _ in range(96)]
LABELS = [random.randint(0, 1) for _ in DOCS]


def featurize(text, dim=512):
    vec = torch.zeros(dim)
    tokens = text.split()
    for a, b in zip(tokens, tokens[1:]):
        for gram in (a, a + " " + b):
            vec[hash(gram) % dim] += 1.0
    return vec / len(tokens)


class Reviews(Dataset):
    def __len__(self):
        return len(DOCS)

    def __getitem__(self, i):
        return featurize(DOCS[i]), LABELS[i]


loader = DataLoader(Reviews(), batch_size=8, shuffle=True)
model = nn.Linear(512, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for x, y in loader:
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
