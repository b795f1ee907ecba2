# source: https://github.com/yenchenlin/nerf-pytorch/issues/122
# original: ValueError: loaded state dict contains a parameter group that doesn't match the size of optimizer's group
# half: confirm
# cause mentions: architecture|different model|same model
import io

import torch
from torch import nn

torch.manual_seed(0)
old = nn.Sequential(nn.Linear(63, 128), nn.ReLU(), nn.Linear(128, 4))
buf = io.BytesIO()
torch.save({"optimizer": torch.optim.Adam(old.parameters(), lr=5e-4).state_dict()}, buf)
buf.seek(0)
model = nn.Sequential(nn.Linear(63, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 4))
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
ckpt = torch.load(buf)
optimizer.load_state_dict(ckpt["optimizer"])  # <- fails
