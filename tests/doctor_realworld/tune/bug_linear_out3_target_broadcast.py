# expect: loss-broadcast
# source: http://xiaobeizi.cn/x/6iuujguWdu
# "What happens when the labels' dimension differs from the output layer?" nn.Linear(1, 3) fitted to (4, 1) targets with MSELoss: the target is broadcast to all three outputs (only a warning).
import torch
import torch.nn as nn

X = torch.tensor([[1], [2], [3], [4]], dtype=torch.float32)  # training input
Y = torch.tensor([[2], [4], [6], [8]], dtype=torch.float32)  # training label
model = nn.Linear(1, 3)
learning_rate = 0.01
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
loss_fn = nn.MSELoss()

for epoch in range(200):
    y_pred = model(X)
    loss = loss_fn(y_pred, Y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(model(torch.tensor([10], dtype=torch.float32)))
