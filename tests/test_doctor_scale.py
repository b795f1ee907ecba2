"""The doctor's scale checks: mixed precision decided on synthetic events (a CUDA script's, which cannot run
here), the cross-rank verdicts on synthetic facts, the merged report's ranks, and no false alarm from them on
trainwell's own mixed-precision and two-process runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from trainwell.doctor.events import BackwardEvent, CallEvent, ForwardEvent
from trainwell.doctor.session import Session

SRC = str(Path(__file__).resolve().parents[1] / "src")
SCALE_IDS = {"fp16-without-grad-scaler", "clip-before-unscale", "grad-scaler-update-missing", "ddp-data-not-sharded",
             "set-epoch-missing", "replicas-diverged", "checkpoint-written-by-every-rank",
             "batchnorm-small-batch-per-process"}


class FakeScaler:
    """A GradScaler as the events show it: enabled, with a scale."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    def is_enabled(self) -> bool:
        return self.enabled

    def get_scale(self) -> float:
        return 65536.0


def _session(check: str) -> Session:
    return Session(checks=[check])


def _call(session: Session, name: str, owner: Any = None, *args: Any) -> None:
    session._dispatch("on_call", CallEvent(name, owner, args, {}, "train.py:9"))


def _fp16_iteration(session: Session, scaler: FakeScaler | None) -> None:
    model = nn.Linear(2, 2)
    output = model(torch.ones(1, 2))
    session._dispatch("on_forward", ForwardEvent(model, (), output, True, "train.py:5"))
    loss = torch.ones((), requires_grad=True)
    if scaler is not None:
        _call(session, "scaler.scale", scaler, loss)
    session._dispatch("on_backward_pre", BackwardEvent(loss, "train.py:7"))


@pytest.mark.parametrize(("scaler", "found"), [(None, True), (FakeScaler(), False), (FakeScaler(enabled=False), True)])
def test_fp16_autocast_on_cuda_without_an_enabled_scaler_is_found(monkeypatch: pytest.MonkeyPatch,
                                                                   scaler: FakeScaler | None, found: bool) -> None:
    from trainwell.doctor.checks import amp_scaler

    monkeypatch.setattr(amp_scaler, "fp16_autocast", lambda: "cuda")  # what torch.autocast("cuda", float16) shows
    session = _session("fp16-without-grad-scaler")
    for _ in range(3):
        _fp16_iteration(session, scaler)
    assert [f.id for f in session.findings] == (["fp16-without-grad-scaler"] if found else [])
    if found:
        assert "cuda" in session.findings[0].message


def test_bf16_autocast_and_two_unscaled_backwards_are_not_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.doctor.checks import amp_scaler

    session = _session("fp16-without-grad-scaler")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert amp_scaler.fp16_autocast() is None
    monkeypatch.setattr(amp_scaler, "fp16_autocast", lambda: "cuda")
    for _ in range(2):
        _fp16_iteration(session, None)
    assert not session.findings


@pytest.mark.parametrize(("calls", "found"), [
    (["scaler.scale", "clip_grad", "scaler.step", "scaler.update"], True),
    (["scaler.scale", "scaler.unscale_", "clip_grad", "scaler.step", "scaler.update"], False),
    (["scaler.scale", "scaler.step", "scaler.update", "clip_grad"], False),  # clipping after the scaler's step
])
def test_clipping_while_the_gradients_are_scaled(calls: list[str], found: bool) -> None:
    session, scaler, optimizer = _session("clip-before-unscale"), FakeScaler(), object()
    for name in calls:
        _call(session, name, None if name == "clip_grad" else scaler, optimizer)
    assert bool(session.findings) is found


@pytest.mark.parametrize(("iterations", "found"), [
    ([["scaler.step:a", "scaler.update"]] * 5, False),
    ([["scaler.step:a", "scaler.step:b", "scaler.update"]] * 5, False),  # two optimizers, one update
    ([["scaler.step:a"], ["scaler.step:a"]], True),  # PyTorch would raise at the second step
])
def test_scaler_step_without_update(iterations: list[list[str]], found: bool) -> None:
    session, scaler, optimizers = _session("grad-scaler-update-missing"), FakeScaler(), {"a": object(), "b": object()}
    for calls in iterations:
        for call in calls:
            name, _, which = call.partition(":")
            _call(session, name, scaler, *([optimizers[which]] if which else []))
    assert bool(session.findings) is found


def test_a_new_scaler_every_iteration_is_found() -> None:
    session, optimizer = _session("grad-scaler-update-missing"), object()
    for _ in range(3):
        _call(session, "scaler.step", FakeScaler(), optimizer)
    assert [f.evidence["scalers_stepped_never_updated"] for f in session.findings] == [3]


def test_replicas_are_compared_at_the_steps_every_rank_reached() -> None:
    from trainwell.doctor.checks.replicas import ReplicasDiverged

    def facts(sums: dict[str, list[float]]) -> dict[str, Any]:
        return {"sums": {"0:10": sums}, "where": {"0:10": "train.py:20"}}

    same = {0: facts({"0": [1.0, 2.0], "1": [1.5, 2.5]}), 1: facts({"0": [1.0, 2.0]})}
    assert ReplicasDiverged.judge(same, 2) is None  # rank 1 stopped earlier: only step 0 is compared
    apart = {0: facts({"0": [1.0, 2.0], "1": [1.5, 2.5]}), 1: facts({"0": [1.0, 2.0], "1": [1.5, 2.6]})}
    verdict = ReplicasDiverged.judge(apart, 2)
    assert verdict is not None and verdict.values["step"] == 2 and verdict.where == "train.py:20"


def test_data_and_files_compared_across_ranks() -> None:
    from trainwell.doctor.checks.ddp_sampler import DataNotSharded
    from trainwell.doctor.checks.rank_writes import CheckpointWrittenByEveryRank

    def loader(h: str) -> list[dict[str, Any]]:
        return [{"order": 0, "hash": h, "trained": True, "sampler": "RandomSampler", "where": "train.py:3"}]

    assert DataNotSharded.judge({0: loader("a"), 1: loader("a")}, 2) is not None
    assert DataNotSharded.judge({0: loader("a"), 1: loader("b")}, 2) is None
    assert DataNotSharded.judge({0: loader("a"), 1: loader("a")}, 3) is None  # a rank is missing: not judged
    saved = ["t.py:9", "torch.save"]
    writes = CheckpointWrittenByEveryRank.judge({0: {"/r/ckpt.pt": saved}, 1: {"/r/ckpt.pt": saved}}, 2)
    assert writes is not None and writes.ranks == [0, 1] and writes.values["how"] == "torch.save"
    assert CheckpointWrittenByEveryRank.judge({0: {"/r/a0.pt": saved}, 1: {"/r/a1.pt": saved}}, 2) is None


def test_the_merged_report_says_which_ranks_saw_what(tmp_path: Path) -> None:
    from rich.console import Console

    from trainwell.cli.doctor_ranks import show
    from trainwell.doctor.findings import Finding

    def finding(check: str) -> dict[str, Any]:
        return Finding(id=check, severity="warning", title=f"{check} title", message="m", fix="f").to_dict()

    def rec(rank: int, findings: list[dict[str, Any]], facts: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"rank": rank, "world_size": 3, "exit_code": 0, "internal_errors": [], "findings": findings,
                "facts": facts or {}}

    paths = {"checkpoint-written-by-every-rank": {"/r/ckpt.pt": ["train.py:30", "open"]}}
    records = {0: rec(0, [finding("set-epoch-missing"), finding("dead-relu")], paths),
               1: rec(1, [finding("set-epoch-missing")], paths), 2: rec(2, [finding("set-epoch-missing")])}
    console = Console(record=True, width=200)
    out = tmp_path / "doctor.json"
    assert show(records, 3, "en", str(out), "train.py", console) == 0
    text = console.export_text()
    assert "set-epoch-missing [all ranks]" in text and "dead-relu [rank 0]" in text
    assert "checkpoint-written-by-every-rank [rank 0, 1]" in text
    assert text.count("set-epoch-missing title") == 2  # its block and its row in the summary, once each
    report = json.loads(out.read_text())
    assert {f["id"]: f["ranks"] for f in report["findings"]} == {
        "set-epoch-missing": [0, 1, 2], "dead-relu": [0], "checkpoint-written-by-every-rank": [0, 1]}
    assert report["world_size"] == 3 and report["missing_ranks"] == []


def test_a_rank_without_a_record_is_named() -> None:
    from trainwell.doctor.ranks import merge

    merged = merge({0: {"rank": 0, "world_size": 2, "exit_code": 0, "internal_errors": ["x: boom"], "findings": [],
                        "facts": {}}}, 2, "en")
    assert merged.missing_ranks == [1] and merged.internal_errors == ["rank 0: x: boom"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WORLD_SIZE", "RANK", "LOCAL_RANK")}
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _scale_findings(run: Path, output: str) -> set[str]:
    found = {f["id"] for f in json.loads((run / "doctor.json").read_text())["findings"]}
    return (found | {i for i in SCALE_IDS if i in output}) & SCALE_IDS


@pytest.mark.slow
@pytest.mark.parametrize("how", [["--nproc", "2"], ["--precision", "16-mixed", "--set", "train.grad_clip=1.0"]],
                         ids=["nproc2", "fp16"])
def test_trainwells_own_runs_raise_no_scale_finding(tmp_path: Path, how: list[str]) -> None:
    """trainwell shards its data without a DistributedSampler, saves from rank 0 and unscales before clipping."""
    cmd = [sys.executable, "-m", "trainwell", "train", "--data", "digits", "--epochs", "1", "--threads", "1",
           "--no-progress", "--out", "run", *how]
    done = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _scale_findings(tmp_path / "run", done.stdout + done.stderr) == set()


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["--nproc", "torchrun"])
def test_two_processes_give_one_merged_report(tmp_path: Path, launcher: str) -> None:
    """`doctor run --nproc 2` and `torchrun --nproc-per-node 2 -m trainwell doctor run` print the report once."""
    script = str(Path(__file__).parent / "doctor_cases" / "ddp-data-not-sharded" / "buggy.py")
    doctor = ["trainwell", "doctor", "run", "--lang", "en", "--json", "doctor.json"]
    cmd = ([sys.executable, "-m", *doctor, "--nproc", "2", script] if launcher == "--nproc" else
           [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "-m", *doctor,
            script])
    (tmp_path / "tmp").mkdir()
    done = subprocess.run(cmd, cwd=tmp_path, env={**_env(), "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path / "tmp")},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    if launcher == "--nproc":  # nothing left in the temporary folder (torchrun's agent left torchelastic_* there)
        left = [p.name for p in (tmp_path / "tmp").iterdir() if not p.name.startswith("torchinductor_")]
        assert not left  # (torch's own compile cache, torchinductor_<user>, is meant to stay)
    assert done.stderr.count("trainwell doctor found: 1") == 1
    assert "ddp-data-not-sharded [all ranks]" in done.stderr
    assert done.stdout.count("epoch 1:") == 1  # the script's own output: rank 0 prints it
    report = json.loads((tmp_path / "doctor.json").read_text())
    assert [(f["id"], f["ranks"]) for f in report["findings"]] == [("ddp-data-not-sharded", [0, 1])]


@pytest.mark.slow
def test_two_machines_report_to_rank_0_through_the_agents_store(tmp_path: Path) -> None:
    """Two torchrun agents with one worker each (c10d rendezvous on 127.0.0.1), each with its own temporary
    folder as on two machines: rank 1's record reaches rank 0 through the agents' store, and the one report says
    that both ranks read the same data."""
    import socket

    script = str(Path(__file__).parent / "doctor_cases" / "ddp-data-not-sharded" / "buggy.py")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for node in range(2):
        (tmp_path / f"tmp{node}").mkdir()
        env = {**_env(), "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path / f"tmp{node}")}
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1",
               "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "doctor2",
               "-m", "trainwell", "doctor", "run", "--lang", "en", "--json", f"doctor{node}.json", script]
        procs.append(subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], "\n".join(o[-2000:] for o in outs)
    reports = [json.loads(path.read_text()) for path in sorted(tmp_path.glob("doctor*.json"))]
    assert len(reports) == 1, "only rank 0 writes the merged report"
    assert [(f["id"], f["ranks"]) for f in reports[0]["findings"]] == [("ddp-data-not-sharded", [0, 1])]
    assert reports[0]["missing_ranks"] == []
    assert sum(o.count("trainwell doctor found: 1") for o in outs) == 1


def test_ranks_on_other_machines_without_a_store_are_named_as_such() -> None:
    from rich.console import Console

    from trainwell.cli.doctor_ranks import show

    record = {"rank": 0, "world_size": 2, "exit_code": 0, "internal_errors": [], "findings": [], "facts": {}}
    console = Console(record=True, width=300)
    assert show({0: record}, 2, "en", None, "train.py", console, unreachable=1) == 0
    text = console.export_text()
    assert "no report from rank 1: the group spans several machines" in text and "failed or was stopped" not in text


def _rows_loader(first_hash: str, rows: list[int], size: int) -> list[dict[str, Any]]:
    return [{"order": 0, "hash": first_hash, "trained": True, "sampler": "RandomSampler", "where": "train.py:3",
             "size": size, "rows": rows}]


@pytest.mark.parametrize(("rank1_rows", "found"), [
    (list(range(1000)), True),  # a whole epoch of the same 1,000 rows, in another order
    (list(range(1000, 2000)), False),  # the other half: a DistributedSampler's share
    (list(range(995, 1995)), False),  # a few rows in common (padding): not a finding
    (list(range(300)) + list(range(2000, 2700)), True),  # 30 % shared while rank 0 read half the data
])
def test_the_same_rows_in_another_order_are_found(rank1_rows: list[int], found: bool) -> None:
    """Ranks that shuffle with seeds of their own give different first batches; their rows still overlap."""
    from trainwell.doctor.checks.ddp_sampler import DataNotSharded

    verdict = DataNotSharded.judge({0: _rows_loader("a", list(range(1000)), 2000),
                                    1: _rows_loader("b", rank1_rows, 2000)}, 2)
    assert (verdict is not None) == found
    if verdict is not None:
        assert verdict.ranks == [0, 1] and "rank 1" in verdict.values["seen"]["en"]


def test_rows_that_repeat_within_a_rank_are_not_compared() -> None:
    from trainwell.doctor.checks.ddp_sampler import DataNotSharded

    repeated = [i % 100 for i in range(1000)]  # a table of 100 distinct rows, read ten times
    assert DataNotSharded.judge({0: _rows_loader("a", repeated, 1000), 1: _rows_loader("b", repeated, 1000)}, 2) is None


def test_row_signatures_match_across_copies_and_differ_between_rows() -> None:
    from trainwell.doctor.checks.ddp_sampler import row_signatures

    x = torch.randn(64, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    state = torch.random.get_rng_state()
    first = row_signatures((x, torch.zeros(64))).tolist()
    assert torch.equal(state, torch.random.get_rng_state())  # the script's generator is never drawn from
    assert first == row_signatures([x.clone()[torch.arange(64)]]).tolist() and len(set(first)) == 64
    assert row_signatures({"pixels": x[:5]}).tolist() == first[:5]
    assert row_signatures(torch.tensor(3.0)) is None


def test_an_agent_store_that_cannot_be_reached_is_an_error_not_a_silent_none(monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    """run_rank records the failure as the doctor's own error (said in the report) and falls back to files."""
    import argparse
    import io
    import socket

    from rich.console import Console

    from trainwell.cli.doctor_ranks import run_rank
    from trainwell.doctor import ranks

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    monkeypatch.delenv(ranks.ENV_DIR, raising=False)
    monkeypatch.setenv("TORCHELASTIC_USE_AGENT_STORE", "True")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(port))
    monkeypatch.setattr(ranks, "STORE_CONNECT_S", 1.0)
    with pytest.raises(RuntimeError):
        ranks.agent_store()
    # The worker itself: one rank of one, its script done, its record handed over through this machine's folder.
    script = tmp_path / "tiny.py"
    script.write_text("import torch\nprint(float(torch.ones(2).sum()))\n")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    report = tmp_path / "report.json"
    args = argparse.Namespace(script=str(script), args=[], debug=False)
    assert run_rank(args, "en", str(report), Console(file=io.StringIO())) == 0
    errors = json.loads(report.read_text())["internal_errors"]
    assert len(errors) == 1 and "handing the record over through torchrun's store" in errors[0], errors
    monkeypatch.setenv("TORCHELASTIC_USE_AGENT_STORE", "False")
    assert ranks.agent_store() is None  # no store offered: the folder, as documented
