# A text-like classifier: padded token ids, an LSTM over packed sequences, masked mean pooling.
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
vocab, n = 50, 320
seqs = [torch.randint(1, vocab, (int(torch.randint(3, 15, ())),)) for _ in range(n)]
labels = torch.tensor([int((s == 7).any()) for s in seqs])


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, 16, padding_idx=0)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.out = nn.Linear(32 * 2, 2)

    def forward(self, ids, lengths):
        packed = pack_padded_sequence(self.emb(ids), lengths, batch_first=True, enforce_sorted=False)
        out, (h, _) = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=ids.shape[1])
        mask = (ids != 0).unsqueeze(-1).float()
        mean = (out * mask).sum(1) / mask.sum(1)
        return self.out(torch.cat([h[-1], mean], dim=1))


model = Classifier()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(2):
    for i in range(0, n, 32):
        batch = seqs[i:i + 32]
        ids = pad_sequence(batch, batch_first=True)
        lengths = torch.tensor([len(s) for s in batch])
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(ids, lengths), labels[i:i + 32])
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
print(f"loss {loss.item():.3f}")
