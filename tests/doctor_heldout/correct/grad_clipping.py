# expect: none
# LSTM regression with clip_grad_norm_ before each step.
import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(2, 32, batch_first=True)
        self.fc = nn.Linear(32, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


X = torch.randn(640, 25, 2)
y = X[:, :, 0].sum(1, keepdim=True) * 0.2
model = Model()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(4):
    for i in range(0, 640, 32):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
    print(epoch, loss.item())
