"""padding-not-masked sweep: a bag-of-embeddings sentiment classifier over right-padded token sequences,
mean-pooled over every position (padding_idx=0 zeroes the pad embedding, but the mean still divides by
the padded length); --strength is the share of the batches' positions that are padding (0: no padding).

Token t scores (t - 15) / 14; a text's class is its real tokens' mean score (negative < -0.2 <= neutral
<= 0.2 < positive), so every real length decides its label exactly: the masked mean learns it at every
strength, and what the sweep loses is the padding's doing, not the shorter texts'."""

import torch
from torch import nn

from _digits import accuracy, finish, setup, train

share = setup(0.0)
T, N = 24, 2400
spread = min(share, 1 - share) * T
lengths = (T * (1 - share) + (torch.rand(N) * 2 - 1) * spread).round().long().clamp(1, T)
centre = torch.rand(N, 1) * 2 - 1  # each text leans its own way
x = ((centre + torch.randn(N, T) * 0.6).clamp(-1, 1) * 14 + 15).round().long()  # tokens 1..29
x[torch.arange(T) >= lengths[:, None]] = 0  # right-padded with token 0
score = ((x - 15) / 14).masked_fill(x == 0, 0).sum(1) / lengths
y = (score > -0.2).long() + (score > 0.2).long()


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        vectors = torch.randn(30, 16, generator=torch.Generator().manual_seed(1))  # "pretrained" word vectors
        vectors[:, 0] = (torch.arange(30) - 15) / 14  # one direction carries the sentiment
        vectors[0] = 0
        self.embed = nn.Embedding.from_pretrained(vectors, freeze=True, padding_idx=0)
        self.head = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 3))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens).mean(1))  # the mean over every position, padding included


model = Classifier()
loss = train(model, torch.optim.Adam(model.parameters(), lr=3e-3), x[:1800], y[:1800], epochs=10)
finish(accuracy(model, x[1800:], y[1800:]), loss)
