# source: https://github.com/ispamm/MHyEEG/issues/3
# original: RuntimeError: weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [2]
# half: tune
# cause mentions: weight
import torch
from torch import nn

torch.manual_seed(0)
train_labels = torch.tensor([0] * 210 + [1] * 150)
counts = torch.bincount(train_labels)  # only the classes seen in training: 2 of them
criterion = nn.CrossEntropyLoss(weight=counts.sum() / counts.float())
model = nn.Linear(32, 3)
x, y = torch.randn(8, 32), torch.tensor([2, 1, 2, 2, 1, 1, 2, 1])
loss = criterion(model(x), y)  # <- fails
