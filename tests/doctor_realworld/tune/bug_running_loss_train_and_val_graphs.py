# expect: graph-retained
# source: https://github.com/samuelyu2002/ImVisible/issues/2
# A two-head network (regression MSE + classification CE) sums running_loss += loss, += MSE, += cross_entropy as tensors in training and validation; RAM fills up.
import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(2400, 48)
pts = X[:, :4] * 0.5
cls = (X[:, 4] > 0).long()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(48, 128), nn.ReLU())
        self.reg = nn.Linear(128, 4)
        self.cls = nn.Linear(128, 2)

    def forward(self, x):
        h = self.body(x)
        return self.reg(h), self.cls(h)


net = Net()
mse_fn, ce_fn = nn.MSELoss(), nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
for epoch in range(4):
    running_loss = running_loss_MSE = running_loss_cross_entropy = 0
    for i in range(0, 2000, 20):
        optimizer.zero_grad()
        out_pts, out_cls = net(X[i:i + 20])
        MSE = mse_fn(out_pts, pts[i:i + 20])
        cross_entropy = ce_fn(out_cls, cls[i:i + 20])
        loss = MSE + cross_entropy
        loss.backward()
        optimizer.step()
        running_loss += loss
        running_loss_MSE += MSE
        running_loss_cross_entropy += cross_entropy
    val_running_loss = val_mse_loss = val_ce_loss = 0
    for i in range(2000, 2400, 20):
        out_pts, out_cls = net(X[i:i + 20])
        MSE = mse_fn(out_pts, pts[i:i + 20])
        cross_entropy = ce_fn(out_cls, cls[i:i + 20])
        val_running_loss += MSE + cross_entropy
        val_mse_loss += MSE
        val_ce_loss += cross_entropy
    print(epoch, running_loss.item() / 100, val_running_loss.item() / 20)
