# expect: softmax-before-cross-entropy (known miss)
# source: https://github.com/Lightning-Universe/lightning-bolts/issues/654
# A LogisticRegression module whose training step computes F.nll_loss(F.log_softmax(F.softmax(self.linear(x)))): softmax applied twice.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class LogisticRegression(nn.Module):
    def __init__(self, input_dim, num_classes, learning_rate=1e-3):
        super().__init__()
        self.linear = nn.Linear(input_dim, num_classes, bias=True)
        self.learning_rate = learning_rate

    def forward(self, x):
        return F.softmax(self.linear(x), dim=-1)

    def training_step(self, batch):
        x, y = batch
        y_hat = self.linear(x)
        loss = F.nll_loss(F.log_softmax(F.softmax(y_hat, dim=-1), dim=-1), y, reduction="sum")
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.learning_rate)


X = torch.randn(2000, 42)
W = torch.randn(42, 5)
y = (X @ W).argmax(1)
model = LogisticRegression(42, 5)
opt = model.configure_optimizers()
for epoch in range(5):
    for i in range(0, 2000, 100):
        loss = model.training_step((X[i:i + 100], y[i:i + 100]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(epoch, loss.item() / 100)
