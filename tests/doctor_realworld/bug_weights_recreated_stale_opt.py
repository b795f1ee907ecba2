# expect: params-recreated
# Logistic regression: the optimizer was built once, but the weights are drawn again inside the loop.
import torch

torch.manual_seed(0)
X = torch.randn(200, 5)
y = (X[:, 0] + X[:, 1] > 0).float()

W = torch.randn(5, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)
opt = torch.optim.Adam([W, bias], lr=0.05)
for it in range(40):
    W = torch.randn(5, requires_grad=True)
    logits = X @ W + bias
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
