"""Exports a trained model: torch.export (strict and not), TorchScript of loss modules, ONNX (both exporters),
run back through onnxruntime; argv[1] is the number of training steps before it (10: one the doctor samples)."""
import os
import sys
import tempfile

import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.n, self.b = nn.Linear(8, 16), nn.LayerNorm(16), nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(F.relu(self.n(self.a(x))))


class Smoothed(nn.Module):
    """A loss module of the user's, calling the library's losses."""

    def __init__(self) -> None:
        super().__init__()
        self.ce = nn.CrossEntropyLoss(label_smoothing=0.1)

    def forward(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.ce(logits, y) + 0.1 * F.nll_loss(F.log_softmax(logits, 1), y)


net, criterion = Net(), Smoothed()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
x, y = torch.randn(64, 8), torch.randint(0, 3, (64,))
for step in range(int(sys.argv[1])):
    opt.zero_grad()
    loss = criterion(net(x), y)
    loss.backward()
    opt.step()
print("loss", round(loss.item(), 4))
scripted = torch.jit.script(criterion)
plain = torch.jit.script(nn.CrossEntropyLoss())
v, w = torch.randn(16, 8), torch.randint(0, 3, (16,))  # new rows: the model is only checked on them
with torch.no_grad():
    logits = net(v)
    print("scripted", torch.allclose(scripted(logits, w), criterion(logits, w)),
          torch.allclose(plain(logits, w), F.cross_entropy(logits, w)))
net.eval()
for strict in (True, False):
    program = torch.export.export(net, (v[:4],), strict=strict)
    ops = [n.target.__name__ for n in program.graph.nodes if n.op == "call_function"]
    print("export", strict, ops, torch.allclose(program.module()(v[:4]), net(v[:4])))
if len(sys.argv) > 2:
    import onnxruntime

    folder = tempfile.mkdtemp()
    for dynamo in (False, True):
        path = os.path.join(folder, f"net{dynamo}.onnx")
        torch.onnx.export(net, (v[:4],), path, dynamo=dynamo, input_names=["x"], output_names=["y"])
        out = onnxruntime.InferenceSession(path).run(None, {"x": v[:4].numpy()})[0]
        print("onnx", dynamo, bool(abs(out - net(v[:4]).detach().numpy()).max() < 1e-4))
