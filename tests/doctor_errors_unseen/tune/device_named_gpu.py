# source: https://github.com/opendatalab/MinerU/issues/324
# original: RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, ort, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: gpu
# half: tune
# cause mentions: 'cuda'
import torch
from torch import nn

_device_ = "gpu"
model = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
model = model.to(_device_)  # <- fails
