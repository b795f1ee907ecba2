# expect: grad-none
# source: https://github.com/queenie88/A-GCN/issues/4
# Attention-GCN for multi-label images: the adjacency is computed from two learned projections (W_theta, W_phi) and then .detach()ed, so those two weight matrices never get a gradient.
import torch
import torch.nn as nn

torch.manual_seed(0)
num_classes, in_channel, feat = 12, 32, 64


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) * 0.1)

    def forward(self, input, adj):
        return adj @ (input @ self.weight)


class AGCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(100, feat), nn.ReLU())
        self.W_theta = nn.Linear(in_channel, 16, bias=False)
        self.W_phi = nn.Linear(in_channel, 16, bias=False)
        self.gc1 = GraphConvolution(in_channel, 48)
        self.gc2 = GraphConvolution(48, feat)
        self.relu = nn.LeakyReLU(0.2)

    def gen_adj(self, inp):
        a = torch.softmax(self.W_theta(inp) @ self.W_phi(inp).t(), dim=1)
        return a.detach()

    def forward(self, x, inp):
        f = self.features(x)
        adj = self.gen_adj(inp)
        w = self.gc2(self.relu(self.gc1(inp, adj)), adj)
        return f @ w.t()


inp = torch.randn(num_classes, in_channel)  # label word embeddings
X = torch.randn(640, 100)
Y = (X[:, :num_classes] > 0.5).float()
model = AGCN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.MultiLabelSoftMarginLoss()
for epoch in range(6):
    for i in range(0, 640, 32):
        loss = criterion(model(X[i:i + 32], inp), Y[i:i + 32])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
