# expect: eval-mode-missing (known miss)
# source: https://github.com/karpathy/nanoGPT/pull/240
# The attention calls F.scaled_dot_product_attention(..., dropout_p=self.dropout) unconditionally, so dropout still applies in estimate_loss() after model.eval() ("calling functional directly considered dangerous").
import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(0)
block_size, n_embd, n_head, vocab_size, dropout = 16, 32, 4, 27, 0.2
data = torch.tensor([(i * 7 + i // 3) % vocab_size for i in range(6000)])
train_data, val_data = data[:5000], data[5000:]


def get_batch(split):
    d = train_data if split == 'train' else val_data
    ix = torch.randint(len(d) - block_size, (16,))
    return torch.stack([d[i:i + block_size] for i in ix]), torch.stack([d[i + 1:i + 1 + block_size] for i in ix])


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.resid_dropout = nn.Dropout(dropout)
        self.dropout = dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(n_embd, dim=2)
        q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=self.dropout, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.ln = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention()
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        x = x + self.attn(self.ln(x))
        logits = self.lm_head(x)
        loss = F.cross_entropy(logits.view(-1, vocab_size), targets.view(-1)) if targets is not None else None
        return logits, loss


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(10)
        for k in range(10):
            X, Y = get_batch(split)
            _, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


model = GPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
for iter_num in range(120):
    if iter_num % 40 == 0:
        print(iter_num, estimate_loss())
    X, Y = get_batch('train')
    _, loss = model(X, Y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
