# expect: none
# Imbalanced binary problem: the split is done first (stratified), and only the *training* part
# has its minority class oversampled. The validation rows are never duplicated into training.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import TensorDataset, DataLoader
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

rng = np.random.default_rng(3)
torch.manual_seed(3)
torch.set_num_threads(1)

X, y = make_classification(n_samples=2000, n_features=20, n_informative=6, n_redundant=4,
                           weights=[0.93, 0.07], flip_y=0.03, class_sep=0.8, random_state=3)
X_tr, X_va, y_tr, y_va = train_test_split(X, y, test_size=0.25, stratify=y, random_state=3)

minority = np.flatnonzero(y_tr == 1)
extra = rng.choice(minority, size=(y_tr == 0).sum() - len(minority), replace=True)
X_tr = np.concatenate([X_tr, X_tr[extra]])
y_tr = np.concatenate([y_tr, y_tr[extra]])

scaler = StandardScaler().fit(X_tr)
loader = DataLoader(TensorDataset(torch.tensor(scaler.transform(X_tr), dtype=torch.float32),
                                  torch.tensor(y_tr, dtype=torch.float32)), batch_size=128, shuffle=True)
xv = torch.tensor(scaler.transform(X_va), dtype=torch.float32)
yv = torch.tensor(y_va, dtype=torch.float32)

clf = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 1))
opt = torch.optim.Adam(clf.parameters(), lr=1e-3, weight_decay=1e-4)
bce = nn.BCEWithLogitsLoss()
for epoch in range(10):
    clf.train()
    for xb, yb in loader:
        opt.zero_grad()
        bce(clf(xb).squeeze(1), yb).backward()
        opt.step()
    if epoch % 3 == 2 or epoch == 9:
        clf.eval()
        with torch.no_grad():
            pred = (clf(xv).squeeze(1) > 0).float()
        rec = ((pred == 1) & (yv == 1)).sum().item() / (yv == 1).sum().item()
        print(f"epoch {epoch + 1}: val acc {(pred == yv).float().mean().item():.3f}  minority recall {rec:.3f}")
