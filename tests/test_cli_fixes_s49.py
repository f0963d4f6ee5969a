"""A usage error of any command is one line on standard error naming the command and its
help, exit 2 (before: argparse's usage block first, and a word too many was told as the
top-level program's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def _tracebridge(*argv: str, cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "tracebridge", *argv], cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["convert", "x.json"],
         "tracebridge convert: error: the following arguments are required: --to "
         "(see: tracebridge convert --help)"),
        (["convert", "x.json", "--to", "openai_chat", "--bogus"],
         "tracebridge convert: error: unrecognized arguments: --bogus "
         "(see: tracebridge convert --help)"),
        (["sample", "x.json", "--from", "nope"],
         "tracebridge sample: error: argument --from: invalid choice: 'nope' (choose from "
         "'auto', 'tracebridge', 'openai_chat', 'swarm', 'langchain', 'llama_index', 'galtea', "
         "'openai_responses', 'openai_agents', 'otel', 'llama_index_events') "
         "(see: tracebridge sample --help)"),
        ([], "tracebridge: error: the following arguments are required: COMMAND "
             "(see: tracebridge --help)"),
        (["score", "x.jsonl", "extra", "--metric", "tool_call_f1", "--bad\nline\x1b[2J"],
         "tracebridge score: error: unrecognized arguments: extra --bad\\nline\\u001b[2J "
         "(see: tracebridge score --help)"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_command(
    tmp_path: Path, argv: list[str], line: str
) -> None:
    assert _tracebridge(*argv, cwd=tmp_path) == (2, "", line + "\n")


def test_gate_usage_errors_keep_their_exit_4(tmp_path: Path) -> None:
    # guard (it passed before): gate, calibrate and report tell an unusable request by exit 4
    assert _tracebridge("gate", "run", cwd=tmp_path) == (
        4, "", "tracebridge gate: error: the following arguments are required: --policy\n")
