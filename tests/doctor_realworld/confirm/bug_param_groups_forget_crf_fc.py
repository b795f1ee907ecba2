# expect: params-not-in-optimizer
# source: https://github.com/zjunlp/HVPNeT/issues/5
# train.py builds the optimizer from hand-made parameter groups (encoder with one lr, adapter with another); the groups for the tagging head (crf / fc) are built but never appended, so the head is never trained.
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, num_labels = 100, 5


class NERModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = nn.Sequential(nn.Embedding(vocab, 64), nn.Linear(64, 64), nn.Tanh())
        self.adapter = nn.Linear(64, 64)
        self.fc = nn.Linear(64, num_labels)
        self.transitions = nn.Parameter(torch.zeros(num_labels, num_labels))  # "crf"

    def forward(self, tokens):
        h = self.bert(tokens)
        return self.fc(h + torch.relu(self.adapter(h)))


model = NERModel()
parameters = []
params = {'lr': 3e-4, 'weight_decay': 1e-2, 'params': [p for n, p in model.named_parameters() if 'bert' in n]}
parameters.append(params)
params = {'lr': 1e-3, 'weight_decay': 1e-2, 'params': [p for n, p in model.named_parameters() if 'adapter' in n]}
parameters.append(params)
params = {'lr': 5e-2, 'weight_decay': 1e-2, 'params': [p for n, p in model.named_parameters() if 'fc' in n or 'transitions' in n]}
optimizer = torch.optim.AdamW(parameters)

tokens = torch.randint(0, vocab, (800, 20))
tags = tokens % num_labels
for epoch in range(4):
    for i in range(0, 800, 32):
        logits = model(tokens[i:i + 32])
        loss = nn.functional.cross_entropy(logits.reshape(-1, num_labels), tags[i:i + 32].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
