"""``trainwell train`` with several processes: ``--nproc N`` starts N workers through torchrun's elastic agent, and
each worker (started that way, or by a plain ``torchrun ... -m trainwell train``) opens the run folder the way
rank 0 says and reports a failure once.

The launching process resolves the config, creates the run folder and saves config.yaml; the workers train into
that folder (``--into``), so a group that the agent restarts after a failure resumes from its last checkpoint.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

def launch(args: argparse.Namespace) -> int:
    """Create the run folder here, then train in ``args.nproc`` workers on this machine (``--standalone``)."""
    from rich.console import Console

    from trainwell._errors import TrainwellError
    from trainwell.cli.open_run import open_run, show_config
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
        from trainwell._lang import detect_lang

        save_yaml(config, run_dir / "config.yaml")  # what every worker reads
        show_config(console, config, run_dir, full=args.show_config, lang=detect_lang(args.lang))
    argv = ["--standalone", "--nproc-per-node", str(args.nproc), "--max-restarts", str(args.max_restarts),
            "-m", "trainwell", "train", "--into", str(run_dir)]
    argv += ["--no-progress"] * args.no_progress + ["--no-doctor"] * args.no_doctor
    argv += ["--lang", args.lang] if getattr(args, "lang", None) else []  # the doctor's language, in rank 0
    from trainwell._trust import CODE_KEYS, typed_names

    typed = typed_names(args.model, args.tokenizer, args.set)  # the workers read config.yaml: name its code again
    again = ["--nproc", str(args.nproc)]  # what --resume needs besides the folder
    for key, name in typed.items():
        argv += [CODE_KEYS[key].option, name]
        again += [CODE_KEYS[key].option, name]
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    from trainwell.engine.run_lock import TOKEN_ENV, held

    lock = held(run_dir)  # this launcher holds the folder's lock; its workers prove they are its group by the token
    os.environ[TOKEN_ENV] = lock.token if lock is not None else ""
    try:
        start_workers(argv, args.nproc)
    except ChildFailedError as e:
        if not args.resume:
            discard_unfinished(run_dir, existed)
        code = _report_failure(e)
        if code != 2:
            _say_resume(run_dir, again)
        return code
    except WorkersStopped as e:  # the launcher was told to stop: the agent has stopped the workers
        if not args.resume:
            discard_unfinished(run_dir, existed, interrupted=True)
        print(f"trainwell: {e}", file=sys.stderr)
        _say_resume(run_dir, again)
        return e.exit_code
    finally:
        os.environ.pop(TOKEN_ENV, None)
    return 0  # rank 0 printed the result and the folder


class WorkersStopped(Exception):
    """The launcher got SIGTERM, SIGINT or SIGHUP while its workers ran; torchrun's agent has stopped them."""

    def __init__(self, signum: int) -> None:
        import signal

        self.exit_code = 128 + signum  # what a shell reports for a process ended by that signal
        name = signal.Signals(signum).name
        super().__init__(f"stopped by {name}{' (Ctrl-C)' if signum == signal.SIGINT else ''}; "
                         "the workers were stopped too.")


def _say_resume(run_dir: Path, again: list[str]) -> None:
    """After a group that did not finish: the command that continues it, when the folder is kept. ``again``: the
    options it needs besides ``--resume`` (the processes, and the user's own code named again)."""
    import shlex

    if (run_dir / "config.yaml").is_file():
        from trainwell.engine.shards import last_checkpoint

        last = last_checkpoint(run_dir / "checkpoints")
        kept = f"with checkpoints/{last.name}" if last else "(no checkpoint yet: it starts again from step 0)"
        command = shlex.join(["trainwell", "train", "--resume", str(run_dir), *again])
        print(f"trainwell: the run folder is kept {kept}; continue it with:\n  {command}", file=sys.stderr)


LAUNCHER_ENV = "TRAINWELL_LAUNCHER_PID"  # the launcher's process id, for its workers to follow


def start_workers(argv: list[str], nproc: int) -> None:
    """torchrun (``torch.distributed.run``) with ``argv``, in this process; raises ``ChildFailedError`` when a
    worker fails and ``WorkersStopped`` when this process got SIGTERM, SIGINT or SIGHUP (the agent's handlers stop
    the workers first; ours are back afterwards). Each worker ends itself if this process dies without stopping
    it (``follow_launcher``)."""
    import signal

    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.run import main as torchrun

    # Each restarted group gets a store of its own: with the rendezvous store shared (torch's default), a restarted
    # group can read the addresses its dead predecessors left there and fail to connect (pytorch/pytorch#135712).
    os.environ.setdefault("TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "1")
    # torchrun would give each worker OMP_NUM_THREADS=1; trainwell's default is the usable cores / the workers.
    from trainwell.machine import usable_cores

    os.environ.setdefault("OMP_NUM_THREADS", str(max(usable_cores() // nproc, 1)))
    stops = [getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT") if hasattr(signal, name)]
    handlers = {signum: signal.getsignal(signum) for signum in stops}
    os.environ[LAUNCHER_ENV] = str(os.getpid())
    # The agent's folder of worker error files (torchrun's default, torchelastic_*, stays behind): ours, removed
    # once the workers are done (a failure's error file has been read into the ChildFailedError by then).
    logs = tempfile.mkdtemp(prefix="trainwell-workers-")
    try:
        torchrun(["--log-dir", logs, *argv])
    except SignalException as e:
        raise WorkersStopped(int(e.sigval)) from None
    finally:
        shutil.rmtree(logs, ignore_errors=True)
        os.environ.pop(LAUNCHER_ENV, None)
        for signum, handler in handlers.items():  # torchrun's would raise wherever this process is next
            signal.signal(signum, handler)


def follow_launcher() -> bool:
    """In a worker of ``--nproc``: end this process with SIGTERM when its launcher dies, even by SIGKILL, which
    leaves torchrun's agent no chance to stop it (Linux: the kernel's parent-death signal; elsewhere a thread
    that watches the parent). A no-op in a process no launcher of trainwell's started; the variable is removed so
    that the script's own child processes do not follow it. Returns whether a launcher of trainwell's started it."""
    import signal

    text = os.environ.pop(LAUNCHER_ENV, None)
    if not text or not text.isdigit():
        return False
    launcher = int(text)
    if not (sys.platform.startswith("linux") and _parent_death_signal(signal.SIGTERM)):
        _watch_parent(launcher)
    if os.getppid() != launcher:  # it died before this process could follow it
        os.kill(os.getpid(), signal.SIGTERM)
    return True


def _parent_death_signal(signum: int) -> bool:
    """``prctl(PR_SET_PDEATHSIG, signum)``: the kernel sends ``signum`` when the parent exits. False if refused."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(1, signum, 0, 0, 0) == 0  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _watch_parent(launcher: int, every_s: float = 1.0) -> None:
    """A daemon thread that sends this process SIGTERM once its parent is no longer ``launcher``."""
    import signal
    import threading
    import time

    def watch() -> None:
        while os.getppid() == launcher:
            time.sleep(every_s)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="trainwell-follow-launcher", daemon=True).start()


def _first_cause(error: Any) -> tuple[int, Any]:
    """The failed worker that started it: torchrun's first failure by time, leaving out the workers the agent
    itself stopped with SIGTERM once another had failed (their error files can be stamped before the failure that
    caused them, e.g. a worker killed with SIGKILL, which writes none)."""
    import signal

    causes = {rank: f for rank, f in error.failures.items() if f.exitcode != -signal.SIGTERM}
    # A worker whose exchange failed because its partner went away (ExchangeError) shows a symptom: the worker
    # that went away is the cause (a SIGKILL writes no error file), whichever error file was stamped first.
    own = {rank: f for rank, f in causes.items() if not _exchange_error(f)}
    causes = own or causes
    if not causes:
        return error.get_first_failure()
    rank = min(causes, key=lambda r: causes[r].timestamp)
    return rank, causes[rank]


def _recorded(failure: Any) -> tuple[str, str]:
    """(the error's class name, its message) from a failed worker's error file; ("", "") without one."""
    message = failure.message
    if not isinstance(message, dict):
        return "", ""
    name, _, text = str(message.get("message", "")).partition(": ")  # "ExchangeError: rank 0: the exchange of ..."
    return name, text


def _exchange_error(failure: Any) -> bool:
    return _recorded(failure)[0] == "ExchangeError"


class UserErrorInWorker(Exception):
    """A worker's ``TrainwellError``, as its error file records it (one name, whatever the error's class)."""


def _user_errors(error: Any) -> dict[str, list[int]]:
    """The user errors the failed workers recorded: wording -> the ranks that met it."""
    said: dict[str, list[int]] = {}
    for rank, failure in sorted(error.failures.items()):
        name, text = _recorded(failure)
        if name == UserErrorInWorker.__name__:
            said.setdefault(text, []).append(rank)
    return said


def _report_failure(error: Any) -> int:
    """Say why the group failed, once; the exit code. User errors (2): each wording once with the workers that met
    it. An exchange that failed: its message alone (rank, exchange, setting). Anything else: the first failed
    worker's traceback from its error file."""
    said = _user_errors(error)
    if said:
        for text, ranks in said.items():
            where = "every worker" if len(ranks) == len(error.failures) and len(ranks) > 1 else \
                "worker " + ", ".join(map(str, ranks))
            print(f"trainwell: error ({where}): {text}", file=sys.stderr)
        return 2
    rank, failure = _first_cause(error)
    name, text = _recorded(failure)
    if failure.exitcode == 2 and not name:  # (every user error is recorded: this one printed its own words)
        print(f"trainwell: worker {rank} stopped with exit code 2 (see its message above)", file=sys.stderr)
        return 2
    if name == "ExchangeError":
        print(f"trainwell: worker {rank} stopped: {text}", file=sys.stderr)
        return 1
    message = failure.message
    if isinstance(message, dict):
        message = message.get("extraInfo", {}).get("py_callstack") or message.get("message")
    print(f"trainwell: worker {rank} failed (exit code {failure.exitcode}):\n{str(message).rstrip()}", file=sys.stderr)
    return 1


def worker(args: argparse.Namespace, train: Callable[[argparse.Namespace], int]) -> int:
    """Run ``train`` as one worker of a torchrun group. A user error is explained by rank 0 alone; any other
    error goes to torchrun's error file, whose traceback torchrun (or ``--nproc``'s launcher) shows once."""
    from trainwell._errors import TrainwellError
    from trainwell.engine import distributed

    ours = follow_launcher()
    try:
        code = train(args)
    except TrainwellError as e:
        # A user error goes to the worker's error file. Under --nproc the launcher says it, once for the same words
        # however many workers met it (all of them, for a mistake in the options); under a plain torchrun rank 0
        # says its own, and torchrun shows another rank's file (one met there alone: its device, its files).
        recorded = _record(UserErrorInWorker(str(e)))
        if distributed.env_rank() == 0 and not (ours and recorded):
            raise
        if not recorded:
            print(f"trainwell: worker {distributed.env_rank()}: {e}", file=sys.stderr)
        return e.exit_code
    except Exception as e:
        if not _record(e):
            raise
        return 1
    finally:
        distributed.close()  # (whatever happened: a process group left open can abort the process at its exit)
    return code


def _record(error: BaseException) -> bool:
    """Write ``error`` to torchrun's error file for this worker with torch's own error handler; False when there is
    none (not under torchrun). Called while ``error`` is being handled (its traceback is recorded).

    The file appears whole or not at all: torch's handler writes it beside its place, then it is renamed. Once
    another worker has failed, the agent stops this one with SIGTERM and reads its error file if there is one; a
    file opened but not yet written would be empty, which the agent cannot parse (its JSONDecodeError then ended
    the launcher instead of the worker's failure)."""
    from torch.distributed.elastic.multiprocessing.errors import ErrorHandler

    path = os.environ.get("TORCHELASTIC_ERROR_FILE")
    if not path:
        return False

    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=folder, prefix=".error-", suffix=".json")
    os.close(handle)

    class Beside(ErrorHandler):  # torch's handler, with only the file it writes changed (its one method for that)
        def _get_error_file_path(self) -> str:
            return partial

    try:
        Beside().record_exception(error)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return True
