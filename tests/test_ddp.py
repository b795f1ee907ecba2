"""Several processes (DDP on gloo, CPU) train exactly like one: the same global batches, the same gradients, every
validation sample counted once, one run folder written by rank 0; torchrun's elastic restarts resume exactly."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from trainwell.data.bundle import TensorData
from trainwell.data.loading import EpochLoader
from trainwell.engine.accumulate import micro_weights
from trainwell.engine.strategy import SingleDevice, share_bounds

SRC = str(Path(__file__).resolve().parents[1] / "src")
COMMON = ["--data", "digits", "--epochs", "2", "--batch-size", "64", "--threads", "1", "--no-progress",
          "--no-doctor", "--set", "data.augment=affine"]
CNN = ["--set", "model.batch_norm=false", "--set", "model.channels=[8,16]", "--set", "model.hidden=[32]"]
TIMEOUT = 240

FAULTY = Path(__file__).with_name("faulty_model.py")


class _Rank:
    """A stand-in strategy for planning: rank ``rank`` of ``world_size``, without a process group."""

    def __init__(self, rank: int, world_size: int) -> None:
        self.rank, self.world_size = rank, world_size

    shard = SingleDevice.shard
    largest_share = SingleDevice.largest_share


def test_shares_cover_every_sample_once_lower_ranks_take_the_extra_and_none_is_a_single_sample() -> None:
    for n in range(0, 12):
        bounds = [share_bounds(n, 4, r) for r in range(4)]
        assert bounds[0][0] == 0 and bounds[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
        sizes = [stop - start for start, stop in bounds]
        assert sizes == sorted(sizes, reverse=True)
        assert 1 not in sizes or n == 1, sizes  # a 1-sample share breaks BatchNorm where one process does not
        if n >= 8:
            assert max(sizes) - min(sizes) <= 1
    assert [share_bounds(5, 4, r) for r in range(4)] == [(0, 3), (3, 5), (5, 5), (5, 5)]


def test_a_share_never_ends_in_a_one_sample_micro_batch() -> None:
    from trainwell.data.loading import split_micro

    assert split_micro(list(range(9)), 8) == [list(range(7)), [7, 8]]
    assert split_micro(list(range(17)), 8) == [list(range(8)), list(range(8, 15)), [15, 16]]
    assert split_micro(list(range(8)), 8) == [list(range(8))] and split_micro([0], 8) == [[0]]


def test_every_rank_plans_the_same_micro_batch_count_and_the_union_is_the_global_batch() -> None:
    """Batch 32 in 2 processes x accumulate 2 (micro-batches of 8); 145 samples: the last batch of 17 splits 9 / 8,
    so rank 0 has 2 micro-batches (7 and 2: none of a single sample) and rank 1 one of 8 and a stand-in of weight 0
    (two samples: it goes through BatchNorm too)."""
    data = TensorData(torch.zeros(145, 2), torch.zeros(145, dtype=torch.long))
    single = EpochLoader(data, batch_size=32, shuffle=True, seed=3)
    ranks = [EpochLoader(data, batch_size=32, micro_batch_size=8, shuffle=True, seed=3, sharding=_Rank(r, 2))
             for r in range(2)]
    whole = [m.indices for m in single.plan()]
    plans = [loader.plan() for loader in ranks]
    assert [len(p) for p in plans] == [10, 10]  # 5 steps x 2 micro-batches on each rank
    for step, batch in enumerate(whole):
        mine = [m for p in plans for m in p[2 * step:2 * step + 2]]
        assert all(m.count == 2 and m.step_samples == len(batch) for m in mine)
        assert [i for m in mine if m.live for i in m.indices] == batch
    last = plans[1][-2:]
    assert [m.live for m in last] == [True, False] and last[1].indices == whole[-1][:2]
    assert [len(m.indices) for m in plans[0][-2:]] == [7, 2]


class _Summing(_Rank):
    def __init__(self) -> None:
        super().__init__(1, 2)
        self.exchanges = 0

    def reduce_sum(self, value: torch.Tensor) -> torch.Tensor:
        self.exchanges += 1
        return value + 9  # rank 0's 9 counted targets


def test_a_stand_in_weighs_nothing_and_every_rank_exchanges_counts_alike() -> None:
    """A mean over samples needs no exchange (the plan knows the global batch); counted targets always need one,
    also on a rank whose only micro-batch is a stand-in (else the other ranks wait for it forever)."""
    summing = _Summing()
    mse = micro_weights(nn.L1Loss(reduction="sum"), [torch.zeros(8), torch.zeros(1)], summing, torch.device("cpu"),
                        live=[True, False], step_samples=17)  # type: ignore[arg-type]
    assert mse == [8 / 17, 0.0] and summing.exchanges == 0
    only_stand_in = micro_weights(nn.CrossEntropyLoss(), [torch.zeros(1, dtype=torch.long)], summing,
                                  torch.device("cpu"), live=[False], step_samples=1)  # type: ignore[arg-type]
    assert summing.exchanges == 1 and float(only_stand_in[0]) == 0.0


def test_accuracy_adds_up_every_rank_including_one_that_saw_nothing() -> None:
    from trainwell.engine.trainer import Accuracy

    out, y = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]), torch.tensor([0, 1, 1])
    whole = Accuracy()
    whole.update(out, y)
    ranks = [Accuracy(), Accuracy(), Accuracy()]
    ranks[0].update(out[:2], y[:2])
    ranks[1].update(out[2:], y[2:])  # ranks[2] evaluated no sample
    shares = [(int(m.correct), m.n, m.applies) for m in ranks]
    for m in ranks:
        m.combine(_Fixed([((c, n, a), {}) for c, n, a in shares]))
        assert m.compute() == whole.compute() == {"accuracy": 2 / 3}


def test_the_verification_metric_gathers_every_rank_in_the_split_order() -> None:
    from trainwell.verification.metric import VerificationMetric

    g = torch.Generator().manual_seed(0)
    e, y = torch.randn(10, 4, generator=g), torch.tensor([0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    whole = VerificationMetric(20, 0)
    for b in (slice(0, 4), slice(4, 8), slice(8, 10)):  # evaluation batches of 4
        whole.update(e[b], y[b])
    ranks = [VerificationMetric(20, 0), VerificationMetric(20, 0)]
    for start, stop in ((0, 4), (4, 8), (8, 10)):  # each batch split 2 / 2, the last 1 / 1
        half = (start + stop + 1) // 2
        ranks[0].update(e[start:half], y[start:half])
        ranks[1].update(e[half:stop], y[half:stop])
    shares = [(m.embeddings, m.labels) for m in ranks]
    ranks[0].combine(_Fixed(shares))
    assert torch.equal(torch.cat(ranks[0].embeddings), e) and torch.equal(torch.cat(ranks[0].labels), y)
    assert ranks[0].compute() == whole.compute()


class _Fixed:
    """A fake exchange whose ``gather`` returns the given values of every rank."""

    world_size = 2

    def __init__(self, values: list[Any]) -> None:
        self.values = values

    def gather(self, value: Any) -> list[Any]:
        return self.values


def test_max_restarts_without_nproc_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from trainwell.cli import main

    assert main(["train", "--max-restarts", "1", "--out", str(tmp_path / "run")]) == 2
    assert "--max-restarts restarts the workers that --nproc starts" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")}
    env["PYTHONPATH"] = os.pathsep.join([SRC, *extra.pop("PYTHONPATH", "").split(os.pathsep)]).rstrip(os.pathsep)
    env.update(extra)
    return env


def _start(cmd: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _stop(proc: subprocess.Popen[str]) -> str:
    """End a launcher that is still running, and its workers: torchrun's agent stops its workers (each in a session
    of its own) when it gets SIGTERM; whatever is left of its own process group is killed after that."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        finally:
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
    return proc.communicate()[0]


def _run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run to the end; on a timeout, stop it and its workers and fail."""
    proc = _start(cmd, env, cwd)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"timed out:\n{_stop(proc)[-3000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, "")


def _train(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "trainwell", "train", *args], _env(**env), cwd)


def _weights(run_dir: Path) -> dict[str, torch.Tensor]:
    if (run_dir / "checkpoints" / "last.shards").is_dir():  # fsdp's
        from trainwell.engine.shards import read_model

        return read_model(run_dir / "checkpoints" / "last.shards")["model"]
    return torch.load(run_dir / "checkpoints" / "last.pt", weights_only=False, map_location="cpu")["model"]


def _gap(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys()
    return max(float((a[k] - b[k]).abs().max()) for k in a)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference: the same small CNN trained in one process."""
    cwd = tmp_path_factory.mktemp("single")
    done = _train([*COMMON, *CNN, "--out", "run"], cwd)
    assert done.returncode == 0, done.stdout[-3000:]
    return cwd / "run"


@pytest.mark.slow
def test_two_processes_end_with_the_weights_of_one(tmp_path: Path, one_process: Path) -> None:
    done = _train([*COMMON, *CNN, "--nproc", "2", "--out", "run"], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    run = tmp_path / "run"
    gap = _gap(_weights(one_process), _weights(run))
    assert gap <= 1e-4, f"max weight difference {gap:.3g}"
    print(f"max abs weight difference, 1 process vs 2: {gap:.3g}")
    # One result table (rank 0's), the folder printed once; env.json and summary.json say how it ran.
    assert done.stdout.count("test accuracy") == 1 and done.stdout.count("epoch   2/2") == 1
    summary, env = (json.loads((run / name).read_text()) for name in ("summary.json", "env.json"))
    assert {k: summary[k] for k in ("world_size", "nodes", "backend")} == {"world_size": 2, "nodes": 1,
                                                                         "backend": "gloo"}
    assert env["world_size"] == 2 and env["backend"] == "gloo"
    reference = json.loads((one_process / "summary.json").read_text())
    for key in ("val_loss", "val_accuracy", "test_loss", "test_accuracy"):
        assert summary[key] == pytest.approx(reference[key], abs=1e-5), key
    print(f"samples/s: 1 process {reference['samples_per_second']:.0f}, 2 processes "
          f"{summary['samples_per_second']:.0f}")
    # The checkpoint holds the plain module's keys: it loads in one process, for predict.
    from trainwell.cli.predict import load_predictor

    model, _ = load_predictor(run, "last")
    assert torch.isfinite(model(torch.zeros(2, 1, 8, 8))).all()


@pytest.mark.slow
def test_two_nodes_over_c10d_end_with_the_weights_of_one(tmp_path: Path, one_process: Path) -> None:
    """Two torchrun agents with one worker each, rendezvous over 127.0.0.1, one run folder (a shared file system)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = _env()
    procs = [_start([sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", str(r),
                     "--nproc-per-node", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}",
                     "--rdzv-id", "twonodes", "-m", "trainwell", "train", *COMMON, *CNN, "--out", str(tmp_path / "run")],
                    env, tmp_path) for r in range(2)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=TIMEOUT)[0])
    finally:
        for p in procs:
            _stop(p)
    assert [p.returncode for p in procs] == [0, 0], "\n".join(o[-2000:] for o in outs)
    gap = _gap(_weights(one_process), _weights(tmp_path / "run"))
    assert gap <= 1e-4, f"max weight difference {gap:.3g}"
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["world_size"], summary["nodes"]) == (2, 2)
    assert sum(o.count("test accuracy") for o in outs) == 1  # only rank 0 printed


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["--nproc", "torchrun"])
def test_a_killed_worker_restarts_the_group_from_the_last_checkpoint(tmp_path: Path, launcher: str) -> None:
    """Rank 1 dies (SIGKILL) in step 30 of 46 of its first attempt; the last checkpoint is step 25. The group comes
    back from it (``--nproc`` through its launcher's folder, plain torchrun through ``--out``) and ends with the
    weights of a run that was never interrupted."""
    shutil.copy(FAULTY, tmp_path / "faulty.py")
    args = [*COMMON, "--model", "faulty:Net", "--checkpoint-every", "5"]
    single = _train([*args, "--out", "single"], tmp_path, PYTHONPATH=str(tmp_path))
    assert single.returncode == 0, single.stdout[-3000:]
    if launcher == "--nproc":
        done = _train([*args, "--nproc", "2", "--max-restarts", "1", "--out", "run"], tmp_path,
                      PYTHONPATH=str(tmp_path), TW_KILL_AT="30")
    else:
        done = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                     "--max-restarts", "1", "-m", "trainwell", "train", *args, "--out", "run"],
                    _env(PYTHONPATH=str(tmp_path), TW_KILL_AT="30", TORCH_DISABLE_SHARE_RDZV_TCP_STORE="1"), tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    # The agent names the first failure it sees: rank 1's SIGKILL, or, when it looks a moment later, rank 0
    # stopped by its own SIGTERM, or rank 0 ending with its ExchangeError for the peer that went away (races inside
    # torchrun); either way the group came back from the checkpoint.
    named = re.search(r"exitcode: -(9|15)\b|exitcode: 1\) local_rank: 0\b", done.stdout)
    assert named and "Resuming" in done.stdout, done.stdout[-3000:]
    gap = _gap(_weights(tmp_path / "single"), _weights(tmp_path / "run"))
    assert gap <= 1e-4, f"max weight difference {gap:.3g}"
    steps = [int(line.split(",")[0]) for line in (tmp_path / "run" / "steps.csv").read_text().splitlines()[1:]]
    assert steps == list(range(1, 47))  # every step once: the restarted group dropped nothing, repeated nothing


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["--nproc", "torchrun"])
def test_a_worker_that_raises_stops_the_group_with_its_traceback_shown_once(tmp_path: Path, launcher: str) -> None:
    """The failing worker writes its traceback to torchrun's error file instead of its stderr; the launcher (ours,
    or torchrun's own failure summary) shows it once, and the other worker is stopped without a traceback."""
    shutil.copy(FAULTY, tmp_path / "faulty.py")
    args = [*COMMON, "--model", "faulty:Net", "--out", "run"]
    if launcher == "--nproc":
        done = _train([*args, "--nproc", "2"], tmp_path, PYTHONPATH=str(tmp_path), TW_RAISE_AT="3")
        assert done.returncode == 1, done.stdout[-3000:]
        assert done.stdout.count("Traceback (most recent call last)") == 1, done.stdout[-5000:]
    else:
        done = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                     "-m", "trainwell", "train", *args], _env(PYTHONPATH=str(tmp_path), TW_RAISE_AT="3"), tmp_path)
        assert done.returncode != 0, done.stdout[-3000:]
    assert done.stdout.count("RuntimeError: boom-from-rank-1") == 1, done.stdout[-5000:]
    assert 'raise RuntimeError("boom-from-rank-1")' in done.stdout  # the traceback itself, not just its last line
    assert not (tmp_path / "run").exists() or launcher == "torchrun"  # --nproc: nothing left before a checkpoint


FIT_SCRIPT = '''
import os
import sys

import torch
import trainwell
from torch import nn
from torch.utils.data import TensorDataset


class Net(nn.Module):
    """With a buffer: DDP broadcasts buffers in its forward passes, so the ranks must make matching forward calls."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
        self.register_buffer("scale", torch.ones(1))

    def forward(self, x):
        return self.body(x * self.scale)


class ScaledCE(nn.Module):
    """Cross-entropy on logits times a learned scale: a loss with a parameter of its own, outside DDP's module."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, logits, y):
        return nn.functional.cross_entropy(logits * self.scale, y)


def data(n):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n + 45, 6, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long() + (x[:, 2] > 1).long()
    return TensorDataset(x[:n], y[:n]), TensorDataset(x[n:], y[n:])


def run(out, n):
    torch.manual_seed(0)
    model = Net()
    train, val = data(n)
    loss = ScaledCE() if n == 145 else nn.CrossEntropyLoss()
    result = trainwell.fit(model, train, val, loss=loss, epochs=2, batch_size=32, accumulate=2, lr=0.05,
                           optimizer="sgd", progress="none", threads=1, out=out)
    return model, loss, result


if __name__ == "__main__":
    model, loss, result = run(sys.argv[1], int(sys.argv[3]))
    torch.save({"model": model.state_dict(), "loss": loss.state_dict(), "history": result.history},
               f"{sys.argv[2]}.{os.environ.get('RANK', '0')}")
    # A process that used DDP over gloo can abort in the interpreter's teardown after its work is done (gloo's
    # threads outlive destroy_process_group: docs/SCALE.md); end as trainwell's own workers do.
    from trainwell.engine.distributed import leave

    leave(0)
'''


@pytest.mark.slow
@pytest.mark.parametrize("n", [145, 129])
def test_fit_under_torchrun_short_last_batches_and_an_odd_validation_split(tmp_path: Path, n: int) -> None:
    """Batches of 32 over 2 processes x accumulate 2 (micro-batches of 8). 145 samples: the last batch of 17 splits
    9 / 8, rank 1 fills its second micro-batch with a stand-in, and the loss has a learned scale; 129: the last
    batch of 1 leaves rank 1 nothing but a stand-in, and cross-entropy counts its targets across processes. 45
    validation samples split 23 / 22. The weights and validation figures are one process's."""
    script = tmp_path / "fit_script.py"
    script.write_text(textwrap.dedent(FIT_SCRIPT))
    done = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                 str(script), str(tmp_path / "run"), str(tmp_path / "ddp.pt"), str(n)], _env(), tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    sys.path.insert(0, str(tmp_path))
    try:
        import fit_script  # type: ignore[import-not-found]

        model, loss, result = fit_script.run(str(tmp_path / "single"), n)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fit_script", None)
    ddp: dict[str, Any] = torch.load(tmp_path / "ddp.pt.0", weights_only=False)
    other: dict[str, Any] = torch.load(tmp_path / "ddp.pt.1", weights_only=False)
    gap = _gap({**model.state_dict(), **loss.state_dict()}, {**ddp["model"], **ddp["loss"]})
    assert gap <= 1e-5, f"max weight difference {gap:.3g}"
    # Both ranks hold the same weights, the loss's scale included (its gradient is averaged like the model's).
    assert _gap({**ddp["model"], **ddp["loss"]}, {**other["model"], **other["loss"]}) == 0
    for mine, theirs in zip(result.history, ddp["history"]):
        assert mine["val_loss"] == pytest.approx(theirs["val_loss"], abs=1e-6)
        assert mine["val_accuracy"] == theirs["val_accuracy"]
        assert mine["train_loss"] == pytest.approx(theirs["train_loss"], abs=1e-6)


@pytest.mark.slow
def test_when_rank_0_cannot_create_the_folder_every_rank_stops(tmp_path: Path) -> None:
    """fit(out=...) on a folder that is not empty: rank 0 refuses it, and rank 1 stops too instead of waiting."""
    script = tmp_path / "fit_script.py"
    script.write_text(textwrap.dedent(FIT_SCRIPT))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "taken.txt").write_text("")
    done = _run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                 str(script), str(tmp_path / "run"), str(tmp_path / "ddp.pt"), "145"], _env(), tmp_path, timeout=90)
    assert done.returncode != 0
    assert "already exists and is not empty" in done.stdout and "rank 0 failed" in done.stdout, done.stdout[-3000:]


@pytest.mark.slow
def test_nproc_1_trains_in_one_torchrun_worker(tmp_path: Path) -> None:
    """The single worker (WORLD_SIZE 1) still trains into its launcher's folder, in one process."""
    done = _train([*COMMON, *CNN, "--epochs", "1", "--nproc", "1", "--out", "run"], tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["world_size"], summary["backend"], summary["epochs"]) == (1, None, 1)


def test_a_parameter_no_process_has_a_gradient_for_keeps_none(tmp_path: Path) -> None:
    """DDP's exchange of the gradients of parameters outside the model (a loss's): one without a gradient on every
    process stays without one, as in one process (it got a zero gradient before, which Adam and weight decay
    then stepped); one with a gradient is averaged. (A group of one process: the exchange itself is the same.)"""
    import torch.distributed as dist

    from trainwell.engine.strategy import DDP

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        used, unused = nn.Parameter(torch.ones(3)), nn.Parameter(torch.ones(2))
        used.grad = torch.full((3,), 2.0)
        DDP(torch.device("cpu")).reduce_gradients([used, unused])
        assert unused.grad is None and torch.equal(used.grad, torch.full((3,), 2.0))
    finally:
        dist.destroy_process_group()


class _Recording(SingleDevice):
    """A strategy that says which of its decisions the trainer and the run's finish asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def eval_module(self, model: nn.Module, forward: nn.Module) -> nn.Module:
        self.asked.append("eval_module")
        return model

    def clip_gradients(self, params: Any, max_norm: float) -> None:
        self.asked.append("clip_gradients")
        super().clip_gradients(params, max_norm)

    def model_state(self, model: nn.Module) -> dict[str, Any]:
        self.asked.append("model_state")
        return super().model_state(model)

    def load_model_state(self, model: nn.Module, state: dict[str, Any]) -> None:
        self.asked.append("load_model_state")
        super().load_model_state(model, state)

    def optimizer_state(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
        self.asked.append("optimizer_state")
        return super().optimizer_state(model, optimizer)

    def load_optimizer_state(self, model: nn.Module, optimizer: torch.optim.Optimizer,
                             state: dict[str, Any]) -> None:
        self.asked.append("load_optimizer_state")
        super().load_optimizer_state(model, optimizer, state)

    def barrier(self) -> None:
        self.asked.append("barrier")


def test_the_strategy_owns_clipping_checkpoint_state_evaluation_and_barriers(tmp_path: Path) -> None:
    """What differs between ways of running (a sharding strategy gathers its shards for a checkpoint, clips sharded
    gradients, evaluates through its wrapper) is asked of the strategy, never done by the trainer itself."""
    from trainwell.app.run import finish_run
    from trainwell.engine.checkpointing import Checkpointer
    from trainwell.engine.trainer import Trainer

    data = TensorData(torch.randn(32, 4), torch.randint(0, 2, (32,)))
    strategy = _Recording()
    model = nn.Linear(4, 2)
    saver = Checkpointer(tmp_path / "checkpoints")
    trainer = Trainer(model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1),
                      EpochLoader(data, batch_size=8, shuffle=True, seed=0),
                      val_loader=EpochLoader(data, batch_size=8, shuffle=False, seed=0), epochs=1, grad_clip=1.0,
                      strategy=strategy, callbacks=[saver])
    assert trainer.eval_model is model and strategy.asked == ["eval_module"]
    trainer.fit()
    assert {"clip_gradients", "model_state", "optimizer_state"} <= set(strategy.asked)
    trainer.load_state_dict(torch.load(saver.last, weights_only=True))
    assert {"load_model_state", "load_optimizer_state"} <= set(strategy.asked)
    strategy.asked.clear()
    finish_run(trainer, tmp_path, config={})
    assert strategy.asked[0] == "barrier" and "load_model_state" in strategy.asked
