# Species coded 1, 2, 3 as in the CSV, with a 3-output model: the loss crashes on label 3.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
n = 300
species = torch.randint(1, 4, (n,))  # 1, 2, 3
features = torch.randn(n, 4) + species[:, None].float()
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    for i in range(0, n, 30):
        logits = model(features[i:i + 30])
        loss = F.cross_entropy(logits, species[i:i + 30])
        opt.zero_grad()
        loss.backward()
        opt.step()
print("loss", loss.item())
