# expect: params-not-updating
# Linear warmup written as  step // warmup_steps  (floor division) instead of  step / warmup_steps:
# the LR multiplier is exactly 0 for the first 500 steps, and this run is shorter than that.
import argparse
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=3e-3)
parser.add_argument("--epochs", type=int, default=20)
parser.add_argument("--warmup-steps", type=int, default=500)
parser.add_argument("--batch-size", type=int, default=32)
args = parser.parse_args()

torch.manual_seed(11)
torch.set_num_threads(1)

data = load_breast_cancer()
feats = StandardScaler().fit_transform(data.data).astype(np.float32)
ds = TensorDataset(torch.from_numpy(feats), torch.from_numpy(data.target.astype(np.float32)))
train_ds, val_ds = torch.utils.data.random_split(ds, [450, len(ds) - 450], generator=torch.Generator().manual_seed(0))
train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True)
val_dl = DataLoader(val_ds, batch_size=256)

mlp = nn.Sequential(nn.Linear(30, 32), nn.GELU(), nn.Linear(32, 1))
opt = torch.optim.AdamW(mlp.parameters(), lr=args.lr, weight_decay=1e-2)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, step // args.warmup_steps))
loss_fn = nn.BCEWithLogitsLoss()

for ep in range(args.epochs):
    mlp.train()
    for xb, yb in train_dl:
        opt.zero_grad()
        loss = loss_fn(mlp(xb).squeeze(-1), yb)
        loss.backward()
        opt.step()
        sched.step()
    mlp.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in val_dl:
            correct += ((mlp(xb).squeeze(-1) > 0).float() == yb).sum().item()
    if ep % 5 == 4:
        print(f"ep {ep + 1}  lr {sched.get_last_lr()[0]:.2e}  last loss {loss.item():.4f}  val acc {correct / len(val_ds):.3f}")
