# expect: softmax-before-cross-entropy
# Softmax applied in the training loop just before F.cross_entropy.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)

X = torch.randn(900, 8)
y = torch.argmax(X[:, :4], dim=1)
model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def train_epoch():
    for i in range(0, 900, 30):
        xb, yb = X[i:i + 30], y[i:i + 30]
        logits = model(xb)
        probs = torch.softmax(logits, dim=-1)
        loss = F.cross_entropy(probs, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()

for ep in range(5):
    print(ep, train_epoch())
