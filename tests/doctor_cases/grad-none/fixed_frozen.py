# Correct code that leaves some .grad None on purpose: an embedding frozen with requires_grad
# False but still handed to the optimizer, a batch-norm backbone frozen and kept in eval mode,
# and two task heads used on alternating batches (each gets gradients every other step).
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
tokens = torch.randint(0, 50, (1024, 6))
y_a = (tokens[:, 0] % 2).long()
y_b = tokens[:, 1].float().unsqueeze(1) / 50.0
loader = DataLoader(TensorDataset(tokens, y_a, y_b), batch_size=32, shuffle=True)


class MultiTask(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.backbone = nn.Sequential(nn.Linear(96, 64), nn.BatchNorm1d(64), nn.ReLU())
        self.trunk = nn.Sequential(nn.Linear(64, 64), nn.ReLU())
        self.head_a = nn.Linear(64, 2)
        self.head_b = nn.Linear(64, 1)

    def forward(self, t: torch.Tensor, task: str) -> torch.Tensor:
        h = self.trunk(self.backbone(self.embed(t).flatten(1)))
        return self.head_a(h) if task == "a" else self.head_b(h)


model = MultiTask()
model.embed.weight.requires_grad_(False)
model.backbone.requires_grad_(False)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(2):
    model.train()
    model.backbone.eval()  # frozen batch norm keeps its running statistics
    for i, (t, ya, yb) in enumerate(loader):
        opt.zero_grad()
        if i % 2 == 0:
            loss = nn.functional.cross_entropy(model(t, "a"), ya)
        else:
            loss = nn.functional.mse_loss(model(t, "b"), yb)
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
