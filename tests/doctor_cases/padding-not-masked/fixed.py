# Bag-of-embeddings classifier on right-padded token sequences with a masked mean:
# only the real tokens are averaged.
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

torch.manual_seed(0)
VOCAB = 30
sentences = [torch.randint(1, VOCAB, (int(torch.randint(3, 25, ())),)) for _ in range(960)]
labels = torch.tensor([int((s == 3).any()) for s in sentences])


class MeanPool(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=0)
        self.fc = nn.Linear(32, 2)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        mask = (tokens != 0).unsqueeze(-1).float()
        pooled = (self.embed(tokens) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.fc(pooled)


model = MeanPool()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(3):
    for i in range(0, len(sentences), 32):
        batch = pad_sequence(sentences[i:i + 32], batch_first=True, padding_value=0)
        loss = F.cross_entropy(model(batch), labels[i:i + 32])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
