# expect: lstm-batch-first (known miss)
# source: https://discuss.pytorch.org/t/lstm-change-batch-first-true-loss-does-not-decrease/62364
# CRNN text recognizer: batch_first=True was switched on in the LSTM for deployment, but the conv features are still permuted to (width, batch, channels); the loss stops decreasing.
import torch
import torch.nn as nn

torch.manual_seed(0)
nclass = 6
T = 16


class BidirectionalLSTM(nn.Module):
    def __init__(self, nIn, nHidden, nOut):
        super(BidirectionalLSTM, self).__init__()
        self.rnn = nn.LSTM(nIn, nHidden, bidirectional=True, batch_first=True)
        self.embedding = nn.Linear(nHidden * 2, nOut)

    def forward(self, input):
        recurrent, _ = self.rnn(input)
        return self.embedding(recurrent)


class CRNN(nn.Module):
    def __init__(self, nc, nclass, nh):
        super(CRNN, self).__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(nc, 16, 3, 1, 1), nn.ReLU(True), nn.MaxPool2d(2, 2),
            nn.Conv2d(16, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.ReLU(True), nn.MaxPool2d((4, 1)),
        )
        self.rnn = BidirectionalLSTM(32 * 2, nh, nclass)

    def forward(self, input):
        conv = self.cnn(input)              # b, c, h, w
        b, c, h, w = conv.size()
        conv = conv.view(b, c * h, w)
        conv = conv.permute(2, 0, 1)        # [w, b, c]
        return self.rnn(conv)               # read as [b, w, c]


# synthetic "text lines": each of the T columns holds one glyph (a class-specific stripe pattern)
def make_batch(n):
    labels = torch.randint(0, nclass, (n, T))
    imgs = torch.zeros(n, 1, 16, 2 * T)
    for k in range(nclass):
        mask = (labels == k).float().repeat_interleave(2, dim=1)
        imgs[:, 0, 2 * k:2 * k + 3, :] += mask[:, None, :]
    return imgs + 0.1 * torch.randn_like(imgs), labels


crnn = CRNN(1, nclass, 32)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(crnn.parameters(), lr=1e-3)
for i in range(60):
    image, text = make_batch(16)
    preds = crnn(image)                     # (T, b, nclass) if batch_first were honoured...
    loss = criterion(preds.permute(1, 2, 0), text)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if i % 10 == 0:
        print(i, loss.item())
