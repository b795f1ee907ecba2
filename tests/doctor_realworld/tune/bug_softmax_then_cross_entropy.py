# expect: softmax-before-cross-entropy
# source: https://openillumi.com/en/en-pytorch-crossentropy-logits-nllloss-mechanism
# A classifier whose forward ends in softmax, trained with nn.CrossEntropyLoss, which applies log-softmax again.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
input_data = torch.randn(600, 12)
target_labels = (input_data[:, :5].argmax(dim=1))


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 48)
        self.fc2 = nn.Linear(48, 5)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


model = Classifier()
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(150):
    output = model(input_data)
    loss = loss_fn(output, target_labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
