# source: https://github.com/ruizhecao96/CMGAN/issues/26
# original: RuntimeError: permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = 3 is not equal to len(dims) = 4
# half: confirm
# cause mentions: dimensions
import torch

torch.manual_seed(0)
noisy = torch.randn(16000)
spec = torch.stft(noisy, n_fft=400, hop_length=100, window=torch.hann_window(400), return_complex=True)
spec = torch.view_as_real(spec)  # (freq, frames, 2): no batch axis
spec = spec.permute(0, 3, 2, 1)  # <- fails
