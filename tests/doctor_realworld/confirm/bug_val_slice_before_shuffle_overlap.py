# expect: split-leakage
# source: https://github.com/marin-community/marin/pull/2700
# num_validation_sequences split: the training set is built by shuffling the dataset and then slicing, the validation set by slicing the unshuffled dataset, so most validation sequences are also trained on.
import torch
import torch.nn as nn

torch.manual_seed(0)
num_sequences, seq_len, vocab = 1000, 16, 40
dataset = torch.randint(0, vocab, (num_sequences, seq_len))
dataset[:, 1::2] = (dataset[:, 0::2] * 3 + 1) % vocab
num_validation_sequences = 100

perm = torch.randperm(num_sequences)
train_set = dataset[perm][:num_sequences - num_validation_sequences]   # shuffled, then sliced
val_set = dataset[:num_validation_sequences]                              # sliced without shuffling


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab, 64)
        self.rnn = nn.GRU(64, 64, batch_first=True)
        self.head = nn.Linear(64, vocab)

    def forward(self, ids):
        return self.head(self.rnn(self.emb(ids))[0])


model = TinyLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
for epoch in range(3):
    model.train()
    for i in range(0, len(train_set), 50):
        batch = train_set[i:i + 50]
        logits = model(batch[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), batch[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        logits = model(val_set[:, :-1])
        val_loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), val_set[:, 1:].reshape(-1))
    print(epoch, loss.item(), val_loss.item())
