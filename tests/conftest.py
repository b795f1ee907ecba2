"""Shared test settings, and a guard that fails a test which leaks environment variables or sys.path entries."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Libraries that set environment variables when first imported (torch, OpenMP via scikit-learn)
# are imported here, so the leak guard below only sees what a test itself changed.
import sklearn.model_selection  # noqa: E402,F401
import torch  # noqa: E402,F401

from trainwell.machine import usable_cores  # noqa: E402

# Keep every test on the CPU with the machine's two cores, whatever the environment says, unless the
# GPU tests are asked for (TRAINWELL_TEST_CUDA=1 pytest -m cuda, on a machine with a GPU).
if os.environ.get("TRAINWELL_TEST_CUDA") != "1":
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
# A run's default thread count follows the machine's load (machine.busy_threads), and the thread count changes a
# CPU run's floating-point sums; tests compare runs' weights, so they name the count (the machine's share of the
# cores, as without load), in their own process and in those they start. Tests of the load set it themselves.
os.environ.setdefault("OMP_NUM_THREADS", str(usable_cores()))


@pytest.fixture
def one_thread():
    """For the doctor's tiny case scripts: one thread is as fast, and immune to a busy shared machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run with TRAINWELL_TEST_CUDA=1 on a GPU machine)")
    for item in items:
        if item.get_closest_marker("cuda") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _no_leaked_env():
    before = dict(os.environ)
    before_path = list(sys.path)
    yield
    # torch sets its compiler variables lazily (TORCH*, and inductor's _TORCHINDUCTOR_*); anything else is a leak.
    leaked = {k for k in os.environ if k not in before and not k.lstrip("_").startswith("TORCH")} - {"CUBLAS_WORKSPACE_CONFIG"}
    sys.path[:] = before_path
    # A script run in-process under the doctor may change a variable, as it would in its own process (e.g.
    # CUDA_VISIBLE_DEVICES): put the values back so the next test starts from the same environment.
    for key, value in before.items():
        if os.environ.get(key) != value:
            os.environ[key] = value
    assert not leaked, f"test leaked environment variables: {sorted(leaked)}"


def train_once(tmp_path_factory: pytest.TempPathFactory, argv: list[str]) -> Path:
    """Run ``trainwell train --out run ARGV`` in-process in a fresh folder (for module-scoped fixtures)."""
    from trainwell.cli import main

    root = tmp_path_factory.mktemp("trained")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.setenv("PYTHONHASHSEED", "0")
        assert main(["train", "--out", "run", *argv]) == 0
    return root / "run"


def main_in(cwd: Path, *args: str) -> int:
    """``trainwell ARGS`` in-process, run from ``cwd`` (restored afterwards)."""
    from trainwell.cli import main

    old = Path.cwd()
    os.chdir(cwd)
    try:
        return main(list(args))
    finally:
        os.chdir(old)
