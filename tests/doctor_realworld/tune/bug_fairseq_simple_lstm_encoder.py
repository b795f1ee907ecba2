# expect: lstm-batch-first (known miss)
# source: https://github.com/facebookresearch/fairseq/issues/2449
# The "Simple LSTM" tutorial encoder embeds src_tokens of shape (bsz, src_len) and runs an nn.LSTM without batch_first=True, then takes the final hidden state as the sentence summary.
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, pad = 50, 0


class SimpleLSTMEncoder(nn.Module):
    def __init__(self, embed_dim=32, hidden_dim=64, dropout=0.1):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, embed_dim, padding_idx=pad)
        self.dropout = nn.Dropout(p=dropout)
        self.lstm = nn.LSTM(input_size=embed_dim, hidden_size=hidden_dim, num_layers=1, bidirectional=False)

    def forward(self, src_tokens):
        x = self.dropout(self.embed_tokens(src_tokens))   # (bsz, src_len, embed_dim)
        _outputs, (final_hidden, _final_cell) = self.lstm(x)
        return final_hidden.squeeze(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = SimpleLSTMEncoder()
        self.out = nn.Linear(64, 4)

    def forward(self, src_tokens):
        return self.out(self.encoder(src_tokens))


src = torch.randint(1, vocab, (1500, 14))
tgt = src[:, 0] % 4
model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
for epoch in range(3):
    for i in range(0, 1500, 50):
        loss = nn.functional.cross_entropy(model(src[i:i + 50]), tgt[i:i + 50])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
