# expect: train-mode-missing
# source: https://github.com/wkentaro/pytorch-fcn/issues/57
# The FCN Trainer validates every N iterations inside train_epoch(); validate() puts the model in eval mode and training continues in eval mode, so the loss jumps at each new epoch.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FCN(nn.Module):
    def __init__(self, n_class=3):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())
        self.drop = nn.Dropout2d(0.5)
        self.score = nn.Conv2d(32, n_class, 1)

    def forward(self, x):
        h = self.score(self.drop(self.features(x)))
        return F.interpolate(h, size=x.shape[2:], mode='bilinear', align_corners=False)


def make_batch(n):
    lbl = torch.zeros(n, 24, 24, dtype=torch.long)
    lbl[:, 6:18, 6:12] = 1
    lbl[:, 6:18, 12:18] = 2
    img = F.one_hot(lbl, 3).permute(0, 3, 1, 2).float() + 0.5 * torch.randn(n, 3, 24, 24)
    return img, lbl


class Trainer:
    def __init__(self, model, optim, interval_validate=20):
        self.model, self.optim, self.interval_validate = model, optim, interval_validate
        self.iteration = 0
        self.val_data = make_batch(16)

    def validate(self):
        self.model.eval()
        with torch.no_grad():
            img, lbl = self.val_data
            val_loss = F.cross_entropy(self.model(img), lbl).item()
        print('iteration', self.iteration, 'val loss', val_loss)

    def train_epoch(self, n_iter=40):
        self.model.train()
        for batch_idx in range(n_iter):
            if self.iteration % self.interval_validate == 0:
                self.validate()
            data, target = make_batch(8)
            self.optim.zero_grad()
            loss = F.cross_entropy(self.model(data), target)
            loss.backward()
            self.optim.step()
            self.iteration += 1


model = FCN()
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9))
for epoch in range(2):
    trainer.train_epoch()
