# A small CNN on scikit-learn's 8x8 digit images, trained with Adam at 3e-5 (a value copied from a
# fine-tuning recipe for a pretrained model) from scratch for 6 epochs: the loss sits near ln(10) for
# the first epochs and is still sliding down when training stops, far from where it could be.
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
digits = load_digits()
images = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
labels = torch.tensor(digits.target)
perm = torch.randperm(len(labels))
train_idx, val_idx = perm[:1500], perm[1500:]
loader = DataLoader(TensorDataset(images[train_idx], labels[train_idx]), batch_size=32, shuffle=True)

net = nn.Sequential(
    nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 2 * 2, 10),
)
optimizer = torch.optim.Adam(net.parameters(), lr=3e-5)
loss_fn = nn.CrossEntropyLoss()

for epoch in range(6):
    net.train()
    for batch_images, batch_labels in loader:
        optimizer.zero_grad()
        loss_fn(net(batch_images), batch_labels).backward()
        optimizer.step()
    net.eval()
    with torch.no_grad():
        acc = (net(images[val_idx]).argmax(1) == labels[val_idx]).float().mean().item()
    print(f"epoch {epoch}: validation accuracy {acc:.3f}")
