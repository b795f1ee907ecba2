# expect: none
# source: https://github.com/pytorch/examples/blob/main/word_language_model/main.py
# The official word-level LSTM language model: plain SGD written by hand at lr=20, clip_grad_norm_(0.25), hidden state repackaged (detached) between bptt chunks, evaluation under eval() and no_grad().
import math

import torch
import torch.nn as nn

torch.manual_seed(1111)
ntokens, emsize, nhid, bptt, batch_size = 60, 32, 64, 20, 10
lr, clip = 20, 0.25
# a tiny "corpus" with structure: word k is usually followed by word (k * 3 + 1) % ntokens
words = [0]
g = torch.Generator().manual_seed(0)
for _ in range(12000):
    words.append((words[-1] * 3 + 1) % ntokens if torch.rand(1, generator=g) < 0.8 else int(torch.randint(ntokens, (1,), generator=g)))
ids = torch.tensor(words)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data[:nbatch * bsz].view(bsz, -1).t().contiguous()


train_data, val_data = batchify(ids[:10000], batch_size), batchify(ids[10000:], batch_size)


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.2)
        self.encoder = nn.Embedding(ntokens, emsize)
        self.rnn = nn.LSTM(emsize, nhid, 2, dropout=0.2)
        self.decoder = nn.Linear(nhid, ntokens)
        self.encoder.weight.data.uniform_(-0.1, 0.1)
        self.decoder.weight.data.uniform_(-0.1, 0.1)
        self.decoder.bias.data.zero_()

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        return self.decoder(self.drop(output)).view(-1, ntokens), hidden

    def init_hidden(self, bsz):
        return (torch.zeros(2, bsz, nhid), torch.zeros(2, bsz, nhid))


def repackage_hidden(h):
    return tuple(v.detach() for v in h)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


model = RNNModel()
criterion = nn.NLLLoss()


def evaluate(data_source):
    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            total_loss += len(data) * criterion(torch.log_softmax(output, 1), targets).item()
    return total_loss / (len(data_source) - 1)


for epoch in range(1, 3):
    model.train()
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(torch.log_softmax(output, 1), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
    val_loss = evaluate(val_data)
    print('epoch', epoch, 'valid ppl', math.exp(val_loss))
