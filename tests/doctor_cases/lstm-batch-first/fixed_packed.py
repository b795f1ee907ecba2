# Variable-length sequences, padded and packed with their lengths into a GRU (batch_first=True),
# classified from the final hidden state.
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

torch.manual_seed(0)
seqs = [torch.randn(int(torch.randint(4, 16, ())), 5) for _ in range(640)]
labels = torch.tensor([int(s[:, 0].mean() > 0) for s in seqs])


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(5, 32, batch_first=True)
        self.fc = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        _, h = self.rnn(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
        return self.fc(h[-1])


model = Net()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(3):
    for i in range(0, 640, 32):
        batch = seqs[i:i + 32]
        lengths = torch.tensor([len(s) for s in batch])
        loss = nn.functional.cross_entropy(model(pad_sequence(batch, batch_first=True), lengths), labels[i:i + 32])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
