# DQN on a toy corridor: the policy acts under no_grad on every move and learns from a replay buffer every
# fourth move (its acting states come back later as training inputs), with a target network synced now and then.
import random

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)
random.seed(0)
N = 10  # positions 0..9, reward at 9


def encode(pos):
    return F.one_hot(torch.tensor(pos), N).float() + 0.01 * torch.randn(N)


policy = nn.Sequential(nn.Linear(N, 32), nn.ReLU(), nn.Linear(32, 2))
target = nn.Sequential(nn.Linear(N, 32), nn.ReLU(), nn.Linear(32, 2))
target.load_state_dict(policy.state_dict())
opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
buffer, eps, moves = [], 1.0, 0
for episode in range(40):
    pos, state = 0, encode(0)
    for t in range(30):
        with torch.no_grad():
            q = policy(state.unsqueeze(0))
        action = random.randrange(2) if random.random() < eps else int(q.argmax())
        nxt = min(max(pos + (1 if action else -1), 0), N - 1)
        reward, done = float(nxt == N - 1), nxt == N - 1
        next_state = encode(nxt)
        buffer.append((state, action, reward, next_state, done))
        buffer = buffer[-2000:]
        pos, state, moves = nxt, next_state, moves + 1
        if moves % 4 == 0 and len(buffer) >= 64:
            s, a, r, s2, d = zip(*random.sample(buffer, 32))
            s, s2 = torch.stack(s), torch.stack(s2)
            a, r, d = torch.tensor(a), torch.tensor(r), torch.tensor(d, dtype=torch.float32)
            with torch.no_grad():
                goal = r + 0.9 * (1 - d) * target(s2).max(1).values
            loss = F.smooth_l1_loss(policy(s).gather(1, a[:, None]).squeeze(1), goal)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if moves % 200 == 0:
            target.load_state_dict(policy.state_dict())
        if done:
            break
    eps = max(0.05, eps * 0.9)
print("buffer", len(buffer), "epsilon", round(eps, 3))
