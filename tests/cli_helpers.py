"""The command line run in process, and two small OpenAI chat traces the CLI tests share."""

from __future__ import annotations

import io
from typing import Any

from tracebridge.cli import main

CHAT: list[dict[str, Any]] = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "hello"},
]
CALL: list[dict[str, Any]] = [
    {"role": "user", "content": "weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
    {"role": "assistant", "content": "18 C in Paris."},
]


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    """``tracebridge *argv`` with ``stdin``: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()
