# expect: none
# Knowledge distillation: frozen teacher in eval mode, student trained with KL + CE.
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits

torch.set_num_threads(1)
torch.manual_seed(0)

d = load_digits()
X = torch.tensor(d.data / 16.0, dtype=torch.float32)
y = torch.tensor(d.target)

teacher = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10))
t_opt = torch.optim.Adam(teacher.parameters(), lr=1e-3)
teacher.train()
for epoch in range(2):
    for i in range(0, len(X), 64):
        t_opt.zero_grad()
        F.cross_entropy(teacher(X[i:i + 64]), y[i:i + 64]).backward()
        t_opt.step()

teacher.eval()
for p in teacher.parameters():
    p.requires_grad_(False)

student = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
s_opt = torch.optim.Adam(student.parameters(), lr=1e-3)
T, alpha = 4.0, 0.7
for epoch in range(3):
    for i in range(0, len(X), 64):
        xb, yb = X[i:i + 64], y[i:i + 64]
        with torch.no_grad():
            t_logits = teacher(xb)
        s_logits = student(xb)
        kd = F.kl_div(F.log_softmax(s_logits / T, dim=1), F.softmax(t_logits / T, dim=1),
                      reduction="batchmean") * T * T
        loss = alpha * kd + (1 - alpha) * F.cross_entropy(s_logits, yb)
        s_opt.zero_grad()
        loss.backward()
        s_opt.step()
    print(epoch, loss.item())
