# expect: none
# source: https://pytorch.org/tutorials/intermediate/char_rnn_classification_tutorial.html
# The char-RNN name-classification tutorial as published: i2h / i2o Linear cells, LogSoftmax output, NLLLoss, one name at a time, parameters updated by hand at learning_rate = 0.005.
import random
import string

import torch
import torch.nn as nn

random.seed(1)
torch.manual_seed(1)
all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
all_categories = ['Dutch', 'Greek', 'Japanese', 'Scottish']
suffix = {'Dutch': 'stra', 'Greek': 'opoulos', 'Japanese': 'moto', 'Scottish': 'mac'}


def randomTrainingExample():
    category = random.choice(all_categories)
    line = ''.join(random.choice(string.ascii_lowercase) for _ in range(random.randint(2, 5))) + suffix[category]
    line_tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        line_tensor[li][0][all_letters.find(letter)] = 1
    return torch.tensor([all_categories.index(category)], dtype=torch.long), line_tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.softmax(self.i2o(combined))
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


rnn = RNN(n_letters, 128, len(all_categories))
criterion = nn.NLLLoss()
learning_rate = 0.005


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item()


current_loss = 0
for iter in range(1, 2001):
    category_tensor, line_tensor = randomTrainingExample()
    output, loss = train(category_tensor, line_tensor)
    current_loss += loss
    if iter % 500 == 0:
        print(iter, current_loss / 500)
        current_loss = 0
