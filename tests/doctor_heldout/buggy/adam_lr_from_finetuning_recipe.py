# expect: lr-too-low
# lr=1e-5 copied from a transformer fine-tuning recipe, used to train a small MLP from scratch
# with Adam (a good rate here is ~1e-3). 300 steps later the loss has hardly left log(10).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

CONFIG = {"lr": 1e-5, "weight_decay": 0.01, "batch_size": 32, "max_steps": 300, "log_every": 60}

torch.manual_seed(0)
torch.set_num_threads(1)

d = load_digits()
x = torch.tensor(d.data / 16.0, dtype=torch.float32)
y = torch.tensor(d.target)
dl = DataLoader(TensorDataset(x[:1500], y[:1500]), batch_size=CONFIG["batch_size"], shuffle=True)

mlp = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 10))
opt = torch.optim.AdamW(mlp.parameters(), lr=CONFIG["lr"], weight_decay=CONFIG["weight_decay"])

step = 0
while step < CONFIG["max_steps"]:
    for xb, yb in dl:
        loss = nn.functional.cross_entropy(mlp(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % CONFIG["log_every"] == 0:
            with torch.no_grad():
                acc = (mlp(x[1500:]).argmax(1) == y[1500:]).float().mean().item()
            print(f"step {step}: loss {loss.item():.4f}  val acc {acc:.3f}")
        if step >= CONFIG["max_steps"]:
            break
