# A first custom model: the constructor's name has a typo, so the optimizer finds nothing to train.
import torch
from torch import nn


class SpamClassifier(nn.Module):
    def __int__(self, vocab=500, hidden=32):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab, hidden)
        self.out = nn.Linear(hidden, 2)

    def forward(self, tokens):
        return self.out(self.embed(tokens))


torch.manual_seed(0)
tokens = torch.randint(0, 500, (64, 20))
labels = torch.randint(0, 2, (64,))
model = SpamClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(10):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens), labels)
    loss.backward()
    optimizer.step()
