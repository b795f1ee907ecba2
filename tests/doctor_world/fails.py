"""Fails the way argv[1] says: an exit code, a message, an exception, a hint, a torch error, Ctrl-C."""
import sys

apple = 1


class Basket:
    apple = 2


def inner(how: str) -> None:
    if how == "code":
        sys.exit(3)
    if how == "message":
        sys.exit("stopped: bad input")
    if how == "chained":
        try:
            {}["key"]
        except KeyError as e:
            raise ValueError("wrapped") from e
    if how == "name":
        print(appel)  # noqa: F821 - the NameError Python hints about
    if how == "attribute":
        print(Basket().appel)
    if how == "torch":
        import torch
        import torch.nn.functional as F

        F.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 5]))  # raises inside a function the doctor wraps
    if how == "interrupt":
        raise KeyboardInterrupt


print("start", sys.argv[1:])
inner(sys.argv[1])
print("not reached")
