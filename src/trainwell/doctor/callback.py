"""The doctor inside trainwell's own loop: ``trainwell train`` (on by default) and ``fit(doctor=True)``.

The same session and checks as ``trainwell doctor run``, less those that judge a training loop's own code
(``Check.loop_only``: zero_grad, train/eval modes, set_epoch, the GradScaler, what each rank saves), which
trainwell's loop does itself and its tests hold it to; the callback also records
per-layer gradient norms for the report (on the doctor's sampled steps: the others never wait for
the device) and writes ``doctor.json`` into the run folder. Each finding is worded for trainwell's loop
(``in_trainwell.py``): it names the flag and config key (``trainwell train``) or the ``fit`` keyword that changes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainwell.engine.callbacks import Callback

if TYPE_CHECKING:
    from trainwell.doctor.findings import Finding
    from trainwell.doctor.session import Session
    from trainwell.engine.trainer import Trainer


def in_trainwells_loop() -> list[str]:
    """The checks that run inside trainwell's own loop: all but those that judge a loop's own code."""
    from trainwell.doctor import checks as _builtin  # noqa: F401  (registers the built-in checks)
    from trainwell.doctor.check import CHECKS

    return [name for name in CHECKS.names() if not CHECKS.get(name).loop_only]


class DoctorCallback(Callback):
    def __init__(self, *, lang: str | None = None, console: Any = None, run_dir: Path | None = None,
                 show: bool = True, config: Any = None) -> None:
        from trainwell.doctor.lang import detect_lang

        self.lang = detect_lang(lang)
        self.config = config  # trainwell train's Config: findings name its flags and keys (None: fit's keywords)
        self.console = console
        self.run_dir = run_dir
        self.show = show
        self.session: Session | None = None
        self.grad_norms: list[dict[str, float]] = []  # {"step": s, "<layer>": norm, ...}

    def on_fit_start(self, trainer: Trainer) -> None:
        from rich.console import Console
        from torch.utils.data import DataLoader

        from trainwell.doctor.in_trainwell import adapt, caller_lines, loop_from
        from trainwell.doctor.render import live_printer, print_internal_error
        from trainwell.doctor.session import Session

        console = self.console or Console(stderr=True)
        loop = loop_from(trainer, self.config, caller_lines())
        printer = live_printer(console, self.lang) if self.show else None

        def show(finding: Finding) -> None:
            adapt(finding, loop, self.lang)  # in place: the session's list, doctor.json and the report see it too
            if printer is not None:
                printer(finding)

        broken = (lambda c, h, e: print_internal_error(c, h, e, console, self.lang)) if self.show else None
        self.session = Session(lang=self.lang, checks=in_trainwells_loop(), on_finding=show, on_internal_error=broken,
                               in_trainer=True)
        if trainer.state.step > 0:
            self._continue_from(self.session, trainer.state.step)
        elif self.config is not None and self.config.model.pretrained:
            self.session.loaded.note(trainer.model)  # loaded before the session began: the fine-tuning checks ask
        self.session.before_sampled_step = lambda optimizer: self._grad_norms(trainer)
        self.session.install()
        # trainwell's loop reports its own model calls: cheaper than hooks on the model (see Trainer.call_watch).
        reported = trainer.call_watch = self.session.reported_by_caller(trainer.forward_model, trainer.eval_model)
        loader = trainer.train_loader
        if isinstance(loader, DataLoader):  # (each batch one next() of it: what the session's wrapper would count)
            session = self.session

            def switch(on: bool) -> None:  # between windows the loop reports its micro-batches (Trainer.step_watch)
                trainer.call_watch = None if on else reported
                trainer.step_watch = session.loop_step if on else None

            session.loop_reports(switch, loader.dataset)

    def _continue_from(self, session: Session, step: int) -> None:
        """A resumed run keeps what the doctor saw before: the findings of the earlier doctor.json (each
        check still reports once), its gradient-norm rows up to the resume step and its internal errors."""
        import json

        from trainwell.doctor.findings import Finding

        session.step_offset = step
        path = self.run_dir / "doctor.json" if self.run_dir is not None else None
        if path is None or not path.is_file():
            return
        try:
            earlier = json.loads(path.read_text(encoding="utf-8"))
            findings = [Finding(**data) for data in earlier["findings"]]
        except (ValueError, KeyError, TypeError) as e:
            session.internal_error(None, f"reading {path}", e)  # said; the run itself goes on
            return
        from trainwell.doctor.folding import unfold

        for finding in unfold(findings):  # a symptom folded into its cause was reported too
            if finding.id not in session.reported_ids:
                session.reported_ids.add(finding.id)
                session.findings.append(finding)
        self.grad_norms = [row for row in earlier.get("grad_norms", []) if row["step"] <= step]
        session.internal_errors.extend(earlier.get("internal_errors", []))

    def _grad_norms(self, trainer: Trainer) -> None:
        """Per-layer gradient norms for the report, on the doctor's sampled steps (other steps never wait for the
        device, and pay no call for it): the session calls this just before the optimizer steps."""
        from trainwell.doctor.checks._grads import layer_grad_norms

        row: dict[str, float] = {"step": float(trainer.state.step + 1)}
        row.update(layer_grad_norms(trainer.model))
        self.grad_norms.append(row)

    def on_validation_start(self, trainer: Trainer) -> None:
        if self.session is not None:
            self.session.evaluating(True)

    def on_validation_end(self, trainer: Trainer) -> None:
        if self.session is not None:
            self.session.evaluating(False)

    def on_epoch_end(self, trainer: Trainer, row: dict[str, Any]) -> None:
        self._write()  # a run killed later keeps what was seen so far

    def on_fit_end(self, trainer: Trainer) -> None:
        self._finish(None)
        trainer.call_watch = trainer.step_watch = None

    def on_exception(self, trainer: Trainer, error: BaseException) -> None:
        self._finish(error)
        trainer.call_watch = trainer.step_watch = None

    def summary_entries(self, trainer: Trainer) -> dict[str, Any]:
        from trainwell.doctor.folding import symptom_ids

        return {"doctor_findings": [i for f in self.findings for i in (f.id, *symptom_ids(f))]}  # symptoms too

    def report_sections(self, trainer: Trainer) -> list[tuple[str, str]]:
        from trainwell.report.doctor_section import doctor_sections

        return doctor_sections(self.findings, self.grad_norms)

    @property
    def findings(self) -> list[Any]:
        return self.session.sorted_findings() if self.session else []

    def _finish(self, error: BaseException | None) -> None:
        session = self.session
        if session is None or not session._installed:
            return
        try:
            if error is not None:
                session.error(error)
            session.end()
        finally:
            session.uninstall()
        self._write()

    def _write(self) -> None:
        if self.run_dir is None or self.session is None:
            return
        from trainwell.doctor.render import findings_json, write_json

        write_json(self.run_dir / "doctor.json", findings_json(self.findings, grad_norms=self.grad_norms,
                                                               internal_errors=self.session.internal_errors,
                                                               unjudged=self.session.unjudged))
