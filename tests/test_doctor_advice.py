"""Advice that fits where the doctor runs (issue 26, section 5).

- A root cause names its symptoms instead of their coming as separate findings with fixes of their own.
- Inside ``trainwell train`` a finding points at the flag / config key that changes it, not at the console
  script's line; a built-in model is not told to edit its code, a run that stops early is not told to stop early.
- A clean ``doctor run`` leaves the script's stdout as ``python script.py`` leaves it.
- ``--lang`` on ``trainwell train`` and the preflight speaks Chinese throughout.
- Fixes use the script's own names for its optimizer, model and scaler.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from trainwell.doctor.findings import SEVERITY_ORDER, Finding

pytestmark = pytest.mark.usefixtures("one_thread")


def _finding(id: str, severity: str = "error", **kw: Any) -> Finding:
    return Finding(**{"id": id, "severity": severity, "title": f"{id} title", "message": f"{id} message",
                      "fix": f"{id} fix", **kw})


def _doctor_run(tmp_path: Path, source: str, *options: str) -> tuple[dict[str, Any], str]:
    from trainwell.cli import main

    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    out = tmp_path / "doctor.json"
    main(["doctor", "run", "--json", str(out), *options, str(script)])
    return json.loads(out.read_text()), str(script)


# ---------------------------------------------------------------- 1. a cause folds its symptoms


def test_the_cause_table_is_acyclic_and_no_cause_is_milder_than_its_symptoms() -> None:
    from trainwell.doctor import checks  # noqa: F401
    from trainwell.doctor.check import CHECKS
    from trainwell.doctor.folding import SYMPTOM_WORDS, SYMPTOMS

    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(s == goal or (s not in seen and reaches(s, goal, seen | {s})) for s in SYMPTOMS.get(start, ()))

    names = set(CHECKS.names())
    for cause, symptoms in SYMPTOMS.items():
        assert cause in names and set(symptoms) <= names, cause
        assert not reaches(cause, cause), f"{cause} explains itself through its symptoms"
        for symptom in symptoms:
            assert symptom in SYMPTOM_WORDS, symptom
            assert SEVERITY_ORDER[CHECKS.get(cause).severity] <= SEVERITY_ORDER[CHECKS.get(symptom).severity], \
                (cause, symptom)


def test_symptoms_fold_into_their_root_cause_and_stand_alone_without_it() -> None:
    from trainwell.doctor.folding import fold_symptoms, symptom_ids, unfold

    alone = [_finding("lr-too-high"), _finding("nonfinite-loss")]  # no missing zero_grad: a real rate problem
    folded_alone = fold_symptoms(alone)
    assert [f.id for f in folded_alone] == ["lr-too-high"]  # the rate explains the inf loss ...
    assert symptom_ids(folded_alone[0]) == ["nonfinite-loss"]
    # ... but not dead ReLUs, which raw-scale targets or a negative bias cause with their own fix
    assert [f.id for f in fold_symptoms([_finding("lr-too-high"), _finding("dead-relu", "warning")])] == \
        ["lr-too-high", "dead-relu"]
    assert [f.id for f in fold_symptoms([_finding("exploding-gradients")])] == ["exploding-gradients"]  # no cause

    found = [_finding("lr-too-high"), _finding("zero-grad-missing"), _finding("exploding-gradients"),
             _finding("dead-relu", "warning"), _finding("data-not-shuffled", "warning")]
    folded = fold_symptoms(found)
    assert [f.id for f in folded] == ["zero-grad-missing", "data-not-shuffled"]  # ... and both fold into the cause
    cause = folded[0]
    assert symptom_ids(cause) == ["lr-too-high", "exploding-gradients", "dead-relu"]
    assert cause.evidence["symptoms"][0]["fix"] == "lr-too-high fix"  # each symptom whole, its id kept
    assert "symptoms" not in found[1].evidence  # the findings given are not changed
    assert [f.id for f in fold_symptoms(folded)] == [f.id for f in folded]  # folding twice changes nothing
    assert sorted(f.id for f in unfold(folded)) == sorted(f.id for f in found)


def test_a_symptom_found_after_its_cause_is_one_line_naming_it() -> None:
    from trainwell.doctor.folding import LiveFolding

    shown: list[tuple[str, list[str]]] = []
    lines: list[str] = []
    live = LiveFolding(lambda f, also: shown.append((f.id, also)), lines.append, "en")
    live(_finding("exploding-gradients"))  # before its cause: a finding of its own for now
    live(_finding("zero-grad-missing"))  # the cause names what it explains
    live(_finding("lr-too-high"))  # after it: one line
    assert shown == [("exploding-gradients", []), ("zero-grad-missing", ["exploding-gradients"])]
    assert len(lines) == 1 and "lr-too-high" in lines[0] and "zero-grad-missing" in lines[0]


def test_the_closing_table_and_the_block_name_the_folded_symptoms() -> None:
    from rich.console import Console

    from trainwell.doctor.folding import fold_symptoms
    from trainwell.doctor.render import print_finding, print_summary

    folded = fold_symptoms([_finding("zero-grad-missing"), _finding("lr-too-high"), _finding("exploding-gradients")])
    console = Console(record=True, width=200)
    print_summary(folded, console, "en")
    print_finding(folded[0], console, "zh")
    text = console.export_text()
    assert "zero-grad-missing (+ lr-too-high, exploding-gradients)" in text and "found: 1" in text
    assert "同时观察到：损失像学习率过高那样暴涨（lr-too-high）；梯度变得极大（exploding-gradients）" in text


NO_ZERO_GRAD = """\
    import torch
    torch.manual_seed(0)
    x = torch.randn(512, 8); y = x @ torch.randn(8, 1) + 0.1 * torch.randn(512, 1)
    net = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    sgd = torch.optim.SGD(net.parameters(), lr=0.05)
    for epoch in range(5):
        for i in range(0, 512, 32):
            {clear}loss = torch.nn.functional.mse_loss(net(x[i:i + 32]), y[i:i + 32])
            loss.backward()
            sgd.step()
    """


def test_a_missing_zero_grad_is_one_finding_naming_the_loss_blowing_up(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    report, _ = _doctor_run(tmp_path, NO_ZERO_GRAD.format(clear=""), "--lang", "en")
    err = capsys.readouterr().err
    assert [f["id"] for f in report["findings"]] == ["zero-grad-missing"]
    symptoms = [s["id"] for s in report["findings"][0]["evidence"]["symptoms"]]
    assert "lr-too-high" in symptoms  # at a rate the corrected twin below trains well with
    # Found after the cause: one line each naming it; the closing table lists them beside it.
    assert "the loss blew up as with a far too high learning rate (lr-too-high): a symptom of zero-grad-missing" in err
    assert "fix: lower" not in err and "a learning rate about" not in err  # no fix of the symptom's own
    # 5. the fix in the script's own names
    assert "sgd.zero_grad()" in report["findings"][0]["fix"] and "sgd.step()" in report["findings"][0]["fix"]


def test_the_corrected_twin_at_the_same_rate_is_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, _ = _doctor_run(tmp_path, NO_ZERO_GRAD.format(clear="sgd.zero_grad()\n            "), "--lang", "en")
    capsys.readouterr()
    assert report["findings"] == []


# ---------------------------------------------------------------- 2. inside trainwell train


def _loop(**kw: Any) -> Any:
    from trainwell.doctor.in_trainwell import Loop

    return Loop(**{"command": "train", "lr": 5.0, "builtin_model": True, "model_name": "mlp",
                   "activation": "relu", **kw})


def test_inside_trainwell_train_a_finding_points_at_the_setting_not_the_console_script() -> None:
    from trainwell.doctor.in_trainwell import adapt

    console_script = f"{Path(sys.executable).parent / 'trainwell'}:6"
    lr = _finding("lr-too-high", where=console_script, evidence={"lr": 5.0},
                  fix="use a smaller rate: optimizer = torch.optim.SGD(model.parameters(), lr=0.01)")
    adapt(lr, _loop(callers=frozenset({console_script})), "en")
    assert lr.where == "--lr (train.lr)" and lr.evidence["setting"] == "--lr (train.lr)"
    assert lr.fix.startswith("lower the learning rate: --lr 0.01 (now 5)")  # the check's own suggestion, kept
    assert "torch.optim" not in lr.fix

    relu = _finding("dead-relu", "warning", where=console_script,
                    fix="nn.init.zeros_(layer.bias)  # or nn.LeakyReLU(0.01) instead of nn.ReLU()")
    adapt(relu, _loop(callers=frozenset({console_script})), "zh")
    assert "nn.init" not in relu.fix and "--set model.activation=leaky_relu" in relu.fix and "调低学习率" in relu.fix
    assert relu.where == "--set model.activation"

    own = _finding("dead-relu", "warning", where="mynet.py:12", fix="nn.init.zeros_(layer.bias)")
    adapt(own, _loop(builtin_model=False, model_name="mynet:Net"), "en")
    assert own.fix == "nn.init.zeros_(layer.bias)"  # the user's own model: the check's words about their code
    assert own.where == "mynet.py:12"  # a line in their code stays


def test_a_run_that_stops_early_is_not_told_to_stop_early() -> None:
    from trainwell.doctor.in_trainwell import adapt

    stopping = adapt(_finding("overfitting", "info"), _loop(early_stop=3), "en")
    assert "--early-stop 5" not in stopping.fix and "early stopping is on already (patience 3)" in stopping.fix
    assert "model.dropout" in stopping.fix
    plain = adapt(_finding("overfitting", "info"), _loop(), "en")
    assert "--early-stop 5" in plain.fix and plain.where == "--early-stop (train.early_stop.patience)"
    in_fit = adapt(_finding("overfitting", "info", where="script.py:30"), _loop(command="fit", early_stop=2), "en")
    assert "early_stop=5" not in in_fit.fix and in_fit.where == "script.py:30"  # fit's caller line is the user's


def test_trainwell_train_in_chinese_names_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["train", "--lang", "zh", "--data", "digits", "--model", "mlp", "--optimizer", "sgd", "--lr", "5",
                 "--epochs", "2", "--no-progress", "--out", "run"]) == 0
    err = capsys.readouterr().err
    findings = json.loads((tmp_path / "run" / "doctor.json").read_text())["findings"]
    high = next(f for f in findings if f["id"] == "lr-too-high")
    assert high["where"] == "--lr (train.lr)"
    assert high["fix"].startswith("调低学习率：--lr ")
    assert "学习率" in high["title"]  # the check's own text in Chinese too
    assert "trainwell doctor 错误" in err
    assert all(".venv" not in (f["where"] or "") and "bin/trainwell" not in (f["where"] or "") for f in findings)


# ---------------------------------------------------------------- 3. a clean run keeps the script's stdout

CLEAN = """\
import torch
torch.manual_seed(0)
x = torch.randn(64, 4); y = (x[:, 0] > 0).long()
net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
opt = torch.optim.Adam(net.parameters(), 1e-2)
for i in range(30):
    opt.zero_grad(); loss = torch.nn.functional.cross_entropy(net(x), y); loss.backward(); opt.step()
print("trained", loss.item() < 1)
"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_clean_run_leaves_the_scripts_stdout_as_python_does(tmp_path: Path, lang: str) -> None:
    script = tmp_path / "clean.py"
    script.write_text(CLEAN)
    env = {"OMP_NUM_THREADS": "1"}
    import os

    plain = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120, cwd=tmp_path,
                           env={**os.environ, **env})
    watched = subprocess.run([sys.executable, "-m", "trainwell", "doctor", "run", "--lang", lang, str(script)],
                             capture_output=True, timeout=120, cwd=tmp_path, env={**os.environ, **env})
    assert watched.returncode == plain.returncode == 0
    assert watched.stdout == plain.stdout == b"trained True\n"
    none = "no problems found" if lang == "en" else "没有发现问题"
    assert none in watched.stderr.decode()


# ---------------------------------------------------------------- 4. the preflight in Chinese


def test_the_preflight_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from trainwell.cli import main

    monkeypatch.chdir(tmp_path)
    code = main(["doctor", "--lang", "zh", "--data", "digits", "--model", "mlp"])
    err = capsys.readouterr().err
    assert code == 0
    for said in ("1. 数据", "数据划分", "2. 形状", "模型概要", "参数总数", "3. 试运行一步", "第一步损失", "4. 过拟合",
                 "模型能够学习", "没有发现问题"):
        assert said in err, said
    for english in ("splits", "first loss", "overfit", "the model can learn", "Model summary", "Total params"):
        assert english not in err, english


def test_train_and_preflight_take_lang() -> None:
    from trainwell.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["train", "--lang", "zh"]).lang == "zh"
    assert parser.parse_args(["doctor", "--lang", "zh"]).lang == "zh"
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "--lang", "fr"])


# ---------------------------------------------------------------- 5. the script's own names


def test_user_name_finds_the_scripts_names_without_running_its_code() -> None:
    from trainwell.doctor.where import user_name

    class Loop:
        def __init__(self) -> None:
            self.classifier = torch.nn.Linear(2, 2)

        @property
        def trap(self) -> None:
            raise AssertionError("a property was run")

        def name_of_classifier(self) -> str | None:
            return user_name(self.classifier)

    net = torch.nn.Linear(2, 2)
    holder = Loop()
    wrapper = torch.nn.Sequential()
    wrapper.add_module("body", net)
    assert user_name(net) == "net"  # a local of the calling frame
    assert holder.name_of_classifier() == "self.classifier"
    assert user_name(object()) is None

    def inner(model: object) -> str | None:
        return user_name(model)

    assert inner(net) == "model"  # the innermost frame's own name for it


def test_eval_mode_fix_uses_the_models_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, _ = _doctor_run(tmp_path, """\
        import torch
        torch.manual_seed(0)
        classifier = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.5),
                                         torch.nn.Linear(32, 2))
        adam = torch.optim.Adam(classifier.parameters(), 1e-3)
        x = torch.randn(256, 8); y = (x[:, 0] > 0).long()
        for epoch in range(4):
            for i in range(0, 192, 32):
                adam.zero_grad()
                torch.nn.functional.cross_entropy(classifier(x[i:i + 32]), y[i:i + 32]).backward()
                adam.step()
            with torch.no_grad():
                for i in range(192, 256, 16):
                    classifier(x[i:i + 16])
        """, "--lang", "en")
    capsys.readouterr()
    found = {f["id"]: f for f in report["findings"]}
    assert "classifier.eval()" in found["eval-mode-missing"]["fix"]
    assert "model.eval()" not in found["eval-mode-missing"]["fix"]


def test_misplaced_zero_grad_fix_uses_the_attribute(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, _ = _doctor_run(tmp_path, """\
        import torch
        class Trainer:
            def __init__(self):
                self.net = torch.nn.Linear(4, 2)
                self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
            def fit(self):
                x = torch.randn(32, 4); y = torch.randint(0, 2, (32,))
                for _ in range(20):
                    loss = torch.nn.functional.cross_entropy(self.net(x), y)
                    loss.backward()
                    self.opt.zero_grad()
                    self.opt.step()
        Trainer().fit()
        """, "--lang", "zh")
    capsys.readouterr()
    found = {f["id"]: f for f in report["findings"]}
    assert "self.opt.zero_grad(); loss.backward(); self.opt.step()" in found["zero-grad-misplaced"]["fix"]
    assert [s["id"] for s in found["zero-grad-misplaced"]["evidence"].get("symptoms", [])] in ([], ["loss-not-decreasing"])
