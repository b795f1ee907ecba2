"""Digits read pixel by pixel (64 time steps) by a ReLU RNN whose recurrent matrix starts as the identity
(Le et al.'s IRNN): the hidden state keeps its scale from step to step."""
import torch
from sklearn.datasets import load_digits
from torch import nn

digits = load_digits()
seqs = torch.tensor(digits.data, dtype=torch.float32).div(16.0).unsqueeze(-1)  # (N, 64, 1)
labels = torch.tensor(digits.target)


class PixelRNN(nn.Module):
    def __init__(self, hidden: int = 100) -> None:
        super().__init__()
        self.rnn = nn.RNN(1, hidden, nonlinearity="relu", batch_first=True)
        self.classify = nn.Linear(hidden, 10)
        with torch.no_grad():
            nn.init.eye_(self.rnn.weight_hh_l0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        states, _ = self.rnn(x)
        return self.classify(states[:, -1])


torch.manual_seed(2)
model = PixelRNN()
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for epoch in range(2):
    for idx in torch.randperm(1600).split(64):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(seqs[idx]), labels[idx])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
    print(f"epoch {epoch}: last loss {loss.item():.4f}")
