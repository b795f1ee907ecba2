# expect: padding-not-masked
# source: https://github.com/rosinality/mac-network-pytorch/issues/7
# MAC network control unit: attention over the question's LSTM outputs is softmaxed over all positions, padded ones included, because question_len is never passed in.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
vocab, dim, max_len = 80, 64, 20


class ControlUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.Linear(dim, 1)
        self.control_question = nn.Linear(dim * 2, dim)

    def forward(self, context, question, control):
        cq = self.control_question(torch.cat([control, question], 1)).unsqueeze(1)
        attn_weight = F.softmax(self.attn(cq * context), 1)
        return (attn_weight * context).sum(1)


class MACNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, dim // 2, batch_first=True, bidirectional=True)
        self.control = ControlUnit()
        self.classifier = nn.Sequential(nn.Linear(dim * 2, dim), nn.ELU(), nn.Linear(dim, 3))

    def forward(self, question, question_len):
        embed = self.embed(question)
        lstm_out, (h, _) = self.lstm(embed)
        h = torch.cat([h[0], h[1]], 1)
        control = torch.zeros_like(h)
        for _ in range(3):
            control = self.control(lstm_out, h, control)
        return self.classifier(torch.cat([control, h], 1))


def make_batch(n):
    question_len = torch.randint(3, max_len, (n,))
    q = torch.zeros(n, max_len, dtype=torch.long)
    for k, L in enumerate(question_len):
        q[k, :L] = torch.randint(1, vocab, (int(L),))
    answer = q[:, 0] % 3
    return q, question_len, answer


net = MACNetwork()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-4 * 10)
for step in range(100):
    question, q_len, answer = make_batch(32)
    loss = F.cross_entropy(net(question, q_len), answer)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
