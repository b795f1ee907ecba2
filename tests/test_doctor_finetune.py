"""The fine-tuning checks: frozen parameters the optimizer still moves, a frozen backbone's BatchNorm left in
training mode, inputs normalized otherwise than pretrained weights were, and a rate that wrecks the pretrained
weights; what counts as loaded weights; and trainwell's own fine-tuning recipe staying quiet under them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from conftest import main_in, train_once
from trainwell.doctor.findings import Finding
from trainwell.doctor.session import Session

pytestmark = pytest.mark.usefixtures("one_thread")

FINETUNE_CHECKS = {"frozen-params-changing", "frozen-batchnorm-training", "input-normalization-mismatch",
                   "lr-too-high-for-finetuning"}


def _watched(fn, checks: list[str] | None = None) -> Session:  # type: ignore[no-untyped-def]
    session = Session(lang="en", checks=checks)
    with session:
        fn()
    session.end()
    assert session.internal_errors == []
    return session


def _ids(session: Session) -> set[str]:
    return {f.id for f in session.findings}


# ---------------------------------------------------------------- 1. frozen parameters that move


def _train_then_freeze(set_to_none: bool, teacher: bool = False) -> None:
    torch.manual_seed(0)
    x, y = torch.randn(64, 8), torch.randint(0, 3, (64,))
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    ema = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
    for step in range(30):
        if step == 10:
            model[0].requires_grad_(False)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=set_to_none)
        loss.backward()
        opt.step()
        if teacher:  # a frozen teacher the user's own code moves (mean teacher): not the optimizer's doing
            with torch.no_grad():
                for t, s in zip(ema.parameters(), model.parameters()):
                    t.mul_(0.9).add_(s, alpha=0.1)


def test_what_torch_does_with_a_frozen_parameter_in_the_optimizer() -> None:
    """The fact the check stands on: a frozen parameter whose .grad is None is skipped by the optimizer; one that
    holds a gradient tensor (zeros kept by zero_grad(set_to_none=False)) is moved by its state and weight decay."""
    for set_to_none, moves in ((True, False), (False, True)):
        torch.manual_seed(0)
        w = nn.Parameter(torch.randn(4))
        opt = torch.optim.AdamW([w], lr=0.1, weight_decay=0.1)
        (w ** 2).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=set_to_none)
        w.requires_grad_(False)
        before = w.detach().clone()
        opt.step()
        assert (not torch.equal(w.detach(), before)) is moves


def test_frozen_parameters_the_optimizer_moves_are_reported_and_those_it_skips_are_not() -> None:
    session = _watched(lambda: _train_then_freeze(set_to_none=False), ["frozen-params-changing"])
    (finding,) = session.findings
    assert finding.evidence["parameters"] == ["0.weight", "0.bias"] and finding.evidence["grad_kept_as_zeros"]
    assert "set_to_none" in finding.message and "Weight decay (0.05)" in finding.message
    # Cleared to None (the default): still in the optimizer, never stepped, never reported.
    assert _ids(_watched(lambda: _train_then_freeze(set_to_none=True), ["frozen-params-changing"])) == set()
    # A frozen teacher moved by the user's own code is not a frozen part the optimizer moves.
    assert _ids(_watched(lambda: _train_then_freeze(set_to_none=True, teacher=True))) & FINETUNE_CHECKS == set()


# ---------------------------------------------------------------- what counts as loaded weights


def test_weights_loaded_before_training_count_and_a_rollback_does_not() -> None:
    seen: dict[str, bool] = {}

    def script() -> None:
        torch.manual_seed(0)
        pretrained = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
        model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
        model.load_state_dict(pretrained.state_dict())
        scratch = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
        opt = torch.optim.SGD([*model.parameters(), *scratch.parameters()], lr=0.1)
        best = {k: v.clone() for k, v in scratch.state_dict().items()}
        for _ in range(3):
            loss = model(torch.randn(8, 4)).sum() + scratch(torch.randn(8, 4)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        scratch.load_state_dict(best)  # a rollback of a model being trained: not a start from pretrained weights
        seen["model"] = session.loaded.holds(model)
        seen["scratch"] = session.loaded.holds(scratch)
        seen["bn stats"] = session.loaded.statistics(model[1]) is not None

    session = Session(lang="en", checks=[])
    with session:
        script()
    assert seen == {"model": True, "scratch": False, "bn stats": True}


# ---------------------------------------------------------------- 4. the rate: folded with lr-too-high


def _finding(id: str, severity: str = "error") -> Finding:
    return Finding(id=id, severity=severity, title=f"{id} title", message=f"{id} message", fix=f"{id} fix")


def test_lr_too_high_is_folded_into_the_fine_tuning_finding() -> None:
    from trainwell.doctor.folding import fold_symptoms, symptom_ids

    folded = fold_symptoms([_finding("lr-too-high"), _finding("lr-too-high-for-finetuning"),
                            _finding("nonfinite-loss")])
    assert [f.id for f in folded] == ["lr-too-high-for-finetuning"]
    assert sorted(symptom_ids(folded[0])) == ["lr-too-high", "nonfinite-loss"]
    # A missing zero_grad() explains a climbing loss before any rate does.
    assert [f.id for f in fold_symptoms([_finding("zero-grad-missing"), _finding("lr-too-high-for-finetuning")])] \
        == ["zero-grad-missing"]


def test_a_head_trained_alone_over_a_frozen_backbone_is_not_judged_for_its_rate() -> None:
    """A new head at a high rate over a frozen backbone cannot wreck pretrained features: only an optimizer that
    trains most of the loaded model is watched."""
    from trainwell.doctor.loaded import Loaded

    model = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 4))
    loaded = Loaded()
    loaded.note(model)
    assert loaded.trained_by(torch.optim.SGD(model[1].parameters(), lr=1.0)) is None
    assert loaded.trained_by(torch.optim.SGD(model.parameters(), lr=1.0)) is model
    model[0].requires_grad_(False)  # frozen, though in the optimizer: not trained by it
    assert loaded.trained_by(torch.optim.SGD(model.parameters(), lr=1.0)) is None


# ---------------------------------------------------------------- inside trainwell's own loop

FAST = ["--data", "digits", "--threads", "1", "--no-progress", "--set", "model.channels=[8]",
        "--set", "model.hidden=[16]"]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_once(tmp_path_factory, [*FAST, "--epochs", "1", "--no-doctor"])


def _finetune(tmp_path: Path, source: Path, out: str) -> set[str]:
    assert main_in(tmp_path, "train", *FAST, "--epochs", "2", "--out", out, "--pretrained", str(source),
                   "--set", "train.finetune.freeze_epochs=1") == 0
    report = json.loads((tmp_path / out / "doctor.json").read_text())
    assert report["internal_errors"] == []
    return {f["id"] for f in report["findings"]}


@pytest.mark.slow
def test_trainwells_freezing_recipe_is_quiet_and_its_checks_are_watching(tmp_path: Path, source: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.doctor.loaded import Loaded
    from trainwell.engine.finetune import FreezeBackbone

    noted: list[str] = []
    note = Loaded.note

    def noting(self: Loaded, module: nn.Module) -> None:
        noted.append(type(module).__name__)
        note(self, module)

    monkeypatch.setattr(Loaded, "note", noting)
    assert _finetune(tmp_path, source, "tuned") & FINETUNE_CHECKS == set()
    assert noted == ["CNN"]  # the pretrained model was known as loaded: the checks did judge it
    # The same run with the backbone's BatchNorm left in training mode while frozen is told.
    keep = FreezeBackbone.on_epoch_start

    def frozen_in_training_mode(self: FreezeBackbone, trainer) -> None:  # type: ignore[no-untyped-def]
        self.norms = []
        keep(self, trainer)

    monkeypatch.setattr(FreezeBackbone, "on_epoch_start", frozen_in_training_mode)
    assert "frozen-batchnorm-training" in _finetune(tmp_path, source, "tuned_bn_training")


def test_inside_trainwell_the_findings_name_the_setting_or_the_model_change() -> None:
    from trainwell.doctor.in_trainwell import Loop, adapt

    rate = Finding(id="lr-too-high-for-finetuning", severity="error", title="t", message="m", fix="f",
                   evidence={"lr": 0.3, "suggested_lr": 0.03})
    adapt(rate, Loop(command="train", lr=0.3, builtin_model=True, model_name="cnn"), "en")
    assert rate.fix.startswith("fine-tune at a lower rate: --lr 0.03 (now 0.3)")
    assert "train.finetune.backbone_lr" in rate.fix and rate.evidence["setting"].startswith("--lr (train.lr)")
    norms = Finding(id="frozen-batchnorm-training", severity="warning", title="t", message="m", fix="f",
                    where="script.py:9")
    adapt(norms, Loop(command="fit", lr=1e-3), "zh")
    assert "def train(self, mode=True)" in norms.fix and "fit 每个 epoch" in norms.fix and norms.where == "script.py:9"
    moved = Finding(id="input-normalization-mismatch", severity="warning", title="t", message="m", fix="normalize")
    adapt(moved, Loop(command="train", builtin_model=True, model_name="cnn"), "en")
    assert moved.fix == "normalize" and moved.evidence["setting"] == "--data (data.name)"
