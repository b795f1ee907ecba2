# expect: params-not-updating
# The learning rate comes from a config where it ended up as 0 (int("1e-3") workaround gone wrong).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)

config = {"lr": int(float("1e-3")), "epochs": 10, "batch_size": 32}

X = torch.randn(640, 10)
y = (X[:, 0] > 0).long()
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=0.9)
for epoch in range(config["epochs"]):
    for i in range(0, 640, config["batch_size"]):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
