"""The otel reader on a call whose tool spans failed after it succeeded, in an earlier turn,
and id filters given as the SDK's own int ids (docs/adapters/otel.md).

1. In an earlier turn the next model call's input holds the result the model was sent. When
   that is the text the call's last successful tool span recorded (and not one a failed span
   after it recorded), the failed spans after the success did not answer: the model never saw
   their error. The result is not an error and they are counted with the earlier attempts in
   ``metadata["otel"]["failed_attempts"]``. Otherwise the last failed span answered: the
   result is ``is_error`` and keeps no count. Either way ``from_messages`` writes what the
   reader gave and it reads back equal.
2. ``trace_id`` and ``span_id`` given as the SDK's int (``span.context.trace_id``,
   ``span.context.span_id``) select the span, as the reader keys SDK spans by that int in hex;
   a bool, an int out of the id's range or another value that is not text selects nothing
   (``ambiguous_trace``) and says what an id is.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from otel_helpers import refused, text, where
from test_otel_fixes_s47 import CALL, HI, chat, earlier_turn, recorded, tool

import tracebridge
from tracebridge import AIMessage, HumanMessage, Message, ToolCall, ToolMessage
from tracebridge.adapters import otel

TURN = [HumanMessage(content="hi"),
        AIMessage(content="", tool_calls=[ToolCall(name="f", args={"a": 1}, id="c1")])]
OK = AIMessage(content="ok")

Convention = Literal["genai", "openinference"]


def result(content: str, *, attempts: int | None = None, error: bool = False) -> ToolMessage:
    return ToolMessage(content=content, tool_call_id="c1", is_error=error,
                       metadata={"otel": {"failed_attempts": attempts}} if attempts else {})


def written_back(messages: list[Message], convention: Convention) -> list[Message]:
    """``messages`` written by ``from_messages`` and read again, through JSON."""
    written = otel.from_messages(messages, convention=convention)
    return otel.to_messages(json.loads(json.dumps(written)))


# 1. A failure after the success, in an earlier turn


SENT_THE_SUCCESS = [
    pytest.param([("E", True), ("R1", False), ("E2", True)], 2, id="fail,success,fail"),
    pytest.param([("R1", False), ("E", True)], 1, id="success,fail"),
    pytest.param([("E", True), ("E", True), ("R1", False), ("E", True)], 3,
                 id="fail,fail,success,fail"),
    pytest.param([(None, True), ("R1", False), (None, True)], 2,
                 id="fail,success,fail without results"),
    pytest.param([("R1", False), ("E", True), ("E2", True)], 2, id="success,fail,fail"),
]


@pytest.mark.parametrize(("runs", "attempts"), SENT_THE_SUCCESS)
def test_failures_after_the_success_the_model_was_sent_did_not_answer(
    runs: list[tuple[str | None, bool]], attempts: int
) -> None:
    assert otel.to_messages(earlier_turn(*runs)) == [*TURN, result("R1", attempts=attempts), OK]


@pytest.mark.parametrize("convention", ["genai", "openinference"])
@pytest.mark.parametrize(("runs", "attempts"), SENT_THE_SUCCESS)
def test_failures_after_the_success_the_model_was_sent_round_trip(
    runs: list[tuple[str | None, bool]], attempts: int, convention: Convention
) -> None:
    messages = otel.to_messages(earlier_turn(*runs))
    assert written_back(messages, convention) == messages


SENT_THE_ERROR = [
    pytest.param([("E", True), ("R1", False), ("E2", True)], "E2", id="fail,success,fail"),
    pytest.param([("E", True), ("E", True), ("R1", False), ("E2", True)], "E2",
                 id="fail,fail,success,fail"),
    pytest.param([("E", True), ("R1", False), (None, True)], "Error: boom",
                 id="fail,success,fail without result"),
]


@pytest.mark.parametrize(("runs", "sent"), SENT_THE_ERROR)
def test_a_last_failure_the_model_was_sent_answers_and_keeps_no_count(
    runs: list[tuple[str | None, bool]], sent: str
) -> None:
    # the failures before the success were attempts of a call that failed in the end
    assert otel.to_messages(earlier_turn(*runs, sent=sent)) == [
        *TURN, result(sent, error=True), OK]


@pytest.mark.parametrize("convention", ["genai", "openinference"])
@pytest.mark.parametrize(("runs", "sent"), SENT_THE_ERROR)
def test_a_last_failure_the_model_was_sent_round_trips(
    runs: list[tuple[str | None, bool]], sent: str, convention: Convention
) -> None:
    messages = otel.to_messages(earlier_turn(*runs, sent=sent))
    assert written_back(messages, convention) == messages


def test_a_failure_after_a_success_that_recorded_no_result_answers() -> None:
    # nothing shows the model was sent the success: the failure after it was the last run
    assert otel.to_messages(earlier_turn((None, False), ("E", True))) == [
        *TURN, result("R1", error=True), OK]


def test_a_failure_that_recorded_the_text_the_model_was_sent_answers() -> None:
    assert otel.to_messages(earlier_turn(("R1", False), ("R1", True))) == [
        *TURN, result("R1", error=True), OK]


def test_a_placed_failure_after_the_success_the_model_was_sent_did_not_answer() -> None:
    def build(tracer: Any) -> None:
        chat(tracer, [HI], [CALL])
        tool(tracer, "R1")
        tool(tracer, None, failed=True, call_id=False)  # placed by name and arguments
        answered = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                               "response": "R1"}]}
        chat(tracer, [HI, CALL, answered], [text("assistant", "ok")])

    messages = otel.to_messages(recorded(build))
    assert messages == [*TURN, result("R1", attempts=1), OK]
    assert written_back(messages, "genai") == messages


def test_a_trailing_failure_after_the_success_is_still_a_second_answer() -> None:
    # after the last model call no model input says which run answered
    def build(tracer: Any) -> None:
        chat(tracer, [HI], [CALL])
        tool(tracer, "E", failed=True)
        tool(tracer, "R1")
        tool(tracer, "R1", failed=True)

    error = refused(recorded(build))
    assert where(error) == ("orphan_tool_result", 3, "[3].attributes['gen_ai.tool.call.id']")
    assert error.detail == "tool_call_id 'c1' was already answered at messages[2]"


# 2. Id filters given as the SDK's int ids


def two_traces() -> list[Any]:
    """Two conversations, each in a trace of its own: ``hi``/``yo``, then ``hello``/``there``."""
    first = recorded(lambda tracer: chat(tracer, [HI], [text("assistant", "yo")]))
    second = recorded(lambda tracer: chat(tracer, [text("user", "hello")],
                                          [text("assistant", "there")]))
    return [*first, *second]


SECOND = [HumanMessage(content="hello"), AIMessage(content="there")]


def test_the_sdk_int_trace_id_selects_its_trace() -> None:
    spans = two_traces()
    assert refused(spans).code == "ambiguous_trace"
    assert otel.to_messages(spans, trace_id=spans[1].context.trace_id) == SECOND
    assert [(view.input, view.output) for view in otel.calls(
        spans, trace_id=spans[1].context.trace_id)] == [(SECOND[:1], SECOND[1:])]


def test_the_sdk_int_span_id_selects_its_call() -> None:
    spans = two_traces()
    assert otel.to_messages(spans, span_id=spans[1].context.span_id) == SECOND
    assert tracebridge.convert(spans, source="otel", target="openai_chat",
                               source_options={"span_id": spans[0].context.span_id}) == [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]


TRACE_FORM = ("an id filter is the id's hex or base64 text, or the SDK's int "
              "(span.context.trace_id, from 0 to 2**128 - 1)")
SPAN_FORM = ("an id filter is the id's hex or base64 text, or the SDK's int "
             "(span.context.span_id, from 0 to 2**64 - 1)")


@pytest.mark.parametrize(("option", "value", "form"), [
    ("trace_id", True, TRACE_FORM),
    ("trace_id", 2**128, TRACE_FORM),
    ("trace_id", -1, TRACE_FORM),
    ("span_id", True, SPAN_FORM),
    ("span_id", 2**64, SPAN_FORM),
    ("span_id", [1], SPAN_FORM),
])
def test_a_filter_that_is_no_id_says_what_an_id_is(option: str, value: Any, form: str) -> None:
    spans = two_traces()
    error = refused(spans, **{option: value})
    said = "no span has trace_id" if option == "trace_id" else "no model-call span has span_id"
    assert (*where(error), error.detail) == ("ambiguous_trace", None, None,
                                             f"{said} {value!r}: {form}")


def test_an_sdk_int_id_out_of_the_trace_id_range_is_no_id() -> None:
    # the span's own id plus 2**128: its hex would end as the span's does
    spans = two_traces()
    value = spans[1].context.trace_id + 2**128
    error = refused(spans, trace_id=value)
    assert (*where(error), error.detail) == (
        "ambiguous_trace", None, None, f"no span has trace_id {value!r}: {TRACE_FORM}")
