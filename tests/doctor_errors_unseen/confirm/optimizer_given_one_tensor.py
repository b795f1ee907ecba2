# source: https://github.com/KaiyangZhou/Dassl.pytorch/issues/67
# original: TypeError: params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.cuda.FloatTensor
# half: confirm
# cause mentions: list
import torch
from torch import nn

torch.manual_seed(0)
prompt = nn.Parameter(torch.randn(4, 16) * 0.02)
optimizer = torch.optim.SGD(prompt, lr=0.002)  # <- fails
