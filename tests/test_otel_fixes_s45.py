"""The otel reader on session ids that are not text, empty output lists, Traceloop's part-list
JSON, flat message indexes, the SDK exporter's tuple, error paths inside a part list, and
messages in the GenAI details event (docs/adapters/otel.md).

1. A session id that is not text is ``malformed_event`` at its key, never "no session".
2. An empty ``gen_ai.output.messages`` on a call that says it answered is
   ``content_not_captured``; with nothing saying so it is a call that answered nothing.
3. Traceloop's ``gen_ai.prompt.{i}.content`` part-list JSON is read as GenAI's message lists
   are: a key given twice is ``malformed_event``, ``NaN`` / ``Infinity``
   ``unserializable_value``, at the attribute.
4. A flat index of more than 18 digits is ``malformed_event`` at the list's prefix.
5. The first missing flat index is found without a structure as large as the largest index.
6. ``detect`` is true for a tuple of SDK spans or span dicts (the in-memory exporter's).
7. A value refused inside a part list is at its path in the list's own terms, inside the
   attribute's quotes (Traceloop's ``content``, ``gen_ai.system_instructions``, an
   assistant's parts after a call, a tool result's ``response`` list).
8. A span whose messages are only in a ``gen_ai.client.inference.operation.details`` event is
   refused as messages in span events, not as content capture off.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from otel_helpers import refused, text, where
from test_otel import recorded_spans

import tracebridge
from tracebridge import AIMessage, HumanMessage
from tracebridge.adapters import otel
from tracebridge.messages import ImagePart, TextPart
from tracebridge.registry import detect_format

HI = text("user", "hi")
HELLO = text("assistant", "hello")


def chat(tracer: Any, attributes: dict[str, Any], events: tuple[str, ...] = ()) -> None:
    with tracer.start_as_current_span("chat") as current:
        current.set_attribute("gen_ai.operation.name", "chat")
        for key, value in attributes.items():
            current.set_attribute(key, value)
        for name in events:
            current.add_event(name, {"gen_ai.input.messages": json.dumps([HI])})


def one_chat(attributes: dict[str, Any], events: tuple[str, ...] = ()) -> list[Any]:
    return recorded_spans(lambda tracer: chat(tracer, attributes, events))


def genai(given: Any, answered: Any, **extra: Any) -> dict[str, Any]:
    return {"gen_ai.input.messages": past_double(given),
            "gen_ai.output.messages": past_double(answered), **extra}


PAST_DOUBLE = "(1e999)"


def past_double(value: Any) -> str:
    """``value``'s JSON text, with each ``PAST_DOUBLE`` string spelled as the number ``1e999``
    (read as an infinity, where ``json.dumps`` would write the token ``Infinity``)."""
    return json.dumps(value).replace(json.dumps(PAST_DOUBLE), "1e999")


# 1. A session id that is not text


def two_sessions(second: Any, key: str = "session.id") -> list[Any]:
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("eval-loop"):
            chat(tracer, genai([HI], [HELLO], **{"session.id": "A"}))
            question = text("user", "B question")
            chat(tracer, genai([HI, HELLO, question], [text("assistant", "B answer")],
                               **{key: second}))

    return recorded_spans(build)


def test_a_session_id_that_is_not_text_is_refused_at_its_key() -> None:
    spans = two_sessions(7)
    expected = ("malformed_event", 1, "[1].attributes['session.id']")
    assert where(refused(spans, session_id="A")) == expected
    assert where(refused(spans)) == expected
    assert where(refused(spans, session_id="7")) == expected


def test_a_langsmith_thread_id_that_is_a_number_is_refused_at_its_key() -> None:
    spans = two_sessions(7, key="langsmith.metadata.thread_id")
    assert where(refused(spans, session_id="A")) == (
        "malformed_event", 1, "[1].attributes['langsmith.metadata.thread_id']"
    )


def test_text_session_ids_still_tell_two_conversations_apart() -> None:
    spans = two_sessions("B")
    assert otel.to_messages(spans, session_id="A") == [
        HumanMessage(content="hi"), AIMessage(content="hello")
    ]
    assert refused(spans).code == "ambiguous_trace"


# 2. An empty output list


def test_an_empty_output_list_on_a_call_that_says_it_answered_is_content_not_captured() -> None:
    spans = one_chat({
        "gen_ai.input.messages": json.dumps([HI]),
        "gen_ai.output.messages": "[]",
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.output_tokens": 20,
    })
    error = refused(spans)
    assert where(error) == (
        "content_not_captured", 0, "[0].attributes['gen_ai.response.finish_reasons']"
    )


def test_an_empty_output_list_that_nothing_says_answered_is_no_reply() -> None:
    spans = one_chat({"gen_ai.input.messages": json.dumps([HI]),
                      "gen_ai.output.messages": "[]"})
    assert otel.to_messages(spans) == [HumanMessage(content="hi")]


def test_an_empty_output_list_of_a_failed_call_is_no_reply() -> None:
    trace = pytest.importorskip("opentelemetry.trace")

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("chat") as current:
            current.set_attribute("gen_ai.operation.name", "chat")
            current.set_attribute("gen_ai.input.messages", json.dumps([HI]))
            current.set_attribute("gen_ai.output.messages", "[]")
            current.set_attribute("gen_ai.usage.output_tokens", 0)
            current.set_status(trace.Status(trace.StatusCode.ERROR, "boom"))

    assert otel.to_messages(recorded_spans(build)) == [HumanMessage(content="hi")]


# 3. Traceloop's part-list JSON

TRACELOOP = "opentelemetry.instrumentation.openai.v1"


def traceloop(content: str) -> list[Any]:
    attributes = {
        "llm.request.type": "chat",
        "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "sys",
        "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": content,
        "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "yo",
    }

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("openai.chat") as current:
            for key, value in attributes.items():
                current.set_attribute(key, value)

    return recorded_spans(build, scope=TRACELOOP)


CONTENT = "[0].attributes['gen_ai.prompt.1.content']"


@pytest.mark.parametrize("content", [
    '[{"type": "text", "text": "a", "text": "b"}]',
    '[{"type": "text", "text": "a"}, {"type": "image_url", "image_url": '
    '{"url": "https://x/i.png", "url": "https://evil/i.png"}}]',
])
def test_a_traceloop_part_list_with_a_key_given_twice_is_malformed(content: str) -> None:
    assert where(refused(traceloop(content))) == ("malformed_event", 0, CONTENT)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_a_traceloop_part_list_with_nan_or_infinity_is_unserializable(token: str) -> None:
    content = f'[{{"type": "text", "text": "a", "cache_control": {token}}}]'
    assert where(refused(traceloop(content))) == ("unserializable_value", 0, CONTENT)


def test_a_traceloop_part_list_without_repeated_keys_reads() -> None:
    content = json.dumps([{"type": "text", "text": "a"},
                          {"type": "image_url", "image_url": {"url": "https://x/i.png"}}])
    assert otel.to_messages(traceloop(content))[1] == HumanMessage(
        content=[TextPart(text="a"), ImagePart(url="https://x/i.png")]
    )


def test_traceloop_text_that_is_no_part_list_is_kept_whatever_its_keys() -> None:
    said = '[{"a": 1, "a": 2}]'
    assert otel.to_messages(traceloop(said))[1] == HumanMessage(content=said)


# 4 and 5. Flat indexes

OPENINFERENCE = "openinference.instrumentation.openai"


def openinference(*extra: tuple[str, str]) -> list[Any]:
    attributes = [
        ("openinference.span.kind", "LLM"),
        ("llm.input_messages.0.message.role", "user"),
        ("llm.input_messages.0.message.content", "hi"),
        *extra,
        ("llm.output_messages.0.message.role", "assistant"),
        ("llm.output_messages.0.message.content", "yo"),
    ]

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("ChatCompletion") as current:
            for key, value in attributes:
                current.set_attribute(key, value)

    return recorded_spans(build, scope=OPENINFERENCE)


@pytest.fixture
def memory_cap() -> Iterator[None]:
    """A ceiling on the process's memory (1 GiB past what it holds) for a test whose failure
    would be work as large as an index: a MemoryError, not an exhausted machine. No ceiling
    where the process's size cannot be read."""
    try:
        import resource
    except ImportError:  # (not on Windows)
        yield
        return
    statm = Path("/proc/self/statm")
    if not statm.exists():
        yield
        return
    held = int(statm.read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = held + (1 << 30)
    for limit in (soft, hard):
        if limit != resource.RLIM_INFINITY:
            cap = min(cap, limit)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.mark.usefixtures("memory_cap")
@pytest.mark.parametrize("index", ["1" * 5000, "1" * 19])
def test_a_message_index_past_18_digits_is_malformed(index: str) -> None:
    spans = openinference((f"llm.input_messages.{index}.message.role", "user"))
    assert where(refused(spans)) == (
        "malformed_event", 0, "[0].attributes['llm.input_messages']"
    )


def test_a_tool_call_index_past_18_digits_is_malformed() -> None:
    index = "1" * 5000
    spans = openinference((f"llm.input_messages.0.message.tool_calls.{index}.tool_call.id", "x"))
    assert where(refused(spans)) == (
        "malformed_event", 0, "[0].attributes['llm.input_messages.0.message.tool_calls']"
    )


@pytest.mark.usefixtures("memory_cap")
def test_an_18_digit_index_is_a_gap() -> None:
    index = "9" * 18
    error = refused(openinference((f"llm.input_messages.{index}.message.role", "user")))
    assert where(error) == ("truncated_trace", 0, "[0].attributes['llm.input_messages']")
    assert f"skip index 1 (found [0, {index}])" in str(error)


def test_the_first_missing_index_is_named_after_a_run_of_present_ones() -> None:
    spans = openinference(
        ("llm.input_messages.1.message.role", "assistant"),
        ("llm.input_messages.1.message.content", "a"),
        ("llm.input_messages.3.message.role", "user"),
        ("llm.input_messages.3.message.content", "b"),
    )
    error = refused(spans)
    assert where(error) == ("truncated_trace", 0, "[0].attributes['llm.input_messages']")
    assert "skip index 2 (found [0, 1, 3])" in str(error)


@pytest.mark.usefixtures("memory_cap")
def test_a_large_index_costs_no_memory_of_its_size() -> None:
    spans = openinference(("llm.input_messages.2000000.message.role", "user"))
    tracemalloc.start()
    try:
        error = refused(spans)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert where(error) == ("truncated_trace", 0, "[0].attributes['llm.input_messages']")
    assert "skip index 1 (found [0, 2000000])" in str(error)
    assert peak < 4_000_000


# 6. The SDK exporter's tuple


def test_detect_is_true_for_the_sdk_exporters_tuple() -> None:
    spans = tuple(one_chat(genai([HI], [HELLO])))
    dicts = tuple(json.loads(span.to_json()) for span in spans)
    assert otel.detect(spans) is True
    assert otel.detect(dicts) is True
    assert otel.detect(()) is False
    assert detect_format(spans) == "otel"
    assert tracebridge.convert(spans, source="auto", target="openai_chat") == [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}
    ]


# 7. Paths inside a part list


def test_a_traceloop_part_keys_value_is_inside_the_content_attribute() -> None:
    error = refused(traceloop('[{"type": "text", "text": "a", "n": 1e999}]'))
    assert where(error) == (
        "unserializable_value", 0, "[0].attributes['gen_ai.prompt.1.content[0].n']"
    )


def test_a_system_instruction_part_is_at_its_place_in_the_list() -> None:
    spans = one_chat(genai([HI], [HELLO], **{
        "gen_ai.system_instructions": '[{"type": "text", "content": "a"}, '
                                      '{"type": "text", "content": "b", "x": 1e999}]'
    }))
    assert where(refused(spans)) == (
        "unserializable_value", 0, "[0].attributes['gen_ai.system_instructions[1].x']"
    )


def test_empty_system_instructions_are_refused_at_the_attribute() -> None:
    spans = one_chat(genai([HI], [HELLO], **{"gen_ai.system_instructions": "[]"}))
    assert where(refused(spans)) == (
        "truncated_trace", 0, "[0].attributes['gen_ai.system_instructions']"
    )


def test_an_assistant_part_after_a_call_is_at_its_own_position() -> None:
    reply = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "f", "arguments": {}},
        {"type": "text", "content": "a", "x": PAST_DOUBLE},
    ]}
    spans = one_chat(genai([HI], [reply]))
    assert where(refused(spans)) == (
        "unserializable_value", 0, "[0].attributes['gen_ai.output.messages[0].parts[1].x']"
    )


@pytest.mark.parametrize("key", ["response", "result"])
def test_a_part_of_a_tool_results_list_is_at_its_place_in_that_list(key: str) -> None:
    calling = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "f", "arguments": {}}]}
    result = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", key: [
        {"type": "text", "content": "a"}, {"type": "text", "content": "b", "x": PAST_DOUBLE},
    ]}]}
    spans = one_chat(genai([HI, calling, result], [HELLO]))
    assert where(refused(spans)) == (
        "unserializable_value", 0,
        f"[0].attributes['gen_ai.input.messages[2].parts[0].{key}[1].x']",
    )


# 8. The GenAI details event

DETAILS = "gen_ai.client.inference.operation.details"


def test_messages_only_in_the_details_event_are_refused_as_events_not_read() -> None:
    error = refused(one_chat({}, events=(DETAILS,)))
    assert where(error) == ("content_not_captured", 0, "[0]")
    assert str(error) == (
        "otel: [0]: the model call has messages in a span event "
        "(gen_ai.client.inference.operation.details) and none in its attributes; span events "
        "are not read. Instrumentations record messages as span attributes with "
        "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (and "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only) [content_not_captured]"
    )


def test_the_details_event_beside_message_attributes_is_not_looked_at() -> None:
    spans = one_chat(genai([HI], [HELLO]), events=(DETAILS,))
    assert otel.to_messages(spans) == [HumanMessage(content="hi"), AIMessage(content="hello")]
