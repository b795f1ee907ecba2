# Character-level next-symbol model unrolled by hand: an LSTMCell is called once per time step
# (30 calls of the model per sequence batch) and one backward() goes through all of them. The
# step's graphs are alive together on purpose until that backward; the first batch's scores are kept
# for the epoch's report, after the backward() that went through them.
import torch
from torch import nn

torch.manual_seed(11)
VOCAB, STEPS = 12, 30
# Sequences that count up modulo VOCAB from a random start: the next symbol is predictable.
starts = torch.randint(0, VOCAB, (512, 1))
sequences = (starts + torch.arange(STEPS + 1)) % VOCAB


class Stepper(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.cell = nn.LSTMCell(16, 32)
        self.head = nn.Linear(32, VOCAB)

    def forward(self, symbol, state):
        h, c = self.cell(self.embed(symbol), state)
        return self.head(h), (h, c)


model = Stepper()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(3):
    first_scores = None
    for batch in sequences[torch.randperm(len(sequences))].split(64):
        state = (torch.zeros(len(batch), 32), torch.zeros(len(batch), 32))
        loss, scores = 0.0, []
        for t in range(STEPS):
            logits, state = model(batch[:, t], state)
            scores.append(logits)
            loss = loss + loss_fn(logits, batch[:, t + 1])
        opt.zero_grad()
        (loss / STEPS).backward()
        opt.step()
        if first_scores is None:
            first_scores, first_batch = scores, batch
    hits = sum(int(s.argmax(1)[0] == first_batch[0, t + 1]) for t, s in enumerate(first_scores))
    print(f"epoch {epoch}: last loss {loss.item() / STEPS:.3f}, first sequence {hits} steps right")
