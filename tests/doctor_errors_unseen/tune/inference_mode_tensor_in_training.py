# source: https://github.com/facebookresearch/dinov2/issues/472
# original: RuntimeError: Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor and use it in autograd.
# half: tune
# cause mentions: inference_mode|no_grad|clone
import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Linear(16, 16)
head = nn.Linear(16, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
x, y = torch.randn(8, 16), torch.randn(8, 1)
with torch.inference_mode():
    feats = backbone(x)
pred = head(feats)  # <- fails
loss = nn.functional.mse_loss(pred, y)
loss.backward()
opt.step()
