# expect: softmax-before-cross-entropy
# Notebook exported to a script (cells kept as comments): softmax in the model and CrossEntropyLoss.
# In[1]:
import torch
import torch.nn as nn
torch.manual_seed(42)

# In[2]:
X = torch.randn(300, 10)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()

# In[3]:
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3), nn.Softmax(dim=1))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

# In[4]:
for epoch in range(15):
    optimizer.zero_grad()
    loss = loss_fn(model(X), y)
    loss.backward()
    optimizer.step()
loss.item()
