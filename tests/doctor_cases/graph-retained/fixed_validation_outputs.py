"""Next-value forecaster for noisy sine waves, organised in functions.

evaluate() gathers the validation predictions under torch.no_grad() and returns them
concatenated: no graph is built for them, so main() keeps only the numbers.
"""
import math

import torch
from torch import nn


class Forecaster(nn.Module):
    def __init__(self, hidden: int = 24) -> None:
        super().__init__()
        self.rnn = nn.GRU(1, hidden, batch_first=True)
        self.out = nn.Linear(hidden, 1)

    def forward(self, seq: torch.Tensor) -> torch.Tensor:
        states, _ = self.rnn(seq)
        return self.out(states[:, -1])


def make_series(n: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    phase = torch.rand(n, 1, generator=gen) * 2 * math.pi
    t = torch.arange(21, dtype=torch.float32) * 0.3
    wave = torch.sin(phase + t) + 0.05 * torch.randn(n, 21, generator=gen)
    return wave[:, :20, None], wave[:, 20:]


def evaluate(model: nn.Module, xs: torch.Tensor, batch: int) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        preds = [model(xs[i:i + batch]) for i in range(0, len(xs), batch)]
    return torch.cat(preds)


def main() -> None:
    gen = torch.Generator().manual_seed(3)
    torch.manual_seed(3)
    x_train, y_train = make_series(640, gen)
    x_val, y_val = make_series(160, gen)
    model = Forecaster()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for epoch in range(6):
        model.train()
        order = torch.randperm(len(x_train), generator=gen)
        for i in range(0, len(order), 32):
            idx = order[i:i + 32]
            loss = nn.functional.mse_loss(model(x_train[idx]), y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        val_pred = evaluate(model, x_val, 16)
        print(f"epoch {epoch} val mse {nn.functional.mse_loss(val_pred, y_val).item():.4f}")


if __name__ == "__main__":
    main()
