# expect: lr-too-high
# "My loss goes to nan after a few epochs" - full-batch linear regression on raw house features.
import torch

torch.manual_seed(0)
n = 256
area = torch.rand(n, 1) * 200 + 50          # square metres
rooms = torch.randint(1, 7, (n, 1)).float()
age = torch.rand(n, 1) * 80
X = torch.cat([area, rooms, age], dim=1)
y = 3000 * area + 10000 * rooms - 500 * age + torch.randn(n, 1) * 1000
y = y / 1000  # price in thousands

model = torch.nn.Linear(3, 1)
criterion = torch.nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.001)

for epoch in range(10):
    optimizer.zero_grad()
    loss = criterion(model(X), y)
    loss.backward()
    optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.2f}")
