# A classroom digit classifier with sigmoid hidden layers, fed raw 0-255 pixel values; the training
# lives in the model's own fit() method.
import torch
from torch import nn


class SigmoidNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Sequential(nn.Linear(64, 32), nn.Sigmoid(), nn.Linear(32, 32), nn.Sigmoid())
        self.out = nn.Linear(32, 10)

    def forward(self, x):
        return self.out(self.hidden(x))

    def fit(self, images, labels, epochs=5, batch=64):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        for _ in range(epochs):
            for i in range(0, len(images), batch):
                opt.zero_grad()
                nn.functional.cross_entropy(self(images[i:i + batch]), labels[i:i + batch]).backward()
                opt.step()


torch.manual_seed(0)
labels = torch.randint(0, 10, (640,))
images = (torch.rand(640, 64) * 160 + labels.float().unsqueeze(1) * 9).round()  # 8x8 grey levels 0-255
SigmoidNet().fit(images, labels)
