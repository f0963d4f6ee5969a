"""The otel reader on a tool span that fails after its call succeeded, tool spans cut by the
attribute limit, Traceloop's older answer evidence, id filters that are not text, and
documents after long leading whitespace (docs/adapters/otel.md).

1. A failed tool span is an earlier attempt only when a successful span of its call started
   after it. One with no success after it was the call's last attempt and answers with its
   error: after the last model call a second answer (``orphan_tool_result``), or, when it
   recorded no result, ``truncated_trace``; in an earlier turn the result is ``is_error``
   when the next model call was sent its error text (``test_otel_fixes2_s47``: not when it
   was sent the success's result).
2. A span that dropped attributes, no longer says what it is, and holds a tool span's
   attributes is ``truncated_trace`` at the span (a cut model-call span already was).
3. Traceloop's older convention says a call answered with ``gen_ai.usage.completion_tokens``,
   ``gen_ai.response.finish_reason`` or ``llm.response.finish_reason``: a call that records
   its input and none of its output is ``content_not_captured`` at that key.
4. A ``trace_id`` or ``span_id`` that is neither text nor the SDK's int id selects nothing
   (``ambiguous_trace``), as a ``session_id`` that is not text does.
5. ``detect`` finds a document after more than 200 whitespace characters.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from otel_helpers import refused, text, where

import tracebridge
from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage
from tracebridge.adapters import otel

HI = text("user", "hi")
CALL = {"role": "assistant",
        "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {"a": 1}}]}
ARGUMENTS = '{"a": 1}'

Build = Callable[[Any], None]


def recorded(build: Build, max_attributes: int | None = None) -> list[Any]:
    """The SDK spans ``build(tracer)`` makes (with the SDK's attribute count limit, when
    given), as an in-memory exporter receives them."""
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")
    export = pytest.importorskip("opentelemetry.sdk.trace.export")
    exporter = memory.InMemorySpanExporter()
    limits = sdk.SpanLimits(max_span_attributes=max_attributes)
    provider = sdk.TracerProvider(span_limits=limits)
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    build(provider.get_tracer("opentelemetry.instrumentation.openai_v2"))
    return list(exporter.get_finished_spans())


def chat(tracer: Any, given: list[Any], answered: list[Any]) -> Any:
    with tracer.start_as_current_span("chat") as current:
        current.set_attribute("gen_ai.operation.name", "chat")
        current.set_attribute("gen_ai.input.messages", json.dumps(given))
        current.set_attribute("gen_ai.output.messages", json.dumps(answered))
    return current


def tool(tracer: Any, result: str | None, *, failed: bool = False, call_id: bool = True) -> None:
    """A GenAI tool span of call ``c1`` (of ``f``, arguments ``{"a": 1}``); without
    ``call_id`` it is placed by its tool name and arguments."""
    status = pytest.importorskip("opentelemetry.trace")
    with tracer.start_as_current_span("execute_tool f") as current:
        current.set_attribute("gen_ai.operation.name", "execute_tool")
        if call_id:
            current.set_attribute("gen_ai.tool.call.id", "c1")
        current.set_attribute("gen_ai.tool.name", "f")
        current.set_attribute("gen_ai.tool.call.arguments", ARGUMENTS)
        if result is not None:
            current.set_attribute("gen_ai.tool.call.result", result)
        if failed:
            current.set_status(status.Status(status.StatusCode.ERROR, "boom"))


def after_the_call(*runs: tuple[str | None, bool]) -> list[Any]:
    """The call of ``c1`` as the last model call, then a tool span per (result, failed)."""
    def build(tracer: Any) -> None:
        chat(tracer, [HI], [CALL])
        for result, failed in runs:
            tool(tracer, result, failed=failed)

    return recorded(build)


CALLED = [HumanMessage(content="hi"),
          AIMessage(content="", tool_calls=[ToolCall(name="f", args={"a": 1}, id="c1")])]


# 1. A failed tool span is an earlier attempt only when a success of its call came after it


def test_a_tool_span_that_fails_after_its_call_succeeded_is_a_second_answer() -> None:
    spans = after_the_call(("R1", False), ("Error: boom", True))
    error = refused(spans)
    assert where(error) == ("orphan_tool_result", 2, "[2].attributes['gen_ai.tool.call.id']")
    assert error.detail == "tool_call_id 'c1' was already answered at messages[2]"


@pytest.mark.parametrize("allow_pending", [False, True])
def test_a_failure_with_no_result_after_the_success_is_truncated(allow_pending: bool) -> None:
    spans = after_the_call(("R1", False), (None, True))
    error = refused(spans, allow_pending=allow_pending)
    assert where(error) == ("truncated_trace", 2, "[2]")
    assert error.detail.startswith(
        "the tool span that ran call 'c1' after the last model call failed; instrumentations "
        "record no result on a failed tool span"
    )


def test_only_the_failures_before_the_last_success_are_earlier_attempts() -> None:
    # failed, succeeded, failed again: the first was an attempt, the last answers with its error
    spans = after_the_call((None, True), ("R1", False), (None, True))
    assert where(refused(spans)) == ("truncated_trace", 3, "[3]")


def test_failures_before_the_success_are_still_earlier_attempts() -> None:
    spans = after_the_call((None, True), (None, True), ("R1", False))
    assert otel.to_messages(spans) == [*CALLED, ToolMessage(
        content="R1", tool_call_id="c1", name="f", metadata={"otel": {"failed_attempts": 2}})]


def test_a_placed_failure_after_the_success_is_a_second_answer() -> None:
    def build(tracer: Any) -> None:
        chat(tracer, [HI], [CALL])
        tool(tracer, "R1")
        tool(tracer, "Error: boom", failed=True, call_id=False)  # placed by name and arguments

    error = refused(recorded(build))
    assert where(error) == ("orphan_tool_result", 2, "[2]")
    assert error.detail == "tool_call_id 'c1' was already answered at messages[2]"


def earlier_turn(*runs: tuple[str | None, bool], sent: str = "R1") -> list[Any]:
    """The call of ``c1``, tool spans per (result, failed), then the next model call, whose
    input holds the result ``sent``."""
    answered = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                           "response": sent}]}

    def build(tracer: Any) -> None:
        chat(tracer, [HI], [CALL])
        for result, failed in runs:
            tool(tracer, result, failed=failed)
        chat(tracer, [HI, CALL, answered], [text("assistant", "ok")])

    return recorded(build)


def test_a_failure_after_the_success_in_an_earlier_turn_flags_the_result() -> None:
    # the next model call was sent the failure's error text, not the success's result
    messages = otel.to_messages(earlier_turn(("R1", False), ("E", True), sent="E"))
    assert messages[2] == ToolMessage(content="E", tool_call_id="c1", is_error=True)


def test_a_failure_before_the_success_in_an_earlier_turn_is_an_earlier_attempt() -> None:
    messages = otel.to_messages(earlier_turn(("E", True), ("R1", False)))
    assert messages[2] == ToolMessage(content="R1", tool_call_id="c1",
                                      metadata={"otel": {"failed_attempts": 1}})


def test_a_view_whose_call_succeeded_then_failed_is_a_second_answer() -> None:
    def build(tracer: Any) -> None:
        chat(tracer, [HI], [CALL])
        tool(tracer, "R1")
        tool(tracer, None, failed=True)

    spans = recorded(build)
    error = refused(spans, span_id=f"{spans[0].context.span_id:016x}")
    assert where(error) == ("orphan_tool_result", 2, "[2].attributes['gen_ai.tool.call.id']")
    assert error.detail == (
        "the tool span ran call 'c1' and failed after the tool span at [1] answered it: the "
        "call has two answers (the failed span's error text is in the next model call's "
        "input, outside this call's view)"
    )


def test_a_view_whose_failed_call_has_no_success_is_left_unanswered() -> None:
    def build(tracer: Any) -> None:
        chat(tracer, [HI], [CALL])
        tool(tracer, None, failed=True)

    spans = recorded(build)
    assert otel.to_messages(spans, span_id=f"{spans[0].context.span_id:016x}") == CALLED


# 2. A tool span cut by the attribute count limit


CUT = ("the span dropped 1 attribute(s) (droppedAttributesCount) and holds a tool run's {key} "
       "but no attribute that says what it is (gen_ai.operation.name, "
       "openinference.span.kind): the SDK's attribute limit (128 by default, "
       "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT) cut the oldest attributes, which instrumentations set "
       "first, so the tool run it records (its result or error, for a call of the "
       "conversation) cannot be read")


def genai_tool(tracer: Any) -> None:
    with tracer.start_as_current_span("execute_tool f") as current:
        current.set_attribute("gen_ai.operation.name", "execute_tool")
        current.set_attribute("gen_ai.tool.call.id", "c1")
        current.set_attribute("gen_ai.tool.name", "f")
        current.set_attribute("gen_ai.tool.call.result", "RESULT")


def openinference_tool(tracer: Any) -> None:
    with tracer.start_as_current_span("f") as current:
        current.set_attribute("openinference.span.kind", "TOOL")
        current.set_attribute("tool.name", "f")
        current.set_attribute("tool_call.id", "c1")
        current.set_attribute("output.value", "RESULT")


@pytest.mark.parametrize("allow_pending", [False, True])
@pytest.mark.parametrize(("run", "key"), [(genai_tool, "gen_ai.tool.call.id"),
                                          (openinference_tool, "tool_call.id")])
def test_a_tool_span_that_lost_its_kind_to_the_attribute_limit_is_truncated(
    run: Build, key: str, allow_pending: bool
) -> None:
    def build(tracer: Any) -> None:
        chat(tracer, [HI], [CALL])  # (three attributes: within the limit)
        run(tracer)

    spans = recorded(build, max_attributes=3)
    assert spans[1].dropped_attributes == 1
    error = refused(spans, allow_pending=allow_pending)
    assert where(error) == ("truncated_trace", 1, "[1]")
    assert error.detail == CUT.format(key=key)


def test_a_written_tool_span_that_lost_its_kind_is_truncated() -> None:
    written = otel.from_messages(
        [*CALLED, ToolMessage(content="RESULT", tool_call_id="c1", name="f")],
        convention="genai")
    document = json.loads(json.dumps(written))
    cut = document["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    cut["attributes"] = [a for a in cut["attributes"] if a["key"] != "gen_ai.operation.name"]
    cut["droppedAttributesCount"] = 1
    error = refused(document, allow_pending=True)
    assert where(error) == ("truncated_trace", 1, "resourceSpans[0].scopeSpans[0].spans[1]")
    assert error.detail == CUT.format(key="gen_ai.tool.call.id")


# 3. Traceloop's older answer evidence


@pytest.mark.parametrize(("key", "value"), [
    ("gen_ai.usage.completion_tokens", 20),
    ("gen_ai.response.finish_reason", "stop"),
    ("llm.response.finish_reason", "stop"),
])
def test_a_traceloop_call_that_says_it_answered_without_its_output_is_refused(
    key: str, value: Any
) -> None:
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("openai.chat") as current:
            current.set_attribute("llm.request.type", "chat")
            current.set_attribute("gen_ai.prompt.0.role", "user")
            current.set_attribute("gen_ai.prompt.0.content", "hi")
            current.set_attribute(key, value)
            current.set_attribute("llm.usage.total_tokens", 25)

    error = refused(recorded(build))
    assert where(error) == ("content_not_captured", 0, f"[0].attributes['{key}']")
    assert error.detail.startswith(
        f"the model call recorded its input and no output messages, but {key} says it "
        "answered: its output messages were not recorded"
    )


# 4. Id filters that are not text


@pytest.mark.parametrize(("option", "value", "detail"), [
    ("trace_id", 5.0, "no span has trace_id 5.0: an id filter is the id's hex or base64 "
     "text, or the SDK's int (span.context.trace_id, from 0 to 2**128 - 1)"),
    ("span_id", b"x", "no model-call span has span_id b'x': an id filter is the id's hex or "
     "base64 text, or the SDK's int (span.context.span_id, from 0 to 2**64 - 1)"),
])
def test_an_id_filter_that_is_not_text_selects_nothing(
    option: str, value: Any, detail: str
) -> None:
    spans = recorded(lambda tracer: chat(tracer, [HI], [text("assistant", "yo")]))
    error = refused(spans, **{option: value})
    assert (*where(error), error.detail) == ("ambiguous_trace", None, None, detail)
    with pytest.raises(tracebridge.TraceError) as caught:
        tracebridge.convert(spans, source="otel", target="openai_chat",
                            source_options={option: value})
    assert (*where(caught.value), caught.value.detail) == (
        "ambiguous_trace", None, None, detail)


# 5. detect past long leading whitespace


def test_a_document_after_long_leading_whitespace_is_detected() -> None:
    written = otel.from_messages([HumanMessage(content="hi"), AIMessage(content="yo")])
    given = "\n" * 201 + " \t" * 100 + json.dumps(written)
    assert otel.detect(given) is True
    assert tracebridge.convert(given, source="auto", target="openai_chat") == [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]


def test_whitespace_alone_or_before_other_text_is_not_detected() -> None:
    assert otel.detect(" \n" * 300) is False
    assert otel.detect("\n" * 300 + '["resourceSpans"]') is False
