# expect: softmax-before-cross-entropy
# source: https://github.com/ariecattan/SciCo/issues/2
# Multiclass pair classifier: training feeds logits to CrossEntropyLoss, but the validation step softmaxes the logits first, so the validation loss sticks near 1.0.
import torch
import torch.nn as nn

torch.manual_seed(0)
pairs = torch.randn(1500, 32)
labels = ((pairs[:, :16] * pairs[:, 16:]).sum(1) > 0).long() + (pairs[:, 0] > 1).long() * 2
labels = labels.clamp(max=3)
train_x, train_y = pairs[:1200], labels[:1200]
dev_x, dev_y = pairs[1200:], labels[1200:]


class MulticlassModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 4))
        self.criterion = nn.CrossEntropyLoss()

    def forward(self, x):
        return self.linear(x)

    def training_step(self, x, y):
        return self.criterion(self(x), y)

    def validation_step(self, x, y):
        y_hat = torch.softmax(self(x), dim=1)
        return self.criterion(y_hat, y), y_hat


model = MulticlassModel()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(8):
    model.train()
    for i in range(0, 1200, 50):
        loss = model.training_step(train_x[i:i + 50], train_y[i:i + 50])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val_loss, probs = model.validation_step(dev_x, dev_y)
    print(epoch, loss.item(), val_loss.item(), (probs.argmax(1) == dev_y).float().mean().item())
