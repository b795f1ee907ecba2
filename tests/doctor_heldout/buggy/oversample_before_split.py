# expect: split-leakage
# The minority class is oversampled (duplicated rows) *before* train_test_split, so copies of
# the same rows land in both the training and the validation set; validation recall is inflated.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import TensorDataset, DataLoader
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

SEED = 3
np.random.seed(SEED)
torch.manual_seed(SEED)
torch.set_num_threads(1)

X, y = make_classification(n_samples=2000, n_features=20, n_informative=6, n_redundant=4,
                           weights=[0.93, 0.07], flip_y=0.03, class_sep=0.8, random_state=SEED)

# balance the classes by repeating minority rows
minority = np.where(y == 1)[0]
extra = np.random.choice(minority, size=(y == 0).sum() - len(minority), replace=True)
X_bal = np.concatenate([X, X[extra]])
y_bal = np.concatenate([y, y[extra]])

X_train, X_val, y_train, y_val = train_test_split(X_bal, y_bal, test_size=0.2, random_state=SEED)
scaler = StandardScaler().fit(X_train)
X_train, X_val = scaler.transform(X_train), scaler.transform(X_val)

train_ds = TensorDataset(torch.tensor(X_train, dtype=torch.float32), torch.tensor(y_train, dtype=torch.float32))
val_x = torch.tensor(X_val, dtype=torch.float32)
val_y = torch.tensor(y_val, dtype=torch.float32)
loader = DataLoader(train_ds, batch_size=128, shuffle=True)

clf = nn.Sequential(nn.Linear(20, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.Adam(clf.parameters(), lr=2e-3)
bce = nn.BCEWithLogitsLoss()

for epoch in range(12):
    clf.train()
    for xb, yb in loader:
        opt.zero_grad()
        bce(clf(xb).squeeze(1), yb).backward()
        opt.step()
    if epoch % 4 == 3:
        clf.eval()
        with torch.no_grad():
            pred = (clf(val_x).squeeze(1) > 0).float()
        recall = ((pred == 1) & (val_y == 1)).sum().item() / (val_y == 1).sum().item()
        acc = (pred == val_y).float().mean().item()
        print(f"epoch {epoch + 1}: val acc {acc:.3f}  val minority recall {recall:.3f}")
