# source: https://github.com/jalola/improved-wgan-pytorch/issues/11
# original: RuntimeError: Mismatch in shape: grad_output[0] has a shape of torch.Size([1]) and output[0] has a shape of torch.Size([]).
# half: confirm
# cause mentions: same shape
import torch
from torch import nn

torch.manual_seed(0)
aD = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt = torch.optim.Adam(aD.parameters(), lr=1e-4)
one = torch.FloatTensor([1])
mone = one * -1
fake_data = torch.randn(8, 16)
gen_cost = aD(fake_data)
gen_cost = gen_cost.mean()
gen_cost.backward(mone)  # <- fails
opt.step()
