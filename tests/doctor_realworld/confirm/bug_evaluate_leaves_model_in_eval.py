# expect: train-mode-missing
# source: https://github.com/shubhamagarwal92/mmd/issues/14
# train.py's evaluate() calls model.eval() to disable dropout, but nothing calls model.train() afterwards, so after the first validation the model trains with dropout off.
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, emb, hid = 60, 32, 64
src = torch.randint(1, vocab, (1600, 12))
tgt = (src.sum(1) % 5)
train_src, train_tgt, val_src, val_tgt = src[:1400], tgt[:1400], src[1400:], tgt[1400:]


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.dropout = nn.Dropout(0.3)
        self.rnn = nn.GRU(emb, hid, batch_first=True)
        self.out = nn.Linear(hid, 5)

    def forward(self, x):
        _, h = self.rnn(self.dropout(self.embedding(x)))
        return self.out(self.dropout(h[-1]))


def evaluate(model, criterion):
    model.eval()
    with torch.no_grad():
        return criterion(model(val_src), val_tgt).item()


model = Encoder()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
model.train()
step = 0
for epoch in range(5):
    for i in range(0, 1400, 50):
        loss = criterion(model(train_src[i:i + 50]), train_tgt[i:i + 50])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        if step % 10 == 0:
            print(step, loss.item(), evaluate(model, criterion))
