# expect: shape-mismatch (mentions batch_first)
# "Expected input batch_size (20) to match target batch_size (16)" - text classifier, LSTM without batch_first.
import torch
from torch import nn

torch.manual_seed(0)
vocab, emb, hid = 1000, 32, 64
tokens = torch.randint(0, vocab, (16, 20))  # (batch, seq_len)
targets = torch.randint(0, 2, (16,))

embedding = nn.Embedding(vocab, emb)
lstm = nn.LSTM(emb, hid, num_layers=1)
fc = nn.Linear(hid, 2)
params = list(embedding.parameters()) + list(lstm.parameters()) + list(fc.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)

for step in range(3):
    optimizer.zero_grad()
    _, (h_n, _) = lstm(embedding(tokens))
    logits = fc(h_n[-1])
    loss = nn.functional.cross_entropy(logits, targets)
    loss.backward()
    optimizer.step()
