# The same MLP with the hidden weights scaled by gain / sqrt(fan_in) (Kaiming init for tanh), so the
# tanh units start in their responsive range.
import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed(2147483647)
vocab, block, emb, hidden = 27, 3, 10, 200
X = torch.randint(0, vocab, (2000, block), generator=g)
Y = (X.sum(1) * 7) % vocab

C = torch.randn(vocab, emb, generator=g)
W1 = torch.randn(block * emb, hidden, generator=g) * (5 / 3) / (block * emb) ** 0.5
b1 = torch.randn(hidden, generator=g) * 0.01
W2 = torch.randn(hidden, vocab, generator=g) * 0.01
b2 = torch.zeros(vocab)
parameters = [C, W1, b1, W2, b2]
for p in parameters:
    p.requires_grad = True

for i in range(200):
    ix = torch.randint(0, X.shape[0], (32,), generator=g)
    h = torch.tanh(C[X[ix]].view(-1, block * emb) @ W1 + b1)
    loss = F.cross_entropy(h @ W2 + b2, Y[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 100 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
