# expect: grad-none
# forward() detaches the encoder output ("to save memory"), so the encoder never trains.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        feats = self.encoder(x).detach()
        return self.head(feats)


X = torch.randn(1000, 16)
y = X[:, :4].argmax(1)
model = Model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(5):
    for i in range(0, 1000, 50):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(X[i:i + 50]), y[i:i + 50])
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
