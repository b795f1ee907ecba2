# Character-level language model: id 0 is padding and is never a target (masked with -100), so the
# targets are 1..V-1 while the model has V outputs. Correct.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
text = "the quick brown fox jumps over the lazy dog " * 20
chars = sorted(set(text))
stoi = {c: i + 1 for i, c in enumerate(chars)}  # 0 = <pad>
V = len(chars) + 1
ids = torch.tensor([stoi[c] for c in text])


class CharRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 24, padding_idx=0)
        self.rnn = nn.GRU(24, 48, batch_first=True)
        self.out = nn.Linear(48, V)

    def forward(self, x):
        h, _ = self.rnn(self.emb(x))
        return self.out(h)


model = CharRNN()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
T = 24
for step in range(50):
    starts = torch.randint(0, len(ids) - T - 1, (16,))
    lengths = torch.randint(T // 2, T + 1, (16,))
    x = torch.stack([ids[s:s + T] for s in starts])
    y = torch.stack([ids[s + 1:s + T + 1] for s in starts])
    pad = torch.arange(T)[None, :] >= lengths[:, None]
    x = x.masked_fill(pad, 0)
    y = y.masked_fill(pad, -100)
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", loss.item())
