"""script-error: the script stopped with an error no other check explained. The finding names the user's line,
the operation that failed and the shape, dtype and device of its tensors (``_failure``), with a likely cause
when the facts point at one (``_crash_rules``), or says plainly that the doctor knows no more than the traceback.

It decides at the end of the run: an error another check explained (its finding carries the same message)
is not reported twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainwell._errors import TrainwellError
from trainwell.doctor.check import Check, Text, register

if TYPE_CHECKING:
    from trainwell.doctor.checks._failure import Failure


@register
class ScriptError(Check):
    id = "script-error"
    severity = "error"
    summary = "the script stopped with an error: its line, the failing operation and its tensors, and the cause"
    text = {
        "en": Text(title="The script stopped with an error", message="The script stopped with {error_type} at "
                   "{line}{on}. {cause}", fix="{fix}"),
        "zh": Text(title="脚本因错误而停止", message="脚本在 {line} 因 {error_type} 而停止{on}。{cause}", fix="{fix}"),
    }

    def __init__(self, session):  # type: ignore[no-untyped-def]
        super().__init__(session)
        self.failure: Failure | None = None

    def on_error(self, error: BaseException) -> None:
        # Not Ctrl-C or sys.exit, and not trainwell's own errors (``trainwell train`` / ``fit``): those already
        # name the value and the fix, without a traceback for this finding to point at.
        if isinstance(error, Exception) and not isinstance(error, TrainwellError):
            from trainwell.doctor.checks._failure import failure_of  # (only after a crash: not at every start)

            failure = failure_of(error)
            # Inside trainwell's loop only a failing PyTorch operation is the doctor's to explain: an exception
            # the user's own code raised (a callback stopping the run, say) is theirs, shown as it was raised.
            if failure.op is not None or not self.session.in_trainer:
                self.failure = failure

    def on_end(self) -> None:
        f, self.failure = self.failure, None
        if f is None or any(x.evidence.get("error") and (x.evidence["error"] in f.message or f.message in
                                                       str(x.evidence["error"])) for x in self.session.findings):
            return
        zh = self.session.lang == "zh"
        on = ""
        if f.op:
            listed = ("，" if zh else ", ").join(o.words() for o in f.operands)
            on = (f"：`{f.op}` 收到的张量为 {listed}" if listed else f"：`{f.op}`") if zh else \
                 (f": `{f.op}` got {listed}" if listed else f": `{f.op}`")
        from trainwell.doctor.checks._crash_rules import cause_of

        found = cause_of(f)
        if found is not None:
            cause, fix = found[0][zh], found[1][zh]
        else:
            said = f.message
            cause = (f"PyTorch 的报错：{said}。doctor 对此没有比回溯更多的解释。" if zh else
                     f"The error said: {said}. The doctor has no explanation beyond the traceback.")
            fix = ("读回溯，并打印那一行上张量的形状、类型和设备（print(x.shape, x.dtype, x.device)）" if zh else
                   "read the traceback, and print the shape, dtype and device of the tensors on that line "
                   "(print(x.shape, x.dtype, x.device))")
        self.report(f.where, {**f.evidence(), "explained": found is not None}, error_type=f.error_type,
                    line=f.where or "?", on=on, cause=cause, fix=fix)
