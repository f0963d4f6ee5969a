"""Second audit of the OpenTelemetry adapter, on real traces (``tests/data/otel_audit2``,
made by running the instrumentations): a tool retried by LangGraph, written documents that
shared their ids, a custom call written flat, the openai-agents instrumentation's two
spellings of one text, and nested duplicate spans of a reply with parallel calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import langchain, otel
from tracebridge.messages import (
    AIMessage,
    HumanMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)

DATA = Path(__file__).parent / "data" / "otel_audit2"


def load(name: str) -> dict[str, Any]:
    return json.loads((DATA / f"{name}.json").read_text())  # type: ignore[no-any-return]


def spans_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for r in document["resourceSpans"] for c in r["scopeSpans"] for s in c["spans"]]


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: a["value"] for a in span["attributes"]}


# 1. A tool retried by LangGraph (RetryPolicy): a failed TOOL span without a call id, then one
#    that succeeded with the ToolMessage JSON for call_1.

WEATHER = ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1")
RETRIED = [
    HumanMessage(content="Paris?"),
    AIMessage(content="", tool_calls=[WEATHER], metadata={"otel": {"content": "absent"}}),
    ToolMessage(content="18 C, sunny", tool_call_id="call_1", name="get_weather",
                metadata={"otel": {"failed_attempts": 1}}),
    AIMessage(content="Paris: 18 C, sunny."),
]


def test_a_retried_tool_that_succeeded_is_not_an_error_and_its_failed_attempt_is_counted() -> None:
    trace = load("lg_retry")
    messages = otel.to_messages(trace["trace"])
    assert messages == RETRIED
    app = langchain.to_messages(trace["history"])
    assert [m.is_error for m in app if isinstance(m, ToolMessage)] == [False]


def test_a_retried_tool_written_back_reads_back() -> None:
    spans = spans_of(otel.from_messages(RETRIED))
    failed = [s for s in spans if s["status"] == {"code": "STATUS_CODE_ERROR"}]
    assert [attributes(s) for s in failed] == [{
        "openinference.span.kind": {"stringValue": "TOOL"},
        "tool.name": {"stringValue": "get_weather"},
        "input.value": {"stringValue": '{"city": "Paris"}'},
        "session.id": {"stringValue": spans[0]["traceId"]},
    }]
    assert otel.to_messages(otel.from_messages(RETRIED)) == RETRIED


@pytest.mark.parametrize("convention", ["genai", "openinference"])
def test_failed_attempts_round_trip_before_and_after_the_last_call(convention: str) -> None:
    call = ToolCall(name="f", args={"a": 1}, id="c1")
    messages: list[Message] = [
        HumanMessage(content="hi"), AIMessage(content="", tool_calls=[call]),
        ToolMessage(content="ok", tool_call_id="c1", metadata={"otel": {"failed_attempts": 2}}),
        AIMessage(content="done"),
    ]
    written = otel.from_messages(messages, convention=convention)
    assert sum(s["status"] != {} for s in spans_of(written)) == 2
    assert otel.to_messages(written) == messages
    pending = otel.from_messages(messages[:3], convention=convention)
    assert otel.to_messages(pending, allow_pending=True) == messages[:3]


def test_failed_attempts_the_reader_would_not_count_are_refused() -> None:
    call = ToolCall(name="f", args={"a": 1}, id="c1")
    base: list[Message] = [HumanMessage(content="hi"), AIMessage(content="", tool_calls=[call])]
    on_error = ToolMessage(content="no", tool_call_id="c1", is_error=True,
                           metadata={"otel": {"failed_attempts": 1}})
    with pytest.raises(TraceError) as caught:
        otel.from_messages([*base, on_error, AIMessage(content="done")])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].metadata.otel.failed_attempts")
    zero = ToolMessage(content="ok", tool_call_id="c1", metadata={"otel": {"failed_attempts": 0}})
    with pytest.raises(TraceError) as caught:
        otel.from_messages([*base, zero, AIMessage(content="done")])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 2, "messages[2].metadata.otel.failed_attempts")
    twin = ToolCall(name="f", args={"a": 1}, id="c2")
    twice: list[Message] = [
        HumanMessage(content="hi"), AIMessage(content="", tool_calls=[call, twin]),
        ToolMessage(content="ok", tool_call_id="c1", metadata={"otel": {"failed_attempts": 1}}),
        ToolMessage(content="ok", tool_call_id="c2"), AIMessage(content="done"),
    ]
    with pytest.raises(TraceError) as caught:
        otel.from_messages(twice)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].metadata.otel.failed_attempts")


# 2. Each written conversation has ids of its own, derived from it.

CALL = ToolCall(name="get_weather", args={"city": "Paris"}, id="c1")
FAILED = [HumanMessage(content="Paris?"), AIMessage(content="", tool_calls=[CALL]),
          ToolMessage(content="timeout", tool_call_id="c1", is_error=True),
          AIMessage(content="Sorry.")]
LONGER = [HumanMessage(content="Paris?"), AIMessage(content="", tool_calls=[CALL]),
          ToolMessage(content="timeout", tool_call_id="c1"), AIMessage(content="Sorry."),
          HumanMessage(content="Try again?"), AIMessage(content="Still down.")]


def test_written_conversations_have_distinct_deterministic_ids() -> None:
    first, second = otel.from_messages(FAILED), otel.from_messages(LONGER)
    assert otel.from_messages(FAILED) == first
    ids = [[(s["traceId"], s["spanId"]) for s in spans_of(d)] for d in (first, second)]
    traces = [{trace for trace, _ in pairs} for pairs in ids]
    assert [len(t) for t in traces] == [1, 1]
    assert traces[0] != traces[1]
    assert len({span for pairs in ids for _, span in pairs}) == 3
    for document in (first, second):
        for span in spans_of(document):
            assert attributes(span)["gen_ai.conversation.id"] == {"stringValue": span["traceId"]}


def test_two_written_conversations_in_one_file_stay_apart() -> None:
    first, second = otel.from_messages(FAILED), otel.from_messages(LONGER)
    lines = "\n".join(json.dumps(d) for d in (first, second))
    with pytest.raises(TraceError) as caught:
        otel.to_messages(lines)
    assert caught.value.code == "ambiguous_trace"
    assert otel.to_messages(lines, trace_id=spans_of(first)[0]["traceId"]) == FAILED
    assert otel.to_messages(lines, session_id=spans_of(second)[0]["traceId"]) == LONGER


# 3. A custom call written flat with drop=["custom_calls"] is a function call {"input": text}.

def test_a_custom_call_written_flat_is_a_function_call_of_its_text() -> None:
    custom = ToolCall(name="run_sql", args={"input": "SELECT 1"}, id="c1", kind="custom")
    messages: list[Message] = [
        HumanMessage(content="list users"), AIMessage(content="", tool_calls=[custom]),
        ToolMessage(content="1 row", tool_call_id="c1"), AIMessage(content="one user"),
    ]
    written = otel.from_messages(messages, convention="openinference", drop=["custom_calls"])
    kept = attributes(spans_of(written)[0])
    key = "llm.input_messages.1.message.tool_calls.0.tool_call"
    assert {k: v for k, v in kept.items() if k.startswith(key)} == {
        f"{key}.id": {"stringValue": "c1"},
        f"{key}.function.name": {"stringValue": "run_sql"},
        f"{key}.function.arguments": {"stringValue": '{"input": "SELECT 1"}'},
    }
    function = custom.model_copy(update={"kind": "function"})
    expected = [messages[0], AIMessage(content="", tool_calls=[function]), *messages[2:]]
    assert otel.to_messages(written) == expected
    genai = otel.from_messages(messages, convention="genai", drop=["custom_calls"])
    assert otel.to_messages(genai) == expected
    with pytest.raises(TraceError) as caught:
        otel.from_messages(messages, convention="openinference")
    assert (caught.value.code, caught.value.path) == (
        "not_representable", "messages[1].tool_calls[0]")


# 4. openai-agents: an output text as `content` and `contents.0`, the same message in the
#    next call's input as `contents.0` only. The later call's form is kept.

SYSTEM = SystemMessage(content="Answer weather questions.")
ABSENT = {"otel": {"content": "absent"}}


def test_an_agents_text_reply_read_again_by_a_later_run_reads() -> None:
    call = ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1")
    assert otel.to_messages(load("ag_two_turns")["trace"]) == [
        SYSTEM, HumanMessage(content="Weather in Paris?"),
        AIMessage(content="", tool_calls=[call], metadata=ABSENT),
        ToolMessage(content="18 C, sunny", tool_call_id="call_1"),
        AIMessage(content=[TextPart(text="Paris sunny.")]),
        HumanMessage(content="Thanks!"), AIMessage(content="You're welcome."),
    ]


def test_an_agents_text_item_before_a_call_item_reads() -> None:
    call = ToolCall(name="get_weather", args={"city": "Paris"}, id="call_2")
    messages = otel.to_messages(load("ag_textcall")["trace"])
    assert messages == [
        SYSTEM, HumanMessage(content="Weather?"),
        AIMessage(content=[TextPart(text="Let me check.")]),
        AIMessage(content="", tool_calls=[call], metadata=ABSENT),
        ToolMessage(content="18 C, sunny", tool_call_id="call_2"),
        AIMessage(content="Paris sunny."),
    ]
    assert otel.to_messages(otel.from_messages(messages)) == messages


# 5. Nested duplicates (agents span around the client's span) compared after joining calls.

def test_nested_duplicates_of_a_reply_with_parallel_calls_agree_once_joined() -> None:
    calls = [ToolCall(name="get_weather", args={"city": "Atlantis"}, id="call_1"),
             ToolCall(name="get_weather", args={"city": "Paris"}, id="call_2")]
    assert otel.to_messages(load("ag_parallel_fail_client")["trace"]) == [
        SYSTEM, HumanMessage(content="Weather?"),
        AIMessage(content="", tool_calls=calls, metadata=ABSENT),
        ToolMessage(content="An error occurred while running the tool. Please try again.",
                    tool_call_id="call_1", is_error=True),
        ToolMessage(content="18 C, sunny", tool_call_id="call_2"),
        AIMessage(content="Atlantis unknown; Paris sunny."),
    ]
