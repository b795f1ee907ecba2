# An argparse script for a sentiment model: the LSTM gets (batch, seq, emb) without batch_first, and the
# final hidden state is flattened per sample, which fails because it holds one row per time step.
import argparse

import torch
from torch import nn


class Sentiment(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, tokens):
        _, (h, _) = self.rnn(self.emb(tokens))
        return self.out(h.view(tokens.size(0), -1))


parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=12)
args = parser.parse_args()
torch.manual_seed(0)
tokens = torch.randint(0, 300, (args.batch, 10))
labels = torch.randint(0, 2, (args.batch, 1)).float()
model = Sentiment(300, 24, 16)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(5):
    opt.zero_grad()
    nn.functional.binary_cross_entropy_with_logits(model(tokens), labels).backward()
    opt.step()
