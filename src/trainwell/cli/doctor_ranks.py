"""``trainwell doctor run`` over several processes, with one merged report.

``--nproc N`` starts N workers on this machine through torchrun's elastic agent (as ``trainwell train --nproc``
does), each running the script under the doctor; a plain ``torchrun --nproc-per-node N -m trainwell doctor run``
starts the same workers itself. Every worker keeps quiet and writes what it saw (``doctor/ranks.py``); the
``--nproc`` launcher, or rank 0 under a plain torchrun once every rank has written, prints the merged findings
once, each with the ranks that saw it, and writes ``--json``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

WAIT_S = 600.0  # how long rank 0 waits for the other ranks' records under a plain torchrun
WAIT_FAILED_S = 5.0  # ... when its own script failed: the others may be stuck waiting for it in a collective


def launch(args: argparse.Namespace, lang: str, json_path: str | None, console: Any) -> int:
    """Run the script in ``args.nproc`` workers (gloo or nccl is the script's choice), then print the merged report."""
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    from trainwell._errors import TrainwellError
    from trainwell.cli.launch import WorkersStopped, start_workers
    from trainwell.doctor.ranks import ENV_DIR, read_records
    from trainwell.doctor.runner import script_path

    if args.nproc < 1:
        raise TrainwellError(f"--nproc must be at least 1 (got {args.nproc}).", fix="e.g. --nproc 2")
    script = script_path(args.script)
    folder = Path(tempfile.mkdtemp(prefix="trainwell-doctor-"))
    argv = ["--standalone", "--nproc-per-node", str(args.nproc), "--max-restarts", "0",
            "-m", "trainwell", *(["--debug"] * args.debug), "doctor", "run", "--lang", lang, script, *args.args]
    os.environ[ENV_DIR] = str(folder)
    failed = False
    try:
        start_workers(argv, args.nproc)
    except ChildFailedError:
        failed = True  # each worker printed its own traceback, as the script under python would
    except WorkersStopped as e:  # this launcher was told to stop: the agent stopped the workers, nothing to merge
        shutil.rmtree(folder, ignore_errors=True)
        console.print(f"trainwell doctor: {e}", highlight=False, markup=False, soft_wrap=True)
        return e.exit_code
    finally:
        del os.environ[ENV_DIR]
    records = read_records(folder, args.nproc)
    shutil.rmtree(folder, ignore_errors=True)
    code = show(records, args.nproc, lang, json_path, str(args.script), console)
    return code or int(failed)


def run_rank(args: argparse.Namespace, lang: str, json_path: str | None, console: Any) -> int:
    """One worker: run the script under the doctor, write this rank's record; rank 0 of a plain torchrun merges."""
    from trainwell.cli.launch import follow_launcher
    from trainwell.doctor.ranks import ENV_DIR, agent_store, put_record, read_records, record, shared_folder
    from trainwell.doctor.ranks import take_records, write_record
    from trainwell.doctor.runner import run_script, script_path
    from trainwell.doctor.session import Session
    from trainwell.machine import env_rank, world_size_from_env

    follow_launcher()
    script = script_path(args.script)
    rank, world = env_rank(), world_size_from_env()
    folder = shared_folder().absolute()  # named before the script runs: it may change the working folder
    session = Session(lang=lang, debug=args.debug)
    session.cross_rank = True
    code = run_script(script, list(args.args), session)
    wait_s = WAIT_FAILED_S if code else WAIT_S
    try:
        store = agent_store()  # plain torchrun: the agents' store reaches every machine of the group
        if store is not None:
            put_record(store, record(session, code, rank, world))
            if rank == 0:
                show(take_records(store, world, wait_s=wait_s), world, lang, json_path, str(args.script), console)
            return code
    except RuntimeError as e:  # unreachable, or gone (an agent was stopped): said, and this machine's folder instead
        session.internal_error(None, "handing the record over through torchrun's store", e)
    write_record(folder, record(session, code, rank, world))
    if ENV_DIR in os.environ or rank != 0:
        return code
    here = int(os.environ.get("LOCAL_WORLD_SIZE", world))  # the ranks whose records reach this machine's folder
    records = read_records(folder, world, wait_s=wait_s, expect=here)
    shutil.rmtree(folder, ignore_errors=True)
    show(records, world, lang, json_path, str(args.script), console, unreachable=world - here)
    return code


def show(records: dict[int, dict[str, Any]], world: int, lang: str, json_path: str | None, script: str,
         console: Any, unreachable: int = 0) -> int:
    """Print the merged report once (and write it as JSON); the exit code: the first failed rank's, else 0.
    ``unreachable``: how many ranks run on other machines whose records could not reach this one."""
    from rich.markup import escape

    from trainwell.doctor.ranks import merge
    from trainwell.doctor.render import findings_json, in_block, print_finding, print_summary, write_json

    from trainwell.doctor.folding import fold_symptoms

    merged = merge(records, world, lang)
    merged.findings = fold_symptoms(merged.findings)  # a cause names its symptoms (folding.py)

    def report() -> None:
        for finding in merged.findings:
            print_finding(finding, console, lang, world)
        for line in merged.internal_errors:
            console.print(f"[yellow]trainwell doctor: {escape(line)}[/]", soft_wrap=True, highlight=False)
        if merged.missing_ranks and unreachable:
            listed = ", ".join(map(str, merged.missing_ranks))
            console.print(f"[yellow]trainwell doctor: no report from rank {listed}: the group spans several "
                          "machines and their reports could not travel through the store of torchrun's agents (it "
                          "is not offered unless TORCHELASTIC_USE_AGENT_STORE is True), so only this machine's ranks "
                          "could report here[/]" if lang != "zh" else
                          f"[yellow]trainwell doctor：进程 {listed} 没有报告：这组进程跨多台机器，而它们的报告无法经由 "
                          "torchrun agent 的键值存储传过来（只有 TORCHELASTIC_USE_AGENT_STORE 为 True 时才提供），"
                          "只有本机的进程能把报告传到这里[/]",
                          soft_wrap=True, highlight=False)
        elif merged.missing_ranks:
            listed = ", ".join(map(str, merged.missing_ranks))
            console.print(f"[yellow]trainwell doctor: no report from rank {listed} (it failed or was stopped)[/]"
                          if lang != "zh" else f"[yellow]trainwell doctor：进程 {listed} 没有报告（出错或被终止）[/]")
        print_summary(merged.findings, console, lang, world, unjudged=merged.unjudged)

    in_block(report, console)()
    if json_path:
        write_json(Path(json_path), findings_json(merged.findings, script=script, exit_code=merged.exit_code,
                                                  world_size=world, missing_ranks=merged.missing_ranks,
                                                  internal_errors=merged.internal_errors, unjudged=merged.unjudged))
    return merged.exit_code
