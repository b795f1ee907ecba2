# expect: none
# nn.GRU in its default time-major layout (seq, batch, feature): the batch is built as
# (batch, seq, feature) and explicitly transposed before the GRU. Task: is the sum of the
# sequence positive?
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_num_threads(1)

N, T = 3000, 15
seqs = torch.randn(N, T, 3)
labels = (seqs[:, :, 0].sum(1) > 0).long()


class SeqClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(input_size=3, hidden_size=24)     # expects (T, B, F)
        self.fc = nn.Linear(24, 2)

    def forward(self, x_btf):
        x_tbf = x_btf.transpose(0, 1)
        _, h_n = self.gru(x_tbf)
        return self.fc(h_n[-1])


clf = SeqClassifier()
opt = torch.optim.Adam(clf.parameters(), lr=5e-3)
for epoch in range(4):
    perm = torch.randperm(2500)
    for i in range(0, 2500, 50):
        b = perm[i:i + 50]
        loss = F.cross_entropy(clf(seqs[b]), labels[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = (clf(seqs[2500:]).argmax(1) == labels[2500:]).float().mean().item()
    print(f"epoch {epoch}: loss {loss.item():.4f}  val acc {acc:.3f}")
