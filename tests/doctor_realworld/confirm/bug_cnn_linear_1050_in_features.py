# expect: shape-mismatch
# source: https://androidkt.com/fix-runtimeerror-mat1-and-mat2-shapes-cannot-be-multiplied/
# Two conv blocks on 28x28 digits flatten to 32*7*7 = 1568 features, but the output layer was declared nn.Linear(1050, 10): "mat1 and mat2 shapes cannot be multiplied".
import torch
import torch.nn as nn


class CNN(nn.Module):
    def __init__(self):
        super(CNN, self).__init__()
        self.conv1 = nn.Sequential(
            nn.Conv2d(in_channels=1, out_channels=16, kernel_size=5, stride=1, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2))
        self.conv2 = nn.Sequential(nn.Conv2d(16, 32, 5, 1, 2), nn.ReLU(), nn.MaxPool2d(2))
        self.out = nn.Linear(1050, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        x = x.view(x.size(0), -1)
        output = self.out(x)
        return output, x


cnn = CNN()
optimizer = torch.optim.Adam(cnn.parameters(), lr=0.01)
loss_func = nn.CrossEntropyLoss()
b_x = torch.rand(2, 1, 28, 28)
b_y = torch.tensor([3, 7])
for step in range(5):
    output = cnn(b_x)[0]
    loss = loss_func(output, b_y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
