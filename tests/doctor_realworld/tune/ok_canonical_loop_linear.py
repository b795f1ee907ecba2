# expect: none
# source: https://preproom.ai/learn/model-training-pytorch.html
# The tutorial's canonical loop: nn.Linear(1, 1), MSELoss, SGD(lr=0.03), model.train(), 200 epochs of zero_grad / forward / backward / step.
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.linspace(0, 5, 40).unsqueeze(1)
y = 1.8 * x + 0.7 + 0.3 * torch.randn_like(x)

model = nn.Linear(1, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.03)

model.train()
for epoch in range(200):
    optimizer.zero_grad()
    pred = model(x)
    loss = criterion(pred, y)
    loss.backward()
    optimizer.step()
print(model.weight.item(), model.bias.item(), loss.item())
