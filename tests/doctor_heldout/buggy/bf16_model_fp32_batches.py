# expect: device-mismatch
# The model is cast to bfloat16 "to halve memory", but the batches from the DataLoader stay
# float32. The first Linear layer gets a float32 input and bfloat16 weights and crashes.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler

torch.manual_seed(0)
torch.set_num_threads(1)

X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
ds = TensorDataset(torch.tensor(X, dtype=torch.float32), torch.tensor(y, dtype=torch.float32))
dl = DataLoader(ds, batch_size=32, shuffle=True)

net = nn.Sequential(nn.Linear(30, 64), nn.ReLU(), nn.Linear(64, 1))
net = net.to(torch.bfloat16)
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
loss_fn = nn.BCEWithLogitsLoss()

for epoch in range(5):
    for xb, yb in dl:
        opt.zero_grad()
        loss = loss_fn(net(xb).squeeze(1).float(), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
