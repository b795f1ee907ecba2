# source: https://github.com/filipradenovic/cnnimageretrieval-pytorch/issues/13
# original: RuntimeError: expand(torch.cuda.FloatTensor{[2048, 1]}, size=[2048]): the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)
# half: tune
# cause mentions: squeeze|view|reshape
import torch
from torch import nn

torch.manual_seed(0)
net = nn.Sequential(nn.Conv2d(3, 16, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(0))
images = torch.randn(5, 1, 3, 32, 32)
qvecs = torch.zeros(16, len(images))
with torch.no_grad():
    for i, image in enumerate(images):
        qvecs[:, i] = net(image).unsqueeze(1)  # <- fails
