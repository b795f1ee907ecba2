# expect: data-not-shuffled (known miss)
# source: https://github.com/Deci-AI/super-gradients/issues/416
# A trainer builds its DataLoader from dataloader_params = {"batch_size": ...} without "shuffle": a SequentialSampler over an ImageFolder-style (class-ordered) dataset shows the net one class at a time.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)


class ImageFolderLike(Dataset):
    """Samples listed folder by folder, as ImageFolder lists them."""

    def __init__(self, n_classes=8, per_class=96):
        self.templates = torch.randn(n_classes, 3, 16, 16)
        self.samples = [(c, k) for c in range(n_classes) for k in range(per_class)]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        c, k = self.samples[i]
        g = torch.Generator().manual_seed(i)
        return self.templates[c] + torch.randn(3, 16, 16, generator=g), c


def imagenet_train(dataloader_params):
    return DataLoader(ImageFolderLike(), **dataloader_params)


class Trainer:
    def __init__(self, model):
        self.net = model

    def train(self, train_loader, train_params):
        opt = torch.optim.SGD(self.net.parameters(), lr=train_params["initial_lr"], **train_params["optimizer_params"])
        for epoch in range(train_params["max_epochs"]):
            for inputs, targets in train_loader:
                loss = nn.functional.cross_entropy(self.net(inputs), targets)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(epoch, loss.item())


dataloader_params = {"batch_size": 48}
train_params = {"max_epochs": 2, "initial_lr": 0.01, "optimizer_params": {"weight_decay": 1e-4, "momentum": 0.9, "nesterov": True}}
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(256, 8))
Trainer(model).train(imagenet_train(dataloader_params), train_params)
