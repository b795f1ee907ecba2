# expect: sigmoid-before-bce-with-logits
# source: https://github.com/yudi-mars/daisyRec/pull/15
# Recommender (matrix-factorisation style) whose prediction goes through torch.sigmoid before BCEWithLogitsLoss, which has a sigmoid of its own: "otherwise loss does not converge".
import torch
import torch.nn as nn

torch.manual_seed(0)
user_num, item_num, factor_num = 200, 300, 16
true_u, true_i = torch.randn(user_num, 4), torch.randn(item_num, 4)
users = torch.randint(0, user_num, (6000,))
items = torch.randint(0, item_num, (6000,))
labels = ((true_u[users] * true_i[items]).sum(1) > 0).float()


class PointMF(nn.Module):
    def __init__(self, user_num, item_num, factor_num):
        super(PointMF, self).__init__()
        self.embed_user = nn.Embedding(user_num, factor_num)
        self.embed_item = nn.Embedding(item_num, factor_num)
        nn.init.normal_(self.embed_user.weight, std=0.01)
        nn.init.normal_(self.embed_item.weight, std=0.01)
        self.loss_function = nn.BCEWithLogitsLoss()

    def forward(self, user, item):
        pred = (self.embed_user(user) * self.embed_item(item)).sum(dim=-1)
        return torch.sigmoid(pred)

    def calc_loss(self, user, item, label):
        return self.loss_function(self.forward(user, item), label)


model = PointMF(user_num, item_num, factor_num)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for epoch in range(6):
    perm = torch.randperm(6000)
    for i in range(0, 6000, 256):
        idx = perm[i:i + 256]
        loss = model.calc_loss(users[idx], items[idx], labels[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
