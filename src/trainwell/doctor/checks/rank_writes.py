"""checkpoint-written-by-every-rank: several processes ``torch.save`` to (or ``open(..., "w")``) the same file.

Judged across ranks (``CrossRankCheck``): each rank keeps the resolved paths it passed to ``torch.save`` (a path,
or an open file's name; in-memory buffers are left out) or opened for writing from scratch (modes ``w`` / ``x``;
appending is left out, and so are device files under ``/dev`` and ``/proc``). A path saved by two ranks or more was not guarded by
``if rank == 0``: the processes write the same file at the same moment, which at best wastes the time and at
worst leaves a file mixed from two writes that no longer loads. Paths that differ per rank (``ckpt_rank{r}.pt``)
are fine and never flagged.
"""

from __future__ import annotations

import os
from typing import Any

from trainwell.doctor.check import Text, register
from trainwell.doctor.events import CallEvent
from trainwell.doctor.ranks import CrossRankCheck, Verdict

MAX_PATHS = 50


def _path(target: Any) -> str | None:
    """The file ``torch.save`` writes, resolved, or None for an in-memory buffer."""
    name = target if isinstance(target, (str, os.PathLike)) else getattr(target, "name", None)
    if not isinstance(name, (str, os.PathLike)):
        return None
    path = os.path.realpath(os.fspath(name))
    return None if path.startswith(("/dev/", "/proc/")) else path


@register
class CheckpointWrittenByEveryRank(CrossRankCheck):
    id = "checkpoint-written-by-every-rank"
    loop_only = True
    severity = "warning"
    summary = "several processes torch.save to the same file at once (not guarded by rank == 0)"
    text = {
        "en": Text(
            title="Every process writes the same checkpoint file",
            message="Ranks {ranks} all wrote {path} ({how}). The processes write the file at the same "
                    "moment: the work is repeated {count} times, and when two writes interleave the file is "
                    "corrupt and will not load.",
            fix="save from one process only: if torch.distributed.get_rank() == 0: "
                "torch.save(model.module.state_dict(), path)  # then dist.barrier() if others read it"),
        "zh": Text(
            title="每个进程都在写同一个检查点文件",
            message="进程 {ranks} 都写入了 {path}（{how}）。这些进程同时写这个文件：同样的工作重复了 {count} 次，"
                    "而当两次写入交错时文件会损坏，无法再加载。",
            fix="只在一个进程中保存：if torch.distributed.get_rank() == 0: "
                "torch.save(model.module.state_dict(), path)  # 如果其他进程要读取，再调用 dist.barrier()"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.paths: dict[str, list[str | None]] = {}  # path -> [where it was first written, "torch.save" / "open"]

    def on_call(self, ev: CallEvent) -> None:
        if ev.name not in ("torch.save", "open") or not self.session.cross_rank or len(self.paths) >= MAX_PATHS:
            return
        if ev.name == "open":
            target = ev.args[0] if ev.args else ev.kwargs.get("file")
        else:
            target = ev.args[1] if len(ev.args) > 1 else ev.kwargs.get("f")
        path = _path(target)
        if path is not None:
            self.paths.setdefault(path, [ev.where, ev.name])

    def facts(self) -> Any:
        return self.paths or None

    @classmethod
    def judge(cls, facts: dict[int, Any], world_size: int) -> Verdict | None:
        savers: dict[str, list[int]] = {}
        for rank in sorted(facts):
            for path in facts[rank]:
                savers.setdefault(path, []).append(rank)
        for path, ranks in savers.items():
            if len(ranks) > 1:
                where, how = facts[ranks[0]][path]
                return Verdict(where, {"path": path, "ranks": ranks, "written_by": how},
                               {"path": path, "ranks": ", ".join(map(str, ranks)), "count": len(ranks),
                                "how": "torch.save" if how == "torch.save" else 'open(..., "w")'}, ranks)
        return None
