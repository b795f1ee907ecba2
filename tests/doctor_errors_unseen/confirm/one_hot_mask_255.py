# source: https://github.com/milesial/Pytorch-UNet/issues/322
# original: RuntimeError: Class values must be smaller than num_classes.
# half: confirm
# cause mentions: 255
import torch
import torch.nn.functional as F

torch.manual_seed(0)
classes = 2
mask = (torch.rand(2, 16, 16) > 0.5).long() * 255  # a mask image saved as 0 / 255
pred = torch.randn(2, classes, 16, 16).softmax(1)
target = F.one_hot(mask, classes).permute(0, 3, 1, 2).float()  # <- fails
dice = 1 - (2 * (pred * target).sum() + 1) / (pred.sum() + target.sum() + 1)
