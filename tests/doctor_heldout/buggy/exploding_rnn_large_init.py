# expect: exploding-gradients
# A ReLU RNN over 60 steps with recurrent weights initialised too large (no clipping).
import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.manual_seed(0)


class RNNRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(4, 32, num_layers=2, nonlinearity="relu", batch_first=True)
        self.out = nn.Linear(32, 1)
        for name, p in self.rnn.named_parameters():
            if "weight_hh" in name:
                nn.init.normal_(p, std=0.5)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.out(h[:, -1])


X = torch.randn(512, 60, 4)
y = X[:, :, 0].mean(1, keepdim=True)
model = RNNRegressor()
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
for epoch in range(5):
    for i in range(0, 512, 32):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        opt.step()
    print(epoch, loss.item())
