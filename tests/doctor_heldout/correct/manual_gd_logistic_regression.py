# expect: none
# Logistic regression written by hand: raw tensors with requires_grad, full-batch gradient
# descent for 40 steps, updates under torch.no_grad() and grads zeroed in place each step.
import torch
from sklearn.datasets import load_breast_cancer

torch.manual_seed(0)
torch.set_num_threads(1)

data = load_breast_cancer()
X = torch.tensor(data.data, dtype=torch.float32)
X = (X - X.mean(0)) / X.std(0)
y = torch.tensor(data.target, dtype=torch.float32)

w = torch.zeros(X.shape[1], requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.5

for step in range(40):
    logits = X @ w + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
    if step % 10 == 0 or step == 39:
        acc = ((logits > 0).float() == y).float().mean().item()
        print(f"step {step:2d}: loss {loss.item():.4f}  train acc {acc:.3f}")
