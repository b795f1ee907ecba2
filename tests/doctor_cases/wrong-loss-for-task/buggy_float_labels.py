# Iris species predicted as one number: the labels 0, 1, 2 are converted to float so that MSELoss accepts
# them, and the network has a single output that is rounded to get the species. Setosa, versicolor and
# virginica have no order, but the loss treats virginica as "two setosas away".
import numpy as np
import torch
from sklearn.datasets import load_iris

iris = load_iris()
rng = np.random.default_rng(4)
rows = rng.permutation(len(iris.target))
features = (iris.data - iris.data.mean(axis=0)) / iris.data.std(axis=0)
train_rows, test_rows = rows[:120], rows[120:]

inputs = torch.from_numpy(features[train_rows]).float()
species = torch.from_numpy(iris.target[train_rows]).float().unsqueeze(1)  # (120, 1) floats 0.0 / 1.0 / 2.0

torch.manual_seed(4)
regressor = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
optimizer = torch.optim.Adam(regressor.parameters(), lr=0.01)
mse = torch.nn.MSELoss()

for epoch in range(300):
    optimizer.zero_grad()
    loss = mse(regressor(inputs), species)
    loss.backward()
    optimizer.step()

with torch.no_grad():
    guess = regressor(torch.from_numpy(features[test_rows]).float()).round().clamp(0, 2).squeeze(1)
print("test accuracy:", (guess.numpy() == iris.target[test_rows]).mean())
