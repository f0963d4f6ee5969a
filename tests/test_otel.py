"""The otel adapter on hand-made spans of each convention and each input form, the rules it
rebuilds a conversation by, what it refuses, and what its writer holds or refuses."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    Citation,
    HumanMessage,
    ImagePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    render,
)
from tracebridge.adapters import otel

# --- building spans ------------------------------------------------------------------------


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, list) and not any(isinstance(item, (dict, list)) for item in v):
        return {"arrayValue": {"values": [value(item) for item in v]}}
    return {"stringValue": v if isinstance(v, str) else json.dumps(v)}


def span(
    number: int, attributes: dict[str, Any], *, trace: int = 1, parent: int | None = None,
    error: bool = False, **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": f"{trace:032x}",
        "spanId": f"{number:016x}",
        "name": "span",
        "startTimeUnixNano": str(number),
        "endTimeUnixNano": str(number),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
        "status": {"code": "STATUS_CODE_ERROR"} if error else {},
        **extra,
    }
    if parent is not None:
        out["parentSpanId"] = f"{parent:016x}"
    return out


def document(*spans: dict[str, Any], scope: str = "test") -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [
        {"scope": {"name": scope}, "spans": list(spans)}
    ]}]}


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def genai(number: int, given: list[Any], answered: list[Any] | None = None, **more: Any) -> Any:
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": given}
    if answered is not None:
        attributes["gen_ai.output.messages"] = answered
    return span(number, attributes, **more)


CALL = {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}
RESULT = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1",
                                     "response": "18 C"}]}
ASK = text("user", "Weather in Paris?")
CALLING = {"role": "assistant", "parts": [CALL]}
ANSWER = text("assistant", "18 C in Paris.")

TOOL_LOOP = document(
    genai(1, [ASK], [CALLING]),
    genai(3, [ASK, CALLING, RESULT], [ANSWER]),
)

EXPECTED = [
    HumanMessage(content="Weather in Paris?"),
    AIMessage(content="", tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"},
                                               id="call_1")]),
    ToolMessage(content="18 C", tool_call_id="call_1"),
    AIMessage(content="18 C in Paris."),
]


def refused(trace: Any, **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace, **options)
    assert caught.value.source == "otel"
    return caught.value


# --- input forms ---------------------------------------------------------------------------


def test_genai_tool_loop_is_the_last_calls_input_and_output() -> None:
    assert otel.to_messages(TOOL_LOOP) == EXPECTED


def test_base64_ids_read_as_their_hex() -> None:
    spans = TOOL_LOOP["resourceSpans"][0]["scopeSpans"][0]["spans"]
    for item in spans:
        for key in ("traceId", "spanId"):
            item[key] = base64.b64encode(bytes.fromhex(item[key])).decode()
    try:
        assert otel.to_messages(TOOL_LOOP, trace_id="AAAAAAAAAAAAAAAAAAAAAQ==") == EXPECTED
        assert otel.to_messages(TOOL_LOOP, span_id="0000000000000001") == EXPECTED[:2]
    finally:
        for item in spans:
            for key in ("traceId", "spanId"):
                item[key] = base64.b64decode(item[key]).hex()


def test_a_list_of_documents_and_json_lines_are_one_input() -> None:
    first, second = (document(s) for s in TOOL_LOOP["resourceSpans"][0]["scopeSpans"][0]["spans"])
    assert otel.to_messages([first, second]) == EXPECTED
    assert otel.to_messages(json.dumps(first) + "\n" + json.dumps(second) + "\n") == EXPECTED


def recorded_spans(build: Any, scope: str = "test") -> list[Any]:
    """The SDK spans ``build(tracer)`` makes, as an in-memory exporter receives them."""
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")
    export = pytest.importorskip("opentelemetry.sdk.trace.export")
    exporter = memory.InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    build(provider.get_tracer(scope))
    return list(exporter.get_finished_spans())


def sdk_spans() -> list[Any]:
    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("agent"):
            for given, answered in (([ASK], [CALLING]), ([ASK, CALLING, RESULT], [ANSWER])):
                with tracer.start_as_current_span("chat") as current:
                    current.set_attribute("gen_ai.operation.name", "chat")
                    current.set_attribute("gen_ai.input.messages", json.dumps(given))
                    current.set_attribute("gen_ai.output.messages", json.dumps(answered))

    return recorded_spans(build)


def test_sdk_spans_and_their_to_json_dicts() -> None:
    spans = sdk_spans()
    assert otel.to_messages(spans) == EXPECTED
    assert otel.to_messages([json.loads(s.to_json()) for s in spans]) == EXPECTED
    assert otel.detect(spans)


def test_detect() -> None:
    assert otel.detect(TOOL_LOOP)
    assert otel.detect([TOOL_LOOP])
    assert otel.detect(json.dumps(TOOL_LOOP))
    assert not otel.detect([{"role": "user", "content": "hi"}])
    assert not otel.detect({"messages": []})


# --- conventions ---------------------------------------------------------------------------


def test_openinference_flat_messages() -> None:
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Be brief.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": "What is this?",
        "llm.input_messages.1.message.contents.1.message_content.type": "image",
        "llm.input_messages.1.message.contents.1.message_content.image.image.url":
            "https://example.com/a.png",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "look",
    }
    messages = otel.to_messages(document(span(1, attributes)), allow_pending=True)
    assert messages[:2] == [
        SystemMessage(content="Be brief."),
        HumanMessage(content=[TextPart(text="What is this?"),
                              ImagePart(url="https://example.com/a.png")]),
    ]
    # OpenInference leaves out the arguments of a call made without any.
    assert messages[2].tool_calls == [ToolCall(name="look", args={}, id="call_1")]


def test_traceloop_legacy_prompt_and_completion_attributes() -> None:
    attributes = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "Weather in Paris?",
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.id": "call_1",
        "gen_ai.prompt.1.tool_calls.0.name": "get_weather",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"city": "Paris"}',
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.tool_call_id": "call_1",
        "gen_ai.prompt.2.content": "18 C",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "18 C in Paris.",
    }
    messages = otel.to_messages(document(span(1, attributes)))
    assert render(messages) == render(EXPECTED)


def test_system_instructions_lead_and_round_trip() -> None:
    trace = document(genai(1, [ASK], [ANSWER], **{}))
    trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append(
        {"key": "gen_ai.system_instructions",
         "value": value([{"type": "text", "content": "Be brief."}])}
    )
    messages = otel.to_messages(trace)
    assert messages[0] == SystemMessage(
        content="Be brief.", metadata={"otel": {"system_instructions": True}}
    )
    assert otel.to_messages(otel.from_messages(messages)) == messages


def test_two_conventions_on_one_span_must_agree() -> None:
    both = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": [ASK],
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather in Rome?",
    }
    error = refused(document(span(1, both)))
    assert (error.code, error.index) == ("conflicting_fields", 0)


# --- rebuilding ----------------------------------------------------------------------------


def test_an_earlier_call_that_is_not_a_prefix_makes_two_conversations() -> None:
    other = genai(3, [text("user", "Something else")], [ANSWER], trace=2)
    trace = document(*TOOL_LOOP["resourceSpans"][0]["scopeSpans"][0]["spans"], other)
    error = refused(trace)
    assert (error.code, error.index, error.path) == ("ambiguous_trace", None, None)
    assert "span_id=0000000000000003" in error.detail
    assert otel.to_messages(trace, trace_id=f"{1:032x}") == EXPECTED


def test_responses_style_call_items_are_joined_into_one_turn() -> None:
    second = {"type": "tool_call", "id": "call_2", "name": "get_weather",
              "arguments": {"city": "Rome"}}
    result_2 = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_2",
                                           "response": "24 C"}]}
    given = [ASK, CALLING, {"role": "assistant", "parts": [second]}, RESULT, result_2]
    messages = otel.to_messages(document(genai(1, given, [ANSWER])))
    assert [len(m.tool_calls) for m in messages if isinstance(m, AIMessage)] == [2, 0]


def test_results_after_the_last_call_come_from_tool_spans_by_id() -> None:
    tool = span(5, {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.result": "storm warning",
    }, error=True)
    messages = otel.to_messages(document(genai(1, [ASK], [CALLING]), tool))
    assert messages[-1] == ToolMessage(
        content="storm warning", tool_call_id="call_1", name="get_weather", is_error=True
    )


def test_is_error_comes_from_a_failed_tool_span() -> None:
    tool = span(2, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.id": "call_1"},
                error=True)
    messages = otel.to_messages(document(*TOOL_LOOP["resourceSpans"][0]["scopeSpans"][0][
        "spans"], tool))
    assert [m.is_error for m in messages if isinstance(m, ToolMessage)] == [True]


def test_agents_keep_their_own_leading_instructions() -> None:
    first = genai(1, [text("system", "Triage."), ASK], [CALLING])
    second = genai(3, [text("system", "Weather."), ASK, CALLING, RESULT], [ANSWER])
    messages = otel.to_messages(document(first, second))
    assert messages[0] == SystemMessage(content="Weather.")
    assert messages[2].metadata["otel"]["instructions"] == [
        SystemMessage(content="Triage.").model_dump(mode="json")
    ]


def test_a_nested_duplicate_that_disagrees_is_refused() -> None:
    outer = genai(1, [ASK], [ANSWER])
    inner = genai(2, [ASK], [text("assistant", "Something else.")], parent=1)
    error = refused(document(outer, inner))
    assert (error.code, error.index) == ("conflicting_fields", 1)


def test_calls_gives_each_view() -> None:
    views = list(otel.calls(TOOL_LOOP))
    assert [(v.span_id, len(v.input), len(v.output)) for v in views] == [
        ("0000000000000001", 1, 1), ("0000000000000003", 3, 1)
    ]


# --- refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attributes", "code", "path"),
    [
        ({"gen_ai.operation.name": "chat"}, "content_not_captured",
         "resourceSpans[0].scopeSpans[0].spans[0]"),
        ({"gen_ai.operation.name": "chat", "gen_ai.input.messages.ref": "gs://b/in.json"},
         "content_not_captured", "resourceSpans[0].scopeSpans[0].spans[0]"),
        ({"gen_ai.operation.name": "chat", "gen_ai.output.messages": [ANSWER]},
         "truncated_trace",
         "resourceSpans[0].scopeSpans[0].spans[0].attributes['gen_ai.input.messages']"),
        ({"gen_ai.operation.name": "chat", "gen_ai.input.messages": [
            {"role": "user", "parts": []}]}, "truncated_trace",
         "resourceSpans[0].scopeSpans[0].spans[0].attributes['gen_ai.input.messages[0].parts']"),
        ({"openinference.span.kind": "LLM",
          "llm.input_messages.0.message.role": "user",
          "llm.input_messages.0.message.content": "__REDACTED__"}, "content_not_captured",
         "resourceSpans[0].scopeSpans[0].spans[0]"
         ".attributes['llm.input_messages.0.message.content']"),
        ({"openinference.span.kind": "LLM",
          "llm.input_messages.0.message.role": "user",
          "llm.input_messages.0.message.content": "a",
          "llm.input_messages.2.message.role": "user",
          "llm.input_messages.2.message.content": "c"}, "truncated_trace",
         "resourceSpans[0].scopeSpans[0].spans[0].attributes['llm.input_messages']"),
        ({"gen_ai.operation.name": "chat", "gen_ai.input.messages": [text("robot", "x")]},
         "unknown_role",
         "resourceSpans[0].scopeSpans[0].spans[0]"
         ".attributes['gen_ai.input.messages[0].role']"),
    ],
)
def test_untrustworthy_spans_are_refused(attributes: dict[str, Any], code: str, path: str) -> None:
    error = refused(document(span(1, attributes)))
    assert (error.code, error.index, error.path) == (code, 0, path)


def test_dropped_attributes_are_a_truncated_trace() -> None:
    error = refused(document(genai(1, [ASK], [ANSWER], droppedAttributesCount=3)))
    assert (error.code, error.index) == ("truncated_trace", 0)
    assert "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT" in error.detail


def test_only_openinference_responses_readers_may_skip_index_zero() -> None:
    attributes = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "hi",
    }
    assert refused(document(span(1, attributes))).code == "truncated_trace"
    agents = document(span(1, attributes), scope="openinference.instrumentation.openai_agents")
    assert otel.to_messages(agents) == [HumanMessage(content="hi")]


def test_fc_item_ids_answered_by_call_ids_are_orphan_results() -> None:
    fc_call = {"role": "assistant", "parts": [{**CALL, "id": "fc_1"}]}
    error = refused(document(genai(1, [ASK, fc_call, RESULT], [ANSWER])))
    assert (error.code, error.index, error.path) == (
        "orphan_tool_result", 0,
        "resourceSpans[0].scopeSpans[0].spans[0].attributes['gen_ai.input.messages[2].parts[0].id']",
    )


def test_no_model_call_span() -> None:
    error = refused(document(span(1, {"openinference.span.kind": "CHAIN"})))
    assert error.code == "malformed_event"


def test_a_filter_that_selects_nothing() -> None:
    assert refused(TOOL_LOOP, session_id="nope").code == "ambiguous_trace"
    assert refused(TOOL_LOOP, span_id="00000000000000ff").code == "ambiguous_trace"


# --- writing -------------------------------------------------------------------------------


def test_written_span_reads_back() -> None:
    written = otel.from_messages(EXPECTED)
    spans = written["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [s["name"] for s in spans] == ["chat"]
    assert otel.to_messages(written) == EXPECTED


def test_trailing_results_and_errors_are_written_as_tool_spans() -> None:
    conversation = [
        *EXPECTED[:2],
        ToolMessage(content="storm", tool_call_id="call_1", name="get_weather", is_error=True),
    ]
    written = otel.from_messages(conversation)
    spans = written["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [s["name"] for s in spans] == ["chat", "execute_tool"]
    assert spans[1]["status"] == {"code": "STATUS_CODE_ERROR"}
    assert otel.to_messages(written) == conversation


@pytest.mark.parametrize(
    ("message", "option"),
    [
        (AIMessage(content="See.", citations=[Citation(url="https://a.example")]), "citations"),
        (AIMessage(tool_calls=[ToolCall(name="sql", args={"input": "select 1"}, id="c1",
                                        kind="custom")]), "custom_calls"),
    ],
)
def test_what_the_convention_cannot_hold_is_refused_by_name(message: Any, option: str) -> None:
    conversation = [HumanMessage(content="hi"), message]
    if message.tool_calls:
        conversation.append(ToolMessage(content="1", tool_call_id="c1"))
    with pytest.raises(TraceError) as caught:
        otel.from_messages(conversation)
    assert caught.value.code == "not_representable"
    assert f"drop=[{option!r}]" in caught.value.detail
    otel.from_messages(conversation, drop=[option])


def test_the_masking_marker_is_not_written_as_text() -> None:
    with pytest.raises(TraceError) as caught:
        otel.from_messages([HumanMessage(content="__REDACTED__")])
    assert (caught.value.code, caught.value.index) == ("not_representable", 0)
