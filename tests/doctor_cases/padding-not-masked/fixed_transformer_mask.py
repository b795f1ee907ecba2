# A small Transformer encoder over right-padded token ids: the padding is hidden from attention
# with src_key_padding_mask and left out of the masked mean pooling.
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pad_sequence

torch.manual_seed(0)
VOCAB = 30
sentences = [torch.randint(1, VOCAB, (int(torch.randint(3, 25, ())),)) for _ in range(480)]
labels = torch.tensor([int((s == 3).any()) for s in sentences])


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=0)
        self.pos = nn.Embedding(32, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.fc = nn.Linear(32, 2)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        pad = tokens == 0
        h = self.embed(tokens) + self.pos(torch.arange(tokens.shape[1]))
        h = self.encoder(h, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).float()
        return self.fc((h * keep).sum(1) / keep.sum(1).clamp(min=1))


model = Encoder()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(2):
    model.train()
    for i in range(0, len(sentences), 32):
        batch = pad_sequence(sentences[i:i + 32], batch_first=True)
        loss = F.cross_entropy(model(batch), labels[i:i + 32])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
