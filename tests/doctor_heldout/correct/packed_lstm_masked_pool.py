# expect: none
# Variable-length sequences: packed LSTM and masked mean pooling over real positions only.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence

torch.set_num_threads(1)
torch.manual_seed(0)

VOCAB, PAD = 100, 0
g = torch.Generator().manual_seed(0)
seqs, labels = [], []
for _ in range(640):
    n = int(torch.randint(3, 25, (1,), generator=g))
    t = torch.randint(1, VOCAB, (n,), generator=g)
    seqs.append(t)
    labels.append(int((t < 50).float().mean() > 0.5))
labels = torch.tensor(labels)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 32, padding_idx=PAD)
        self.lstm = nn.LSTM(32, 32, batch_first=True)
        self.fc = nn.Linear(32, 2)

    def forward(self, tokens, lengths):
        e = self.emb(tokens)
        packed = pack_padded_sequence(e, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])
        mask = (tokens != PAD).unsqueeze(-1).float()
        pooled = (out * mask).sum(1) / mask.sum(1)
        return self.fc(pooled)


model = Encoder()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(3):
    for i in range(0, 640, 32):
        batch = seqs[i:i + 32]
        lengths = torch.tensor([len(s) for s in batch])
        tokens = pad_sequence(batch, batch_first=True, padding_value=PAD)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(tokens, lengths), labels[i:i + 32])
        loss.backward()
        opt.step()
    print(epoch, loss.item())
