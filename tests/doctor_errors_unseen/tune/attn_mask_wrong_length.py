# source: https://github.com/ltttpku/CMD-SE-release/issues/3
# original: RuntimeError: The shape of the 2D attn_mask is torch.Size([25, 25]), but should be (109, 109).
# half: tune
# cause mentions: mask
import torch
from torch import nn

torch.manual_seed(0)
attn = nn.MultiheadAttention(embed_dim=32, num_heads=4)
num_hoi = 25
attn_mask = torch.triu(torch.ones(num_hoi, num_hoi, dtype=torch.bool), diagonal=1)
hoi = torch.randn(109, 2, 32)  # (tokens, batch, features): more tokens than the mask was built for
out, attn_map = attn(hoi, hoi, hoi, attn_mask=attn_mask)  # <- fails
