# Settings copied from a GPU server's config, with the device falling back to the CPU where no GPU is visible.
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "-1"  # the scheduler gave this job no GPU

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

CONFIG = {"device": "cuda:0" if torch.cuda.is_available() else "cpu", "lr": 3e-3, "epochs": 2, "batch_size": 32}

torch.manual_seed(0)
data = TensorDataset(torch.randn(320, 3, 16, 16), torch.randint(0, 4, (320,)))
model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
model = model.to(CONFIG["device"])
opt = torch.optim.AdamW(model.parameters(), lr=CONFIG["lr"])
for epoch in range(CONFIG["epochs"]):
    for images, labels in DataLoader(data, batch_size=CONFIG["batch_size"], shuffle=True):
        images, labels = images.to(CONFIG["device"]), labels.to(CONFIG["device"])
        opt.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        opt.step()
