# expect: sigmoid-before-bce-with-logits
# source: https://github.com/avBuffer/UNet3plus_pth/issues/23
# Segmentation net whose forward ends in F.sigmoid(d1) while train.py uses BCEWithLogitsLoss: sigmoid applied twice, the BCE loss does not decrease.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyUNet(nn.Module):
    def __init__(self, n_channels=1, n_classes=1):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(n_channels, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.enc2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec1 = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU())
        self.outconv = nn.Conv2d(8, n_classes, 1)

    def forward(self, x):
        h1 = self.enc1(x)
        h2 = self.enc2(h1)
        d1 = self.outconv(self.dec1(torch.cat([self.up(h2), h1], dim=1)))
        return F.sigmoid(d1)


def make_batch(n):
    imgs = torch.zeros(n, 1, 32, 32)
    masks = torch.zeros(n, 1, 32, 32)
    for k in range(n):
        r, c = torch.randint(4, 24, (2,)).tolist()
        masks[k, 0, r:r + 8, c:c + 8] = 1
    imgs = masks * 0.8 + 0.3 * torch.randn_like(masks)
    return imgs, masks


net = TinyUNet()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
criterion = nn.BCEWithLogitsLoss()
for step in range(60):
    imgs, true_masks = make_batch(8)
    masks_pred = net(imgs)
    loss = criterion(masks_pred, true_masks)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print(step, loss.item())
