# expect: softmax-before-cross-entropy
# source: https://github.com/bkitano/llama-from-scratch/issues/5
# Character-level "SimpleBrokenModel": embedding -> MLP -> F.softmax, and the result is passed to F.cross_entropy as if it were logits.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
text = "the quick brown fox jumps over the lazy dog. " * 60
vocab = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(vocab)}
dataset = torch.tensor([stoi[c] for c in text])
MASTER_CONFIG = {'vocab_size': len(vocab), 'batch_size': 16, 'context_window': 16, 'd_model': 128, 'epochs': 150}


def get_batches(data, config):
    ix = torch.randint(0, data.size(0) - config['context_window'] - 1, (config['batch_size'],))
    x = torch.stack([data[i:i + config['context_window']] for i in ix])
    y = torch.stack([data[i + 1:i + config['context_window'] + 1] for i in ix])
    return x, y


class SimpleBrokenModel(nn.Module):
    def __init__(self, config=MASTER_CONFIG):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config['vocab_size'], config['d_model'])
        self.linear = nn.Sequential(
            nn.Linear(config['d_model'], config['d_model']), nn.ReLU(),
            nn.Linear(config['d_model'], config['vocab_size']),
        )

    def forward(self, idx, targets=None):
        x = self.embedding(idx)
        a = self.linear(x)
        logits = F.softmax(a, dim=-1)
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, self.config['vocab_size']), targets.view(-1))
            return logits, loss
        return logits


model = SimpleBrokenModel(MASTER_CONFIG)
optimizer = torch.optim.Adam(model.parameters())
for epoch in range(MASTER_CONFIG['epochs']):
    xs, ys = get_batches(dataset, MASTER_CONFIG)
    logits, loss = model(xs, targets=ys)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if epoch % 50 == 0:
        print(epoch, loss.item())
