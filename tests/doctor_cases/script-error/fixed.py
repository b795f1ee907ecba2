import torch

torch.manual_seed(0)
a = torch.randn(4, 3)
b = torch.randn(4, 3)
similarity = (a * b).sum(-1)  # one dot product per row
print(similarity)
