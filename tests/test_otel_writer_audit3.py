"""The otel writer, third audit: what it writes is read back as itself or refused where it
is, never written so that its own reader refuses it, protobuf rejects it, or a key of
``metadata["otel"]`` is lost without a word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    AudioReference,
    Citation,
    HumanMessage,
    ImagePart,
    Message,
    OpaquePart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import otel

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "otel"
GOLDEN = sorted(FOLDER.glob("*.json"))
CONVENTIONS = ("auto", "genai", "openinference")
KEEPS_OPENINFERENCE_ONLY = {
    "openinference_agents_and_client": 2,
    "openinference_agents_handoff": 2,
    "openinference_langgraph_agent": 2,
    "openinference_llama_index_agent": 2,
    "openinference_llama_index_context_tool": 2,
    "openinference_openai_responses_tool_loop": 1,
    "openinference_openai_tool_loop": 2,
}
"""The golden runs whose conversation keeps what only OpenInference's flat messages hold, and
the first message that keeps it (``openinference_llama_index_predict`` is plain text turns: it
keeps nothing)."""


def refused(messages: list[Message], **options: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        otel.from_messages(messages, **options)
    assert caught.value.source == "otel"
    return caught.value.code, caught.value.index, caught.value.path


def refusal_text(messages: list[Message], **options: Any) -> str:
    with pytest.raises(TraceError) as caught:
        otel.from_messages(messages, **options)
    return str(caught.value)


def back(messages: list[Message], **options: Any) -> list[Message]:
    document = json.loads(json.dumps(otel.from_messages(messages, **options)))
    return otel.to_messages(document, allow_pending=True)


def spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return found


def trace_id(document: dict[str, Any]) -> str:
    found: str = spans(document)[0]["traceId"]
    return found


# --- 1. a failed attempt on a call another call matches by its one text argument ---------


TEXT_ALONE = [
    HumanMessage(content="q"),
    AIMessage(content="", tool_calls=[
        ToolCall(name="lookup", args={"query": '{"city": "Paris"}'}, id="call_a"),
        ToolCall(name="lookup", args={"city": "Paris"}, id="call_b"),
    ]),
    ToolMessage(content="ra", tool_call_id="call_a"),
    ToolMessage(content="rb", tool_call_id="call_b", metadata={"otel": {"failed_attempts": 1}}),
    AIMessage(content="done"),
]


@pytest.mark.parametrize("convention", ["genai", "openinference"])
def test_a_failed_attempt_another_call_matches_by_its_text_alone_is_refused(
    convention: str,
) -> None:
    # the span written without a call id holds input '{"city": "Paris"}', which the reader
    # matches to call_b (the arguments) and to call_a (its one text argument alone)
    assert refused(TEXT_ALONE, convention=convention) == (
        "not_representable", 3, "messages[3].metadata.otel.failed_attempts"
    )


def test_a_failed_attempt_no_other_call_matches_reads_back() -> None:
    other = TEXT_ALONE[1].tool_calls[0].model_copy(update={"args": {"query": "Lyon"}})
    messages = [*TEXT_ALONE]
    messages[1] = AIMessage(content="", tool_calls=[other, TEXT_ALONE[1].tool_calls[1]])
    assert back(messages) == messages


# --- 2. conversations that differ below the message have ids of their own ----------------


def _differing(x: int) -> list[list[Message]]:
    mark = {"otel": {"fields": {"x": x}}}
    return [
        [HumanMessage(content=[TextPart(text="hi", metadata=mark), TextPart(text="there")]),
         AIMessage(content="yo")],
        [HumanMessage(content="hi"),
         AIMessage(content="", tool_calls=[ToolCall(name="f", args={"a": 1}, id="c1",
                                                    metadata=mark)]),
         ToolMessage(content="r", tool_call_id="c1"), AIMessage(content="done")],
        [HumanMessage(content="q"),
         AIMessage(content="a", citations=[Citation(url="https://x", metadata=mark)])],
        [HumanMessage(content="q"),
         AIMessage(content="a", audio=AudioReference(id="au_1", metadata=mark))],
    ]


@pytest.mark.parametrize(
    ("case", "convention"),
    [(0, "genai"), (1, "genai"), (1, "openinference"), (2, "openinference"),
     (3, "openinference")],
    ids=["part", "call", "call-flat", "citation-flat", "audio-flat"],
)
def test_conversations_differing_in_a_nested_otel_namespace_stay_apart(
    case: int, convention: str
) -> None:
    first, second = _differing(1)[case], _differing(2)[case]
    options = {"convention": convention}
    written = [otel.from_messages(first, **options), otel.from_messages(second, **options)]
    assert back(first, **options) == first
    assert back(second, **options) == second
    assert trace_id(written[0]) != trace_id(written[1])
    assert spans(written[0])[0]["spanId"] != spans(written[1])[0]["spanId"]
    lines = "\n".join(json.dumps(document) for document in written)
    with pytest.raises(TraceError) as caught:
        otel.to_messages(lines)
    assert caught.value.code == "ambiguous_trace"
    assert otel.to_messages(lines, trace_id=trace_id(written[0])) == first
    assert otel.to_messages(lines, session_id=trace_id(written[1])) == second


def test_one_conversation_written_twice_is_one_document_twice() -> None:
    # the docs promise the same conversation is written alike; two copies in one file are
    # one document twice: the same spans delivered twice, read once (OTLP delivery is
    # at-least-once)
    messages = _differing(1)[0]
    first, second = otel.from_messages(messages), otel.from_messages(messages)
    assert first == second
    assert otel.to_messages([first, second], trace_id=trace_id(first)) == messages
    assert otel.to_messages([first, second]) == messages


# --- 3. a tool result kept as a value no AnyValue holds -----------------------------------


@pytest.mark.parametrize("convention", ["genai", "openinference"])
@pytest.mark.parametrize(
    "text", ["null", "9223372036854775808", "[18446744073709551616]",
             '{"n": -9223372036854775809}'])
def test_a_value_result_that_is_null_or_past_64_bits_is_refused(
    text: str, convention: str
) -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(content="", tool_calls=[ToolCall(name="f", id="c")]),
                ToolMessage(content=text, tool_call_id="c",
                            metadata={"otel": {"response": "value"}})]
    assert refused(messages, convention=convention) == (
        "not_representable", 2, "messages[2].metadata.otel.response"
    )


def test_a_value_result_at_the_64_bit_limits_is_written() -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(content="", tool_calls=[ToolCall(name="f", id="c")]),
                ToolMessage(content=f"[{2**63 - 1}, {-(2**63)}]", tool_call_id="c",
                            metadata={"otel": {"response": "value"}})]
    assert back(messages) == messages


# --- 4. OpenInference refusals name only an option that accepts the loss -----------------


def test_openinference_refusals_name_no_option_from_messages_does_not_take() -> None:
    flat = {"convention": "openinference"}
    in_system = [SystemMessage(content=[RefusalPart(text="no")]), HumanMessage(content="hi")]
    assert refused(in_system, **flat) == ("not_representable", 0, "messages[0].content[0]")
    assert refusal_text(in_system, **flat) == (
        "otel: messages[0].content[0]: Chat Completions takes only text parts in system "
        "content, not refusal (convention='genai' writes it) [not_representable]"
    )
    assert back(in_system, convention="genai") == in_system
    typed_image = [HumanMessage(content=[ImagePart(url="https://x/a.png", mime_type="image/png")])]
    assert refusal_text(typed_image, **flat) == (
        "otel: messages[0].content[0]: an image_url part given by URL has no mime_type field "
        "(found 'image/png') (convention='genai' writes it) [not_representable]"
    )
    assert back(typed_image, convention="genai") == typed_image


def test_openinference_leaves_a_cited_text_out_with_drop_citations() -> None:
    cited = [HumanMessage(content="q"),
             AIMessage(content="a", citations=[Citation(url="https://x", cited_text="t",
                                                        start_index=0, end_index=1, title="T")])]
    assert refused(cited, convention="openinference") == (
        "not_representable", 1, "messages[1].citations[0].cited_text"
    )
    assert "pass drop=['citations'] to leave it out" in refusal_text(
        cited, convention="openinference")
    without = Citation(url="https://x", start_index=0, end_index=1, title="T")
    assert back(cited, convention="openinference", drop=["citations"]) == [
        cited[0], AIMessage(content="a", citations=[without])
    ]


# --- 5. OpenInference refusals of kept fields point into metadata ------------------------


ASK = HumanMessage(content="q")


def _called(call: ToolCall) -> list[Message]:
    return [ASK, AIMessage(content="", tool_calls=[call]),
            ToolMessage(content="r", tool_call_id="c"), AIMessage(content="z")]


@pytest.mark.parametrize(
    ("messages", "index", "path"),
    [
        ([HumanMessage(content="q", metadata={"otel": {"fields": {"n": 2**63}}}),
          AIMessage(content="a")], 0, "messages[0].metadata.otel.fields.n"),
        ([HumanMessage(content="q", metadata={"otel": {"fields": {"a.b": 1}}}),
          AIMessage(content="a")], 0, "messages[0].metadata.otel.fields['a.b']"),
        ([HumanMessage(content="q", metadata={"otel": {"fields": {"contents": 1}}}),
          AIMessage(content="a")], 0, "messages[0].metadata.otel.fields.contents"),
        (_called(ToolCall(name="f", id="c", metadata={"otel": {"fields": {"n": [2**64]}}})),
         1, "messages[1].tool_calls[0].metadata.otel.fields.n"),
        (_called(ToolCall(name="f", id="c", metadata={"otel": {"inner": {"x.y": 1}}})),
         1, "messages[1].tool_calls[0].metadata.otel.inner['x.y']"),
    ],
    ids=["message-number", "message-dot", "message-contents", "call-number", "function-dot"],
)
def test_openinference_refusals_of_kept_fields_name_their_metadata_path(
    messages: list[Message], index: int, path: str
) -> None:
    assert refused(messages, convention="openinference") == ("not_representable", index, path)


# --- 6. a lone surrogate in a span attribute's own string ---------------------------------


def _trailing(result: ToolMessage, call_id: str = "c") -> list[Message]:
    return [ASK, AIMessage(content="", tool_calls=[ToolCall(name="f", id=call_id)]), result]


@pytest.mark.parametrize(
    ("messages", "convention", "index", "path"),
    [
        ([HumanMessage(content="a\ud800b"), AIMessage(content="yo")], "openinference",
         0, "messages[0].content"),
        ([HumanMessage(content="q", name="n\udc00"), AIMessage(content="yo")], "openinference",
         0, "messages[0].name"),
        ([HumanMessage(content="q", metadata={"otel": {"fields": {"k\ud800": 1}}}),
          AIMessage(content="yo")], "openinference", 0,
         "messages[0].metadata.otel.fields['k\\ud800']"),
        (_trailing(ToolMessage(content="r\udc00", tool_call_id="c")), "genai",
         2, "messages[2].content"),
        (_trailing(ToolMessage(content="r\udc00", tool_call_id="c")), "openinference",
         2, "messages[2].content"),
        (_trailing(ToolMessage(content="r", tool_call_id="c", name="f\ud800")), "genai",
         2, "messages[2].name"),
        (_trailing(ToolMessage(content="r", tool_call_id="c\ud800"), "c\ud800"), "genai",
         2, "messages[2].tool_call_id"),
        (_trailing(ToolMessage(content='["\\ud800"]', tool_call_id="c",
                               metadata={"otel": {"response": "value"}})), "genai",
         2, "messages[2].metadata.otel.response"),
    ],
    ids=["flat-text", "flat-name", "flat-field-key", "genai-result", "flat-result",
         "tool-name", "call-id", "value-result"],
)
def test_a_lone_surrogate_in_an_attributes_own_string_is_refused(
    messages: list[Message], convention: str, index: int, path: str
) -> None:
    assert refused(messages, convention=convention) == ("not_representable", index, path)


def test_a_lone_surrogate_in_a_failed_attempts_tool_name_is_refused_at_the_call() -> None:
    messages = [ASK, AIMessage(content="", tool_calls=[ToolCall(name="f\ud800", id="c")]),
                ToolMessage(content="r", tool_call_id="c",
                            metadata={"otel": {"failed_attempts": 1}}),
                AIMessage(content="done")]
    assert refused(messages, convention="genai") == (
        "not_representable", 1, "messages[1].tool_calls[0].name"
    )


def test_genai_message_lists_hold_a_lone_surrogate_in_their_json_text() -> None:
    messages = [HumanMessage(content="a\ud800b"), AIMessage(content="yo")]
    assert back(messages, convention="genai") == messages
    # and so does a result written as LangChain's ToolMessage JSON
    result = ToolMessage(content="r\udc00", tool_call_id="c",
                         metadata={"otel": {"tool_message": {"artifact": 1}}})
    assert back(_trailing(result)) == _trailing(result)


# --- 7. a key of metadata["otel"] no writer reads is refused at the key ------------------


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize(
    ("messages", "path"),
    [
        ([HumanMessage(content="q", metadata={"otel": {"finish_reason": "stop"}}),
          AIMessage(content="a")], "messages[0].metadata.otel.finish_reason"),
        ([HumanMessage(content="q", metadata={"otel": {"arguments": "{}"}}),
          AIMessage(content="a")], "messages[0].metadata.otel.arguments"),
        ([HumanMessage(content="q", metadata={"otel": {"failed_attempts": 1}}),
          AIMessage(content="a")], "messages[0].metadata.otel.failed_attempts"),
        ([HumanMessage(content=[TextPart(text="q", metadata={"otel": {"bogus": 1}})]),
          AIMessage(content="a")], "messages[0].content[0].metadata.otel.bogus"),
        ([HumanMessage(content=[TextPart(text="q", metadata={"otel": {"inner": {}}})]),
          AIMessage(content="a")], "messages[0].content[0].metadata.otel.inner"),
        (_called(ToolCall(name="f", id="c", metadata={"otel": {"response": "json"}})),
         "messages[1].tool_calls[0].metadata.otel.response"),
        ([ASK, AIMessage(content="a", audio=AudioReference(
            id="au", metadata={"otel": {"inner": {}}}))],
         "messages[1].audio.metadata.otel.inner"),
    ],
    ids=["finish_reason", "arguments", "failed_attempts", "part", "text-inner", "call",
         "audio"],
)
def test_an_otel_key_no_writer_reads_is_refused_at_the_key(
    messages: list[Message], path: str, convention: str
) -> None:
    index = int(path[len("messages["):path.index("]")])
    assert refused(messages, convention=convention) == ("not_representable", index, path)


def test_an_otel_key_on_a_citation_or_audio_is_refused_unless_genai_drops_it() -> None:
    messages = [ASK, AIMessage(content="a", citations=[
        Citation(url="https://x", metadata={"otel": {"bogus": 1}})])]
    assert refused(messages, convention="openinference") == (
        "not_representable", 1, "messages[1].citations[0].metadata.otel.bogus"
    )
    assert back(messages, convention="genai", drop=["citations"]) == [
        ASK, AIMessage(content="a")
    ]
    spoken = [ASK, AIMessage(content="a", audio=AudioReference(
        id="au", metadata={"otel": {"bogus": 1}}))]
    assert refused(spoken, convention="openinference") == (
        "not_representable", 1, "messages[1].audio.metadata.otel.bogus"
    )
    assert back(spoken, convention="genai", drop=["audio_replies"]) == [
        ASK, AIMessage(content="a")
    ]


def test_an_otel_key_in_an_output_or_instructions_is_refused_there() -> None:
    system = SystemMessage(content="triage", metadata={"otel": {"bogus": 1}})
    base: list[Message] = [SystemMessage(content="weather"), ASK,
                           AIMessage(content="", tool_calls=[ToolCall(name="handoff", id="c")]),
                           ToolMessage(content="{}", tool_call_id="c"), AIMessage(content="sun")]
    instructed = [*base]
    instructed[2] = base[2].model_copy(update={"metadata": {"otel": {"instructions": [
        system.model_dump(mode="json")]}}})
    assert refused(instructed) == (
        "not_representable", 2, "messages[2].metadata.otel.instructions[0].metadata.otel.bogus"
    )
    output = [*base]
    output[2] = base[2].model_copy(update={"metadata": {"otel": {"output": {
        "finish_reason": "tool_calls"}}}})
    assert refused(output) == (
        "not_representable", 2, "messages[2].metadata.otel.output.finish_reason"
    )


@pytest.mark.parametrize(
    ("own", "key"), [({"refusal": None}, "refusal"), ({"annotations": "x"}, "annotations")]
)
def test_a_known_key_in_an_output_with_a_value_no_writer_acts_on_is_malformed(
    own: dict[str, Any], key: str
) -> None:
    messages: list[Message] = [
        ASK, AIMessage(content="", tool_calls=[ToolCall(name="f", id="c")],
                       metadata={"otel": {"output": own}}),
        ToolMessage(content="r", tool_call_id="c"), AIMessage(content="done"),
    ]
    for convention in CONVENTIONS:
        assert refused(messages, convention=convention) == (
            "malformed_event", 1, f"messages[1].metadata.otel.output.{key}"
        )


def test_a_known_key_where_no_writer_reads_it_is_refused() -> None:
    refusal_on_user = [HumanMessage(content="q", metadata={"otel": {"refusal": "absent"}}),
                       AIMessage(content="a")]
    for convention in CONVENTIONS:
        assert refused(refusal_on_user, convention=convention) == (
            "not_representable", 0, "messages[0].metadata.otel.refusal"
        )
    content_on_result = _trailing(ToolMessage(content="r", tool_call_id="c",
                                              metadata={"otel": {"content": "null"}}))
    assert refused(content_on_result, convention="openinference") == (
        "not_representable", 2, "messages[2].metadata.otel.content"
    )
    late = [ASK, AIMessage(content="a", metadata={"otel": {"system_instructions": True}})]
    assert refused(late, convention="genai") == (
        "not_representable", 1, "messages[1].metadata.otel.system_instructions"
    )


def test_part_fields_that_are_not_an_object_are_malformed_not_a_raw_error() -> None:
    messages = [ASK, AIMessage(content="", tool_calls=[ToolCall(name="f", id="c")]),
                ToolMessage(content="r", tool_call_id="c", metadata={"otel": {"part_fields": 1}}),
                AIMessage(content="x")]
    assert refused(messages) == ("malformed_event", 2, "messages[2].metadata.otel.part_fields")


def test_a_part_traceloop_content_kept_verbatim_is_refused_not_written_unmarked() -> None:
    # Traceloop's older attributes hold a content list as JSON text, read by the Chat
    # Completions reader, which keeps a part it does not know whole and marks it verbatim
    def attr(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}

    parts = [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "x"}]
    span = {"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "name": "chat",
            "startTimeUnixNano": "1", "endTimeUnixNano": "2", "attributes": [
                attr("gen_ai.prompt.0.role", "user"),
                attr("gen_ai.prompt.0.content", json.dumps(parts)),
                attr("gen_ai.completion.0.role", "assistant"),
                attr("gen_ai.completion.0.content", "yo")]}
    document = {"resourceSpans": [{"resource": {}, "scopeSpans": [
        {"scope": {"name": "opentelemetry.instrumentation.openai.v1"}, "spans": [span]}]}]}
    messages = otel.to_messages(document)
    assert messages[0].content[1] == OpaquePart(  # type: ignore[index]
        kind="tool_use", value=parts[1], metadata={"otel": {"verbatim": True}})
    assert refused(messages) == (
        "not_representable", 0, "messages[0].content[1].metadata.otel.verbatim"
    )
    assert refused(messages, convention="openinference") == (
        "not_representable", 0, "messages[0].content[1]"
    )


def test_a_custom_calls_kept_inner_keys_are_refused_when_written_as_a_function() -> None:
    call = ToolCall(name="f", args={"input": "x"}, id="c", kind="custom",
                    metadata={"otel": {"inner": {"format": "text"}}})
    messages = [ASK, AIMessage(content="", tool_calls=[call]),
                ToolMessage(content="r", tool_call_id="c"), AIMessage(content="z")]
    assert refused(messages, convention="openinference", drop=["custom_calls"]) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.otel.inner.format"
    )


def test_a_legacy_calls_kept_fields_are_refused_in_openinference() -> None:
    call = ToolCall(name="f", metadata={"otel": {"fields": {"x": 1}}})
    messages = [ASK, AIMessage(content="", tool_calls=[call]), ToolMessage(content="r", name="f"),
                AIMessage(content="z")]
    assert refused(messages, convention="openinference") == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.otel.fields"
    )
    assert back(messages, convention="genai") == messages


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_every_key_the_reader_keeps_is_written_back(path: Path, convention: str) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    messages = otel.to_messages(case["trace"], **case.get("to_options", {}))
    if convention == "genai" and path.stem in KEEPS_OPENINFERENCE_ONLY:
        # what the reader keeps from OpenInference's flat messages only (a reply's content
        # left out) has no GenAI spelling: refused as that, not as a key no writer reads
        with pytest.raises(TraceError) as caught:
            otel.from_messages(messages, convention=convention)
        at = KEEPS_OPENINFERENCE_ONLY[path.stem]
        assert (caught.value.code, caught.value.index, caught.value.path) == (
            "not_representable", at, f"messages[{at}].metadata.otel.content")
        assert caught.value.detail == (
            "metadata.otel.content was kept from OpenInference (flat) messages and has no place "
            "in the genai convention; write convention='openinference', or remove it"
        )
        return
    written = otel.from_messages(messages, convention=convention)
    again = otel.to_messages(json.loads(json.dumps(written)), allow_pending=True)
    assert again == messages


def test_the_openinference_only_runs_named_are_golden_runs() -> None:
    assert KEEPS_OPENINFERENCE_ONLY.keys() <= {p.stem for p in GOLDEN}
