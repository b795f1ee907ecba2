"""benchmarks/doctor_overhead.py --samples: how a sampling profile's stacks are charged to the doctor."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "doctor_overhead.py"


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("doctor_overhead", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("doctor_overhead", module)
    spec.loader.exec_module(module)
    return module


FIT = "<module> (<string>:1);_fit_child (doctor_overhead.py:240);_measured_fit (doctor_overhead.py:230);" \
      "fit (trainwell/app/fit.py:173);Trainer._train_epoch (trainwell/engine/trainer.py:480)"


def test_only_the_doctors_own_work_in_the_measured_fit_is_charged_to_it() -> None:
    raw = "\n".join([
        # the model's backward, reached through the doctor's wrapper: torch's work, a plain run does it too
        f"{FIT};Session._wrap_backward.<locals>.backward (trainwell/doctor/session.py:490);"
        "Tensor.backward (torch/_tensor.py:620) 50",
        # the wrapper's own lines (copying the loss)
        f"{FIT};Session._wrap_backward.<locals>.backward (trainwell/doctor/session.py:501) 7",
        # a check's work under the loop's model-call report, down into torch: the doctor's
        f"{FIT};Session._model_post (trainwell/doctor/session.py:452);Session._dispatch "
        "(trainwell/doctor/session.py:250);NonfiniteInput.on_forward (trainwell/doctor/checks/inputs.py:95);"
        "Tensor.sum (torch/_tensor.py:40) 3",
        # plain training
        f"{FIT};Adam.step (torch/optim/adam.py:200) 140",
        # the warm-up fit, not measured
        "<module> (<string>:1);_fit_child (doctor_overhead.py:238);fit (trainwell/app/fit.py:173);"
        "Session._model_post (trainwell/doctor/session.py:452) 99",
    ])
    total, own, per = _module().doctor_share(raw)
    assert total == 200
    assert own == 10
    assert per == {"Session._wrap_backward.<locals>.backward": 7, "Session._model_post": 3}
