# expect: none
# Linear warmup that starts at lr=0 on the first step (LambdaLR), then constant.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)

X = torch.randn(1280, 16)
y = X[:, :5].argmax(1)
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 5))
opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
warmup = 50
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / warmup))
for epoch in range(4):
    for i in range(0, 1280, 32):
        opt.zero_grad()
        loss = F.cross_entropy(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        opt.step()
        sched.step()
    print(epoch, loss.item())
