# expect: eval-mode-missing (known miss)
# source: https://www.codetd.com/article/15115577
# The post's "common mistake": a BatchNorm + Dropout classifier scored on a small test batch without model.eval(), so BN uses the test batch's own statistics.
import torch
import torch.nn as nn

torch.manual_seed(0)
x_train = torch.randn(1200, 10)
y_train = (x_train[:, 0] * 2 + x_train[:, 1] > 0).long()
x_test = torch.randn(8, 10) + 0.5
y_test = (x_test[:, 0] * 2 + x_test[:, 1] > 0).long()

model = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 2))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(8):
    for i in range(0, 1200, 100):
        h = model(x_train[i:i + 100])
        loss = loss_fn(h, y_train[i:i + 100])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    h_test = torch.argmax(model(x_test), dim=1)
    acc_test = (h_test == y_test).float().mean()
print('test accuracy:', acc_test.item())
