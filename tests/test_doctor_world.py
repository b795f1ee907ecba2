"""`trainwell doctor run probe.py ARGS` gives the script the world `python probe.py ARGS` gives it.

Each probe runs both ways, from another working directory with a relative path; exit code, stdout
and stderr must match byte for byte once the doctor's own blocks are taken out of stderr.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
_BLOCK = re.compile(r"^[─-]+ trainwell doctor [─-]+\n.*?^[─-]+\n", re.M | re.S)

CASES = [("facts.py", ["--lr", "0.1", "x y"]), *[("fails.py", [how]) for how in
                                                ("code", "message", "chained", "name", "attribute", "torch",
                                                 "interrupt")],
         # Issue 26 section 3: the script's powers (compiled code, exports, unusual tensors, child processes).
         ("powers_compile.py", ["eager", "130"]), ("powers_export.py", ["10", "onnx"]),
         *[("powers_tensors.py", [kind]) for kind in ("coo", "csr", "complex", "nested")],
         ("powers_children.py", ["torch", "forget"]), ("powers_children.py", ["fork", "ok"]),
         ("powers_children.py", ["spawn", "crash"])]


def _run(cmd: list[str]) -> tuple[int, bytes, bytes]:
    proc = subprocess.run(cmd, cwd=TESTS, capture_output=True, timeout=300)
    code = 128 + signal.SIGINT if proc.returncode == -signal.SIGINT else proc.returncode  # as a shell reports it
    return code, proc.stdout, proc.stderr


def without_doctor(stderr: bytes) -> bytes:
    return _BLOCK.sub("", stderr.decode()).encode()


@pytest.mark.slow
@pytest.mark.parametrize(("probe", "args"), CASES, ids=[f"{p}-{'-'.join(a[:2])}" for p, a in CASES])
def test_the_script_sees_and_does_what_it_does_under_python(probe: str, args: list[str]) -> None:
    script = f"doctor_world/{probe}"  # relative, from another folder than the script's
    code, out, err = _run([sys.executable, script, *args])
    d_code, d_out, d_err = _run([sys.executable, "-m", "trainwell", "doctor", "run", script, *args])
    assert b"trainwell doctor" in d_err  # the doctor did speak ...
    assert (d_code, d_out.decode(), without_doctor(d_err).decode()) == (code, out.decode(), err.decode())


def test_the_doctors_blocks_are_what_is_stripped() -> None:
    script_err = b"Traceback (most recent call last):\n  x\nValueError: boom\n"
    block = ("─" * 10 + " trainwell doctor " + "─" * 10 + "\ntrainwell doctor: no problems found.\n" + "─" * 38
             + "\n").encode()
    assert without_doctor(block + script_err + block) == script_err
