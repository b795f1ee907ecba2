# Wine cultivars from 13 standardised measurements; a small network trained by plain SGD at 0.01, the usual SGD
# rate (not 5.0, a value from a logistic-regression notebook), full batch, in a function that returns the network.
import torch
from sklearn.datasets import load_wine
from torch import nn

LEARNING_RATE = 0.01


def fit(features: torch.Tensor, cultivar: torch.Tensor, rate: float, epochs: int = 300) -> nn.Module:
    net = nn.Sequential(nn.Linear(features.shape[1], 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 3))
    sgd = torch.optim.SGD(net.parameters(), lr=rate)
    for epoch in range(epochs):
        sgd.zero_grad()
        loss = nn.functional.cross_entropy(net(features), cultivar)
        loss.backward()
        sgd.step()
        if epoch % 30 == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")
    return net


torch.manual_seed(5)
table = load_wine()
features = torch.tensor(table.data, dtype=torch.float32)
features = (features - features.mean(0)) / features.std(0)
cultivar = torch.tensor(table.target)
net = fit(features, cultivar, LEARNING_RATE)
with torch.no_grad():
    print("training accuracy", (net(features).argmax(1) == cultivar).float().mean().item())
