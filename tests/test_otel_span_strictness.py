"""Span documents that say one thing twice, or leave out what a result needs: an attribute
key listed twice, an AnyValue holding two values, a kvlist key listed twice, a tool span whose
GenAI and OpenInference attributes disagree, and a tool span with no result for a call the
conversation needs answered are refused where they are (each used to be resolved silently:
one value taken, the other dropped, or an empty result made up)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import otel

SPANS = "resourceSpans[0].scopeSpans[0].spans"
ASK = [{"role": "user", "parts": [{"type": "text", "content": "weather?"}]}]
CALL = [{"role": "assistant",
         "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {}}]}]


def text(value: str) -> dict[str, Any]:
    return {"stringValue": value}


def span(number: int, attributes: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "traceId": "0" * 31 + "1", "spanId": f"{number:016x}", "name": "s",
        "startTimeUnixNano": str(number), "endTimeUnixNano": str(number),
        "attributes": [{"key": key, "value": value} for key, value in attributes],
    }


def chat(*extra: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return span(1, [
        ("gen_ai.operation.name", text("chat")),
        ("gen_ai.input.messages", text(json.dumps(ASK))),
        ("gen_ai.output.messages", text(json.dumps(CALL))),
        *extra,
    ])


def tool(*attributes: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return span(2, [("gen_ai.operation.name", text("execute_tool")), *attributes])


def document(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def refused(trace: dict[str, Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace)
    return caught.value.code, caught.value.index, caught.value.path


def test_an_attribute_listed_twice_is_malformed() -> None:
    again = ("gen_ai.input.messages", text(json.dumps([
        {"role": "user", "parts": [{"type": "text", "content": "another"}]}
    ])))
    assert refused(document(chat(again))) == (
        "malformed_event", 0, f"{SPANS}[0].attributes[3]"
    )


def test_an_any_value_holding_two_values_is_malformed() -> None:
    two = ("session.id", {"stringValue": "a", "arrayValue": {"values": []}})
    assert refused(document(chat(two))) == ("malformed_event", 0, f"{SPANS}[0].attributes[3]")


def test_a_kvlist_key_listed_twice_is_malformed() -> None:
    pairs = [{"key": "k", "value": text("A")}, {"key": "k", "value": text("B")}]
    listed = ("extra", {"kvlistValue": {"values": pairs}})
    assert refused(document(chat(listed))) == ("malformed_event", 0, f"{SPANS}[0].attributes[3]")


RESULT = [("gen_ai.tool.call.id", text("c1")), ("gen_ai.tool.name", text("f")),
          ("gen_ai.tool.call.result", text("18 C"))]


def test_agreeing_conventions_on_a_tool_span_read_as_one() -> None:
    both = tool(*RESULT, ("tool_call.id", text("c1")), ("tool.name", text("f")),
                ("output.value", text("18 C")))
    messages = otel.to_messages(document(chat(), both))
    assert (messages[-1].content, messages[-1].tool_call_id, messages[-1].name) == (
        "18 C", "c1", "f"
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [("tool_call.id", "c2"), ("tool.name", "g"), ("output.value", "19 C"),
     ("input.value", '{"city": "Paris"}')],
)
def test_disagreeing_conventions_on_a_tool_span_conflict(key: str, value: str) -> None:
    extra = [("gen_ai.tool.call.arguments", text("{}"))] if key == "input.value" else []
    trace = document(chat(), tool(*RESULT, *extra, (key, text(value))))
    assert refused(trace) == ("conflicting_fields", 1, f"{SPANS}[1].attributes[{key!r}]")


def test_a_tool_span_without_a_result_is_not_a_result() -> None:
    trace = document(chat(), tool(*RESULT[:2]))
    code, index, path = refused(trace)
    assert (code, index, path) == ("content_not_captured", 1, f"{SPANS}[1]")
    empty = document(chat(), tool(*RESULT[:2], ("gen_ai.tool.call.result", {})))
    assert refused(empty) == ("content_not_captured", 1, f"{SPANS}[1]")
    with_one = otel.to_messages(document(chat(), tool(*RESULT)))
    assert with_one[-1].content == "18 C"


def test_a_tool_span_read_for_its_error_flag_alone_needs_no_result() -> None:
    answered = [*ASK, *CALL, {"role": "tool", "parts": [
        {"type": "tool_call_response", "id": "c1", "response": "boom"}]}]
    final = [{"role": "assistant", "parts": [{"type": "text", "content": "sorry"}]}]
    call = span(1, [("gen_ai.operation.name", text("chat")),
                    ("gen_ai.input.messages", text(json.dumps(answered))),
                    ("gen_ai.output.messages", text(json.dumps(final)))])
    failed = tool(*RESULT[:2])
    failed["status"] = {"code": "STATUS_CODE_ERROR"}
    messages = otel.to_messages(document(call, failed))
    assert [(m.type, m.is_error) for m in messages if m.type == "tool"] == [("tool", True)]


@pytest.mark.parametrize(
    ("value", "content"),
    [({"intValue": "42"}, "42"), ({"boolValue": True}, "true"), ({"doubleValue": 1.5}, "1.5"),
     ({"arrayValue": {"values": [text("a"), {"intValue": "1"}]}}, '["a", 1]'),
     ({"kvlistValue": {"values": [{"key": "temp", "value": {"intValue": "18"}}]}},
      '{"temp": 18}')],
)
def test_a_result_that_is_a_value_reads_as_its_json_and_is_written_back_so(
    value: dict[str, Any], content: str
) -> None:
    trace = document(chat(), tool(*RESULT[:2], ("gen_ai.tool.call.result", value)))
    messages = otel.to_messages(trace)
    assert (messages[-1].content, messages[-1].metadata) == (
        content, {"otel": {"response": "value"}}
    )
    written = otel.from_messages(messages)
    spans = written["resourceSpans"][0]["scopeSpans"][0]["spans"]
    result = {a["key"]: a["value"] for a in spans[-1]["attributes"]}["gen_ai.tool.call.result"]
    assert otel.to_messages(written) == messages
    assert "stringValue" not in result


def test_a_value_result_the_writer_cannot_give_back_is_refused() -> None:
    messages = otel.to_messages(document(chat(), tool(*RESULT[:2], (
        "gen_ai.tool.call.result", {"intValue": "42"}))))
    for content in (" 42", '"42"', "forty-two"):
        edited = [*messages[:-1], messages[-1].model_copy(update={"content": content})]
        with pytest.raises(TraceError) as caught:
            otel.from_messages(edited)
        assert (caught.value.code, caught.value.path) == (
            "not_representable", "messages[2].metadata.otel.response"
        )
    answered = [*messages, otel.to_messages(document(chat()), allow_pending=True)[0]]
    with pytest.raises(TraceError) as caught:
        otel.from_messages(answered)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].metadata.otel.response"
    )


def test_a_trailing_tool_message_json_is_written_in_either_convention() -> None:
    data = {"content": "18 C", "type": "tool", "tool_call_id": "c1", "status": "success",
            "artifact": {"raw": 18}}
    trace = document(chat(), tool(*RESULT[:2], ("output.value", text(json.dumps(
        {"type": "tool", "data": data})))))
    messages = otel.to_messages(trace)
    assert messages[-1].metadata == {"otel": {"tool_message": {"artifact": {"raw": 18}}}}
    for convention in ("genai", "openinference"):
        written = otel.from_messages(messages, convention=convention)  # type: ignore[arg-type]
        assert otel.to_messages(written) == messages


@pytest.mark.parametrize(
    ("value", "content"),
    [({"doubleValue": 2}, "2.0"), ({"doubleValue": "2.5"}, "2.5"), ({"doubleValue": "-1e3"},
                                                                      "-1000.0")],
)
def test_a_double_written_as_a_whole_number_or_as_text_is_a_double(
    value: dict[str, Any], content: str
) -> None:
    # protobuf's JSON mapping writes the double 2.0 as 2, and may quote a double
    trace = document(chat(), tool(*RESULT[:2], ("gen_ai.tool.call.result", value)))
    messages = otel.to_messages(trace)
    assert messages[-1].content == content
    spans = otel.from_messages(messages)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    result = {a["key"]: a["value"] for a in spans[-1]["attributes"]}["gen_ai.tool.call.result"]
    assert result == {"doubleValue": float(content)}


@pytest.mark.parametrize(
    ("value", "code", "field"),
    [({"doubleValue": "NaN"}, "unserializable_value", "doubleValue"),
     ({"doubleValue": "-Infinity"}, "unserializable_value", "doubleValue"),
     ({"doubleValue": 10**400}, "unserializable_value", "doubleValue"),
     ({"doubleValue": "1e400"}, "unserializable_value", "doubleValue"),
     ({"doubleValue": "1_0"}, "malformed_event", "doubleValue"),
     ({"doubleValue": " 1"}, "malformed_event", "doubleValue"),
     ({"doubleValue": True}, "malformed_event", "doubleValue"),
     ({"doubleValue": None}, "malformed_event", "doubleValue"),
     ({"bytesValue": "AAE="}, "unserializable_value", "bytesValue"),
     ({"stringValue": 5}, "malformed_event", "stringValue"),
     ({"stringValue": None}, "malformed_event", "stringValue"),
     ({"boolValue": 1}, "malformed_event", "boolValue"),
     ({"boolValue": "true"}, "malformed_event", "boolValue")],
)
def test_an_any_value_not_of_its_kind_is_refused_where_it_is(
    value: dict[str, Any], code: str, field: str
) -> None:
    # before, each was taken as it stood: "NaN" or base64 bytes as text (written back as a
    # stringValue), a number as a string, 1 as a bool
    trace = document(chat(), tool(*RESULT[:2], ("gen_ai.tool.call.result", value)))
    assert refused(trace) == (code, 1, f"{SPANS}[1].attributes[3].value.{field}")
