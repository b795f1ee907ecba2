# An LSTM text classifier: token ids (batch, time) -> embeddings (batch, time, emb) -> LSTM,
# with batch_first=True so the LSTM reads (batch, time, emb) as it is given.
import torch
from torch import nn

torch.manual_seed(0)
VOCAB, T, N = 20, 12, 1024
tokens = torch.randint(1, VOCAB, (N, T))
labels = (tokens == 3).any(1).long()  # does the sentence contain token 3?


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.lstm = nn.LSTM(16, 32, batch_first=True)
        self.head = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(x))
        return self.head(out[:, -1])


model = Classifier()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(3):
    for i in range(0, N, 64):
        loss = loss_fn(model(tokens[i:i + 64]), labels[i:i + 64])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")
