# expect: none
# The four XOR points, a 2-8-1 tanh net with a sigmoid output and nn.BCELoss, full-batch SGD.
# Tiny dataset on purpose: the task is to fit these four points.
import torch
import torch.nn as nn

torch.manual_seed(2)
torch.set_num_threads(1)

X = torch.tensor([[0., 0.], [0., 1.], [1., 0.], [1., 1.]])
Y = torch.tensor([[0.], [1.], [1.], [0.]])

xor_net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1), nn.Sigmoid())
bce = nn.BCELoss()
opt = torch.optim.SGD(xor_net.parameters(), lr=0.5, momentum=0.9)

for step in range(600):
    opt.zero_grad()
    loss = bce(xor_net(X), Y)
    loss.backward()
    opt.step()
    if step % 100 == 0:
        print(f"step {step}: loss {loss.item():.4f}")

with torch.no_grad():
    print("predictions:", xor_net(X).squeeze(1).round(decimals=3).tolist())
