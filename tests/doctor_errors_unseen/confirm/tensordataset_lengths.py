# source: https://github.com/MemoryForSky/deepctr/issues/2
# original: AssertionError: Size mismatch between tensors
# half: confirm
# cause mentions: length|rows
import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
x = [rng.random((100, 3)), rng.random((100, 2))]
y = rng.integers(0, 2, 80)  # labels of a different split
train_tensor_data = TensorDataset(torch.from_numpy(np.concatenate(x, axis=-1)), torch.from_numpy(y))  # <- fails
loader = DataLoader(train_tensor_data, batch_size=16)
