# expect: eval-mode-missing
# predict() runs the test set in mini-batches of 4 under torch.inference_mode(), but the model is
# never put in eval mode, so BatchNorm normalises each test batch with its own 4-sample statistics.
import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

torch.manual_seed(0)
torch.set_num_threads(1)

X, y = load_digits(return_X_y=True)
Xtr, Xte, ytr, yte = train_test_split(X / 16.0, y, test_size=0.3, random_state=5, stratify=y)
Xtr, Xte = torch.tensor(Xtr, dtype=torch.float32), torch.tensor(Xte, dtype=torch.float32)
ytr = torch.tensor(ytr)

bn_net = nn.Sequential(
    nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(),
    nn.Linear(128, 64), nn.BatchNorm1d(64), nn.ReLU(),
    nn.Linear(64, 10),
)
opt = torch.optim.Adam(bn_net.parameters(), lr=1e-3)


def predict(net, inputs, batch_size=4):
    preds = []
    with torch.inference_mode():
        for i in range(0, len(inputs), batch_size):
            preds.append(net(inputs[i:i + batch_size]).argmax(1))
    return torch.cat(preds).numpy()


for epoch in range(8):
    bn_net.train()
    perm = torch.randperm(len(Xtr))
    for i in range(0, len(perm), 32):
        b = perm[i:i + 32]
        opt.zero_grad()
        loss = nn.functional.cross_entropy(bn_net(Xtr[b]), ytr[b])
        loss.backward()
        opt.step()

print(f"final train loss {loss.item():.4f}")
print(f"test accuracy {np.mean(predict(bn_net, Xte) == yte):.3f}")
