# expect: none
# source: https://github.com/pytorch/examples/blob/main/reinforcement_learning/reinforce.py
# The official REINFORCE example's shape: Policy net (Linear-Dropout-ReLU-Linear, softmax over actions), Categorical sampling, discounted normalized returns, loss = sum(-log_prob * R), Adam(1e-2). A tiny corridor environment stands in for CartPole.
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

torch.manual_seed(543)
np.random.seed(543)
gamma = 0.99
eps = np.finfo(np.float32).eps.item()


class Corridor:
    """Walk right to reach the goal at position 6 within 20 steps; reward 1 at the goal."""

    def reset(self):
        self.pos, self.t = 0, 0
        return self.obs()

    def obs(self):
        o = np.zeros(4, dtype=np.float32)
        o[0], o[1] = self.pos / 6.0, self.t / 20.0
        return o

    def step(self, action):
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        self.t += 1
        done = self.pos >= 6 or self.t >= 20
        return self.obs(), float(self.pos >= 6), done


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.6)
        self.affine2 = nn.Linear(128, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.dropout(self.affine1(x)))
        return F.softmax(self.affine2(x), dim=1)


policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
env = Corridor()


def select_action(state):
    probs = policy(torch.from_numpy(state).float().unsqueeze(0))
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R, policy_loss, returns = 0, [], []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]


running_reward = 0
for i_episode in range(1, 151):
    state, ep_reward = env.reset(), 0
    for t in range(1, 21):
        action = select_action(state)
        state, reward, done = env.step(action)
        policy.rewards.append(reward)
        ep_reward += reward
        if done:
            break
    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    finish_episode()
print('running reward', running_reward)
