# expect: none
# Bag-of-words classifier with a *deliberately frozen* embedding table ("pretrained" vectors,
# requires_grad=False and left out of the optimizer) and a padding-aware mean (mask-weighted).
import random
import torch
import torch.nn as nn
import torch.nn.functional as F

random.seed(1)
torch.manual_seed(1)
torch.set_num_threads(1)

VOCAB, DIM, PAD = 50, 24, 0
TOPIC_WORDS = [list(range(1 + 10 * k, 11 + 10 * k)) for k in range(3)]   # 3 topics, 10 words each
FILLER = list(range(31, VOCAB))


def sample_doc():
    topic = random.randrange(3)
    n = random.randint(3, 25)
    words = [random.choice(TOPIC_WORDS[topic]) if random.random() < 0.4 else random.choice(FILLER) for _ in range(n)]
    return words, topic


def batchify(docs):
    L = max(len(w) for w, _ in docs)
    toks = torch.full((len(docs), L), PAD)
    for i, (w, _) in enumerate(docs):
        toks[i, :len(w)] = torch.tensor(w)
    return toks, torch.tensor([t for _, t in docs])


pretrained = torch.randn(VOCAB, DIM)
pretrained[PAD] = 0


class BowClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding.from_pretrained(pretrained, freeze=True, padding_idx=PAD)
        self.mlp = nn.Sequential(nn.Linear(DIM, 32), nn.ReLU(), nn.Linear(32, 3))

    def forward(self, toks):
        mask = (toks != PAD).unsqueeze(-1).float()
        pooled = (self.emb(toks) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.mlp(pooled)


train_docs = [sample_doc() for _ in range(1500)]
test_x, test_y = batchify([sample_doc() for _ in range(400)])
bow = BowClassifier()
opt = torch.optim.Adam([p for p in bow.parameters() if p.requires_grad], lr=3e-3)

for epoch in range(6):
    random.shuffle(train_docs)
    for i in range(0, len(train_docs), 50):
        xb, yb = batchify(train_docs[i:i + 50])
        loss = F.cross_entropy(bow(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        acc = (bow(test_x).argmax(1) == test_y).float().mean().item()
    print(f"epoch {epoch}: loss {loss.item():.3f}  test acc {acc:.3f}")
