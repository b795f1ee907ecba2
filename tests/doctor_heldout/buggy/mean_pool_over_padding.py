# expect: padding-not-masked
# Bag-of-embeddings classifier: sequences padded with 0 and mean-pooled over all positions.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence

torch.set_num_threads(1)
torch.manual_seed(0)

VOCAB, PAD = 200, 0
g = torch.Generator().manual_seed(0)
seqs, labels = [], []
for _ in range(800):
    n = int(torch.randint(3, 30, (1,), generator=g))
    toks = torch.randint(1, VOCAB, (n,), generator=g)
    seqs.append(toks)
    labels.append(int((toks < 100).float().mean() > 0.5))
labels = torch.tensor(labels)


class BagModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 32, padding_idx=PAD)
        self.fc = nn.Linear(32, 2)

    def forward(self, tokens):
        e = self.emb(tokens)            # (B, T, 32)
        return self.fc(e.mean(dim=1))   # averages the padding too


model = BagModel()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(4):
    for i in range(0, 800, 32):
        batch = pad_sequence(seqs[i:i + 32], batch_first=True, padding_value=PAD)
        opt.zero_grad()
        loss = loss_fn(model(batch), labels[i:i + 32])
        loss.backward()
        opt.step()
    print(epoch, loss.item())
