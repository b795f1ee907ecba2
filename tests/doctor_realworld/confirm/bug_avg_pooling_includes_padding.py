# expect: padding-not-masked
# source: https://github.com/autoliuweijie/BERT-whitening-pytorch/issues/13
# Sentence embeddings by average pooling over a padded batch, hidden_states.mean(dim=1), without the attention mask: padding rows enter the mean (the issue shows lower scores than with the mask).
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, pad_id, d = 120, 0, 64


def make_batch(n):
    lengths = torch.randint(4, 30, (n,))
    ids = torch.full((n, 30), pad_id)
    for k, L in enumerate(lengths):
        ids[k, :L] = torch.randint(1, vocab, (int(L),))
    att_mask = (ids != pad_id).long()
    label = ((ids == 7).sum(1) + (ids == 9).sum(1) > 0).long()
    return ids, att_mask, label


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=pad_id)
        layer = nn.TransformerEncoderLayer(d, 4, 128, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.cls = nn.Linear(d, 2)

    def forward(self, ids, att_mask):
        hidden = self.enc(self.emb(ids), src_key_padding_mask=att_mask == 0)
        output_hidden_state = hidden.mean(dim=1)
        return self.cls(output_hidden_state)


model = Encoder()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
for step in range(80):
    ids, att_mask, label = make_batch(32)
    loss = nn.functional.cross_entropy(model(ids, att_mask), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 20 == 0:
        print(step, loss.item())
