"""The conversation rules name an id that is no string (a message made with
``model_construct`` or changed with ``model_copy(update=...)``, which pydantic does not
check) as ``malformed_event`` at the id; before, the rules' passes raised a raw TypeError."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    ToolCall,
    ToolMessage,
    TraceError,
    check,
    validate,
)

ASK = HumanMessage(content="q")


def said(error: TraceError) -> tuple[Any, ...]:
    return (error.code, error.index, error.path, error.detail)


def call(call_id: Any) -> ToolCall:
    return ToolCall(name="f", id="c").model_copy(update={"id": call_id})


def result(call_id: Any) -> ToolMessage:
    return ToolMessage(content="r", tool_call_id="c").model_copy(update={"tool_call_id": call_id})


@pytest.mark.parametrize("call_id", [["x"], {"a": 1}, 5, b"c"])
def test_a_call_id_that_is_no_string_is_malformed_event(call_id: Any) -> None:
    messages = [ASK, AIMessage(tool_calls=[call(call_id)]), result(call_id)]
    with pytest.raises(TraceError) as caught:
        validate(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 1, "messages[1].tool_calls[0].id",
    )
    assert caught.value.detail == (
        f"tool call id must be a string, got {call_id!r} (a message made with model_construct "
        "or model_copy(update=...) is not checked when made)"
    )
    assert said(check(messages)[0]) == said(caught.value)
    with pytest.raises(TraceError) as sampled:
        MultiTurnSample(messages=messages)
    assert said(sampled.value) == said(caught.value)


@pytest.mark.parametrize("call_id", [["c"], {"c": 1}, 7])
def test_a_result_id_that_is_no_string_is_malformed_event(call_id: Any) -> None:
    messages = [ASK, AIMessage(tool_calls=[call("c")]), result(call_id)]
    errors = check(messages)
    assert [(e.code, e.index, e.path) for e in errors] == [
        ("malformed_event", 2, "messages[2].tool_call_id"),
        ("unanswered_tool_call", 1, "messages[1].tool_calls[0]"),
    ]
    with pytest.raises(TraceError) as caught:
        validate(messages, allow_pending=True)
    assert said(caught.value) == said(errors[0])


def test_string_ids_are_as_before() -> None:
    messages = [ASK, AIMessage(tool_calls=[call("c")]), result("c")]
    assert check(messages) == []
    validate(messages)
