# expect: none
# Running accuracy computed under torch.no_grad() from the training logits inside the loop.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
loader = DataLoader(TensorDataset(torch.tensor(d.data / 16.0, dtype=torch.float32),
                                  torch.tensor(d.target)), batch_size=64, shuffle=True)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    model.train()
    correct, seen, running = 0, 0, 0.0
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        with torch.no_grad():
            correct += (logits.argmax(1) == y).sum().item()
            seen += len(y)
            running += loss.item()
    print(f"epoch {epoch} loss {running / (step + 1):.3f} train acc {correct / seen:.3f}")
