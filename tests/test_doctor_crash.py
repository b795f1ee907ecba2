"""After a crash the doctor never says "no problems found": it names the line, the failing operation and its
tensors, and a cause or plainly that it has none (issue 26, section 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainwell.cli import main

DOT = "import torch\na = torch.ones(4, 3)\nb = torch.ones(4, 3)\nprint(torch.dot(a, b))\n"
PLAIN = "def f():\n    raise ValueError('boom')\nf()\n"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_torch_dot_on_matrices_is_explained_from_its_operands(tmp_path: Path, lang: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "dot.py"
    script.write_text(DOT)
    out = tmp_path / "d.json"
    assert main(["doctor", "run", "--lang", lang, "--json", str(out), str(script)]) == 1
    streams = capsys.readouterr()
    assert "no problems found" not in streams.out + streams.err and "没有发现问题" not in streams.out + streams.err
    found = {f["id"]: f for f in json.loads(out.read_text())["findings"]}
    f = found["script-error"]
    assert f["where"].endswith("dot.py:4")
    assert f["evidence"]["operation"] == "torch.dot"
    assert [o["shape"] for o in f["evidence"]["operands"]] == [[4, 3], [4, 3]]
    assert "(4, 3)" in f["message"] and f["evidence"]["explained"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_error_outside_torch_says_there_is_no_explanation(tmp_path: Path, lang: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "plain.py"
    script.write_text(PLAIN)
    out = tmp_path / "d.json"
    assert main(["doctor", "run", "--lang", lang, "--json", str(out), str(script)]) == 1
    streams = capsys.readouterr()
    assert "no problems found" not in streams.err and "没有发现问题" not in streams.err
    f = {f["id"]: f for f in json.loads(out.read_text())["findings"]}["script-error"]
    assert f["where"].endswith("plain.py:2") and not f["evidence"]["explained"]
    assert ("no explanation beyond the traceback" in f["message"]) or ("没有比上面的回溯更多的解释" in f["message"])
