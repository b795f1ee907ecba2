# expect: none
# source: https://github.com/aiaioo/DeepLearningBasicsTutorial
# The tutorial's "minimizing the loss": a 1x1 nn.Parameter, loss = w·w + 3, grad zeroed by hand and w.data moved against the gradient, repeated.
import torch

weight = torch.nn.Parameter(torch.Tensor([[2]]))
learning_rate = 0.01
for i in range(300):
    if weight.grad is not None:
        weight.grad.data.zero_()
    loss = torch.mm(weight, weight) + 3
    loss.backward()
    gradient = weight.grad
    weight.data = weight.data - learning_rate * gradient.data
print("Weight = " + str(weight.data[0, 0]), "Loss = " + str(loss.data[0, 0]))
