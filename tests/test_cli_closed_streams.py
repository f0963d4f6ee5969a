"""The command line when a standard stream is closed, or OUT cannot be put in place.

Started with standard output or input closed (``>&-``, ``<&-``), the command said
"internal error ... a bug" (exit 70): Python gives such a process no stream at all. It is
the command line's fault, so it is exit 2 with what to do instead; a run that does not need
the closed stream is not stopped by it. And when ``-o OUT`` could not be put in place (OUT a
directory, a full disk at the last write), the whole output was left beside it in a hidden
``.OUT.*.partial`` file; now nothing is left.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli_helpers import run

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "openai_chat" / "tool_error.json"
COMMAND = f"{sys.executable} -m tracebridge"


def _shell(line: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, timeout=60)


def test_closed_standard_output_is_a_usage_error() -> None:
    done = _shell(f"{COMMAND} convert {GOLDEN} --at trace --to openai_chat >&-")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "tracebridge: standard output is closed; give -o FILE instead")


def test_closed_standard_input_is_a_usage_error() -> None:
    done = _shell(f"{COMMAND} validate - --from openai_chat <&-")
    assert (done.returncode, done.stderr) == (
        2, "tracebridge: standard input is closed; give a file instead\n")


def test_a_run_that_writes_to_a_file_does_not_need_standard_output(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    done = _shell(f"{COMMAND} convert {GOLDEN} --at trace --to openai_chat -o {out} >&-")
    assert done.returncode == 0
    trace = json.loads(GOLDEN.read_text(encoding="utf-8"))["trace"]
    assert json.loads(out.read_text(encoding="utf-8")) == trace


def test_an_out_that_cannot_be_put_in_place_leaves_no_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "adir"
    target.mkdir()
    code, _out, err = run("convert", str(GOLDEN), "--at", "trace", "--to", "openai_chat",
                         "-o", str(target))
    assert code == 2
    assert "Is a directory" in err.splitlines()[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]
    assert list(target.iterdir()) == []
