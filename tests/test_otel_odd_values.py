"""OpenTelemetry spans with values no instrumentation writes are refused where they are.

Each of these let a raw exception out of ``to_messages``: message indexes spelled otherwise
than ``0``, ``1``, ... (``00``, ``01``, other scripts' digits) failed a lookup; JSON nested past
Python's depth in an attribute raised ``RecursionError``; a count or integer of thousands of
digits raised ``ValueError``. And an id filter that is not text raised ``AttributeError``
(an int is the SDK's own id and selects its span; any other value selects nothing:
``ambiguous_trace``, saying what an id is).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_otel import ASK, CALLING, document, genai, span

from tracebridge import AIMessage, HumanMessage, ToolCall, TraceError
from tracebridge.adapters import otel

SPAN = "resourceSpans[0].scopeSpans[0].spans[0]"


def _refused(trace: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace)
    return caught.value


def _openinference(indexes: list[str]) -> dict[str, Any]:
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM"}
    for index in indexes:
        attributes[f"llm.input_messages.{index}.message.role"] = "user"
        attributes[f"llm.input_messages.{index}.message.content"] = "hi"
    attributes["llm.output_messages.0.message.role"] = "assistant"
    attributes["llm.output_messages.0.message.content"] = "hello"
    return document(span(1, attributes))


@pytest.mark.parametrize("indexes", [["0", "00"], ["0", "01"], ["00"], ["\u0660"], ["0\n"]])
def test_a_message_index_spelled_otherwise_is_malformed(indexes: list[str]) -> None:
    error = _refused(_openinference(indexes))
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, f"{SPAN}.attributes['llm.input_messages']")


def test_indexes_as_written_are_read() -> None:
    assert [m.text for m in otel.to_messages(_openinference(["0", "1"]))] == ["hi", "hi", "hello"]


def test_json_nested_past_pythons_depth_is_malformed() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    trace = document(span(1, {"gen_ai.operation.name": "chat", "gen_ai.input.messages": deep}))
    error = _refused(trace)
    assert (error.code, error.path) == (
        "malformed_event", f"{SPAN}.attributes['gen_ai.input.messages']")


def test_an_attribute_value_nested_past_pythons_depth_is_malformed() -> None:
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(5_000):
        value = {"arrayValue": {"values": [value]}}
    trace = json.loads(json.dumps(document(genai(1, [ASK], [CALLING]))))
    listed = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    listed.append({"key": "deep", "value": value})
    error = _refused(trace)
    assert (error.code, error.path) == ("malformed_event", f"{SPAN}.attributes[{len(listed) - 1}]")


@pytest.mark.parametrize("field", ["startTimeUnixNano", "droppedAttributesCount"])
def test_a_count_of_more_digits_than_64_bits_hold_is_malformed(field: str) -> None:
    trace = json.loads(json.dumps(document(genai(1, [ASK], [CALLING]))))
    trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0][field] = "9" * 5_000
    error = _refused(trace)
    assert (error.code, error.path) == ("malformed_event", f"{SPAN}.{field}")


@pytest.mark.parametrize("option", ["trace_id", "span_id"])
def test_an_int_id_filter_is_the_sdk_id_and_selects_its_span(option: str) -> None:
    # the span's ids are 00…01 in hex: the SDK's int 1
    trace = document(genai(1, [ASK], [CALLING]))
    assert otel.to_messages(trace, **{option: 1}, allow_pending=True) == [
        HumanMessage(content="Weather in Paris?"),
        AIMessage(content="", tool_calls=[
            ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1")]),
    ]
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace, **{option: 2})
    assert (caught.value.code, caught.value.detail) == (
        "ambiguous_trace", "no span has trace_id 2" if option == "trace_id"
        else "no model-call span has span_id 2")


ID_FORMS = {
    "trace_id": "an id filter is the id's hex or base64 text, or the SDK's int "
                "(span.context.trace_id, from 0 to 2**128 - 1)",
    "span_id": "an id filter is the id's hex or base64 text, or the SDK's int "
               "(span.context.span_id, from 0 to 2**64 - 1)",
}


@pytest.mark.parametrize(("option", "value", "detail"), [
    ("trace_id", True, "no span has trace_id True"),
    ("trace_id", -1, "no span has trace_id -1"),
    ("trace_id", 2**128, f"no span has trace_id {2**128}"),
    ("trace_id", 1.0, "no span has trace_id 1.0"),
    ("span_id", False, "no model-call span has span_id False"),
    ("span_id", 2**64, f"no model-call span has span_id {2**64}"),
    ("span_id", b"\x01", "no model-call span has span_id b'\\x01'"),
])
def test_an_id_filter_that_is_no_id_selects_nothing(option: str, value: Any, detail: str) -> None:
    # as a session_id that is not text names no span's session; the detail says what an id is
    with pytest.raises(TraceError) as caught:
        otel.to_messages(document(genai(1, [ASK], [CALLING])), **{option: value})
    error = caught.value
    assert (error.code, error.index, error.path, error.detail) == (
        "ambiguous_trace", None, None, f"{detail}: {ID_FORMS[option]}")


def test_a_detail_on_an_audio_part_is_kept_and_written_back() -> None:
    # an audio part has no detail of its own: it was dropped
    given = [{"role": "user", "parts": [{"type": "blob", "modality": "audio",
                                         "mime_type": "audio/wav", "content": "UklGRg==",
                                         "detail": "high"}]},
             {"role": "assistant", "parts": [{"type": "text", "content": "a beep"}]}]
    trace = document(span(1, {"gen_ai.operation.name": "chat",
                              "gen_ai.input.messages": json.dumps(given[:1]),
                              "gen_ai.output.messages": json.dumps(given[1:])}))
    messages = otel.to_messages(trace)
    assert messages[0].content[0].metadata == {"otel": {"fields": {"detail": "high"}}}
    assert otel.to_messages(json.loads(json.dumps(otel.from_messages(messages)))) == messages


@pytest.mark.parametrize(("key", "value"), [("type", "custom"), ("type", "web_search")])
def test_a_recorded_call_type_other_than_function_is_malformed(key: str, value: str) -> None:
    # it was overwritten with "function"
    prefix = "llm.output_messages.0.message.tool_calls.0.tool_call"
    attributes = {"openinference.span.kind": "LLM",
                  "llm.input_messages.0.message.role": "user",
                  "llm.input_messages.0.message.content": "hi",
                  "llm.output_messages.0.message.role": "assistant",
                  f"{prefix}.id": "c1", f"{prefix}.function.name": "f",
                  f"{prefix}.function.arguments": "{}", f"{prefix}.{key}": value}
    error = _refused(document(span(1, attributes)))
    assert (error.code, error.path) == ("malformed_event", f"{SPAN}.attributes['{prefix}.{key}']")


def test_a_masked_image_is_content_not_captured() -> None:
    # OpenInference writes __REDACTED__ for a base64 image over 32,000 characters by default:
    # it was read as an image whose URL is the marker
    url = "llm.input_messages.0.message.contents.1.message_content.image.image.url"
    attributes = {"openinference.span.kind": "LLM",
                  "llm.input_messages.0.message.role": "user",
                  "llm.input_messages.0.message.contents.0.message_content.type": "text",
                  "llm.input_messages.0.message.contents.0.message_content.text": "What is it?",
                  "llm.input_messages.0.message.contents.1.message_content.type": "image",
                  url: "__REDACTED__",
                  "llm.output_messages.0.message.role": "assistant",
                  "llm.output_messages.0.message.content": "A cat."}
    error = _refused(document(span(1, attributes)))
    assert (error.code, error.path) == ("content_not_captured", f"{SPAN}.attributes['{url}']")
    assert "OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH" in error.detail


@pytest.mark.parametrize("key", ["output.value", "gen_ai.tool.call.result"])
def test_a_masked_tool_output_is_content_not_captured(key: str) -> None:
    # OPENINFERENCE_HIDE_OUTPUTS masks it: it was read as the result's text
    tool = span(5, {"openinference.span.kind": "TOOL", "tool.name": "get_weather",
                    "tool_call.id": "call_1", key: "__REDACTED__"})
    error = _refused(document(genai(1, [ASK], [CALLING]), tool))
    assert (error.code, error.index, error.path) == (
        "content_not_captured", 1, f"resourceSpans[0].scopeSpans[0].spans[1].attributes['{key}']")
