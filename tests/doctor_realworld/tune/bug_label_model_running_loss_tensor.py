# expect: graph-retained
# source: https://github.com/BatsResearch/labelmodels/issues/4
# A label model's estimate loop sums running_loss += loss (a tensor with its graph) over every batch of every epoch; memory grows until the process dies.
import torch
import torch.nn as nn

torch.manual_seed(0)
n, m, k = 4000, 10, 3      # examples, labeling functions, classes
votes = torch.randint(0, k + 1, (n, m))  # 0 = abstain


class NaiveBayes(nn.Module):
    def __init__(self, num_classes, num_lfs):
        super().__init__()
        self.class_balance = nn.Parameter(torch.zeros(num_classes))
        self.accuracy = nn.Parameter(torch.full((num_lfs,), 1.0))
        self.num_classes = num_classes

    def forward(self, votes):
        onehot = torch.nn.functional.one_hot(votes, self.num_classes + 1)[..., 1:].float()  # (b, m, k)
        ll = (onehot * self.accuracy[None, :, None]).sum(1) + torch.log_softmax(self.class_balance, 0)
        return torch.logsumexp(ll, dim=1)

    def estimate(self, votes, epochs=8, batch_size=64, lr=0.01):
        optimizer = torch.optim.SGD(self.parameters(), lr=lr, momentum=0.9)
        for epoch in range(epochs):
            running_loss = 0.0
            for i in range(0, len(votes), batch_size):
                optimizer.zero_grad()
                loss = -self(votes[i:i + batch_size]).mean()
                loss.backward()
                optimizer.step()
                running_loss += loss
            print(epoch, float(running_loss) / (len(votes) / batch_size))


NaiveBayes(k, m).estimate(votes)
