# Fine-tuning a saved 10-class model for 5 classes: the old head is dropped before loading.
import io

import torch
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
x = (x - x.mean()) / x.std()
y = torch.tensor(digits.target)


def make_model(classes: int) -> nn.Module:
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, classes))


model = make_model(10)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(20):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)

small = make_model(5)
state = {k: v for k, v in torch.load(buffer).items() if not k.startswith("2.")}
result = small.load_state_dict(state, strict=False)
keep = y < 5
opt = torch.optim.Adam(small.parameters(), lr=1e-2)
for step in range(20):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(small(x[keep]), y[keep])
    loss.backward()
    opt.step()
print("missing", result.missing_keys, "loss", loss.item())
