# expect: padding-not-masked
# Review-like token sequences of length 4..60 are right-padded to 60 and the classifier reads
# the GRU state at position -1, i.e. after up to 56 padding steps, instead of at each sequence's
# real last token (no lengths, no packing, no mask).
import random
import torch
import torch.nn as nn
import torch.nn.functional as F

random.seed(0)
torch.manual_seed(0)
torch.set_num_threads(1)

PAD, VOCAB, MAXLEN = 0, 30, 60
POS, NEG = set(range(1, 8)), set(range(8, 15))   # "positive" and "negative" words; the rest neutral


def make_example():
    n = random.randint(4, MAXLEN)
    toks = [random.randint(1, VOCAB - 1) for _ in range(n)]
    score = sum(t in POS for t in toks) - sum(t in NEG for t in toks)
    if score == 0:
        toks[-1] = random.choice(sorted(POS))
        score = 1
    return toks, int(score > 0)


def collate(examples):
    seqs = [torch.tensor(t) for t, _ in examples]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=PAD)
    padded = F.pad(padded, (0, MAXLEN - padded.size(1)), value=PAD)
    return padded, torch.tensor([lab for _, lab in examples])


train = [make_example() for _ in range(2000)]
test = [make_example() for _ in range(500)]


class ReviewGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 16, padding_idx=PAD)
        self.rnn = nn.GRU(16, 32, batch_first=True)
        self.out = nn.Linear(32, 2)

    def forward(self, tokens):
        states, _ = self.rnn(self.emb(tokens))
        return self.out(states[:, -1])


gru_clf = ReviewGRU()
opt = torch.optim.Adam(gru_clf.parameters(), lr=3e-3)
x_test, y_test = collate(test)

for epoch in range(5):
    random.shuffle(train)
    gru_clf.train()
    total = 0.0
    for i in range(0, len(train), 50):
        x, y = collate(train[i:i + 50])
        loss = F.cross_entropy(gru_clf(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    gru_clf.eval()
    with torch.no_grad():
        acc = (gru_clf(x_test).argmax(1) == y_test).float().mean().item()
    print(f"epoch {epoch + 1}: loss {total / 40:.3f}  test acc {acc:.3f}")
