# Digits again, with the epoch's work in a function that returns the mean loss: Adam at lr=0.1 on a
# 96-unit two-layer network. Past the first epoch the loss keeps coming back above the untrained
# network's, and the test accuracy wanders between 50 % and 80 %.
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

LEARNING_RATE = 0.1
torch.manual_seed(6)


def one_epoch(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer) -> float:
    criterion = nn.CrossEntropyLoss()
    total, seen = 0.0, 0
    for inputs, targets in loader:
        optimizer.zero_grad()
        batch_loss = criterion(model(inputs), targets)
        batch_loss.backward()
        optimizer.step()
        total += batch_loss.item() * len(targets)
        seen += len(targets)
    return total / seen


features, classes = load_digits(return_X_y=True)
f_train, f_test, c_train, c_test = train_test_split(features, classes, test_size=0.2, random_state=6, stratify=classes)
scale = StandardScaler().fit(f_train)
loader = DataLoader(TensorDataset(torch.tensor(scale.transform(f_train), dtype=torch.float32), torch.tensor(c_train)),
                    batch_size=48, shuffle=True)
test_inputs = torch.tensor(scale.transform(f_test), dtype=torch.float32)

hidden = 96
network = nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 10))
optimizer = torch.optim.Adam(network.parameters(), lr=LEARNING_RATE)
for epoch in range(10):
    mean_loss = one_epoch(network, loader, optimizer)
    with torch.no_grad():
        correct = (network(test_inputs).argmax(1).numpy() == c_test).mean()
    print(f"epoch {epoch}: loss {mean_loss:.3f}, test accuracy {correct:.3f}")
