# A vanilla RNN whose recurrent weights start with gain 2 (to "remember longer"), trained on
# 50-step sequences without gradient clipping: backpropagation through time multiplies the
# gradient at every step and it explodes.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class SumRNN(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.rnn = nn.RNN(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        nn.init.orthogonal_(self.rnn.weight_hh_l0, gain=2.0)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


torch.manual_seed(0)
x = torch.randn(1024, 50, 1)
y = x[:, :10, 0].sum(1, keepdim=True) / 3
loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
model = SumRNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.MSELoss()

for epoch in range(2):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4g}")
