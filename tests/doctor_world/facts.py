"""Prints what a script sees of its world; the same under `python` and `trainwell doctor run`."""
import os
import pickle
import sys
import warnings


class Point:
    def __init__(self, x: int) -> None:
        self.x = x


print("file", __file__)
print("argv", sys.argv)
print("path0", sys.path[0])
print("spec", __spec__, "name", __name__, "doc", __doc__.split(";")[0], "package", __package__)
print("builtins", type(__builtins__).__name__, "loader", type(__loader__).__name__)
print("globals", sorted(globals()))
print("main", sys.modules["__main__"] is sys.modules[__name__], pickle.loads(pickle.dumps(Point(3))).x)
os.chdir(os.path.dirname(__file__))  # works only when __file__ is absolute or the cwd is the script's folder
print("sibling", open("sibling.txt").read().strip())
warnings.warn("a warning from the script")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

# torch warns with stacklevel=2 from functions the doctor wraps: the warning names the line that called them,
# once per line (two lines: two warnings), and nn.MSELoss's own line for the module.
column, row = torch.zeros(4, 1), torch.zeros(4)
F.mse_loss(column, row)
F.mse_loss(column, row)
torch.nn.MSELoss()(column, row)
print("to stderr", file=sys.stderr)
