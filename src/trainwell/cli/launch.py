"""``trainwell train`` with several processes: ``--nproc N`` starts N workers through torchrun's elastic agent, and
each worker (started that way, or by a plain ``torchrun ... -m trainwell train``) opens the run folder the way
rank 0 says and reports a failure once.

The launching process resolves the config, creates the run folder and saves config.yaml; the workers train into
that folder (``--into``), so a group that the agent restarts after a failure resumes from its last.pt.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

OpenRun = Callable[[argparse.Namespace, Any], "tuple[Any, Path, bool] | None"]


def launch(args: argparse.Namespace) -> int:
    """Create the run folder here, then train in ``args.nproc`` workers on this machine (``--standalone``)."""
    from rich.console import Console

    from trainwell._errors import TrainwellError
    from trainwell.cli.train import open_run
    from trainwell.config import save_yaml
    from trainwell.engine.run_folder import discard_unfinished

    if args.nproc < 1 or args.max_restarts < 0:
        raise TrainwellError(f"--nproc must be at least 1 and --max-restarts at least 0 (got {args.nproc}, "
                             f"{args.max_restarts}).", fix="e.g. --nproc 2 --max-restarts 1")
    console = Console(stderr=True)
    opened = open_run(args, console)
    if opened is None:  # a finished run: nothing to do
        return 0
    config, run_dir, existed = opened
    if not args.resume:
        save_yaml(config, run_dir / "config.yaml")  # what every worker reads
    argv = ["--standalone", "--nproc-per-node", str(args.nproc), "--max-restarts", str(args.max_restarts),
            "-m", "trainwell", "train", "--into", str(run_dir)]
    argv += ["--no-progress"] * args.no_progress + ["--no-doctor"] * args.no_doctor
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    try:
        start_workers(argv, args.nproc)
    except ChildFailedError as e:
        if not args.resume:
            discard_unfinished(run_dir, existed)
        return _report_failure(e)
    return 0  # rank 0 printed the result and the folder


def start_workers(argv: list[str], nproc: int) -> None:
    """torchrun (``torch.distributed.run``) with ``argv``, in this process; raises ``ChildFailedError`` when a
    worker fails."""
    from torch.distributed.run import main as torchrun

    # Each restarted group gets a store of its own: with the rendezvous store shared (torch's default), a restarted
    # group can read the addresses its dead predecessors left there and fail to connect (pytorch/pytorch#135712).
    os.environ.setdefault("TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "1")
    # torchrun would give each worker OMP_NUM_THREADS=1; trainwell's default is the usable cores / the workers.
    from trainwell.machine import usable_cores

    os.environ.setdefault("OMP_NUM_THREADS", str(max(usable_cores() // nproc, 1)))
    torchrun(argv)


def _report_failure(error: Any) -> int:
    """The first failed worker's traceback (from torchrun's error file), printed once; exit code 2 when it was a
    user error that rank 0 has already explained in one paragraph."""
    rank, failure = error.get_first_failure()
    if failure.exitcode == 2:
        return 2
    message = failure.message
    if isinstance(message, dict):
        info = message.get("extraInfo", {})
        message = info.get("py_callstack") or message.get("message")
    print(f"trainwell: worker {rank} failed (exit code {failure.exitcode}):\n{str(message).rstrip()}", file=sys.stderr)
    return 1


def shared_run(args: argparse.Namespace, console: Any, open_run: OpenRun) -> tuple[Any, Path, bool, bool] | None:
    """(config, run folder, whether --out existed, whether to resume), or None for a finished run. Alone:
    ``open_run``. Under torchrun: rank 0 opens the folder (a new one, or --resume's) and tells the others; a group
    torchrun restarted after a failure continues the folder of ``--out``."""
    from trainwell.machine import is_distributed

    if not is_distributed():  # alone: no torch before the options are checked
        opened = open_run(args, console)
        return None if opened is None else (*opened, bool(args.resume))
    from trainwell.app.configure import resolve
    from trainwell.config import load_run_config
    from trainwell.engine import distributed
    from trainwell.engine.device import resolve_device

    out = Path(args.out).expanduser() if args.out else None
    if distributed.restarted() and out is not None and (out / "config.yaml").is_file():
        return load_run_config(out), out, True, True
    # Every rank reads the same options (a mistake in them stops every rank alike; rank 0 says so).
    config = load_run_config(Path(args.resume)) if args.resume else \
        resolve(file=Path(args.config) if args.config else None, flags=_flags(args), sets=args.set)
    distributed.init(distributed.device_for(resolve_device(config.device)))
    opened = distributed.on_rank0(lambda: open_run(args, console))  # the others learn rank 0's folder
    return None if opened is None else (*opened, bool(args.resume))


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    from trainwell.cli.train import config_flags

    return config_flags(args)


def worker(args: argparse.Namespace, train: Callable[[argparse.Namespace], int]) -> int:
    """Run ``train`` as one worker of a torchrun group. A user error is explained by rank 0 alone; any other
    error goes to torchrun's error file, whose traceback torchrun (or ``--nproc``'s launcher) shows once."""
    from trainwell._errors import TrainwellError
    from trainwell.engine import distributed

    try:
        code = train(args)
    except TrainwellError as e:
        if distributed.env_rank() == 0:
            raise
        return e.exit_code
    except Exception as e:
        if not os.environ.get("TORCHELASTIC_ERROR_FILE"):
            raise
        from torch.distributed.elastic.multiprocessing.errors import get_error_handler

        get_error_handler().record_exception(e)
        return 1
    distributed.close()
    return code
