# Iris, one flower at a time (a 1-D tensor of 4 measurements per step), plain SGD, with the features standardised
# first (mean and std of each column).
import torch
from sklearn.datasets import load_iris
from torch import nn

torch.manual_seed(0)
iris = load_iris()
features = torch.tensor(iris.data, dtype=torch.float32)
features = (features - features.mean(0)) / features.std(0)
species = torch.tensor(iris.target)

model = nn.Sequential(nn.Linear(4, 10), nn.ReLU(), nn.Linear(10, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(4):
    order = torch.randperm(len(features))
    total = 0.0
    for i in order.tolist():
        optimizer.zero_grad()
        output = model(features[i])
        loss = nn.functional.cross_entropy(output.unsqueeze(0), species[i].unsqueeze(0))
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch}: mean loss {total / len(features):.4f}")
