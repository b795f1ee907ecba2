# expect: lr-too-high
# source: https://github.com/OpenNMT/OpenNMT-tf/issues/744
# A small GPT-style language model whose config sets learning_rate: 2 (the model's default is 2.5e-4): "Model diverged with loss = NaN".
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
config = {"vocab_size": 64, "d_model": 64, "num_heads": 4, "num_layers": 2, "learning_rate": 2, "batch_size": 16, "seq_len": 24}
corpus = torch.tensor([(i * 5 + (i // 7)) % config["vocab_size"] for i in range(20000)])


class GPT2Small(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab_size"], c["d_model"])
        self.pos = nn.Embedding(c["seq_len"], c["d_model"])
        layer = nn.TransformerEncoderLayer(c["d_model"], c["num_heads"], 4 * c["d_model"], dropout=0.1, batch_first=True, norm_first=True)
        self.decoder = nn.TransformerEncoder(layer, c["num_layers"])
        self.out = nn.Linear(c["d_model"], c["vocab_size"])
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(c["seq_len"]))

    def forward(self, ids):
        x = self.embed(ids) * math.sqrt(self.embed.embedding_dim) + self.pos(torch.arange(ids.size(1)))
        return self.out(self.decoder(x, mask=self.mask, is_causal=True))


model = GPT2Small(config)
optimizer = torch.optim.Adam(model.parameters(), lr=config["learning_rate"], betas=(0.9, 0.98))
for step in range(60):
    starts = torch.randint(0, len(corpus) - config["seq_len"] - 1, (config["batch_size"],))
    ids = torch.stack([corpus[s:s + config["seq_len"] + 1] for s in starts])
    logits = model(ids[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, config["vocab_size"]), ids[:, 1:].reshape(-1))
    if torch.isnan(loss):
        raise RuntimeError("Model diverged with loss = NaN.")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(step, loss.item())
