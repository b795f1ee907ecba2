# LSTM classifier on right-padded sequences, packed with their lengths (passed as a keyword),
# classified from the last hidden state h_n[-1] of each sequence.
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader

torch.manual_seed(0)
data = []
for _ in range(640):
    seq = torch.randint(1, 12, (int(torch.randint(3, 20, ())),))
    data.append((seq, int(seq[0] > 6)))


def collate(items: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    seqs = [s for s, _ in items]
    return pad_sequence(seqs, batch_first=True), torch.tensor([len(s) for s in seqs]), torch.tensor([c for _, c in items])


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(12, 16, padding_idx=0)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.head = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        emb = self.embed(x)
        if lengths is None:  # unpadded input
            return self.head(self.lstm(emb)[1][0][-1])
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.head(h[-1])


net = Net()
opt = torch.optim.Adam(net.parameters(), lr=5e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    for x, lengths, y in DataLoader(data, batch_size=32, shuffle=True, collate_fn=collate):
        opt.zero_grad()
        loss = criterion(net(x, lengths=lengths), y)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
