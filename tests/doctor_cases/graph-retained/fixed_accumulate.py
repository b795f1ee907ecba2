# Correct code that does keep losses / outputs with graphs for a while: micro-batch losses are
# collected and summed for one backward per step (gradient accumulation), a REINFORCE-style
# list of log-probs lives for one episode, and validation outputs are collected under no_grad.
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(2048, 10)
y = (x[:, 0] * x[:, 1] > 0).long()
model = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x_val, y_val = torch.randn(256, 10), None
y_val = (x_val[:, 0] * x_val[:, 1] > 0).long()

for epoch in range(3):
    for i in range(0, 1536, 128):
        micro_losses = []
        for j in range(i, i + 128, 32):
            micro_losses.append(nn.functional.cross_entropy(model(x[j:j + 32]), y[j:j + 32]))
        opt.zero_grad()
        torch.stack(micro_losses).mean().backward()
        opt.step()
    # a policy-gradient style update: log-probs of one "episode" kept until its single backward
    log_probs, rewards = [], []
    for t in range(16):
        logits = model(x[1536 + t:1537 + t])
        action = torch.distributions.Categorical(logits=logits).sample()
        log_probs.append(torch.log_softmax(logits, dim=1)[0, action])
        rewards.append(float(action.item() == y[1536 + t].item()))
    opt.zero_grad()
    (-(torch.cat(log_probs) * torch.tensor(rewards)).mean()).backward()
    opt.step()
    with torch.no_grad():
        outs = [model(x_val[k:k + 64]) for k in range(0, 256, 64)]
    acc = (torch.cat(outs).argmax(1) == y_val).float().mean()
    print(f"epoch {epoch} val acc {acc.item():.3f}")
