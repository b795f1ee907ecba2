# expect: script-error
# source: https://php.bkmy88.com/faq/1835025.html
# Multi-class blobs: the loss is computed on softmax(...).argmax(...) cast to float, so the graph is cut and loss.backward() fails with "element 0 of tensors does not require grad".
import torch
from torch import nn

torch.manual_seed(42)
NUM_CLASSES = 4
centers = torch.tensor([[-6.0, 6.0], [6.0, 6.0], [-6.0, -6.0], [6.0, -6.0]])
y_blob = torch.randint(0, NUM_CLASSES, (1000,))
X_blob = centers[y_blob] + 1.5 * torch.randn(1000, 2)
X_train, X_test = X_blob[:800], X_blob[800:]
y_train, y_test = y_blob[:800].type(torch.float32), y_blob[800:].type(torch.float32)


class BlobModel(nn.Module):
    def __init__(self, input_features, output_features, hidden_units=8):
        super().__init__()
        self.linear_layer_stack = nn.Sequential(
            nn.Linear(input_features, hidden_units), nn.ReLU(),
            nn.Linear(hidden_units, hidden_units), nn.ReLU(),
            nn.Linear(hidden_units, output_features),
        )

    def forward(self, x):
        return self.linear_layer_stack(x)


def accuracy(y_true, y_pred):
    return (torch.eq(y_true, y_pred).sum().item() / len(y_pred)) * 100


model = BlobModel(2, NUM_CLASSES)
loss_fn = nn.CrossEntropyLoss()
optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
Epochs = 100
for epoch in range(Epochs):
    model.train()
    train_logits = model(X_train)
    train_preds_probs = torch.softmax(train_logits, dim=1).argmax(dim=1).type(torch.float32)
    loss = loss_fn(train_preds_probs, y_train)
    train_accu = accuracy(y_train, train_preds_probs)
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    if epoch % 10 == 0:
        print(f"Epoch {epoch} | loss {loss:.4f} | acc {train_accu:.2f}%")
