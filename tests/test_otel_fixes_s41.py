"""The otel reader's sessions, rule-error paths and JSON values (docs/adapters/otel.md).

1. Reading a session never fails at another session's span: other sessions' model calls are
   read only for the calls they made, and never refused. A tool span in the session (by name,
   parent or trace) is the session's whatever other sessions did; a call id two sessions
   made is told by time, and when time cannot tell, the tool span is ``ambiguous_trace``.
2. A conversation rule's violation names where the span recorded the message: the GenAI
   message or part (past system instructions, split tool messages, joined calls), the flat
   key of OpenInference and Traceloop, or the tool span.
3. A number past the largest double in a value kept as JSON text (a tool response or
   ``ToolMessage`` JSON) is ``unserializable_value`` at the attribute.
4. A key given twice in JSON text a tool span's result is read from is ``malformed_event``.
5. A failed tool span answers its call unless its side runs the call again before its next
   model call; another session's call recorded twice (nested) is one call; a tool span's
   arguments that are not plain JSON are not refused: they do not help place the span.
6. Traceloop's LangChain record that gives ``kwargs.tool_call_id`` two values (a key given
   twice) is ``malformed_event`` at the attribute; the same value twice reads.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from test_otel import document, recorded_spans, span, text
from test_otel_failed_tools import TRACELOOP, attribute, spans
from test_otel_failed_tools import refused as traceloop_refused
from test_otel_fixes_s40 import SPANS, refused, where

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import otel


def calling(call_id: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [
        {"type": "tool_call", "id": call_id, "name": "f", "arguments": {}}]}


def answering(*call_ids: str) -> dict[str, Any]:
    return {"role": "tool", "parts": [
        {"type": "tool_call_response", "id": call_id, "response": "ok"} for call_id in call_ids]}


def session_chat(number: int, session: str | None, asked: str, answered: Any, *,
                 parent: int | None = None, **more: Any) -> dict[str, Any]:
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat",
                                  "gen_ai.input.messages": [text("user", asked)],
                                  "gen_ai.output.messages": [answered]}
    if session is not None:
        attributes["session.id"] = session
    attributes.update(more)
    return span(number, attributes, parent=parent)


def tool_span(number: int, call_id: str, result: str, *, parent: int | None = None,
              **more: Any) -> dict[str, Any]:
    return span(number, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f",
                         "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.result": result,
                         **more}, parent=parent)


def answered(asked: str, call_id: str, result: str) -> list[Any]:
    return [HumanMessage(content=asked),
            AIMessage(tool_calls=[ToolCall(name="f", args={}, id=call_id)]),
            ToolMessage(content=result, tool_call_id=call_id, name="f")]


# --- 1. sessions ---------------------------------------------------------------------------


@pytest.mark.parametrize("fault", [
    {"gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", "content": "b"}'},
    {"gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", '
                              '"content": "__REDACTED__"}]}]'},
    {"gen_ai.input.messages": '[{"role": "user", "role": "user", "parts": []}]'},
])
def test_another_sessions_broken_input_does_not_fail_this_sessions_read(
    fault: dict[str, Any],
) -> None:
    # before: the other session's error (truncated_trace, content_not_captured,
    # malformed_event at span 2), though session A's spans are all fine
    trace = document(
        session_chat(1, "A", "hi A", calling("c1")),
        session_chat(2, "B", "hi B", text("assistant", "yo"), **fault),
        tool_span(3, "c1", "R"),
    )
    assert otel.to_messages(trace, session_id="A") == answered("hi A", "c1", "R")


def test_another_sessions_unreadable_output_after_this_sessions_tool_span_is_not_read() -> None:
    # before: malformed_event at session B's span
    trace = document(
        session_chat(1, "A", "hi A", calling("c1")),
        tool_span(2, "c1", "R"),
        span(3, {"gen_ai.operation.name": "chat", "session.id": "B",
                 "gen_ai.input.messages": [text("user", "hi B")],
                 "gen_ai.output.messages": "not JSON"}),
    )
    assert otel.to_messages(trace, session_id="A") == answered("hi A", "c1", "R")


@pytest.mark.parametrize(("recorded", "fault"), [
    ({"gen_ai.input.messages": [text("user", "hi B")], "gen_ai.output.messages": "not JSON"},
     "malformed_event: gen_ai.output.messages is not JSON"),
    ({}, "content_not_captured: a model call recorded no message content"),
])
def test_a_tool_span_after_another_sessions_unreadable_output_is_ambiguous(
    recorded: dict[str, Any], fault: str
) -> None:
    # the other call may have made c1 too; before: session B's error at its span
    trace = document(
        session_chat(1, "A", "hi A", calling("c1")),
        span(2, {"gen_ai.operation.name": "chat", "session.id": "B", **recorded}),
        tool_span(3, "c1", "R"),
    )
    error = refused(trace, session_id="A")
    assert where(error) == ("ambiguous_trace", 2, f"{SPANS}[2]")
    assert f"the model call of another session at {SPANS}[1]" in error.detail
    assert fault in error.detail


def shared_id_spans(name_sessions: bool) -> dict[str, Any]:
    """Two sessions under their agent spans, both calling ``c1``, their results after both
    calls; with ``name_sessions`` each tool span is under its session's agent span."""
    def agent(number: int, session: str) -> dict[str, Any]:
        return span(number, {"session.id": session, "gen_ai.operation.name": "invoke_agent"})

    return document(
        agent(1, "A"), agent(2, "B"),
        session_chat(3, None, "hi A", calling("c1"), parent=1),
        session_chat(4, None, "hi B", calling("c1"), parent=2),
        tool_span(5, "c1", "RA", parent=1 if name_sessions else None),
        tool_span(6, "c1", "RB", parent=2 if name_sessions else None),
    )


def test_two_sessions_sharing_a_call_id_read_the_tool_spans_their_parents_name() -> None:
    # before: session A was unanswered_tool_call (B's call started before A's result)
    trace = shared_id_spans(name_sessions=True)
    assert otel.to_messages(trace, session_id="A") == answered("hi A", "c1", "RA")
    assert otel.to_messages(trace, session_id="B") == answered("hi B", "c1", "RB")


def test_two_sessions_sharing_a_call_id_read_the_tool_spans_that_name_them() -> None:
    trace = document(
        session_chat(1, "A", "hi A", calling("c1")),
        session_chat(2, "B", "hi B", calling("c1")),
        tool_span(3, "c1", "RA", **{"session.id": "A"}),
        tool_span(4, "c1", "RB", **{"session.id": "B"}),
    )
    assert otel.to_messages(trace, session_id="A") == answered("hi A", "c1", "RA")
    assert otel.to_messages(trace, session_id="B") == answered("hi B", "c1", "RB")


@pytest.mark.parametrize("session", ["A", "B"])
def test_two_sessions_sharing_a_call_id_with_nothing_to_tell_are_ambiguous(session: str) -> None:
    # both calls made c1 before either tool span ran, and no span names a session
    # before: A was unanswered_tool_call, B orphan_tool_result at A's tool span
    error = refused(shared_id_spans(name_sessions=False), session_id=session)
    assert where(error) == ("ambiguous_trace", 4, f"{SPANS}[4]")
    assert "which this conversation and 1 model call(s) outside it made" in error.detail


def test_sdk_spans_of_two_sessions_sharing_a_call_id_read_by_their_parents() -> None:
    # before: session A was unanswered_tool_call
    trace_api = pytest.importorskip("opentelemetry.trace")

    def build(tracer: Any) -> None:  # one trace: an evaluation loop running two sessions
        root = tracer.start_span("evaluation")
        agents = {}
        for session in ("A", "B"):
            agents[session] = tracer.start_span(
                "invoke_agent", context=trace_api.set_span_in_context(root),
                attributes={"session.id": session},
            )
        for session in ("A", "B"):
            inside = trace_api.set_span_in_context(agents[session])
            with tracer.start_as_current_span("chat", context=inside) as current:
                current.set_attribute("gen_ai.operation.name", "chat")
                current.set_attribute("gen_ai.input.messages",
                                      json.dumps([text("user", f"hi {session}")]))
                current.set_attribute("gen_ai.output.messages", json.dumps([calling("c1")]))
        for session in ("A", "B"):
            inside = trace_api.set_span_in_context(agents[session])
            with tracer.start_as_current_span("execute_tool f", context=inside) as current:
                for key, value in (("gen_ai.operation.name", "execute_tool"),
                                   ("gen_ai.tool.name", "f"), ("gen_ai.tool.call.id", "c1"),
                                   ("gen_ai.tool.call.result", f"R{session}")):
                    current.set_attribute(key, value)
        for agent in agents.values():
            agent.end()
        root.end()

    spans = recorded_spans(build)
    assert otel.to_messages(spans, session_id="A") == answered("hi A", "c1", "RA")
    assert otel.to_messages(spans, session_id="B") == answered("hi B", "c1", "RB")


# --- 2. rule errors name the recorded message ------------------------------------------------

ASKED = text("user", "x")
DONE = [text("assistant", "done")]


def genai_refused(given: Any, **more: Any) -> TraceError:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": given,
                  "gen_ai.output.messages": DONE, **more}
    return refused(document(span(1, attributes)))


def test_a_result_split_from_a_tool_message_is_named_by_its_part() -> None:
    # before: ...spans[0].input[3].tool_call_id (the span records 3 input messages)
    error = genai_refused([ASKED, calling("c1"), answering("c1", "c9")])
    assert where(error) == (
        "orphan_tool_result", 0, f"{SPANS}[0].attributes['gen_ai.input.messages[2].parts[1].id']"
    )


def test_a_message_after_system_instructions_is_named_by_its_own_position() -> None:
    # before: ...spans[0].input[3].tool_call_id
    error = genai_refused([ASKED, calling("c1"), answering("c9")],
                          **{"gen_ai.system_instructions": [{"type": "text", "content": "be"}]})
    assert where(error) == (
        "orphan_tool_result", 0, f"{SPANS}[0].attributes['gen_ai.input.messages[2].parts[0].id']"
    )


def test_a_call_joined_from_a_later_message_is_named_by_its_own_part() -> None:
    # c1 and c2 are joined on one turn; c2 has no result
    # before: ...spans[0].input[1].tool_calls[1]
    error = genai_refused([ASKED, calling("c1"), calling("c2"), answering("c1")])
    assert where(error) == (
        "unanswered_tool_call", 0, f"{SPANS}[0].attributes['gen_ai.input.messages[2].parts[0]']"
    )


def test_a_joined_calls_repeated_id_is_named_by_its_own_part() -> None:
    # before: ...spans[0].input[1].tool_calls[1].id
    error = genai_refused([ASKED, calling("c1"), calling("c1"), answering("c1")])
    assert where(error) == (
        "duplicate_tool_call_id", 0,
        f"{SPANS}[0].attributes['gen_ai.input.messages[2].parts[0].id']",
    )


def test_a_result_in_a_user_message_is_named_by_its_part() -> None:
    # Pydantic AI's user message holding a result and a prompt: two typed messages
    # before: ...spans[0].input[2].tool_call_id
    user = {"role": "user", "parts": [
        {"type": "text", "content": "and"},
        {"type": "tool_call_response", "id": "c9", "result": "ok"}]}
    error = genai_refused([ASKED, calling("c1"), answering("c1"), user])
    assert where(error) == (
        "orphan_tool_result", 0, f"{SPANS}[0].attributes['gen_ai.input.messages[3].parts[1].id']"
    )


def test_an_openinference_result_is_named_by_its_flat_key() -> None:
    # before: ...spans[0].input[2].tool_call_id
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "x",
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.tool_calls.0.tool_call.id": "c1",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "f",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": "{}",
        "llm.input_messages.2.message.role": "tool",
        "llm.input_messages.2.message.content": "ok",
        "llm.input_messages.2.message.tool_call_id": "c9",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "done",
    }
    error = refused(document(span(1, attributes)))
    assert where(error) == (
        "orphan_tool_result", 0,
        f"{SPANS}[0].attributes['llm.input_messages.2.message.tool_call_id']",
    )


def test_a_traceloop_call_is_named_by_its_flat_key() -> None:
    # before: ...spans[0].input[1].tool_calls[0]
    attributes = {
        "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "be brief",
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "x",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.id": "c1",
        "gen_ai.completion.0.tool_calls.0.name": "f",
        "gen_ai.completion.0.tool_calls.0.arguments": "{}",
    }
    error = refused(document(span(1, attributes)))
    assert where(error) == (
        "unanswered_tool_call", 0, f"{SPANS}[0].attributes['gen_ai.completion.0.tool_calls.0']"
    )


# --- 3. numbers past the largest double ------------------------------------------------------


@pytest.mark.parametrize(("response", "inside"), [
    ('{"x": 1e999}', ".response.x"), ("[1, -1e999]", ".response[1]"), ("1e999", ".response"),
])
def test_a_tool_response_past_the_largest_double_is_unserializable(
    response: str, inside: str
) -> None:
    # before: read as the text 'Infinity' ({"x": Infinity}, [1, -Infinity])
    listed = json.dumps([ASKED, calling("c1")])[:-1] + (
        ', {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", '
        f'"response": {response}}}]}}]'
    )
    error = genai_refused(listed)
    assert (error.source, *where(error)) == (
        "otel", "unserializable_value", 0,
        f"{SPANS}[0].attributes['gen_ai.input.messages[2].parts[0]{inside}']",
    )


def after_the_call(**tool: Any) -> dict[str, Any]:
    return document(
        session_chat(1, None, "x", calling("c1")),
        span(2, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f", **tool}),
    )


TOOL_MESSAGE = {"type": "tool", "data": {"type": "tool", "tool_call_id": "c1",
                                         "content": [{"type": "text", "text": "a", "n": "BIG"}]}}


@pytest.mark.parametrize(("attributes", "attribute"), [
    ({"gen_ai.tool.call.id": "c1",
      "gen_ai.tool.call.result": json.dumps(TOOL_MESSAGE).replace('"BIG"', "1e999")},
     "gen_ai.tool.call.result"),
    ({"tool_call.id": "c1", "output.value": json.dumps(
        {"type": "tool", "data": {"tool_call_id": "c1", "content": "R", "artifact": "BIG"}}
    ).replace('"BIG"', "-1e999")}, "output.value"),
])
def test_a_tool_spans_json_past_the_largest_double_is_unserializable(
    attributes: dict[str, Any], attribute: str
) -> None:
    # before: content blocks kept as '[..."n": Infinity}]';
    # an artifact refused with no span (index None, path metadata.otel.tool_message.artifact)
    error = refused(after_the_call(**attributes))
    assert (error.source, *where(error)) == (
        "otel", "unserializable_value", 1, f"{SPANS}[1].attributes[{attribute!r}]"
    )


# --- 4. a key given twice in a tool span's JSON ----------------------------------------------


@pytest.mark.parametrize(("attributes", "attribute", "key"), [
    ({"gen_ai.tool.call.id": "c1", "gen_ai.tool.call.result":
      '{"type": "tool", "data": {"tool_call_id": "c1", "content": "x", "content": "y"}}'},
     "gen_ai.tool.call.result", "content"),
])
def test_a_key_given_twice_in_a_tool_spans_json_is_malformed(
    attributes: dict[str, Any], attribute: str, key: str
) -> None:
    # before: the last value was read ('y')
    error = refused(after_the_call(**attributes))
    assert where(error) == ("malformed_event", 1, f"{SPANS}[1].attributes[{attribute!r}]")
    assert error.detail == (
        f"{attribute}: an object has the key {key!r} twice (which value is meant is not known)"
    )


def test_the_openinference_custom_call_refusal_gives_its_hint_once() -> None:
    from tracebridge.adapters import openai_chat

    messages = openai_chat.to_messages([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "custom", "custom": {"name": "f", "input": "x"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ])
    with pytest.raises(TraceError) as caught:
        otel.from_messages(messages, convention="openinference")
    assert where(caught.value) == ("not_representable", 1, "messages[1].tool_calls[0]")
    assert caught.value.detail == (
        "OpenInference records function calls only; this one is custom; pass "
        "drop=['custom_calls'] to write it as a function call with args {'input': text}"
    )


# --- 5. a failed span's answer, other sessions' nested duplicates, loose arguments -----------


def turn(number: int, session: str | None, given: list[Any], answered: Any, *,
         parent: int | None = None) -> dict[str, Any]:
    """A model call of ``session`` whose input is ``given``."""
    return session_chat(number, session, "", answered, parent=parent,
                        **{"gen_ai.input.messages": given})


def result(call_id: str, response: str) -> dict[str, Any]:
    return {"role": "tool", "parts": [
        {"type": "tool_call_response", "id": call_id, "response": response}]}


def failed_tool(number: int, call_id: str) -> dict[str, Any]:
    return span(number, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f",
                         "gen_ai.tool.call.id": call_id, "gen_ai.tool.call.result": "boom"},
                error=True)


def two_sessions(*a_tools: dict[str, Any], b_tool_at: int = 6) -> dict[str, Any]:
    """Sessions A then B in one trace, both calling ``c1``; the tool spans name no session.
    A's tool spans (``a_tools``) run between its calls at 1 and 5, B's at ``b_tool_at``."""
    a_asked = [text("user", "hi A")]
    b_asked = [text("user", "hi B")]
    return document(
        turn(1, "A", a_asked, calling("c1")),
        *a_tools,
        turn(5, "A", [*a_asked, calling("c1"), result("c1", "boom")], text("assistant", "A")),
        turn(b_tool_at - 1, "B", b_asked, calling("c1")),
        tool_span(b_tool_at, "c1", "RB"),
        turn(9, "B", [*b_asked, calling("c1"), result("c1", "RB")], text("assistant", "B")),
    )


def read_as(asked: str, call_id: str, response: str, said: str, *,
            is_error: bool = False, metadata: dict[str, Any] | None = None) -> list[Any]:
    return [HumanMessage(content=asked),
            AIMessage(tool_calls=[ToolCall(name="f", args={}, id=call_id)]),
            ToolMessage(content=response, tool_call_id=call_id, is_error=is_error,
                        metadata=metadata or {}),
            AIMessage(content=said)]


def test_a_failed_tool_span_answers_its_call_when_the_sessions_share_the_call_id() -> None:
    # A's tool span failed and A's next call was given the error; before: both sessions
    # ambiguous_trace at B's tool span (A's call was never answered)
    trace = two_sessions(failed_tool(2, "c1"), b_tool_at=7)
    assert otel.to_messages(trace, session_id="A") == read_as(
        "hi A", "c1", "boom", "A", is_error=True)
    assert otel.to_messages(trace, session_id="B") == read_as("hi B", "c1", "RB", "B")


def test_a_failed_tool_span_retried_before_its_sides_next_call_does_not_answer() -> None:
    # LangGraph's RetryPolicy: the second span answers A's call, then B's span is B's
    trace = two_sessions(failed_tool(2, "c1"), tool_span(3, "c1", "boom"),
                         b_tool_at=7)
    assert otel.to_messages(trace, session_id="A") == read_as(
        "hi A", "c1", "boom", "A", metadata={"otel": {"failed_attempts": 1}})
    assert otel.to_messages(trace, session_id="B") == read_as("hi B", "c1", "RB", "B")


@pytest.mark.parametrize("session", ["A", "B"])
def test_a_span_after_a_failed_one_before_its_sides_next_call_stays_ambiguous(
    session: str,
) -> None:
    # B's span at 4 may be A's retry or B's run: A's next call starts at 5
    error = refused(two_sessions(failed_tool(2, "c1"), b_tool_at=4), session_id=session)
    assert where(error) == ("ambiguous_trace", 4, f"{SPANS}[4]")


def test_another_sessions_call_recorded_twice_is_one_call() -> None:
    # before: ambiguous_trace at B's tool span, "this conversation and 2 model call(s)
    # outside it made" (A's one call, as its two nested spans)
    trace = document(
        turn(1, "A", [text("user", "hi A")], calling("c1")),
        turn(2, "A", [text("user", "hi A")], calling("c1"), parent=1),
        tool_span(3, "c1", "RA"),
        turn(4, "A", [text("user", "hi A"), calling("c1"), result("c1", "RA")],
             text("assistant", "A")),
        turn(5, "A", [text("user", "hi A"), calling("c1"), result("c1", "RA")],
             text("assistant", "A"), parent=4),
        turn(6, "B", [text("user", "hi B")], calling("c1")),
        tool_span(7, "c1", "RB"),
        turn(8, "B", [text("user", "hi B"), calling("c1"), result("c1", "RB")],
             text("assistant", "B")),
    )
    assert otel.to_messages(trace, session_id="B") == read_as("hi B", "c1", "RB", "B")
    assert otel.to_messages(trace, session_id="A") == read_as("hi A", "c1", "RA", "A")


def test_a_call_id_shared_with_another_sessions_doubled_call_names_one_rival() -> None:
    # both sessions made c1 before the tool span; before: "2 model call(s)"
    trace = document(
        turn(1, "A", [text("user", "hi A")], calling("c1")),
        turn(2, "A", [text("user", "hi A")], calling("c1"), parent=1),
        turn(3, "B", [text("user", "hi B")], calling("c1")),
        tool_span(4, "c1", "R"),
    )
    error = refused(trace, session_id="B")
    assert where(error) == ("ambiguous_trace", 3, f"{SPANS}[3]")
    assert error.detail.startswith(
        "the tool span ran call 'c1', which this conversation and 1 model call(s) outside it "
        "made before the span started, and the span names no session"
    )


LOOSE = ['{"a": 1, "a": 2}', '{"a": NaN}', '{"a": 1e999}', '{"a": -Infinity}']


def loose_call(arguments: str, *, call_id: bool) -> dict[str, Any]:
    """A call, its tool span (with its call id or none) and the next call, the call and the
    span recording the same ``arguments``."""
    calls = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "f", "arguments": arguments}]}
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "f",
            "gen_ai.tool.call.arguments": arguments, "gen_ai.tool.call.result": "R"}
    if call_id:
        tool["gen_ai.tool.call.id"] = "c1"
    asked = [text("user", "x")]
    return document(
        turn(1, None, asked, calls),
        span(2, tool),
        turn(3, None, [*asked, calls, result("c1", "R")], text("assistant", "done")),
    )


def loose_read(arguments: str, *, name: str | None = None) -> list[Any]:
    if arguments == LOOSE[0]:
        call = ToolCall(name="f", args={"a": 2}, id="c1",
                        metadata={"otel": {"arguments": arguments}})
    else:
        call = ToolCall(name="f", args={}, id="c1", invalid_args=arguments)
    return [HumanMessage(content="x"), AIMessage(tool_calls=[call]),
            ToolMessage(content="R", tool_call_id="c1", name=name), AIMessage(content="done")]


@pytest.mark.parametrize("arguments", LOOSE)
def test_a_tool_spans_arguments_that_are_not_plain_json_are_not_refused(arguments: str) -> None:
    # the call keeps its own arguments; before: malformed_event (a key twice) or
    # unserializable_value at the tool span's gen_ai.tool.call.arguments
    assert otel.to_messages(loose_call(arguments, call_id=True)) == loose_read(arguments)


@pytest.mark.parametrize("arguments", LOOSE)
def test_a_tool_span_without_a_call_id_and_loose_arguments_is_placed_by_its_tool(
    arguments: str,
) -> None:
    # the one call of tool f, after which the span ran, is its call; before: refused as above
    trace = loose_call(arguments, call_id=False)
    trace["resourceSpans"][0]["scopeSpans"][0]["spans"].pop()  # the span answers the last call
    assert otel.to_messages(trace) == loose_read(arguments, name="f")[:3]


def test_loose_json_in_a_tool_message_result_is_still_refused() -> None:
    trace = after_the_call(**{
        "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.arguments": '{"a": NaN}',
        "gen_ai.tool.call.result": '{"type": "tool", "data": {"tool_call_id": "c1", '
                                   '"content": "R", "artifact": NaN}}',
    })
    error = refused(trace)
    assert where(error) == (
        "unserializable_value", 1, f"{SPANS}[1].attributes['gen_ai.tool.call.result']"
    )


def weather_after(arguments: str) -> dict[str, Any]:
    """A call of get_weather for Paris, then a tool span without a call id that ran the tool
    with ``arguments`` (the review's case)."""
    call = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}}]}
    asked = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
    return document(
        span(1, {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(asked),
                 "gen_ai.output.messages": json.dumps([call])}),
        span(2, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                 "gen_ai.tool.call.arguments": arguments,
                 "gen_ai.tool.call.result": "Berlin: 9 C"}),
    )


@pytest.mark.parametrize("arguments", ['{"city": "Berlin", "city": "Berlin"}',
                                       '{"city": "Berlin", "days": NaN}'])
def test_loose_arguments_do_not_place_a_span_on_a_call_that_recorded_others(
        arguments: str) -> None:
    # before: the span answered get_weather(Paris) with "Berlin: 9 C"
    assert where(refused(weather_after(arguments)))[:3] == (
        "ambiguous_trace", 1, f"{SPANS}[1]")
    assert where(refused(weather_after('{"city": "Berlin"}')))[:3] == (
        "ambiguous_trace", 1, f"{SPANS}[1]")


def searched(call_args: Any, tool_args: str) -> dict[str, Any]:
    """A call of search recording ``call_args``, then its tool span without a call id given
    ``tool_args``."""
    call = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "search", "arguments": call_args}]}
    asked = [{"role": "user", "parts": [{"type": "text", "content": "q"}]}]
    return document(
        span(1, {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(asked),
                 "gen_ai.output.messages": json.dumps([call])}),
        span(2, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
                 "gen_ai.tool.call.arguments": tool_args, "gen_ai.tool.call.result": "R"}),
    )


TWICE = '{"a": 1, "a": 1}'


@pytest.mark.parametrize(("call_args", "tool_args"), [
    (TWICE, TWICE),                     # the same text recorded
    ('{"a":1,"a":1}', TWICE),           # spaced otherwise, read alike every way
    ({"query": TWICE}, TWICE),          # the call's one text argument
    ({"query": '{"x": NaN}'}, '{"x": NaN}'),
    ({"a": 1}, TWICE),                  # read alike every way
], ids=["same-text", "spaced", "one-text-argument", "one-text-argument-nan", "same-reading"])
def test_loose_arguments_place_a_span_on_the_call_they_are(call_args: Any, tool_args: str) -> None:
    read = otel.to_messages(searched(call_args, tool_args))
    assert [(m.type, m.text) for m in read] == [("human", "q"), ("ai", ""), ("tool", "R")]
    assert read[2].tool_call_id == "c1"


# --- a Traceloop record giving its call id twice ---


def traceloop_call_ids(*given: str) -> dict[str, Any]:
    """The Traceloop LangGraph run, its span of ``call_2`` (span 14) recording the call id
    key ``kwargs.tool_call_id`` once for each of ``given`` (JSON text)."""
    trace = copy.deepcopy(TRACELOOP["trace"])
    value = attribute(spans(trace)[14], "gen_ai.tool.call.arguments")
    keys = ", ".join(f'"tool_call_id": {one}' for one in given)
    value["stringValue"] = value["stringValue"].replace('"tool_call_id": "call_2"', keys)
    assert value["stringValue"].count('"tool_call_id"') == len(given)
    return trace


@pytest.mark.parametrize("given", [('"call_1"', '"call_2"'), ('"call_2"', '"call_3"'),
                                   ("null", '"call_2"'), ('"call_2"', "null")])
def test_a_traceloop_call_id_given_twice_with_two_values_is_malformed(
        given: tuple[str, str]) -> None:
    # before: the last value was the call id, read without a word
    assert traceloop_refused(traceloop_call_ids(*given)) == (
        "malformed_event", 14, f"{SPANS}[14].attributes['gen_ai.tool.call.arguments']")


def test_a_traceloop_record_giving_kwargs_twice_with_two_call_ids_is_malformed() -> None:
    trace = copy.deepcopy(TRACELOOP["trace"])
    value = attribute(spans(trace)[14], "gen_ai.tool.call.arguments")
    value["stringValue"] = value["stringValue"].replace(
        '"kwargs": {', '"kwargs": {"tool_call_id": "call_1"}, "kwargs": {')
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 14, f"{SPANS}[14].attributes['gen_ai.tool.call.arguments']")
    assert "'call_1' and 'call_2'" in str(caught.value)


def test_a_traceloop_call_id_given_twice_alike_reads() -> None:
    assert otel.to_messages(traceloop_call_ids('"call_2"', '"call_2"')) == otel.to_messages(
        TRACELOOP["trace"])
