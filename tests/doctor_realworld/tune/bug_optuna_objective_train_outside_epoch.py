# expect: train-mode-missing
# source: https://github.com/optuna/optuna/pull/1725
# The Optuna PyTorch example's objective calls model.train() once before the epoch loop while every epoch ends with model.eval() for validation, so from epoch 2 on it trains in eval mode (dropout off).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(1500, 30)
y = (X[:, :6].sum(1) > 0).long() + (X[:, 6] > 0.8).long()
train_x, train_y, valid_x, valid_y = X[:1200], y[:1200], X[1200:], y[1200:]
EPOCHS, BATCHSIZE = 4, 64


def define_model(n_layers=2, units=64, dropout=0.4):
    layers, in_features = [], 30
    for i in range(n_layers):
        layers += [nn.Linear(in_features, units), nn.ReLU(), nn.Dropout(dropout)]
        in_features = units
    layers += [nn.Linear(in_features, 3), nn.LogSoftmax(dim=1)]
    return nn.Sequential(*layers)


def objective(lr=3e-3):
    model = define_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for epoch in range(EPOCHS):
        for i in range(0, 1200, BATCHSIZE):
            optimizer.zero_grad()
            loss = F.nll_loss(model(train_x[i:i + BATCHSIZE]), train_y[i:i + BATCHSIZE])
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            accuracy = (model(valid_x).argmax(1) == valid_y).float().mean().item()
        print('epoch', epoch, 'accuracy', accuracy)
    return accuracy


objective()
