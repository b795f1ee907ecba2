# expect: sigmoid-before-bce-with-logits
# source: https://github.com/aidotse/LeakPro/issues/229
# Tabular (Adult income) handler: the target model ends in a sigmoid, and the handler trains it with BCEWithLogitsLoss (redundant sigmoid).
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.default_rng(0)
n = 3000
age = rng.integers(17, 90, n)
hours = rng.integers(1, 99, n)
edu = rng.integers(1, 16, n)
onehots = rng.integers(0, 2, (n, 20))
income = ((edu > 10) & (hours > 35) | (age > 55)).astype(np.float32)
feats = np.column_stack([(age - 38) / 13, (hours - 40) / 12, (edu - 10) / 2.5, onehots]).astype(np.float32)
loader = DataLoader(TensorDataset(torch.tensor(feats), torch.tensor(income)), batch_size=128, shuffle=True)


class AdultNet(nn.Module):
    def __init__(self, input_size, hidden_size=64, num_classes=1):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.fc3 = nn.Linear(hidden_size, num_classes)
        self.relu = nn.ReLU()
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        return self.sigmoid(self.fc3(self.relu(self.fc2(self.relu(self.fc1(x))))))


class AdultInputHandler:
    def get_criterion(self):
        return nn.BCEWithLogitsLoss()

    def get_optimizer(self, model):
        return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def train(self, dataloader, model, epochs):
        criterion, optimizer = self.get_criterion(), self.get_optimizer(model)
        for epoch in range(epochs):
            train_loss, train_acc = 0.0, 0
            model.train()
            for inputs, labels in dataloader:
                optimizer.zero_grad()
                outputs = model(inputs).squeeze(-1)
                loss = criterion(outputs, labels)
                pred = outputs >= 0.5
                train_acc += pred.eq(labels.bool()).sum().item()
                loss.backward()
                optimizer.step()
                train_loss += loss.item()
            print(epoch, train_loss / len(dataloader), train_acc / n)


AdultInputHandler().train(loader, AdultNet(feats.shape[1]), epochs=4)
