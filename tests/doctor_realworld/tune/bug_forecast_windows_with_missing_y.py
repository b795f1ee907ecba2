# expect: nonfinite-input
# source: https://github.com/Nixtla/neuralforecast/issues/186
# A windowed MLP forecaster trained on a series whose y column has missing values (NaN): the loss becomes nan during training and nothing points at the data.
import numpy as np
import pandas as pd
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
ds = pd.date_range("2020-01-01", periods=1200, freq="h")
y = 10 + np.sin(np.arange(1200) / 24 * 2 * np.pi) * 3 + rng.normal(0, 0.3, 1200)
Y_df = pd.DataFrame({"unique_id": "H1", "ds": ds, "y": y})
Y_df.loc[rng.choice(1200, 6, replace=False), "y"] = np.nan    # a few missing readings

input_size, h = 48, 12
series = torch.tensor(Y_df["y"].values, dtype=torch.float32)
windows = series.unfold(0, input_size + h, 1)
insample, outsample = windows[:, :input_size], windows[:, input_size:]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(input_size, 256), nn.ReLU(), nn.Linear(256, h))

    def forward(self, x):
        return self.mlp(x)


model = MLP()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(200):
    idx = torch.randint(0, len(windows), (32,))
    y_hat = model(insample[idx])
    loss = nn.functional.l1_loss(y_hat, outsample[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        print(step, loss.item())
