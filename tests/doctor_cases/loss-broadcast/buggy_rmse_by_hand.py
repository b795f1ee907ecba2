# Wine quality as a number: a notebook-style script with its root-mean-square error written out,
# torch.sqrt(torch.mean((pred - target) ** 2)). The network ends in Linear(..., 1), so pred is a
# column (B, 1), while the scores come as a flat (B,) vector: the difference is (B, B).
import torch
from sklearn.datasets import load_wine
from torch import nn

torch.manual_seed(13)
wine = load_wine()
inputs = torch.tensor(wine.data, dtype=torch.float32)
inputs = (inputs - inputs.mean(0)) / inputs.std(0)
score = torch.tensor(wine.data[:, 9], dtype=torch.float32)  # colour intensity, predicted from the rest
inputs[:, 9] = 0.0
score = (score - score.mean()) / score.std()

net = nn.Sequential(nn.Linear(13, 32), nn.ELU(), nn.Linear(32, 1))
opt = torch.optim.Adam(net.parameters(), lr=5e-3)

for epoch in range(40):
    for idx in torch.randperm(len(score)).split(32):
        pred = net(inputs[idx])
        rmse = torch.sqrt(torch.mean((pred - score[idx]) ** 2))  # bug: (B, 1) - (B,) is (B, B)
        opt.zero_grad()
        rmse.backward()
        opt.step()
    if epoch % 10 == 9:
        with torch.no_grad():
            full = torch.sqrt(torch.mean((net(inputs).squeeze(1) - score) ** 2))
        print(f"epoch {epoch + 1}: rmse {full.item():.3f}")
