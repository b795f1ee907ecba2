# source: https://github.com/MarvinTeichmann/ConvCRF/issues/28
# original: RuntimeError: non-empty 3D or 4D (batch mode) tensor expected for input
# half: confirm
# cause mentions: unsqueeze|batch
import torch
import torch.nn.functional as F

torch.manual_seed(0)
heatmap = torch.rand(1, 1, 64, 64)
hm = heatmap[0, 0]  # one (H, W) map, without its batch and channel axes
hm_pool = F.max_pool2d(hm, 3, stride=1, padding=1)  # <- fails
peaks = (hm == hm_pool).float() * hm
