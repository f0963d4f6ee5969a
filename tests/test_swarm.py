"""swarm: Swarm histories (OpenAI dicts with sender and tool_name) and their handoffs."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import openai_chat, swarm
from tracebridge.adapters.swarm import Handoff, from_messages, handoffs, to_messages

USER = {"role": "user", "content": "What's the balance on account ACC-77?"}


def transfer(call_id: str, name: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def test_an_assistant_message_without_tool_calls_keeps_its_sender() -> None:
    # A peer's converter raised KeyError('tool_calls') here and dropped the agent name.
    trace = [USER, {"role": "assistant", "content": "Which account?", "sender": "Front Desk"}]
    assert to_messages(trace) == [
        HumanMessage(content="What's the balance on account ACC-77?"),
        AIMessage(content="Which account?", name="Front Desk"),
    ]
    assert from_messages(to_messages(trace)) == trace


def test_sender_is_the_agent_name_and_tool_name_the_tool_name() -> None:
    trace = [
        USER,
        {
            "content": "",
            "sender": "Front Desk",
            "role": "assistant",
            "function_call": None,
            "tool_calls": [transfer("c1", "lookup")],
        },
        {"role": "tool", "tool_call_id": "c1", "tool_name": "lookup", "content": "found"},
    ]
    assert to_messages(trace)[1:] == [
        AIMessage(
            content="",
            name="Front Desk",
            tool_calls=[ToolCall(name="lookup", args={}, id="c1")],
            metadata={"swarm": {"fields": {"function_call": None}}},
        ),
        ToolMessage(content="found", tool_call_id="c1", name="lookup"),
    ]
    assert from_messages(to_messages(trace)) == trace


def test_a_name_key_in_a_swarm_message_is_kept_apart_from_sender() -> None:
    trace = [USER, {"role": "assistant", "content": "Hi.", "sender": "Front Desk", "name": "bot"}]
    assert to_messages(trace)[1] == AIMessage(
        content="Hi.", name="Front Desk", metadata={"swarm": {"fields": {"name": "bot"}}}
    )
    assert from_messages(to_messages(trace)) == trace


def test_typed_names_are_written_as_sender_and_tool_name() -> None:
    messages = [
        HumanMessage(content="hi"),
        AIMessage(tool_calls=[ToolCall(name="lookup", id="c1")], name="Front Desk"),
        ToolMessage(content="found", tool_call_id="c1", name="lookup"),
    ]
    assert from_messages(messages) == [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "",
            "sender": "Front Desk",
            "tool_calls": [transfer("c1", "lookup")],
        },
        {"role": "tool", "content": "found", "tool_name": "lookup", "tool_call_id": "c1"},
    ]


def test_the_response_wrapper_is_rejected_with_a_pointer_to_its_messages() -> None:
    with pytest.raises(TraceError) as caught:
        to_messages({"messages": [USER], "agent": None, "context_variables": {}})
    assert (caught.value.code, caught.value.index) == ("malformed_event", None)
    assert "pass its 'messages'" in str(caught.value)


def test_errors_name_the_swarm_source() -> None:
    with pytest.raises(TraceError) as caught:
        to_messages([USER, {"role": "tool", "tool_call_id": "c9", "tool_name": "f", "content": ""}])
    assert (caught.value.code, caught.value.index, caught.value.source) == (
        "orphan_tool_result",
        1,
        "swarm",
    )


def test_swarm_metadata_is_not_read_by_openai_chat() -> None:
    trace = [USER, {"role": "assistant", "content": "Hi.", "sender": "Front Desk", "refusal": None}]
    assert openai_chat.from_messages(to_messages(trace)) == [
        USER,
        {"role": "assistant", "content": "Hi.", "name": "Front Desk"},
    ]


# --- handoffs ------------------------------------------------------------------------------


def streaming_history() -> list[dict[str, Any]]:
    """Two handoffs in the streaming shape: ``sender`` stays the starting agent throughout."""
    return [
        USER,
        {
            "content": "",
            "sender": "Triage",
            "role": "assistant",
            "function_call": None,
            "tool_calls": [transfer("c1", "transfer_to_sales")],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "tool_name": "transfer_to_sales",
            "content": '{"assistant": "Sales"}',
        },
        {
            "content": "",
            "sender": "Triage",
            "role": "assistant",
            "function_call": None,
            "tool_calls": [transfer("c2", "transfer_to_billing")],
        },
        {
            "role": "tool",
            "tool_call_id": "c2",
            "tool_name": "transfer_to_billing",
            "content": '{"assistant": "Billing Agent"}',
        },
        {
            "content": "Your balance is 120.50 EUR.",
            "sender": "Triage",
            "role": "assistant",
            "function_call": None,
            "tool_calls": None,
        },
    ]


def test_handoffs_follow_the_handoff_results_not_the_stale_sender() -> None:
    messages = to_messages(streaming_history())
    assert [m.name for m in messages if isinstance(m, AIMessage)] == ["Triage"] * 3
    assert handoffs(messages) == [
        Handoff(index=2, from_agent="Triage", to_agent="Sales"),
        Handoff(index=4, from_agent="Sales", to_agent="Billing Agent"),
    ]


def test_handoffs_read_a_stored_history_too() -> None:
    assert handoffs(streaming_history()) == handoffs(to_messages(streaming_history()))
    with pytest.raises(TraceError) as caught:
        handoffs([USER, "not a message"])
    assert (caught.value.code, caught.value.index) == ("malformed_event", 1)


@pytest.mark.parametrize(
    "content",
    ['{"assistant": 3}', '{"assistant": "A", "extra": 1}', "Billing Agent", '["assistant"]'],
    ids=["not-a-name", "more-keys", "plain-text", "list"],
)
def test_only_an_assistant_object_is_a_handoff(content: str) -> None:
    messages = [
        HumanMessage(content="hi"),
        AIMessage(tool_calls=[ToolCall(name="f", id="c1")], name="A"),
        ToolMessage(content=content, tool_call_id="c1"),
    ]
    assert handoffs(messages) == []


def test_handoffs_without_agent_names_start_from_none() -> None:
    messages = [
        HumanMessage(content="hi"),
        AIMessage(tool_calls=[ToolCall(name="transfer", id="c1")]),
        ToolMessage(content='{"assistant": "B"}', tool_call_id="c1"),
    ]
    assert handoffs(messages) == [Handoff(index=2, from_agent=None, to_agent="B")]


# --- detection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("trace", "expected"),
    [
        ([USER, {"role": "assistant", "content": "hi", "sender": "A"}], True),
        ([USER, {"role": "tool", "tool_call_id": "c", "tool_name": "f", "content": ""}], True),
        ([USER, {"role": "assistant", "content": "hi"}], False),
        ([{"sender": "A", "content": "hi"}], False),
        ({"messages": [USER]}, False),
        ([], False),
    ],
    ids=["sender", "tool-name", "plain-openai", "no-role", "wrapper", "empty"],
)
def test_detect(trace: Any, expected: bool) -> None:
    assert swarm.detect(trace) is expected
