# expect: none
# Each iteration detaches the weights and builds a new optimizer, but starts from the updated values.
import torch

torch.manual_seed(0)
x = torch.randn(128, 3)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]])
w = torch.zeros(3, 1)
for it in range(40):
    w = w.detach().requires_grad_(True)
    opt = torch.optim.SGD([w], lr=0.1)
    loss = ((x @ w - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
