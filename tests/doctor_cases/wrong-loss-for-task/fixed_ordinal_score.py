# Disease progression from the scikit-learn diabetes data, graded into a severity score 0-4 (below 75, 75-150,
# 150-225, 225-300, above 300) and predicted as one number with MSELoss: the grades are ordered, so a
# regression on them is a sound choice, and most patients sit in the middle grades.
import numpy as np
import torch
from sklearn.datasets import load_diabetes

data = load_diabetes()
grade = np.digitize(data.target, [75, 150, 225, 300]).astype(np.float32)
x = torch.tensor(data.data, dtype=torch.float32)
x = (x - x.mean(0)) / x.std(0)
y = torch.tensor(grade).unsqueeze(1)

torch.manual_seed(2)
model = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(40):
    order = torch.randperm(len(y))
    for i in range(0, len(y), 32):
        idx = order[i:i + 32]
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}: mse {loss.item():.3f}")
