# expect: nonfinite-loss
# Regression on log(price); some targets are exactly 0, so log gives -inf and the loss is inf.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)

X = torch.randn(600, 5)
price = torch.relu(X[:, 0] * 3 + X[:, 1]).unsqueeze(1)      # ~half the prices are 0
model = nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(3):
    for i in range(0, 600, 40):
        xb, yb = X[i:i + 40], price[i:i + 40]
        pred_log = model(xb)
        loss = F.mse_loss(pred_log, torch.log(yb))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
