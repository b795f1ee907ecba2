# A model trained on 10 digit classes, saved, then loaded into a model built for 5 classes.
import io

import torch
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
y = torch.tensor(digits.target)


def make_model(classes: int) -> nn.Module:
    return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, classes))


model = make_model(10)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(30):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)

small = make_model(5)  # only the digits 0-4 this time
small.load_state_dict(torch.load(buffer))
