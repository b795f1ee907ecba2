# expect: shape-mismatch
# source: https://www.kuazhi.com/post/713984006.html
# BCEWithLogitsLoss with logits of shape (4, 1) and labels of shape (4,): "Target size (torch.Size([4])) must be the same as input size (torch.Size([4, 1]))".
import torch
import torch.nn as nn

torch.manual_seed(0)
features = torch.randn(40, 6)
labels = torch.randint(0, 2, (40,)).float()


class BinaryNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 12)
        self.out = nn.Linear(12, 1)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


model = BinaryNet()
criterion = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(0, 40, 4):
    logits = model(features[i:i + 4])
    loss = criterion(logits, labels[i:i + 4])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
