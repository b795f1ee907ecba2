# expect: lstm-batch-first
# Batches shaped (batch, seq, feat) fed to nn.LSTM without batch_first=True.
import torch
import torch.nn as nn
from torch.utils.data import Dataset, DataLoader

torch.set_num_threads(1)
torch.manual_seed(0)


class SeqDataset(Dataset):
    def __init__(self, n=640, seq_len=20):
        self.x = torch.randn(n, seq_len, 3)
        self.y = (self.x[:, :, 0].sum(1) > 0).long()

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=3, hidden_size=32, num_layers=1)
        self.fc = nn.Linear(32, 2)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.fc(out[:, -1, :])


loader = DataLoader(SeqDataset(), batch_size=32, shuffle=True)
model = LSTMClassifier()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
