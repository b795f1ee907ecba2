"""A user's model whose forward kills or fails worker rank 1 at a chosen training forward, in the first attempt
only: TW_KILL_AT=N sends SIGKILL at the Nth call, TW_RAISE_AT=N raises; TW_USER_ERROR=1 makes rank 1 raise a
user error (``TrainwellError``) while it builds the model; TW_DROPOUT=1 adds dropout;
TW_SLEEP_AT=N makes rank 1 sleep for 2 minutes at the Nth call; TW_SLOW_FINISH=S makes rank 0's end-of-run task
figures take S seconds longer. Tests copy this file next to a run and
name it with ``--model faulty:Net``."""

import os
import signal
import time

from torch import nn

if os.environ.get("TW_SLOW_FINISH") and os.environ.get("RANK") == "0":  # rank 0's task finish takes that long
    from trainwell.tasks import base

    _finish = base.Task.finish

    def _slow_finish(self, *args, **kwargs):
        time.sleep(float(os.environ["TW_SLOW_FINISH"]))
        return _finish(self, *args, **kwargs)

    base.Task.finish = _slow_finish


class Net(nn.Module):
    def __init__(self, input_shape, num_classes):
        super().__init__()
        if os.environ.get("TW_USER_ERROR") and os.environ.get("RANK") == "1":  # a user error on rank 1 alone
            from trainwell._errors import TrainwellError

            raise TrainwellError("worker 1 cannot build its model (TW_USER_ERROR)", fix="unset TW_USER_ERROR")
        drop = [nn.Dropout(0.3)] if os.environ.get("TW_DROPOUT") else []  # masks each process draws itself
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), *drop, nn.Linear(32, num_classes))
        self.calls = 0

    def forward(self, x):
        if self.training and os.environ.get("RANK") == "1" and os.environ.get("TORCHELASTIC_RESTART_COUNT") == "0":
            self.calls += 1
            if self.calls == int(os.environ.get("TW_KILL_AT", "0")):
                os.kill(os.getpid(), signal.SIGKILL)
            if self.calls == int(os.environ.get("TW_RAISE_AT", "0")):
                raise RuntimeError("boom-from-rank-1")
            if self.calls == int(os.environ.get("TW_SLEEP_AT", "0")):
                time.sleep(120)  # busy far longer than the group's timeout
        return self.body(x)
