"""The doctor over several processes: what each rank saw, written to a file, and one merged report.

Each rank of a multi-process ``trainwell doctor run`` runs the script under its own session and writes a
record (its findings, internal errors, exit code, and the facts of the cross-rank checks). Under the
``--nproc`` launcher the records are ``rank<N>.json`` files in the launcher's folder; under a plain ``torchrun``
they are keys in the key-value store that torchrun's agents host for their workers (so ranks on other machines
reach rank 0 too), or, where the agents host no store, files in a folder on each machine. One process (the
launcher, or rank 0 under torchrun) reads every record and merges them: a finding seen by several ranks is reported once,
with the ranks that saw it; a ``CrossRankCheck`` judges the facts of all ranks together (data that is the
same on every rank, replicas whose weights differ, one file written by every rank). No collective is ever
called and the script's process group is never touched (the store is reached through a connection of the
doctor's own), so the doctor cannot hang the script's collectives, whatever backend the script uses and however
many steps each rank takes.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trainwell.doctor.check import CHECKS, Check
from trainwell.doctor.findings import Finding

RECORD = "rank{}.json"
STORE_KEY = "trainwell-doctor/{run}/{attempt}/rank{rank}"
STORE_CONNECT_S = 30.0
ENV_DIR = "TRAINWELL_DOCTOR_RANKS"  # set by the --nproc launcher: the workers only write, the launcher merges


@dataclass(frozen=True)
class Verdict:
    """A cross-rank finding: where, its evidence, the message's values and the ranks concerned. A value given as
    ``{"en": ..., "zh": ...}`` is a part of the message in each language (the judge does not know the report's)."""

    where: str | None
    evidence: dict[str, Any]
    values: dict[str, Any]
    ranks: list[int]


class CrossRankCheck(Check):
    """A check judged over every rank's facts at the end of a multi-process run (never in one process)."""

    def facts(self) -> Any:
        """This rank's observations, JSON-able; None when there is nothing to compare."""
        return None

    @classmethod
    def judge(cls, facts: dict[int, Any], world_size: int) -> Verdict | None:
        """The finding, if the ranks' facts (rank -> facts, ranks without facts left out) show the problem."""
        return None


def record(session: Any, exit_code: int, rank: int, world_size: int) -> dict[str, Any]:
    """What this rank writes for the merge."""
    facts = {c.id: f for c in session.checks if isinstance(c, CrossRankCheck) and (f := c.facts()) is not None}
    return {"rank": rank, "world_size": world_size, "exit_code": exit_code, "internal_errors": session.internal_errors,
            "findings": [f.to_dict() for f in session.findings], "facts": facts, "unjudged": session.unjudged}


def shared_folder() -> Path:
    """The folder the ranks of this group write to: the launcher's, or one named after the torchrun group (the
    elastic agent's process, its run id and restart count are the same on every worker of one machine)."""
    given = os.environ.get(ENV_DIR)
    if given:
        return Path(given)
    key = "-".join([os.environ.get("TORCHELASTIC_RUN_ID", "run"), str(os.getppid()),
                    os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"), os.environ.get("MASTER_PORT", "")])
    return Path(tempfile.gettempdir()) / f"trainwell-doctor-{key}"


def write_record(folder: Path, data: dict[str, Any]) -> None:
    from trainwell._files import atomic_write_json

    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_json(folder / RECORD.format(data["rank"]), data)


def read_records(folder: Path, world_size: int, *, wait_s: float = 0.0,
                 expect: int | None = None) -> dict[int, dict[str, Any]]:
    """The records present, by rank, waiting up to ``wait_s`` seconds for ``expect`` of them (default: all
    ``world_size``; the ranks on this machine when the group spans several)."""
    deadline = time.monotonic() + wait_s
    while True:
        found = {r: folder / RECORD.format(r) for r in range(world_size) if (folder / RECORD.format(r)).is_file()}
        if len(found) >= (expect or world_size) or time.monotonic() >= deadline:
            return {r: json.loads(p.read_text(encoding="utf-8")) for r, p in found.items()}
        time.sleep(0.1)


def agent_store() -> Any:
    """A connection of the doctor's own to the store torchrun's agents host for this group, or None where the
    agents host none (``TORCHELASTIC_USE_AGENT_STORE`` is not ``True``: then rank 0's process group owns the
    store, which is gone once the script has ended). Raises ``RuntimeError`` when the store cannot be reached."""
    if os.environ.get(ENV_DIR) or os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        return None
    from datetime import timedelta

    from torch.distributed import TCPStore

    try:
        address, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    except (KeyError, ValueError) as e:
        raise RuntimeError(f"torchrun set no usable MASTER_ADDR / MASTER_PORT ({e})") from e
    return TCPStore(address, port, is_master=False, timeout=timedelta(seconds=STORE_CONNECT_S))


def _store_key(rank: int) -> str:
    return STORE_KEY.format(run=os.environ.get("TORCHELASTIC_RUN_ID", "run"), rank=rank,
                            attempt=os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))


def put_record(store: Any, data: dict[str, Any]) -> None:
    store.set(_store_key(data["rank"]), json.dumps(data))


def take_records(store: Any, world_size: int, *, wait_s: float) -> dict[int, dict[str, Any]]:
    """The records in the store, by rank, waiting up to ``wait_s`` seconds for every rank's."""
    deadline = time.monotonic() + wait_s
    while True:
        present = [r for r in range(world_size) if store.check([_store_key(r)])]
        if len(present) == world_size or time.monotonic() >= deadline:
            return {r: json.loads(store.get(_store_key(r))) for r in present}
        time.sleep(0.1)


@dataclass
class Merged:
    findings: list[Finding]
    internal_errors: list[str]
    exit_code: int
    world_size: int
    missing_ranks: list[int]
    unjudged: dict[str, int] = field(default_factory=dict)  # events no check was given, summed over the ranks


def merge(records: dict[int, dict[str, Any]], world_size: int, lang: str) -> Merged:
    """One report from every rank's record: per-rank findings grouped by id (the lowest rank's words kept, the
    ranks listed), then the cross-rank checks' verdicts."""
    from trainwell.doctor import checks as _builtin  # noqa: F401  (registers the built-in checks)
    from trainwell.doctor.findings import SEVERITY_ORDER

    by_id: dict[str, Finding] = {}
    for rank in sorted(records):
        for data in records[rank]["findings"]:
            seen = by_id.get(data["id"])
            if seen is None:
                by_id[data["id"]] = Finding(**{**data, "ranks": [rank]})
            elif seen.ranks is not None:
                seen.ranks.append(rank)
    for name in CHECKS.names():
        cls = CHECKS.get(name)
        if not issubclass(cls, CrossRankCheck) or name in by_id:
            continue
        facts = {r: rec["facts"][name] for r, rec in records.items() if name in rec.get("facts", {})}
        verdict = cls.judge(facts, world_size) if len(facts) > 1 else None
        if verdict is not None:
            by_id[name] = _finding(cls, verdict, lang)
    errors = [f"rank {r}: {e}" for r in sorted(records) for e in records[r]["internal_errors"]]
    codes = [records[r]["exit_code"] for r in sorted(records)]
    exit_code = next((c for c in codes if c), 0) if codes else 1
    findings = sorted(by_id.values(), key=lambda f: SEVERITY_ORDER.get(f.severity, 9))
    unjudged: dict[str, int] = {}
    for rec in records.values():
        for kind, n in rec.get("unjudged", {}).items():
            unjudged[kind] = unjudged.get(kind, 0) + n
    return Merged(findings, errors, exit_code, world_size, [r for r in range(world_size) if r not in records],
                  unjudged)


def _finding(cls: type[CrossRankCheck], verdict: Verdict, lang: str) -> Finding:
    """The finding as a session would word it."""
    from trainwell.doctor.lang import pick
    from trainwell.doctor.session import Session

    values = {k: pick(lang, v["en"], v["zh"]) if isinstance(v, dict) and set(v) == {"en", "zh"} else v
              for k, v in verdict.values.items()}
    session = Session(lang=lang, checks=[])
    session.report(cls(session), where=verdict.where, evidence=verdict.evidence, values=values)
    return replace(session.findings[0], step=None, ranks=sorted(verdict.ranks))


def rank_words(ranks: list[int] | None, world_size: int, lang: str) -> str:
    """"rank 0, 1" or "all ranks" (in the report's language); empty for a single-process finding."""
    if ranks is None:
        return ""
    if len(ranks) == world_size and world_size > 1:
        return "所有进程" if lang == "zh" else "all ranks"
    listed = ", ".join(str(r) for r in ranks)
    return f"进程 {listed}" if lang == "zh" else f"rank {listed}"
