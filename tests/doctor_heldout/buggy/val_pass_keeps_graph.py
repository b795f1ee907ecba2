# expect: graph-retained
# The validation pass runs with autograd on (no torch.no_grad) and sums the loss *tensors* and
# keeps the logits tensors for later metrics, so every validation batch's graph and saved
# activations stay alive until the end of the pass (and the peak memory grows with the val set).
import resource
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_num_threads(1)

# synthetic sensor regression: 256-dim signal -> 8 targets
W_true = torch.randn(256, 8) / 16
X = torch.randn(18000, 256)
Y = torch.tanh(X @ W_true) + 0.05 * torch.randn(18000, 8)
X_tr, Y_tr, X_va, Y_va = X[:6000], Y[:6000], X[6000:], Y[6000:]

net = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(), nn.Linear(1024, 8))
opt = torch.optim.AdamW(net.parameters(), lr=5e-4)


def validate():
    val_loss = 0
    outputs = []
    for i in range(0, len(X_va), 200):
        pred = net(X_va[i:i + 200])
        val_loss += F.mse_loss(pred, Y_va[i:i + 200], reduction="sum")
        outputs.append(pred)
    preds = torch.cat(outputs)
    return val_loss / Y_va.numel(), (preds - Y_va).abs().max()


for epoch in range(2):
    order = torch.randperm(len(X_tr))
    for i in range(0, len(X_tr), 100):
        b = order[i:i + 100]
        loss = F.mse_loss(net(X_tr[b]), Y_tr[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
    vl, worst = validate()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"epoch {epoch}: train loss {loss.item():.4f}  val loss {vl:.4f}  worst err {worst:.3f}  peak RSS {rss_mb:.0f} MB")
