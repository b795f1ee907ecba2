"""Several processes where real runs go wrong: uneven splits (fewer validation samples than processes, a rank
with none), last batches of one sample. Each exchange has the same shape on every rank, so nothing waits for a
partner that will never come; the figures are one process's. (gloo on the CPU, 2 processes.)"""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from test_ddp import COMMON, FAULTY, _env, _run, _train

SCRIPT = '''
import os
import sys

import torch
import trainwell
from torch import nn
from torch.utils.data import TensorDataset


def data(n_train, n_val):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n_train + n_val, 6, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long() + (x[:, 2] > 1).long()
    return TensorDataset(x[:n_train], y[:n_train]), TensorDataset(x[n_train:], y[n_train:])


def run(out, n_train, n_val, batch_size=32):
    torch.manual_seed(0)
    norm = [nn.BatchNorm1d(16)] if os.environ.get("TW_BATCHNORM") else []
    model = nn.Sequential(nn.Linear(6, 16), *norm, nn.Tanh(), nn.Linear(16, 3))
    train, val = data(n_train, n_val)
    result = trainwell.fit(model, train, val, epochs=2, batch_size=batch_size, lr=0.05, optimizer="sgd",
                           progress="none", threads=1, out=out, doctor=False,
                           strategy=os.environ.get("TW_STRATEGY", "auto") if os.environ.get("RANK") else "auto")
    return model, result


if __name__ == "__main__":
    model, result = run(sys.argv[1], *map(int, sys.argv[3:]))
    torch.save({"model": model.state_dict() if not result.summary.get("strategy") == "fsdp" else {},
                "history": result.history, "strategy": result.summary.get("strategy")},
               f"{sys.argv[2]}.{os.environ['RANK']}")
    # A process that used DDP over gloo can abort in the interpreter's teardown after its work is done (gloo's
    # threads outlive destroy_process_group: docs/SCALE.md); end as trainwell's own workers do.
    from trainwell.engine.distributed import leave

    leave(0)
'''


def _fit_two_ways(tmp_path: Path, *sizes: int, timeout: float = 120, **env: str) -> tuple[Any, dict[str, Any]]:
    """The script in one process (here) and under torchrun with 2 processes, on (training samples, validation
    samples[, batch size]); (one process's result, rank 0's)."""
    script = tmp_path / "faults_script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    done = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(script),
                 str(tmp_path / "run"), str(tmp_path / "ddp.pt"), *map(str, sizes)], _env(**env), tmp_path,
                timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:]
    sys.path.insert(0, str(tmp_path))
    try:
        import faults_script  # type: ignore[import-not-found]

        _, result = faults_script.run(str(tmp_path / "single"), *sizes)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("faults_script", None)
    return result, torch.load(tmp_path / "ddp.pt.0", weights_only=False)


@pytest.mark.slow
@pytest.mark.parametrize(("n_val", "strategy"), [(1, "ddp"), (3, "ddp"), (1, "fsdp")])
def test_a_validation_split_smaller_than_the_processes_or_uneven_is_counted_once(tmp_path: Path, n_val: int,
                                                                                 strategy: str) -> None:
    """1 validation sample: rank 1 evaluates nothing (it used to send a shorter vector to all_reduce than rank 0,
    and both waited for the backend's 30-minute timeout); 3: 2 and 1. 65 training samples: the last batch is 1.
    Under fsdp every evaluation forward gathers the shards with the other process: rank 1 computes a stand-in."""
    single, ddp = _fit_two_ways(tmp_path, 65, n_val, TW_STRATEGY=strategy)
    assert ddp["strategy"] == strategy
    for mine, theirs in zip(single.history, ddp["history"], strict=True):
        assert mine["val_loss"] == pytest.approx(theirs["val_loss"], abs=1e-6)
        assert mine["val_accuracy"] == theirs["val_accuracy"]


@pytest.mark.slow
def test_batchnorm_trains_on_two_processes_where_it_trains_on_one(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """66 samples in batches of 64: the last global batch of 2 used to go out as one sample per process, and
    BatchNorm raised "Expected more than 1 value per channel" on both ranks; one process trains it as a pair."""
    monkeypatch.setenv("TW_BATCHNORM", "1")
    single, ddp = _fit_two_ways(tmp_path, 66, 20, 64, TW_BATCHNORM="1")
    assert len(ddp["history"]) == len(single.history) == 2
    for mine, theirs in zip(single.history, ddp["history"], strict=True):
        assert all(torch.isfinite(torch.tensor(row["val_loss"])) for row in (mine, theirs))


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["--nproc", "torchrun"])
def test_a_user_error_on_another_rank_than_0_is_said_once(tmp_path: Path, launcher: str) -> None:
    """A user error (``TrainwellError``) raised on rank 1 alone (as ``--nproc 4`` on a machine with 2 GPUs does on
    ranks 2 and 3): it used to end the group with exit code 2 and no word at all."""
    shutil.copy(FAULTY, tmp_path / "faulty.py")
    args = [*COMMON, "--model", "faulty:Net", "--out", "run"]
    if launcher == "--nproc":
        (tmp_path / "tmp").mkdir()
        done = _train([*args, "--nproc", "2"], tmp_path, PYTHONPATH=str(tmp_path), TW_USER_ERROR="1",
                      TMPDIR=str(tmp_path / "tmp"))
        assert done.returncode == 2, done.stdout[-3000:]
        assert not list((tmp_path / "tmp").iterdir())  # nothing left behind (torchrun's agent left torchelastic_*)
    else:
        done = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                     "-m", "trainwell", "train", *args], _env(PYTHONPATH=str(tmp_path), TW_USER_ERROR="1"), tmp_path)
        assert done.returncode != 0, done.stdout[-3000:]
    assert "Fix: unset TW_USER_ERROR" in done.stdout, done.stdout[-3000:]
    if launcher == "--nproc":  # (plain torchrun prints the worker's error file itself, its traceback included)
        assert done.stdout.count("worker 1 cannot build its model (TW_USER_ERROR)") == 1, done.stdout[-3000:]
        assert "Traceback" not in done.stdout


RAISING = '''
import os
import sys

import torch
import torch.distributed as dist
import trainwell
from torch import nn
from torch.utils.data import TensorDataset


class Breaks(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 2)

    def forward(self, x):
        raise ValueError("the model breaks")


data = TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,)))
try:
    trainwell.fit(Breaks(), data, epochs=1, batch_size=8, progress="none", threads=1, doctor=False)
except ValueError:
    pass
print(f"rank {os.environ['RANK']}: process group still open: {dist.is_initialized()}")
# A process that used DDP over gloo can abort in the interpreter's teardown after its work is done (gloo's
# threads outlive destroy_process_group: docs/SCALE.md); end as trainwell's own workers do.
from trainwell.engine.distributed import leave

leave(0)
'''


@pytest.mark.slow
def test_fit_that_raises_leaves_the_process_group_it_joined(tmp_path: Path) -> None:
    """fit() joins the process group under torchrun and leaves it at the end: also when training raises (it stayed
    open before, and the script's later collectives or its exit met a group in an unknown state)."""
    script = tmp_path / "raising.py"
    script.write_text(textwrap.dedent(RAISING))
    done = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(script)],
                _env(), tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    for rank in (0, 1):
        assert f"rank {rank}: process group still open: False" in done.stdout, done.stdout[-3000:]


DROPOUT = '''
import os
import sys

import torch
import trainwell
from torch import nn
from torch.utils.data import TensorDataset


class Masks(nn.Module):
    """Dropout that keeps the masks it drew in training."""

    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.5)
        self.head = nn.Linear(8, 2)
        self.masks = []

    def forward(self, x):
        h = self.drop(self.layer(x))
        if self.training:
            self.masks.append((h == 0).int().tolist())
        return self.head(h)


g = torch.Generator().manual_seed(0)
data = TensorDataset(torch.randn(32, 4, generator=g), torch.randint(0, 2, (32,), generator=g))
torch.manual_seed(0)
model = Masks()
trainwell.fit(model, data, epochs=1, batch_size=16, progress="none", threads=1, doctor=False)
torch.save(model.masks, f"{sys.argv[1]}.{os.environ['RANK']}")
# A process that used DDP over gloo can abort in the interpreter's teardown after its work is done (gloo's
# threads outlive destroy_process_group: docs/SCALE.md); end as trainwell's own workers do.
from trainwell.engine.distributed import leave

leave(0)
'''


@pytest.mark.slow
def test_each_process_draws_its_own_dropout_masks(tmp_path: Path) -> None:
    """Every process was seeded alike, so each dropped the same units on its share of the batch (docs/SCALE.md
    said otherwise); now rank 1 has a stream of its own and rank 0 keeps one process's."""
    script = tmp_path / "dropout.py"
    script.write_text(textwrap.dedent(DROPOUT))
    done = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(script),
                 str(tmp_path / "masks")], _env(), tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    zero, one = (torch.load(tmp_path / f"masks.{rank}", weights_only=True) for rank in (0, 1))
    assert len(zero) == len(one) == 2
    assert zero != one


@pytest.mark.slow
def test_a_restarted_group_continues_each_process_dropout_stream(tmp_path: Path) -> None:
    """With dropout, rank 1 dies in step 30 of 46 and the group restarts from the checkpoint of step 25: every
    process takes its own stream back from the checkpoint, so the run ends with the weights of an uninterrupted
    run on 2 processes."""
    from test_ddp import _gap, _weights

    shutil.copy(FAULTY, tmp_path / "faulty.py")
    args = [*COMMON, "--model", "faulty:Net", "--checkpoint-every", "5", "--nproc", "2"]
    straight = _train([*args, "--out", "straight"], tmp_path, PYTHONPATH=str(tmp_path), TW_DROPOUT="1")
    assert straight.returncode == 0, straight.stdout[-3000:]
    done = _train([*args, "--max-restarts", "1", "--out", "run"], tmp_path, PYTHONPATH=str(tmp_path), TW_DROPOUT="1",
                  TW_KILL_AT="30")
    assert done.returncode == 0 and "Resuming" in done.stdout, done.stdout[-3000:]
    gap = _gap(_weights(tmp_path / "straight"), _weights(tmp_path / "run"))
    assert gap <= 1e-6, f"max weight difference {gap:.3g}"


@pytest.mark.slow
def test_a_rank_that_does_not_come_stops_the_group_within_the_timeout(tmp_path: Path) -> None:
    """Rank 1 stays away for 2 minutes in its 3rd step; with --timeout 5 rank 0 gives up waiting for the step's
    gradients after 5 s and says which rank, which exchange and which setting, instead of gloo's 30 minutes."""
    import time

    shutil.copy(FAULTY, tmp_path / "faulty.py")
    started = time.monotonic()
    done = _train([*COMMON, "--model", "faulty:Net", "--nproc", "2", "--timeout", "5", "--out", "run"], tmp_path,
                  PYTHONPATH=str(tmp_path), TW_SLEEP_AT="3")
    took = time.monotonic() - started
    assert done.returncode == 1, done.stdout[-3000:]
    assert took < 100, f"the group took {took:.0f} s to stop"
    assert "rank 0: the exchange of step 3's gradients with the other processes did not complete within 5 s" \
        in done.stdout, done.stdout[-3000:]
    assert "train.timeout / --timeout" in done.stdout and "Traceback" not in done.stdout


@pytest.mark.slow
def test_the_other_processes_do_not_wait_for_rank_0s_end_of_run_figures(tmp_path: Path) -> None:
    """Rank 0 computes the task's figures (confusion matrix, verification curves) alone; it did so before the test
    split's evaluation, so the others waited for it inside an exchange, and a slow one hit the timeout. Now it
    comes after the last exchange: 8 s of figures under --timeout 5 finish normally."""
    shutil.copy(FAULTY, tmp_path / "faulty.py")
    done = _train([*COMMON, "--model", "faulty:Net", "--nproc", "2", "--timeout", "5", "--out", "run"], tmp_path,
                  PYTHONPATH=str(tmp_path), TW_SLOW_FINISH="8")
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "run" / "summary.json").is_file() and "test accuracy" in done.stdout


@pytest.mark.slow
def test_a_killed_rank_without_restarts_stops_the_group_and_the_folder_resumes(tmp_path: Path) -> None:
    """No --max-restarts: rank 1 dies (SIGKILL) in step 30 of 46; the group stops, the launcher says which worker
    and how to continue; --resume on 2 processes ends with the weights of an uninterrupted run (dropout included:
    each process's stream comes back from the checkpoint of step 25)."""
    from test_ddp import _gap, _weights

    shutil.copy(FAULTY, tmp_path / "faulty.py")
    args = [*COMMON, "--model", "faulty:Net", "--checkpoint-every", "5", "--nproc", "2"]
    straight = _train([*args, "--out", "straight"], tmp_path, PYTHONPATH=str(tmp_path), TW_DROPOUT="1")
    assert straight.returncode == 0, straight.stdout[-3000:]
    killed = _train([*args, "--out", "run"], tmp_path, PYTHONPATH=str(tmp_path), TW_DROPOUT="1", TW_KILL_AT="30")
    assert killed.returncode != 0, killed.stdout[-3000:]
    # Which worker the launcher names is a race: rank 1's SIGKILL, or rank 0 stopping first on the exchange that
    # rank 1 left (then it says that another process stopped).
    said = "worker 1 failed" in killed.stdout or "another process stopped" in killed.stdout
    assert said and "trainwell train --resume" in killed.stdout, killed.stdout[-3000:]
    assert (tmp_path / "run" / "checkpoints" / "last.pt").is_file()
    hint = killed.stdout.split("continue it with:\n", 1)[1].splitlines()[0].split()  # the command it gives, as is
    assert hint == ["trainwell", "train", "--resume", "run", "--nproc", "2", "--model", "faulty:Net"]
    resumed = _train([*hint[2:], "--no-progress"], tmp_path, PYTHONPATH=str(tmp_path), TW_DROPOUT="1")
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    gap = _gap(_weights(tmp_path / "straight"), _weights(tmp_path / "run"))
    assert gap <= 1e-6, f"max weight difference {gap:.3g}"


def test_a_worker_leaves_after_its_clean_up_and_before_the_interpreters_teardown(tmp_path: Path) -> None:
    """distributed.leave (how a worker of trainwell's ends): the atexit handlers run and what was printed is kept,
    then the process ends with the code given, without the teardown in which gloo's threads can abort it."""
    import subprocess

    script = tmp_path / "leave.py"
    script.write_text(textwrap.dedent(f'''
        import atexit, sys
        from trainwell.engine import distributed
        atexit.register(lambda: open({str(tmp_path / "cleaned")!r}, "w").write("yes"))
        print("printed before leaving", end="")  # no newline: still in the buffer
        distributed.leave(3)
        print("never")
    '''))
    done = subprocess.run([sys.executable, str(script)], env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and done.stdout == "printed before leaving", (done.stdout, done.stderr)
    assert (tmp_path / "cleaned").read_text() == "yes"
