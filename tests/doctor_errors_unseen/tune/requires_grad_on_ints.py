# source: https://github.com/pytorch/pytorch/issues/53466
# original: RuntimeError: Only Tensors of floating point and complex dtype can require gradients
# half: tune
# cause mentions: float
import torch

x_data = torch.tensor([1, 2, 3, 4])
y_data = torch.tensor([2.0, 4.0, 6.0, 8.0])
w = torch.tensor([1], requires_grad=True)  # <- fails
for epoch in range(10):
    loss = ((x_data * w - y_data) ** 2).mean()
    loss.backward()
