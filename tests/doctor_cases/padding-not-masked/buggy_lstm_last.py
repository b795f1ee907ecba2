# LSTM classifier on right-padded sequences from a DataLoader with a padding collate_fn,
# no packing: it classifies from out[:, -1], which for short sequences is a padding step.
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

torch.manual_seed(0)
data = []
for _ in range(640):
    seq = torch.randint(1, 12, (int(torch.randint(3, 20, ())),))
    data.append((seq, int(seq[0] > 6)))


def collate(items: list[tuple[torch.Tensor, int]]) -> tuple[torch.Tensor, torch.Tensor]:
    return pad_sequence([s for s, _ in items], batch_first=True), torch.tensor([c for _, c in items])


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(12, 16)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.head = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(x))
        return self.head(out[:, -1])


net = Net()
opt = torch.optim.Adam(net.parameters(), lr=5e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    for x, y in DataLoader(data, batch_size=32, shuffle=True, collate_fn=collate):
        net.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
