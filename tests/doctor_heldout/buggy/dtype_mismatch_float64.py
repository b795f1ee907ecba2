# expect: device-mismatch
# Features from numpy are float64; the model is float32. Crashes ("must have the same dtype").
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)
rng = np.random.default_rng(0)

features = rng.normal(size=(300, 8))            # float64
targets = rng.integers(0, 2, size=300)
X = torch.from_numpy(features)
y = torch.from_numpy(targets)

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(5):
    for i in range(0, 300, 30):
        opt.zero_grad()
        loss = F.cross_entropy(model(X[i:i + 30]), y[i:i + 30])
        loss.backward()
        opt.step()
