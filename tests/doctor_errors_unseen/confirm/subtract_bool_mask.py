# source: https://github.com/nlpyang/PreSumm/issues/54
# original: RuntimeError: Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.
# half: confirm
# cause mentions: ~|logical_not
import torch

torch.manual_seed(0)
src = torch.randint(0, 5, (4, 12))
mask_src = 1 - (src == 0)  # <- fails
