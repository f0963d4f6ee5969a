"""A LangChain call-list entry holding a key LangChain's builder of such an entry does not take
is ``malformed_event`` at that key, in the dict and the flat dump forms alike; the keys it
takes and the ones its validator leaves out (``type``, and ``extras`` of a call) still read."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import langchain

HUMAN = {"type": "human", "content": "q"}
RESULT = {"type": "tool", "content": "r", "tool_call_id": "c1"}
CALL = {"name": "f", "args": {}, "id": "c1"}
INVALID = {"name": "f", "args": "{", "id": "c1", "error": None}
CHUNK = {"name": "f", "args": "{}", "id": "c1", "index": 0}


def _refused(trace: list[Any]) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace)
    error = caught.value
    return error.code, error.index, error.path, error.detail


@pytest.mark.parametrize(
    ("kind", "key", "entry", "builder", "taken"),
    [
        ("ai", "tool_calls", CALL, "tool_call", "args, id, name"),
        ("ai", "invalid_tool_calls", INVALID, "invalid_tool_call", "args, error, id, name"),
        ("AIMessageChunk", "tool_call_chunks", CHUNK, "tool_call_chunk", "args, id, index, name"),
    ],
)
def test_an_entry_key_langchain_does_not_take_is_refused_at_that_key(
    kind: str, key: str, entry: dict[str, Any], builder: str, taken: str
) -> None:
    bad = {**entry, "extra": 1}
    flat = [HUMAN, {"type": kind, "content": "", key: [bad]}, RESULT]
    wrapped = [HUMAN, {"type": kind, "data": {"content": "", key: [bad]}}, RESULT]
    detail = f"LangChain's {builder}() takes {taken}; this entry has 'extra' too: {bad!r}"
    assert _refused(flat) == ("malformed_event", 1, f"messages[1].{key}[0].extra", detail)
    assert _refused(wrapped) == (
        "malformed_event", 1, f"messages[1].data.{key}[0].extra", detail)


def test_the_keys_langchains_validator_leaves_out_still_read() -> None:
    call = {**CALL, "type": "tool_call", "extras": {}}
    messages = langchain.to_messages([HUMAN, {"type": "ai", "content": "", "tool_calls": [call]},
                                      RESULT])
    assert [(c.name, c.args, c.id) for c in messages[1].tool_calls] == [("f", {}, "c1")]
