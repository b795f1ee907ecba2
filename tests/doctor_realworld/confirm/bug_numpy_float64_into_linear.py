# expect: device-mismatch
# source: https://yuhi-sa.github.io/en/posts/20210215_pytorch_dtype/1
# A NumPy array converted with torch.tensor(x) keeps float64; fed to a float32 nn.Linear the first forward fails on the dtype ("expected ... Float but found Double").
import numpy as np
import torch
import torch.nn as nn

np.random.seed(0)
x = np.random.rand(200, 5)
t = x @ np.array([1.0, -2.0, 0.5, 3.0, 0.0]) + 0.1
torch_x = torch.tensor(x)
torch_t = torch.tensor(t.astype(np.float32)).unsqueeze(1)

model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(100):
    loss = nn.functional.mse_loss(model(torch_x), torch_t)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
