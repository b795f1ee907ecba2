"""Section 3 of issue 26: what a script can do under ``python`` it can do under ``trainwell doctor run``."""

from __future__ import annotations

import copy
import io
import json
import pickle
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import torch
import torch.nn.functional as F
from torch import nn

from trainwell.doctor.session import Session


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.r, self.b = nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.r(F.relu(self.a(x))))


def _train(model: nn.Module, opt: torch.optim.Optimizer, steps: int = 30) -> torch.Tensor:
    x, y = torch.randn(32, 4), torch.randint(0, 2, (32,))
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return x


def _session() -> Session:
    return Session(on_finding=lambda f: None, on_internal_error=lambda *a: None)


def test_a_whole_model_pickles_and_copies_under_the_doctor() -> None:
    model = _Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with _session() as session:
        x = _train(model, opt)
        buf = io.BytesIO()
        torch.save(model, buf)
        twin = copy.deepcopy(model)
        pickle.dumps(opt.state_dict())
        assert session._model_hooks  # the model is watched, and still saves
    buf.seek(0)
    loaded = torch.load(buf, weights_only=False)
    assert not loaded._forward_hooks and not loaded._forward_pre_hooks
    assert not twin._forward_hooks and torch.allclose(twin(x), model(x)) and torch.allclose(loaded(x), model(x))
    assert not session.internal_errors


def test_torchscript_script_and_trace_under_the_doctor() -> None:
    model = _Net()
    with _session() as session:
        _train(model, torch.optim.SGD(model.parameters(), lr=0.1), steps=3)
        x = torch.randn(3, 4)
        scripted = torch.jit.script(model)  # F.relu and nn.ReLU while the doctor watches F.relu
        traced = torch.jit.trace(model, x)
        assert torch.allclose(scripted(x), model(x)) and torch.allclose(traced(x), model(x))
    assert not session.internal_errors


# ---------------------------------------------------------------- TorchScript of loss modules

class _SmoothedLoss(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ce = nn.CrossEntropyLoss()

    def forward(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.ce(logits, y) + F.cross_entropy(logits, y, label_smoothing=0.1) + F.mse_loss(logits, logits)


def test_torchscript_of_loss_modules_under_the_doctor() -> None:
    # The library's losses call warnings.warn (legacy reduction arguments), which TorchScript compiles as its
    # builtin: the doctor's stand-in for warnings.warn must be that builtin too.
    logits, y = torch.randn(6, 3), torch.randint(0, 3, (6,))
    with _session() as session:
        mine, plain = torch.jit.script(_SmoothedLoss()), torch.jit.script(nn.CrossEntropyLoss())

        @torch.jit.script
        def l1(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return F.l1_loss(a, b)

        assert torch.allclose(mine(logits, y), _SmoothedLoss()(logits, y))
        assert torch.allclose(plain(logits, y), F.cross_entropy(logits, y)) and float(l1(logits, logits)) == 0.0
    assert not session.internal_errors


def test_the_warn_stand_in_is_made_once_per_original_and_kept() -> None:
    import warnings

    from torch.jit._builtins import _find_builtin

    from trainwell.doctor.warnsite import past_wrappers

    first, second = past_wrappers(warnings.warn), past_wrappers(warnings.warn)
    assert first is second and _find_builtin(first) == "aten::warn"  # (kept alive: its id is never reused)


# ---------------------------------------------------------------- torch.compile, torch.export

def test_compiled_code_is_not_recompiled_by_the_doctors_sampled_steps() -> None:
    import torch._dynamo

    torch._dynamo.reset()
    model = _Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
    with _session() as session:
        fast = torch.compile(model, backend="eager")
        with torch._dynamo.config.patch(error_on_recompile=True):  # a toggled global hook or F.relu: recompiled
            for _ in range(130):  # the steps sampled up to 130: 0-10, 20, ... 100, 125
                opt.zero_grad()
                F.cross_entropy(fast(x), y).backward()
                opt.step()
        assert session.step == 130 and session._global_hooks
    assert not session.internal_errors
    torch._dynamo.reset()


def test_strict_export_works_while_the_global_hooks_are_on() -> None:
    model = _Net()
    with _session() as session:
        _train(model, torch.optim.SGD(model.parameters(), lr=0.1), steps=10)  # step 10: sampled, global hooks on
        assert session._global_hooks
        x = torch.randn(3, 4)
        for strict in (True, False):
            program = torch.export.export(model, (x,), strict=strict)
            assert torch.allclose(program.module()(x), model(x))
        assert session._global_hooks  # put back
    assert not session.internal_errors


# ---------------------------------------------------------------- sparse, nested and complex tensors

class _Graph(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin, self.head = nn.Linear(4, 8), nn.Linear(8, 2)

    def forward(self, adj: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.sparse.mm(adj, F.relu(self.lin(x))))


class _Complex(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4, dtype=torch.cfloat))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return z @ self.w


def test_sparse_nested_and_complex_tensors_are_left_unjudged_not_failed() -> None:
    n = 30
    adj = torch.sparse_coo_tensor(torch.randint(0, n, (2, 90)), torch.rand(90), (n, n)).coalesce()
    csr = adj.to_sparse_csr()
    feats, labels = torch.randn(n, 4), torch.randint(0, 2, (n,))
    graph, wave, enc = _Graph(), _Complex(), nn.Linear(4, 2)
    opt = torch.optim.Adam([*graph.parameters(), *wave.parameters(), *enc.parameters()], lr=0.01)
    ragged = torch.nested.nested_tensor([torch.randn(k, 4) for k in (2, 5, 3)], layout=torch.jagged)
    with warnings_as_errors(), _session() as session:
        for step in range(12):
            opt.zero_grad()
            loss = F.cross_entropy(graph(csr if step % 2 else adj, feats), labels)
            loss = loss + wave(torch.randn(5, 4, dtype=torch.cfloat)).abs().mean()
            loss = loss + torch.stack([t.mean(0) for t in enc(ragged).unbind()]).pow(2).mean()
            loss.backward()
            opt.step()
    assert not session.internal_errors and not session.findings
    assert set(session.unjudged) == {"sparse_coo", "sparse_csr", "complex", "nested"}


def test_doctor_run_says_what_it_left_unjudged(tmp_path: Path) -> None:
    script = Path(__file__).parent / "doctor_world" / "powers_tensors.py"
    out = tmp_path / "doctor.json"
    proc = subprocess.run([sys.executable, "-m", "trainwell", "doctor", "run", "--lang", "en", "--json", str(out),
                           str(script), "coo"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["unjudged"].get("sparse_coo", 0) > 0 and report["internal_errors"] == []
    assert "Not judged:" in proc.stderr and "sparse_coo tensors" in proc.stderr


def test_unjudged_words() -> None:
    from trainwell.doctor.render import unjudged_words

    assert unjudged_words({}) is None
    assert unjudged_words({"nested": 2, "complex": 5}) == (
        "Not judged: 5 events with complex tensors, 2 events with nested tensors. The checks skip sparse, nested and "
        "complex tensors, so what those carried was not checked.")
    assert "未判断" in (unjudged_words({"sparse_csr": 1}, "zh") or "")


def test_unjudgeable_names_the_kind() -> None:
    from trainwell.doctor.session import unjudgeable

    dense = torch.randn(3, 3)
    assert unjudgeable(dense) is None and unjudgeable((dense, {"x": [dense]})) is None
    assert unjudgeable(dense.to_sparse()) == "sparse_coo"
    assert unjudgeable([dense, dense.to_sparse_csr()]) == "sparse_csr"
    assert unjudgeable({"z": dense.to(torch.cfloat)}) == "complex"
    assert unjudgeable(torch.nested.nested_tensor([dense, dense[:1]], layout=torch.jagged)) == "nested"


@contextmanager
def warnings_as_errors() -> Iterator[None]:
    """The doctor's own tensor work must not warn either (a complex gradient cast to float did)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------- whole scripts, and their child processes

WORLD = Path(__file__).parent / "doctor_world"


def _doctor_json(tmp_path: Path, script: str, *args: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "findings.json"
    proc = subprocess.run([sys.executable, "-m", "trainwell", "doctor", "run", "--json", str(out), str(WORLD / script),
                           *args], capture_output=True, timeout=300, cwd=tmp_path)
    data = json.loads(out.read_text(encoding="utf-8"))
    return proc.returncode, data


@pytest.mark.slow
@pytest.mark.parametrize("args", [["powers_compile.py", "eager", "130"], ["powers_export.py", "10", "onnx"],
                                  ["powers_tensors.py", "coo"], ["powers_tensors.py", "csr"],
                                  ["powers_tensors.py", "complex"], ["powers_tensors.py", "nested"],
                                  ["powers_children.py", "torch", "ok"], ["powers_children.py", "spawn", "ok"]],
                         ids="-".join)
def test_correct_scripts_using_these_powers_are_quiet(tmp_path: Path, args: list[str]) -> None:
    code, data = _doctor_json(tmp_path, *args)
    assert code == 0 and data["findings"] == [] and data["internal_errors"] == []


@pytest.mark.slow
@pytest.mark.parametrize(("how", "label", "ranks"), [("torch", "1 of torch.multiprocessing.spawn", [1]),
                                                     ("fork", "ForkProcess-2", None)])
def test_a_child_without_zero_grad_is_reported_with_its_name(tmp_path: Path, how: str, label: str,
                                                            ranks: list[int] | None) -> None:
    code, data = _doctor_json(tmp_path, "powers_children.py", how, "forget")
    assert code == 0 and data["internal_errors"] == []
    [finding] = data["findings"]
    assert finding["id"] == "zero-grad-missing" and finding["ranks"] == ranks
    assert finding["evidence"]["child_processes"] == [label] and label in finding["message"]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["torch", "spawn"])
def test_a_crashing_child_does_not_hang_the_run(tmp_path: Path, how: str) -> None:
    code, data = _doctor_json(tmp_path, "powers_children.py", how, "crash")  # (the timeout is the hang's test)
    assert code == (1 if how == "torch" else 0)  # torch.multiprocessing.spawn raises in the parent; Process does not
    assert [f["id"] for f in data["findings"]] == (["script-error"] if how == "torch" else [])
