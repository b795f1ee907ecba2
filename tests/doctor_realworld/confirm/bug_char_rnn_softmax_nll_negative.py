# expect: softmax-before-cross-entropy
# source: https://github.com/pytorch/pytorch/issues/2623
# The char-RNN name-classification tutorial adapted with self.softmax = nn.Softmax() in place of LogSoftmax, trained with NLLLoss and a gradient clip: the loss goes negative.
import random
import string

import torch
import torch.nn as nn

random.seed(0)
torch.manual_seed(0)
all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
all_categories = ['English', 'French', 'Italian', 'Polish']
suffix = {'English': 'son', 'French': 'eau', 'Italian': 'ini', 'Polish': 'ski'}


def randomTrainingExample():
    category = random.choice(all_categories)
    line = ''.join(random.choice(string.ascii_lowercase) for _ in range(random.randint(2, 5))) + suffix[category]
    line_tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        line_tensor[li][0][all_letters.find(letter)] = 1
    return category, line, torch.tensor([all_categories.index(category)]), line_tensor


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.Softmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.i2o(combined)
        output = self.softmax(output)
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
    torch.nn.utils.clip_grad_norm_(rnn.parameters(), 0.25)
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item()


current_loss = 0
for iter in range(1, 1501):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    output, loss = train(category_tensor, line_tensor)
    current_loss += loss
    if iter % 500 == 0:
        print(iter, current_loss / 500)
        current_loss = 0
