# expect: none
# source: https://github.com/pytorch/examples/blob/main/vae/main.py
# The official VAE example: 784-400-20 encoder, reparameterize, sigmoid decoder, loss = binary_cross_entropy(recon, x, reduction='sum') + KLD, Adam(1e-3), evaluation under eval() and no_grad().
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(1)
strokes = (torch.rand(10, 784) > 0.7).float()
labels = torch.randint(0, 10, (1500,))
images = (strokes[labels] * (0.7 + 0.3 * torch.rand(1500, 784))).clamp(0, 1)
train_loader = DataLoader(TensorDataset(images[:1200]), batch_size=128, shuffle=True)
test_loader = DataLoader(TensorDataset(images[1200:]), batch_size=128)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


model = VAE()
optimizer = optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(1, 4):
    model.train()
    train_loss = 0
    for (data,) in train_loader:
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for (data,) in test_loader:
            recon, mu, logvar = model(data)
            test_loss += loss_function(recon, data, mu, logvar).item()
    print(epoch, train_loss / 1200, test_loss / 300)
