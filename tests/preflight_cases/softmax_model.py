# A model that ends in Softmax: with CrossEntropyLoss it cannot drive the loss near zero.
from torch import nn


class SoftmaxNet(nn.Module):
    def __init__(self, input_shape, num_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, num_classes),
                                 nn.Softmax(dim=1))

    def forward(self, x):
        return self.net(x)


class FixedNet(nn.Module):
    def __init__(self, input_shape, num_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, num_classes))

    def forward(self, x):
        return self.net(x)


class DetachedNet(nn.Module):
    """The features are cut from the graph and the head sees a constant: nothing can be learned."""

    def __init__(self, input_shape, num_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU())
        self.head = nn.Linear(64, num_classes)

    def forward(self, x):
        h = self.body(x).detach()
        return self.head(h.mean(dim=0, keepdim=True).expand_as(h))
