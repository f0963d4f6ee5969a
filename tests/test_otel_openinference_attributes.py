"""OpenInference's flat message attributes: what it writes is read, anything beside it is
refused where it is, and errors name the attribute that holds the fault.

OpenInference keeps a message under ``llm.input_messages.{i}.message.*``, a call under
``...message.tool_calls.{j}.tool_call.*`` and a content part under
``...message.contents.{k}.message_content.{type, text, image.image.url}``. An attribute
beside those wrappers, or a content attribute it does not write, used to be dropped without a
word; now it is ``malformed_event`` at that attribute. An error the message reader finds in a
message field, a call or a content part names the attribute that holds it (the Traceloop
convention's ``gen_ai.completion.{i}.tool_calls.{j}.name`` too).
"""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import HumanMessage, ImagePart, TextPart, TraceError
from tracebridge.adapters import otel

BASE = {
    "openinference.span.kind": "LLM",
    "llm.input_messages.0.message.role": "user",
    "llm.input_messages.0.message.contents.0.message_content.type": "text",
    "llm.input_messages.0.message.contents.0.message_content.text": "What is this?",
    "llm.input_messages.0.message.contents.1.message_content.type": "image",
    "llm.input_messages.0.message.contents.1.message_content.image.image.url":
        "https://example.com/a.png",
    "llm.output_messages.0.message.role": "assistant",
    "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "look",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": "{}",
}
SPAN = "resourceSpans[0].scopeSpans[0].spans[0]"


def _trace(**changes: Any) -> dict[str, Any]:
    attributes = {**BASE, **changes}
    span = {
        "traceId": f"{1:032x}", "spanId": f"{1:016x}", "name": "llm",
        "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()
                       if v is not None],
    }
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [
        {"scope": {"name": "test"}, "spans": [span]}]}]}


def _value(value: Any) -> dict[str, Any]:
    return {"intValue": str(value)} if type(value) is int else {"stringValue": value}


def test_what_openinference_writes_is_read() -> None:
    messages = otel.to_messages(_trace(), allow_pending=True)
    assert messages[0] == HumanMessage(content=[
        TextPart(text="What is this?"), ImagePart(url="https://example.com/a.png")])
    assert [(c.name, c.args, c.id) for c in messages[1].tool_calls] == [  # type: ignore[union-attr]
        ("look", {}, "call_1")]


@pytest.mark.parametrize("key", [
    "llm.input_messages.0.note",  # beside .message
    "llm.output_messages.0.message.tool_calls.0.note",  # beside .tool_call
    "llm.input_messages.0.message.contents.0.note",  # beside .message_content
    "llm.input_messages.0.message.contents.0.message_content.mime_type",  # not a text's
    "llm.input_messages.0.message.contents.1.message_content.text",  # not an image's
    "llm.input_messages.0.message.contents.1.message_content.image.detail",
    "llm.input_messages.0.message.contents.1.message_content.image.image.detail",
])
def test_an_attribute_openinference_does_not_write_is_refused_where_it_is(key: str) -> None:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(_trace(**{key: "x"}), allow_pending=True)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, f"{SPAN}.attributes['{key}']")


def test_an_image_content_without_its_url_is_refused() -> None:
    # OpenInference's censor leaves every image key out under OPENINFERENCE_HIDE_INPUT_IMAGES
    # and keeps the content's type: content capture was off for it
    url = "llm.input_messages.0.message.contents.1.message_content.image.image.url"
    with pytest.raises(TraceError) as caught:
        otel.to_messages(_trace(**{url: None}), allow_pending=True)
    error = caught.value
    assert "OPENINFERENCE_HIDE_INPUT_IMAGES" in error.detail
    assert (error.code, error.index, error.path) == (
        "content_not_captured", 0,
        f"{SPAN}.attributes['llm.input_messages.0.message.contents.1.message_content.image']")


def test_a_text_content_without_text_is_empty_text_as_openinference_leaves_it_out() -> None:
    text = "llm.input_messages.0.message.contents.0.message_content.text"
    messages = otel.to_messages(_trace(**{text: None}), allow_pending=True)
    assert messages[0] == HumanMessage(content=[
        TextPart(text=""), ImagePart(url="https://example.com/a.png")])


def test_an_error_in_a_message_names_its_attribute() -> None:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(_trace(**{"llm.input_messages.0.message.role": "robot"}),
                         allow_pending=True)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "unknown_role", 0, f"{SPAN}.attributes['llm.input_messages.0.message.role']")


@pytest.mark.parametrize(("change", "key"), [
    ({"llm.output_messages.0.message.tool_calls.0.tool_call.function.name": None},
     "llm.output_messages.0.message.tool_calls.0.tool_call.function.name"),
    ({"llm.output_messages.0.message.tool_calls.0.tool_call.id": 7},
     "llm.output_messages.0.message.tool_calls.0.tool_call.id"),
    ({"llm.input_messages.0.message.contents.0.message_content.text": 5},
     "llm.input_messages.0.message.contents.0.message_content.text"),
])
def test_an_error_in_a_call_or_a_part_names_its_attribute(change: dict[str, Any],
                                                          key: str) -> None:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(_trace(**change), allow_pending=True)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, f"{SPAN}.attributes['{key}']")


def test_an_error_in_a_traceloop_call_names_its_attribute() -> None:
    legacy = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Weather in Paris?",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.id": "call_1",
        "gen_ai.completion.0.tool_calls.0.name": 7,
        "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}',
    }
    trace = _trace()
    span = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["attributes"] = [{"key": k, "value": _value(v)} for k, v in legacy.items()]
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace, allow_pending=True)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, f"{SPAN}.attributes['gen_ai.completion.0.tool_calls.0.name']")
