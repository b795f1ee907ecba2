# expect: graph-retained
# source: http://pytorch.org/docs/master/notes/faq.html
# The PyTorch FAQ's "my model reports out of memory" case: total_loss += loss keeps every iteration's autograd graph alive across the training loop.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
input = torch.randn(128, 64)
target = input[:, :1] * 0.5

total_loss = 0
for i in range(400):
    optimizer.zero_grad()
    output = model(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()
    total_loss += loss
print("mean loss", total_loss.item() / 400)
