# expect: nonfinite-loss
# source: https://whosebug.com/question/6301115/Weird-behaviour-of-loss-function-in-pytorch
# Custom cost exp(CrossEntropy / eta): falls for a while, then turns NaN once one confident wrong prediction makes exp() overflow.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X = torch.randn(1000, 20)
y = (X[:, :4].argmax(dim=1) + (X[:, 4] > 1.5).long()) % 4
train_loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)

client_model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4))
optimizer = torch.optim.SGD(client_model.parameters(), lr=0.05)
epoch = 4
e_loss = []
eta = 0.05  # just an example of the value of eta
criterion = nn.CrossEntropyLoss()
for e in range(epoch):
    train_loss = 0
    for batch_idx, (data, target) in enumerate(train_loader):
        client_model.train()
        optimizer.zero_grad()
        output = client_model(data)
        loss = torch.exp(criterion(output, target) / eta)
        loss.backward()
        optimizer.step()
        train_loss += loss.item() * data.size(0)
    train_loss = train_loss / len(train_loader)
    e_loss.append(train_loss)
    print(e, train_loss)
