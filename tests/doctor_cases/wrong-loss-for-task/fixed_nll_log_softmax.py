"""Breast-cancer screening as two classes, trained with nn.NLLLoss on log_softmax of the head's scores: the
log-probabilities NLLLoss expects (cross_entropy in two steps)."""
import numpy as np
import torch
from sklearn.datasets import load_breast_cancer
from torch import nn

table = load_breast_cancer()
features = (table.data - table.data.mean(axis=0)) / table.data.std(axis=0)
rng = np.random.default_rng(11)
rows = rng.permutation(len(features))
fit_rows, check_rows = rows[:450], rows[450:]
inputs = torch.from_numpy(features).float()
labels = torch.from_numpy(table.target).long()

torch.manual_seed(11)
classifier = nn.Sequential(nn.Linear(30, 32), nn.ReLU(), nn.Linear(32, 2))
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.02, momentum=0.9)

for sweep in range(25):
    for start in range(0, len(fit_rows), 32):
        batch = fit_rows[start:start + 32]
        scores = torch.log_softmax(classifier(inputs[batch]), dim=1)
        loss = criterion(scores, labels[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if sweep % 5 == 4:
        print(f"sweep {sweep + 1}: loss {loss.item():.3f}")

with torch.no_grad():
    guesses = classifier(inputs[check_rows]).argmax(dim=1)
print("accuracy on the rest:", (guesses == labels[check_rows]).float().mean().item())
