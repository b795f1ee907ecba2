# source: https://github.com/m-bain/whisperX/issues/1173
# original: IndexError: tensors used as indices must be long, int, byte or bool tensors
# half: confirm
# cause mentions: long
import torch

torch.manual_seed(0)
emission = torch.randn(120, 30).log_softmax(-1)
tokens = torch.tensor([3.0, 7.0, -1.0, 12.0])  # ids that went through a float computation
frame_emission = emission[0]
regular_scores = frame_emission[tokens.clamp(min=0)]  # <- fails
