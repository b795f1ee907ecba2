# Knowledge distillation: a student matches the teacher's softened probabilities with MSE (soft targets,
# not one-hot) plus cross-entropy on the true labels; then a small regression head on float targets.
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn

torch.manual_seed(0)
digits = load_digits()
X = torch.tensor(digits.data / 16.0, dtype=torch.float32)
y = torch.tensor(digits.target)

teacher = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
opt_t = torch.optim.Adam(teacher.parameters(), lr=2e-3)
for step in range(60):
    idx = torch.randint(0, len(X), (64,))
    opt_t.zero_grad()
    F.cross_entropy(teacher(X[idx]), y[idx]).backward()
    opt_t.step()
teacher.eval()

student = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
opt_s = torch.optim.Adam(student.parameters(), lr=2e-3)
T = 4.0
for step in range(60):
    idx = torch.randint(0, len(X), (64,))
    with torch.no_grad():
        soft = F.softmax(teacher(X[idx]) / T, dim=1)
    logits = student(X[idx])
    loss = F.mse_loss(F.softmax(logits / T, dim=1), soft) * 10 + F.cross_entropy(logits, y[idx])
    opt_s.zero_grad()
    loss.backward()
    opt_s.step()

# Regression: predict the mean ink of the image (float target) with Huber loss.
ink = X.mean(1, keepdim=True)
reg = nn.Sequential(nn.Linear(64, 16), nn.Tanh(), nn.Linear(16, 1))
opt_r = torch.optim.Adam(reg.parameters(), lr=3e-3)
for step in range(60):
    idx = torch.randint(0, len(X), (64,))
    loss = F.huber_loss(reg(X[idx]), ink[idx])
    opt_r.zero_grad()
    loss.backward()
    opt_r.step()
print("done", loss.item())
