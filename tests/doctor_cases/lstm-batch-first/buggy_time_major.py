# The data is transposed to (time, batch, features), the layout LSTMs use by default, but
# the LSTM was built with batch_first=True, so it takes the time steps as the batch.
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(800, 10, 4)  # (samples, time, features)
y = (x[:, :, 1].sum(1) > 0).long()

model = nn.ModuleDict({"rnn": nn.LSTM(4, 32, batch_first=True), "out": nn.Linear(32, 2)})
opt = torch.optim.RMSprop(model.parameters(), lr=3e-3)
for epoch in range(3):
    for i in range(0, 800, 50):
        seq = x[i:i + 50].transpose(0, 1)  # (time, batch, features)
        out, (h, c) = model["rnn"](seq)
        logits = model["out"](out[-1])
        loss = nn.functional.cross_entropy(logits, y[i:i + 50])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
