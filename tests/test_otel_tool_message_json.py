"""OpenTelemetry tool spans whose result is LangChain's ``ToolMessage`` JSON.

OpenInference's LangChain instrumentation records a tool run's output as the ``ToolMessage``
it returned, ``{"type": "tool", "data": {...}}``; that is where a result after the last model
call is read from. Only its content, call id and status were read: an artifact
(``response_format="content_and_artifact"``), a message id, kwargs and a name other than the
span's were dropped without a word, content blocks became their JSON text for good, a call
id other than the span's lost to the span's, and an unknown status read as success. Now the
fields that say something are kept in ``metadata["otel"]["tool_message"]`` and written back
as that JSON; content blocks are kept as ``"response": "json"``; disagreements and shapes
LangChain does not write are refused where they are.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import ToolMessage as LangChainToolMessage
from langchain_core.messages import message_to_dict
from test_otel import ASK, CALLING, document, genai, span

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import otel

from strategies import json_objects, json_values, maybe_names, texts

SPANS = "resourceSpans[0].scopeSpans[0].spans"


def _tool_span(output: Any, **more: str) -> dict[str, Any]:
    """An OpenInference tool span running call_1 (get_weather), after the model's call."""
    attributes = {"openinference.span.kind": "TOOL", "tool.name": "get_weather",
                  "tool_call.id": "call_1", "input.value": '{"city": "Paris"}',
                  "output.value": output if isinstance(output, str) else json.dumps(output)}
    attributes.update(more)
    return span(5, attributes)


def _read(output: Any, **more: str) -> list[Any]:
    return otel.to_messages(document(genai(1, [ASK], [CALLING]), _tool_span(output, **more)))


def _refused(output: Any, **more: str) -> TraceError:
    with pytest.raises(TraceError) as caught:
        _read(output, **more)
    return caught.value


def _tool_message(**fields: Any) -> dict[str, Any]:
    """A real LangChain ToolMessage, as OpenInference dumps it."""
    return message_to_dict(LangChainToolMessage(tool_call_id="call_1", **fields))


def _round_trip(messages: list[Any]) -> list[Any]:
    return otel.to_messages(json.loads(json.dumps(otel.from_messages(messages))))


def test_a_plain_tool_message_reads_as_before_and_keeps_nothing() -> None:
    result = _read(_tool_message(content="18 C", name="get_weather"))[-1]
    assert result == ToolMessage(content="18 C", tool_call_id="call_1", name="get_weather")


def test_an_artifact_an_id_and_kwargs_are_kept_and_written_back() -> None:
    given = _tool_message(
        content="18 C", name="get_weather", artifact={"raw": [18, "C"]}, id="run-7",
        additional_kwargs={"source": "met"}, response_metadata={"ms": 12},
    )
    messages = _read(given)
    assert messages[-1] == ToolMessage(
        content="18 C", tool_call_id="call_1", name="get_weather",
        metadata={"otel": {"tool_message": {
            "artifact": {"raw": [18, "C"]}, "id": "run-7", "additional_kwargs": {"source": "met"},
            "response_metadata": {"ms": 12},
        }}},
    )
    assert _round_trip(messages) == messages
    written = otel.from_messages(messages)["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    result = {a["key"]: a["value"]["stringValue"] for a in written["attributes"]}
    data = json.loads(result["gen_ai.tool.call.result"])["data"]
    assert (data["artifact"], data["id"], data["status"]) == ({"raw": [18, "C"]}, "run-7",
                                                              "success")


def test_a_name_other_than_the_spans_is_kept() -> None:
    messages = _read(_tool_message(content="18 C", name="weather_v2"))
    assert messages[-1].name == "get_weather"
    assert messages[-1].metadata == {"otel": {"tool_message": {"name": "weather_v2"}}}
    assert _round_trip(messages) == messages


def test_the_name_is_the_tool_messages_when_the_span_has_none() -> None:
    given = json.dumps(_tool_message(content="18 C", name="get_weather"))
    trace = document(genai(1, [ASK], [CALLING]), span(5, {
        "openinference.span.kind": "TOOL", "tool_call.id": "call_1", "output.value": given}))
    assert otel.to_messages(trace)[-1] == ToolMessage(
        content="18 C", tool_call_id="call_1", name="get_weather")


def test_content_blocks_are_kept_as_their_list() -> None:
    blocks = [{"type": "text", "text": "18 C"}, {"type": "text", "text": "sunny"}]
    messages = _read(_tool_message(content=blocks, name="get_weather"))
    assert messages[-1] == ToolMessage(
        content=json.dumps(blocks), tool_call_id="call_1", name="get_weather",
        metadata={"otel": {"response": "json"}},
    )
    assert _round_trip(messages) == messages


def test_a_failed_tool_message_is_an_error_and_written_back_as_one() -> None:
    messages = _read(_tool_message(content="boom", name="get_weather", status="error",
                                   artifact=[1]))
    assert messages[-1].is_error is True
    assert _round_trip(messages) == messages


def test_a_result_text_that_is_tool_message_json_reads_back_as_that_text() -> None:
    # the writer used to put it in the span as it is, and the reader took it for a ToolMessage
    text = json.dumps({"type": "tool", "data": {"content": "x"}})
    messages = [
        HumanMessage(content="go"),
        AIMessage(tool_calls=[ToolCall(name="echo", args={}, id="call_1")]),
        ToolMessage(content=text, tool_call_id="call_1", name="echo"),
    ]
    assert _round_trip(messages) == messages


def test_json_with_more_than_type_and_data_is_a_plain_result() -> None:
    output = {"type": "tool", "data": {"content": "x"}, "note": "mine"}
    assert _read(output)[-1].content == json.dumps(output)


def test_a_call_id_other_than_the_spans_conflicts() -> None:
    given = message_to_dict(LangChainToolMessage(content="18 C", tool_call_id="call_9"))
    error = _refused(given)
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 1, f"{SPANS}[1].attributes['output.value']")


@pytest.mark.parametrize(
    "change",
    [{"status": "done"}, {"content": None}, {"content": 18}, {"type": "ai"}, {"name": 7}],
)
def test_a_tool_message_langchain_does_not_write_is_malformed(change: dict[str, Any]) -> None:
    given = _tool_message(content="18 C")
    given["data"].update(change)
    error = _refused(given)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, f"{SPANS}[1].attributes['output.value']")


def test_a_tool_message_without_content_is_malformed() -> None:
    given = _tool_message(content="18 C")
    del given["data"]["content"]
    assert _refused(given).code == "malformed_event"


def test_the_result_attribute_of_the_genai_convention_is_named() -> None:
    edited = _tool_message(content="18 C")
    edited["data"]["status"] = "unknown"
    given = json.dumps(edited)
    trace = document(genai(1, [ASK], [CALLING]), span(5, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.result": given}))
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 1, f"{SPANS}[1].attributes['gen_ai.tool.call.result']")
    assert caught.value.detail == "the ToolMessage's status is 'success' or 'error', got 'unknown'"


def _ending_with(result: ToolMessage) -> list[Any]:
    return [HumanMessage(content="go"),
            AIMessage(tool_calls=[ToolCall(name="get_weather", args={}, id="call_1")]), result]


@pytest.mark.parametrize("key", ["content", "status", "tool_call_id", "type"])
def test_writing_a_kept_field_the_message_holds_is_malformed(key: str) -> None:
    result = ToolMessage(content="18 C", tool_call_id="call_1", name="get_weather",
                         metadata={"otel": {"tool_message": {key: "x"}}})
    with pytest.raises(TraceError) as caught:
        otel.from_messages(_ending_with(result))
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 2, f"messages[2].metadata.otel.tool_message.{key}")


def test_writing_kept_fields_that_are_not_an_object_is_malformed() -> None:
    result = ToolMessage(content="18 C", tool_call_id="call_1",
                         metadata={"otel": {"tool_message": ["artifact"]}})
    with pytest.raises(TraceError) as caught:
        otel.from_messages(_ending_with(result))
    assert (caught.value.code, caught.value.path) == (
        "malformed_event", "messages[2].metadata.otel.tool_message")


def test_writing_a_kept_name_without_the_messages_own_is_refused() -> None:
    # the reader would take the kept name for the message's
    result = ToolMessage(content="18 C", tool_call_id="call_1",
                         metadata={"otel": {"tool_message": {"name": "weather_v2"}}})
    with pytest.raises(TraceError) as caught:
        otel.from_messages(_ending_with(result))
    assert (caught.value.code, caught.value.path) == ("not_representable", "messages[2].name")


def _answered(result: ToolMessage) -> list[Any]:
    """The result no longer after the last model call: it is written in a message list."""
    return [*_ending_with(result), AIMessage(content="18 C in Paris.")]


def test_kept_fields_of_a_result_before_the_last_call_are_refused() -> None:
    # a message list has no place for them, and tool spans are read only after the last call
    result = ToolMessage(content="18 C", tool_call_id="call_1", name="get_weather",
                         metadata={"otel": {"tool_message": {"artifact": [18]}}})
    with pytest.raises(TraceError) as caught:
        otel.from_messages(_answered(result))
    assert (caught.value.code, caught.value.path) == (
        "not_representable", "messages[2].metadata.otel.tool_message")


def test_content_blocks_before_the_last_call_are_refused() -> None:
    # GenAI would read the list back as content parts (its own reader refused the document)
    blocks = [{"type": "text", "text": "18 C"}]
    result = ToolMessage(content=json.dumps(blocks), tool_call_id="call_1", name="get_weather",
                         metadata={"otel": {"response": "json"}})
    with pytest.raises(TraceError) as caught:
        otel.from_messages(_answered(result))
    assert (caught.value.code, caught.value.path) == ("not_representable", "messages[2].content")


def test_a_json_output_that_is_not_parts_is_still_written_before_the_last_call() -> None:
    result = ToolMessage(content=json.dumps([{"celsius": 18}]), tool_call_id="call_1",
                         name="get_weather", metadata={"otel": {"response": "json"}})
    assert _round_trip(_answered(result)) == _answered(result)


_BLOCKS = st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": texts}) | texts, min_size=1,
    max_size=3)


@given(
    content=texts | _BLOCKS, artifact=json_values, message_id=maybe_names,
    kwargs=json_objects, response_metadata=json_objects, name=maybe_names,
    span_name=maybe_names, status=st.sampled_from(["success", "error"]),
)
def test_every_tool_message_reads_as_itself_and_round_trips(
    content: Any, artifact: Any, message_id: str | None, kwargs: dict[str, Any],
    response_metadata: dict[str, Any], name: str | None, span_name: str | None, status: str,
) -> None:
    given_message = LangChainToolMessage(
        content=content, tool_call_id="call_1", artifact=artifact, id=message_id,
        additional_kwargs=kwargs, response_metadata=response_metadata, name=name, status=status)
    attributes = {"openinference.span.kind": "TOOL", "tool_call.id": "call_1",
                  "output.value": json.dumps(message_to_dict(given_message))}
    if span_name is not None:
        attributes["tool.name"] = span_name
    named = span_name if span_name is not None else name
    if named is not None and named != "get_weather":  # the call is one of get_weather
        with pytest.raises(TraceError) as caught:
            otel.to_messages(document(genai(1, [ASK], [CALLING]), span(5, attributes)))
        at = "tool.name" if span_name is not None else "output.value"
        assert (caught.value.code, caught.value.index, caught.value.path) == (
            "conflicting_fields", 1, f"{SPANS}[1].attributes['{at}']")
        return
    messages = otel.to_messages(document(genai(1, [ASK], [CALLING]), span(5, attributes)))
    result = messages[-1]
    # LangChain's defaults say nothing: None for these two, {} for the dicts
    expected_kept = {key: value for key, value in (
        ("artifact", artifact), ("id", message_id)) if value is not None}
    expected_kept.update({key: value for key, value in (
        ("additional_kwargs", kwargs), ("response_metadata", response_metadata)) if value})
    if span_name is not None and name is not None and name != span_name:
        expected_kept["name"] = name
    own: dict[str, Any] = {"tool_message": expected_kept} if expected_kept else {}
    if isinstance(content, list):
        own["response"] = "json"
    assert result == ToolMessage(
        content=content if isinstance(content, str) else json.dumps(content),
        tool_call_id="call_1", name=span_name if span_name is not None else name,
        is_error=status == "error", metadata={"otel": own} if own else {},
    )
    assert _round_trip(messages) == messages
