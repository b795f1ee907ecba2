# expect: none
# AdamW with weight decay; no decay on biases (param groups).
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_wine

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_wine()
X = torch.tensor(d.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(d.target)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(13, 64)
        self.fc2 = nn.Linear(64, 3)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


model = Net()
decay = [p for n, p in model.named_parameters() if n.endswith("weight")]
no_decay = [p for n, p in model.named_parameters() if n.endswith("bias")]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                         {"params": no_decay, "weight_decay": 0.0}], lr=3e-3)
for epoch in range(50):
    perm = torch.randperm(len(X))
    for i in range(0, len(X), 32):
        idx = perm[i:i + 32]
        opt.zero_grad()
        loss = F.cross_entropy(model(X[idx]), y[idx])
        loss.backward()
        opt.step()
print(loss.item())
