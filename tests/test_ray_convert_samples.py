"""``convert_batch`` on sample records: whole to ``tracebridge``; elsewhere refused at the
first reference no other format holds, unless ``messages_only=True`` (the command line's
``--messages-only``), which converts the conversation alone — the rows equal what
``tracebridge convert`` writes for the same record."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from cli_helpers import run

from tracebridge.ray_data import convert_batch

SAMPLE = {
    "messages": [
        {"type": "human", "content": "book it"},
        {"type": "ai", "content": "done"},
    ],
    "reference": "the agent books the flight",
    "reference_topics": ["travel"],
}
BARE = {"messages": SAMPLE["messages"]}
ROWS = pa.table({"record": [json.dumps(SAMPLE), json.dumps(BARE)]})


def _cli(*options: str, record: dict[str, Any]) -> tuple[int, str]:
    code, out, _ = run("convert", "-", "--to", "openai_chat", *options, stdin=json.dumps(record))
    return code, out


def test_a_sample_with_references_is_refused_by_default_as_the_command_line_refuses_it() -> None:
    out = convert_batch(ROWS, source="auto", target="openai_chat")
    assert out.column("error_code").to_pylist() == ["not_representable", None]
    assert out.column("error_path").to_pylist() == ["reference", None]
    assert _cli(record=SAMPLE)[0] == 1
    assert json.loads(out.column("output")[1].as_py()) == json.loads(_cli(record=BARE)[1])


def test_messages_only_converts_the_conversation_alone_as_the_command_line_does() -> None:
    out = convert_batch(ROWS, source="auto", target="openai_chat", messages_only=True)
    assert out.column("error_code").to_pylist() == [None, None]
    code, written = _cli("--messages-only", record=SAMPLE)
    assert code == 0
    assert [json.loads(o) for o in out.column("output").to_pylist()] == [
        json.loads(written),
        [{"role": "user", "content": "book it"}, {"role": "assistant", "content": "done"}],
    ]


def test_a_sample_converts_whole_to_tracebridge_either_way() -> None:
    for flag in (False, True):
        out = convert_batch(ROWS, source="auto", target="tracebridge", messages_only=flag)
        assert json.loads(out.column("output")[0].as_py())["reference_topics"] == ["travel"]
        assert json.loads(out.column("output")[0].as_py())["reference"] == SAMPLE["reference"]


@pytest.mark.parametrize("flag", ["false", 0, None, 1])
def test_messages_only_is_true_or_false(flag: Any) -> None:
    with pytest.raises(ValueError, match="messages_only"):
        convert_batch(ROWS, target="openai_chat", messages_only=flag)
