"""``tracebridge sample --errors -``: a fault in the references file is told once, as its JSON
object on standard error, as every other failure is with ``--errors -``."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run

CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_a_references_fault_with_errors_dash_is_its_json_object_alone(tmp_path: Path) -> None:
    traces = tmp_path / "tr.jsonl"
    traces.write_text(json.dumps({"id": 1, "messages": CHAT}) + "\n", encoding="utf-8")
    refs = tmp_path / "refs.jsonl"
    refs.write_text('{"id": 1}\nnot json\n', encoding="utf-8")
    code, out, err = run("sample", str(traces), "--from", "openai_chat", "--references",
                         str(refs), "--errors", "-")
    message = f"{refs}: line 2: not valid JSON: Expecting value: line 1 column 1 (char 0)"
    assert (code, out) == (2, "")
    assert [json.loads(line) for line in err.splitlines()] == [
        {"file": str(refs), "line": 2, "code": "not_json", "index": None, "path": None,
         "source": None, "message": message}]
