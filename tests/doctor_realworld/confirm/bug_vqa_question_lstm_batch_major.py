# expect: lstm-batch-first (known miss)
# source: https://github.com/Cadene/vqa.pytorch/issues/40
# VQA question encoder: embedded questions of shape (batch, seq_len, emb) go into an nn.LSTM created without batch_first=True.
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab_size, emb_size, hid, n_answers, seq_len = 200, 32, 64, 8, 10
questions = torch.randint(1, vocab_size, (1200, seq_len))
image_feats = torch.randn(1200, 64)
answers = (questions[:, 0] % n_answers)


class QuestionEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size)
        self.rnn = nn.LSTM(emb_size, hid, num_layers=1)

    def forward(self, input):
        x = self.embedding(input)            # (batch, seq_len, emb)
        output, (h, c) = self.rnn(x)
        return output[:, -1]                 # "last time step"


class VQAModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.seq2vec = QuestionEncoder()
        self.fusion = nn.Linear(hid + 64, 128)
        self.classif = nn.Linear(128, n_answers)

    def forward(self, v, q):
        x_q = self.seq2vec(q)
        return self.classif(torch.relu(self.fusion(torch.cat([x_q, v], 1))))


model = VQAModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(3):
    for i in range(0, 1200, 64):
        out = model(image_feats[i:i + 64], questions[i:i + 64])
        loss = criterion(out, answers[i:i + 64])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
