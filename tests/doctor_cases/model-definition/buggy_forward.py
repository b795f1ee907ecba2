# A small CNN for 28x28 images; the method that computes the output has a typo in its name.
import torch
from torch import nn


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(8 * 14 * 14, 10)

    def foward(self, images):
        return self.classifier(self.features(images).flatten(1))


torch.manual_seed(0)
images = torch.randn(32, 1, 28, 28)
digits = torch.randint(0, 10, (32,))
cnn = TinyCNN()
opt = torch.optim.Adam(cnn.parameters(), lr=1e-3)
for it in range(5):
    opt.zero_grad()
    nn.functional.cross_entropy(cnn(images), digits).backward()
    opt.step()
