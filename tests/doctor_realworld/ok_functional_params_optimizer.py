# expect: none
# A two-layer net written functionally: parameters in a dict, torch.matmul and @, an optimizer over them.
import torch

torch.manual_seed(0)
X = torch.randn(256, 6)
y = (X[:, 0] * X[:, 1] > 0).long()
params = {
    "W1": (torch.randn(6, 32) * 0.4).requires_grad_(),
    "b1": torch.zeros(32, requires_grad=True),
    "W2": (torch.randn(32, 2) * 0.2).requires_grad_(),
    "b2": torch.zeros(2, requires_grad=True),
}
opt = torch.optim.Adam(params.values(), lr=1e-2)


def forward(x, p):
    h = torch.relu(torch.matmul(x, p["W1"]) + p["b1"])
    return h @ p["W2"] + p["b2"]


for step in range(60):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(forward(X, params), y)
    loss.backward()
    opt.step()
