# expect: lr-too-low
# lr=1e-4 (a typical Adam/fine-tuning value) used with plain SGD, no momentum, from scratch.
# For this net plain SGD wants ~0.05-0.1, so after 40 epochs the loss has barely moved.
#%% imports
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

torch.manual_seed(42)
torch.set_num_threads(1)

#%% data
df = load_wine(as_frame=True).frame
feature_cols = [c for c in df.columns if c != "target"]
train_df, test_df = train_test_split(df, test_size=0.3, random_state=0, stratify=df["target"])
sc = StandardScaler().fit(train_df[feature_cols])
Xtr = torch.tensor(sc.transform(train_df[feature_cols]), dtype=torch.float32)
Xte = torch.tensor(sc.transform(test_df[feature_cols]), dtype=torch.float32)
ytr = torch.tensor(train_df["target"].values)
yte = torch.tensor(test_df["target"].values)

#%% model
clf = nn.Sequential(nn.Linear(13, 16), nn.ReLU(), nn.Linear(16, 3))
loss_f = nn.CrossEntropyLoss()
sgd = torch.optim.SGD(clf.parameters(), lr=1e-4)

#%% train
BS = 16
for epoch in range(40):
    order = np.random.permutation(len(Xtr))
    losses = []
    for s in range(0, len(order), BS):
        ids = order[s:s + BS]
        out = clf(Xtr[ids])
        l = loss_f(out, ytr[ids])
        sgd.zero_grad()
        l.backward()
        sgd.step()
        losses.append(l.item())
    if epoch % 10 == 9:
        with torch.no_grad():
            acc = (clf(Xte).argmax(-1) == yte).float().mean().item()
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.4f}  test acc {acc:.3f}")
