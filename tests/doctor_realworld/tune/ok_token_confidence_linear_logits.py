# expect: none
# source: https://github.com/cvg/glue-factory/issues/89
# TokenConfidence holds nn.Sequential(Linear, Sigmoid) but its loss calls only self.token[0] (the Linear) before BCEWithLogitsLoss, so the sigmoid is not applied twice (the issue asked whether it was).
import torch
import torch.nn as nn

torch.manual_seed(0)


class TokenConfidence(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.token = nn.Sequential(nn.Linear(dim, 1), nn.Sigmoid())
        self.loss_fn = nn.BCEWithLogitsLoss(reduction="none")

    def forward(self, desc0, desc1):
        return self.token(desc0.detach()).squeeze(-1), self.token(desc1.detach()).squeeze(-1)

    def loss(self, desc0, desc1, correct0, correct1):
        logit0 = self.token[0](desc0.detach()).squeeze(-1)
        logit1 = self.token[0](desc1.detach()).squeeze(-1)
        return (self.loss_fn(logit0, correct0.float()).mean(-1) + self.loss_fn(logit1, correct1.float()).mean(-1)) / 2.0


dim = 64
head = TokenConfidence(dim)
direction = torch.randn(dim)
optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
for it in range(200):
    desc0, desc1 = torch.randn(4, 128, dim), torch.randn(4, 128, dim)
    correct0, correct1 = desc0 @ direction > 0, desc1 @ direction > 0
    loss = head.loss(desc0, desc1, correct0, correct1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
with torch.no_grad():
    c0, _ = head(desc0, desc1)
print(loss.item(), ((c0 > 0.5) == correct0).float().mean().item())
