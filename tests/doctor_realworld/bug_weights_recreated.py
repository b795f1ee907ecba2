# expect: params-recreated
# "My linear regression does not learn anything, the loss stays the same" - weights made inside the loop.
import torch

torch.manual_seed(0)
x = torch.linspace(-1, 1, 64).unsqueeze(1)
y = 4 * x - 1 + 0.1 * torch.randn_like(x)

for epoch in range(60):
    w = torch.randn(1, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([w, b], lr=0.1)
    pred = x @ w + b
    loss = ((pred - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epoch % 10 == 0:
        print(epoch, loss.item())
