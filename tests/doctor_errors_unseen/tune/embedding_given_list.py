# source: https://github.com/isayev/ReLeaSE/issues/38
# original: TypeError: embedding(): argument 'indices' (position 2) must be Tensor, not list
# half: tune
# cause mentions: torch.tensor
import torch
from torch import nn

torch.manual_seed(0)
vocab = {c: i for i, c in enumerate("CNO()=#123")}
emb = nn.Embedding(len(vocab), 16)
rnn = nn.GRU(16, 32, batch_first=True)
smiles = "CC(=O)NC1"
tokens = [vocab[c] for c in smiles]
x = emb(tokens)  # <- fails
out, h = rnn(x.unsqueeze(0))
