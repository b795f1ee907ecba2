# expect: none
# source: https://androidkt.com/how-to-use-optimizer-zero_grad-in-pytorch/
# The article's LinearRegressionModel (one nn.Linear(1, 1, bias=False)) trained with MSELoss and SGD(lr=0.01), zero_grad every step.
import torch
import torch.nn as nn

torch.manual_seed(0)


class LinearRegressionModel(nn.Module):
    def __init__(self):
        super(LinearRegressionModel, self).__init__()
        self.linear = nn.Linear(1, 1, bias=False)

    def forward(self, x):
        out = self.linear(x)
        return out


x_train = torch.arange(1, 12, dtype=torch.float32).reshape(-1, 1)
y_train = 2 * x_train
model = LinearRegressionModel()
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for epoch in range(100):
    optimizer.zero_grad()
    outputs = model(x_train)
    loss = criterion(outputs, y_train)
    loss.backward()
    optimizer.step()
print(model.linear.weight.item())
