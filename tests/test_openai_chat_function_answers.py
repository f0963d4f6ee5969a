"""Chat Completions: a ``function`` message answers a legacy ``function_call``; after
``tool_calls`` the API takes only ``tool`` messages. A function message answering tool_calls
was read (the conversation rules pair an id-less result by position), and then no writer of
this format could write it back: it is ``orphan_tool_result`` where it is, as a tool message
answering a function_call already was."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import openai_chat

USER = {"role": "user", "content": "hi"}
CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


def _refused(trace: list[Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages(trace)
    return caught.value.code, caught.value.index, caught.value.path


def test_a_function_message_after_tool_calls_is_an_orphan() -> None:
    trace = [USER, {"role": "assistant", "content": None, "tool_calls": [CALL]},
             {"role": "function", "name": "f", "content": "r"}]
    assert _refused(trace) == ("orphan_tool_result", 2, "messages[2]")


def test_a_function_message_beside_a_tool_message_is_an_orphan() -> None:
    trace = [USER, {"role": "assistant", "content": None,
                    "tool_calls": [CALL, {**CALL, "id": "c2"}]},
             {"role": "tool", "tool_call_id": "c1", "content": "r"},
             {"role": "function", "name": "f", "content": "r"}]
    assert _refused(trace) == ("orphan_tool_result", 3, "messages[3]")


def test_a_tool_message_after_a_function_call_is_still_an_orphan() -> None:
    trace = [USER, {"role": "assistant", "content": None,
                    "function_call": {"name": "f", "arguments": "{}"}},
             {"role": "tool", "tool_call_id": "c1", "content": "r"}]
    assert _refused(trace) == ("orphan_tool_result", 2, "messages[2].tool_call_id")


def test_a_function_message_after_a_function_call_reads_and_writes_back() -> None:
    trace = [USER, {"role": "assistant", "content": None,
                    "function_call": {"name": "f", "arguments": "{}"}},
             {"role": "function", "name": "f", "content": "r"},
             {"role": "assistant", "content": "done"}]
    messages = openai_chat.to_messages(trace)
    assert openai_chat.from_messages(messages) == trace
