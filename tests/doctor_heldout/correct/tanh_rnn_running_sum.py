# expect: none
# A vanilla tanh RNN (nn.RNN, batch_first=True) regresses the running mean of a noisy signal;
# sequences of 20 steps, gradient clipping at 1.0, Adam 3e-3.
import torch
import torch.nn as nn

torch.manual_seed(0)
torch.set_num_threads(1)

T, N = 20, 2048
x = torch.randn(N, T, 1)
target = x.cumsum(dim=1) / torch.arange(1, T + 1).view(1, T, 1)   # running mean at each step


class RunningMean(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.rnn = nn.RNN(1, hidden, nonlinearity="tanh", batch_first=True)
        self.readout = nn.Linear(hidden, 1)

    def forward(self, seq):
        out, _ = self.rnn(seq)
        return self.readout(out)


rnn_model = RunningMean()
opt = torch.optim.Adam(rnn_model.parameters(), lr=3e-3)
mse = nn.MSELoss()

for step in range(300):
    idx = torch.randint(0, N - 256, (64,))
    pred = rnn_model(x[idx])
    loss = mse(pred, target[idx])
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(rnn_model.parameters(), 1.0)
    opt.step()
    if step % 60 == 0 or step == 299:
        with torch.no_grad():
            val = mse(rnn_model(x[-256:]), target[-256:]).item()
        print(f"step {step}: train mse {loss.item():.5f}  val mse {val:.5f}")
