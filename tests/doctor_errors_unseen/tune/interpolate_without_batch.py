# source: https://github.com/vye16/shape-of-motion/issues/69
# original: ValueError: Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of [854] and output size of (480, 854). Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.
# half: tune
# cause mentions: unsqueeze|batch
import torch
import torch.nn.functional as F

torch.manual_seed(0)
disp = torch.rand(1, 240, 427)  # a depth map with one channel, (1, H, W)
size = (480, 854)
disp = F.interpolate(disp, size=size, mode="bicubic", align_corners=False)  # <- fails
