# expect: grad-none
# source: https://github.com/PRBonn/lidar-bonnetal/issues/99
# A SqueezeSegV2-style backbone detaches its skip input (skip_in = self.conv1b(x).detach()) and conv1b's output reaches the loss only through that detached skip, so conv1b.* never gets a gradient.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1a = nn.Sequential(nn.Conv2d(5, 16, 3, stride=(1, 2), padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.conv1b = nn.Sequential(nn.Conv2d(5, 16, 1), nn.BatchNorm2d(16))
        self.fire = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.ReLU())

    def forward(self, x):
        skip_in = self.conv1b(x).detach()
        x = self.conv1a(x)
        return self.fire(x), [skip_in]


class Decoder(nn.Module):
    def __init__(self, n_classes=4):
        super().__init__()
        self.up = nn.ConvTranspose2d(32, 16, (1, 4), stride=(1, 2), padding=(0, 1))
        self.head = nn.Conv2d(16, n_classes, 1)

    def forward(self, x, skips):
        return self.head(torch.relu(self.up(x) + skips[0]))


encoder, decoder = Backbone(), Decoder()
params = list(encoder.parameters()) + list(decoder.parameters())
optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()
for it in range(40):
    scan = torch.randn(4, 5, 16, 64)
    labels = (scan[:, 0] > 0).long() + (scan[:, 1] > 1).long() * 2
    y = decoder(*encoder(scan))
    loss = criterion(y, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
