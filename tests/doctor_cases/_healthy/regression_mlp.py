# Regression with MSE on standardized features, a step LR schedule, and a loss history of floats.
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
torch.manual_seed(0)
X = rng.normal(size=(800, 6)).astype(np.float32)
y = (X @ rng.normal(size=6) + 0.1 * rng.normal(size=800)).astype(np.float32)
ds = TensorDataset(torch.from_numpy(X), torch.from_numpy(y).unsqueeze(1))
loader = DataLoader(ds, batch_size=32, shuffle=True)
model = nn.Sequential(nn.Linear(6, 64), nn.GELU(), nn.Linear(64, 1))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
history = []
for epoch in range(12):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad(set_to_none=True)
        loss = nn.MSELoss()(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * len(xb)
    sched.step()
    history.append(total / len(ds))
print(f"mse {history[0]:.3f} -> {history[-1]:.4f}")
