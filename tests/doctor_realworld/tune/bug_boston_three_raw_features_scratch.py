# expect: unnormalized-input (known miss)
# source: https://syntaxbug.com/d1e7d3ba69/
# Linear regression from scratch on three Boston-housing columns (LSTAT, CRIM, RM) left on their raw scales: the loss turns NaN.
import random

import numpy as np
import torch

rng = np.random.default_rng(1)
n = 506
LSTAT = rng.uniform(1.7, 38, n)
CRIM = rng.exponential(3.6, n)
RM = rng.normal(6.3, 0.7, n)
MEDV = 34 - 0.9 * LSTAT - 0.1 * CRIM + 4.5 * RM - 25 + rng.normal(0, 3, n)
features = torch.tensor(np.stack([LSTAT, CRIM, RM], 1), dtype=torch.float32)
labels = torch.tensor(MEDV, dtype=torch.float32).reshape(-1, 1)


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(indices[i:min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


def linreg(X, w, b):
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


random.seed(0)
w = torch.normal(0, 0.01, size=(3, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.03
num_epochs = 5
batch_size = 10
net = linreg
loss = squared_loss
for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = loss(net(X, w, b), y)
        l.sum().backward()
        sgd([w, b], lr, batch_size)
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')
