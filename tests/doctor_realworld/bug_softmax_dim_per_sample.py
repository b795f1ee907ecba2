# expect: shape-mismatch
# "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)" - one sample at a time.
import torch
from torch import nn

torch.manual_seed(0)
samples = torch.randn(50, 4)
labels = torch.randint(0, 3, (50,))
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(3):
    for x, y in zip(samples, labels):
        optimizer.zero_grad()
        out = model(x)
        log_probs = torch.log_softmax(out, dim=1)
        loss = -log_probs[y]
        loss.backward()
        optimizer.step()
