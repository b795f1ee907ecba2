import torch

torch.manual_seed(0)
a = torch.randn(4, 3)
b = torch.randn(4, 3)
similarity = torch.dot(a, b)  # torch.dot takes 1-D vectors only
print(similarity)
