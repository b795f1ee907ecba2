# expect: labels-off-by-one
# Labels read from a CSV-like array run 1..3 (as in the file); 3 output units. Crashes on CPU.
import numpy as np
import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.manual_seed(0)
rng = np.random.default_rng(0)

# "csv" rows: feature1, feature2, feature3, feature4, class (1, 2 or 3)
rows = []
for cls in (1, 2, 3):
    feats = rng.normal(loc=cls, scale=0.7, size=(100, 4))
    rows.append(np.hstack([feats, np.full((100, 1), cls)]))
data = np.vstack(rows)
rng.shuffle(data)

X = torch.tensor(data[:, :4], dtype=torch.float32)
y = torch.tensor(data[:, 4], dtype=torch.long)
num_classes = len(np.unique(data[:, 4]))

model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, num_classes))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(50):
    for i in range(0, len(X), 32):
        optimizer.zero_grad()
        loss = criterion(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        optimizer.step()
print(loss.item())
