"""The otel reader on a span that records its messages in two conventions, on media parts
without their media, and on chained model calls that started at the same time
(docs/adapters/otel.md).

1. Two conventions on one span: what the second keeps in ``metadata["otel"]`` and the first
   does not (Traceloop's ``finish_reason``, an OpenInference message's own key) is kept; a
   kept value both record differently is ``conflicting_fields`` at the second one's key.
   Markers of one convention's spelling (a content left out, arguments as text) are not
   carried over.
2. Two conventions that record the same input and different outputs are refused at the
   output attribute, saying output.
3. A GenAI ``blob`` part without ``content``, ``uri`` part without ``uri`` or ``file`` part
   without ``file_id`` is ``malformed_event`` at that key of the part.
4. Chained model calls that started at the same time are read in the same order whatever
   their order in the input: the call whose history the other extends comes first.
5. Only the second convention's own keys (``fields``) are carried over, and only those the
   first convention does not spell itself, so that what is read is written back; a finish
   reason in the two conventions' spellings is one reason; values are compared as JSON.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from otel_helpers import refused, text, where

from tracebridge import AIMessage, HumanMessage, SystemMessage, TextPart, ToolCall
from tracebridge.adapters import otel

SPAN = "resourceSpans[0].scopeSpans[0].spans[0]"


def value(key: str, said: Any) -> dict[str, Any]:
    """An OTLP/JSON attribute holding text."""
    return {"key": key, "value": {"stringValue": said}}


def span(attributes: list[dict[str, Any]], span_id: str = "a" * 16,
         start: str = "1", end: str = "2") -> dict[str, Any]:
    return {"traceId": "1" * 32, "spanId": span_id, "name": "chat",
            "startTimeUnixNano": start, "endTimeUnixNano": end, "attributes": attributes}


def document(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def genai(given: list[Any], answered: list[Any]) -> list[dict[str, Any]]:
    return [value("gen_ai.operation.name", "chat"),
            value("gen_ai.input.messages", json.dumps(given)),
            value("gen_ai.output.messages", json.dumps(answered))]


REPLY = text("assistant", "yo")
REPLY_LENGTH = {**REPLY, "finish_reason": "length"}
REPLY_STOP = {**REPLY, "finish_reason": "stop"}

TRACELOOP = [value("gen_ai.prompt.0.role", "user"), value("gen_ai.prompt.0.content", "hi"),
             value("gen_ai.completion.0.role", "assistant"),
             value("gen_ai.completion.0.content", "yo")]
TRACELOOP_STOP = [*TRACELOOP, value("gen_ai.completion.0.finish_reason", "stop")]

OPENINFERENCE = [value("openinference.span.kind", "LLM"),
                 value("llm.input_messages.0.message.role", "user"),
                 value("llm.input_messages.0.message.content", "hi"),
                 value("llm.output_messages.0.message.role", "assistant"),
                 value("llm.output_messages.0.message.content", "yo")]

STOPPED = [HumanMessage(content="hi"),
           AIMessage(content="yo", metadata={"otel": {"fields": {"finish_reason": "stop"}}})]


# 1. What the second convention keeps is kept, or refused where the two differ.


def test_second_convention_finish_reason_is_kept() -> None:
    trace = document(span(genai([text("user", "hi")], [REPLY]) + TRACELOOP_STOP))
    assert otel.to_messages(trace) == STOPPED


def test_second_convention_keeps_what_it_records_alone_whichever_comes_first() -> None:
    alone = otel.to_messages(document(span([value("llm.request.type", "chat"),
                                            *TRACELOOP_STOP])))
    assert alone == STOPPED
    both = document(span(TRACELOOP_STOP + genai([text("user", "hi")], [REPLY])))
    assert otel.to_messages(both) == STOPPED


def test_second_convention_same_finish_reason_reads_once() -> None:
    trace = document(span(genai([text("user", "hi")], [REPLY_STOP]) + TRACELOOP_STOP))
    assert otel.to_messages(trace) == STOPPED


def test_second_convention_other_finish_reason_is_conflicting_fields() -> None:
    error = refused(document(span(genai([text("user", "hi")], [REPLY_LENGTH])
                                  + TRACELOOP_STOP)))
    key = "gen_ai.completion.0.finish_reason"
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes[{key!r}]")
    assert str(error) == (
        f"otel: {SPAN}.attributes[{key!r}]: the span's gen_ai.output.messages* attributes "
        f"and {key} record different values of 'finish_reason' for one message ('length' "
        "and 'stop') [conflicting_fields]"
    )


def test_openinference_own_key_beside_genai_is_kept() -> None:
    extra = value("llm.output_messages.0.message.custom_key", "v")
    expected = [HumanMessage(content="hi"),
                AIMessage(content="yo", metadata={"otel": {"fields": {"custom_key": "v"}}})]
    assert otel.to_messages(document(span([*OPENINFERENCE, extra]))) == expected
    trace = document(span(genai([text("user", "hi")], [REPLY]) + OPENINFERENCE + [extra]))
    assert otel.to_messages(trace) == expected


def test_openinference_own_key_other_than_genai_is_conflicting_fields() -> None:
    extra = value("llm.output_messages.0.message.custom_key", "v")
    answered = {**REPLY, "custom_key": "w"}
    error = refused(document(span(genai([text("user", "hi")], [answered])
                                  + OPENINFERENCE + [extra])))
    key = "llm.output_messages.0.message.custom_key"
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes[{key!r}]")


def test_second_convention_spelling_markers_are_not_carried_over() -> None:
    """OpenInference leaves a call-only reply's content out and spells arguments as text;
    GenAI records neither: the first convention's reading stands as it is."""
    call = {"type": "tool_call", "id": "c1", "name": "f", "arguments": {"a": 1}}
    flat = [value("openinference.span.kind", "LLM"),
            value("llm.input_messages.0.message.role", "user"),
            value("llm.input_messages.0.message.content", "hi"),
            value("llm.output_messages.0.message.role", "assistant"),
            value("llm.output_messages.0.message.tool_calls.0.tool_call.id", "c1"),
            value("llm.output_messages.0.message.tool_calls.0.tool_call.function.name", "f"),
            value("llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
                  '{"a":1}')]
    trace = document(span(genai([text("user", "hi")], [{"role": "assistant",
                                                         "parts": [call]}]) + flat))
    assert otel.to_messages(trace, allow_pending=True) == [
        HumanMessage(content="hi"),
        AIMessage(content="", tool_calls=[ToolCall(id="c1", name="f", args={"a": 1})]),
    ]


def test_kept_finish_reason_round_trips() -> None:
    read = otel.to_messages(document(span(genai([text("user", "hi")], [REPLY])
                                          + TRACELOOP_STOP)))
    assert otel.to_messages(otel.from_messages(read)) == read


# 2. Outputs that differ are refused at the output.


def test_conventions_differing_in_output_only_refused_at_output() -> None:
    differing = [*TRACELOOP[:3], value("gen_ai.completion.0.content", "DIFFERENT")]
    error = refused(document(span(genai([text("user", "hi")], [REPLY]) + differing)))
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes['gen_ai.completion']")
    assert str(error) == (
        f"otel: {SPAN}.attributes['gen_ai.completion']: the span's gen_ai.output.messages* "
        "and gen_ai.completion* attributes record different output messages "
        "[conflicting_fields]"
    )


def test_conventions_differing_in_input_refused_at_input() -> None:
    differing = [value("gen_ai.prompt.0.role", "user"),
                 value("gen_ai.prompt.0.content", "DIFFERENT"), *TRACELOOP[2:]]
    error = refused(document(span(genai([text("user", "hi")], [REPLY]) + differing)))
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes['gen_ai.prompt']")
    assert str(error) == (
        f"otel: {SPAN}.attributes['gen_ai.prompt']: the span's gen_ai.input.messages* "
        "and gen_ai.prompt* attributes record different input messages [conflicting_fields]"
    )


# 3. A media part without its media.


@pytest.mark.parametrize(
    ("part", "key", "detail"),
    [
        ({"type": "uri", "modality": "image", "mime_type": "image/png"}, "uri",
         "a uri part needs 'uri' (the media's URL); it has none"),
        ({"type": "uri", "modality": "image", "uri": None}, "uri",
         "a uri part needs 'uri' (the media's URL); it is null"),
        ({"type": "blob", "modality": "audio", "mime_type": "audio/wav"}, "content",
         "a blob part needs 'content' (the media's base64 data); it has none"),
        ({"type": "file", "modality": "video", "filename": "a.mp4"}, "file_id",
         "a file part needs 'file_id' (the id of an uploaded file); it has none"),
    ],
)
def test_media_part_without_payload_refused_at_its_key(
    part: dict[str, Any], key: str, detail: str
) -> None:
    given = [{"role": "user", "parts": [{"type": "text", "content": "look"}, part]}]
    error = refused(document(span(genai(given, [REPLY]))))
    attribute = f"gen_ai.input.messages[0].parts[1].{key}"
    assert where(error) == ("malformed_event", 0, f"{SPAN}.attributes[{attribute!r}]")
    assert str(error) == (
        f"otel: {SPAN}.attributes[{attribute!r}]: {detail} [malformed_event]"
    )


# 4. Chained calls that started together.


def test_chained_calls_with_one_start_time_read_in_any_order() -> None:
    q1, r1, q2, r2, q3, r3 = (text("user" if k % 2 == 0 else "assistant", f"m{k}")
                              for k in range(6))
    calls = [
        span(genai([q1], [r1]), "a" * 16, "5", "5"),
        span(genai([q1, r1, q2], [r2]), "b" * 16, "5", "5"),
        span(genai([q1, r1, q2, r2, q3], [r3]), "c" * 16, "5", "5"),
    ]
    expected = [HumanMessage(content="m0"), AIMessage(content="m1"),
                HumanMessage(content="m2"), AIMessage(content="m3"),
                HumanMessage(content="m4"), AIMessage(content="m5")]
    for order in itertools.permutations(calls):
        assert otel.to_messages(document(*order)) == expected


def traceloop_parts(*parts: dict[str, Any]) -> list[dict[str, Any]]:
    """``TRACELOOP`` with the reply's content as the JSON text of a part list."""
    return [*TRACELOOP[:3], value("gen_ai.completion.0.content", json.dumps(list(parts)))]


def test_second_convention_part_field_is_kept_on_plain_text() -> None:
    trace = document(span(genai([text("user", "hi")], [REPLY])
                          + traceloop_parts({"type": "text", "text": "yo", "lang": "en"})))
    read = otel.to_messages(trace)
    assert read == [HumanMessage(content="hi"), AIMessage(content=[
        TextPart(text="yo", metadata={"otel": {"fields": {"lang": "en"}}})])]
    assert otel.to_messages(otel.from_messages(read)) == read


def test_second_convention_other_part_field_is_conflicting_fields() -> None:
    answered = {"role": "assistant", "parts": [
        {"type": "text", "content": "yo", "lang": "fr"},
        {"type": "text", "content": "!"}]}
    error = refused(document(span(genai([text("user", "hi")], [answered]) + traceloop_parts(
        {"type": "text", "text": "yo", "lang": "en"}, {"type": "text", "text": "!"}))))
    key = "gen_ai.completion.0.content[0].lang"
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes[{key!r}]")


# 5. What the second convention keeps is carried over only where the first can write it.

SYSTEM_INSTRUCTIONS = [
    value("gen_ai.operation.name", "chat"),
    value("gen_ai.system_instructions", json.dumps([{"type": "text", "content": "be nice"}])),
    value("gen_ai.input.messages", json.dumps([text("user", "hi")])),
    value("gen_ai.output.messages", json.dumps([REPLY])),
]

TRACELOOP_ANNOTATED = [
    value("gen_ai.prompt.0.role", "system"), value("gen_ai.prompt.0.content", "be nice"),
    value("gen_ai.prompt.1.role", "user"), value("gen_ai.prompt.1.content", "hi"),
    value("gen_ai.completion.0.role", "assistant"), value("gen_ai.completion.0.content", "yo"),
    {"key": "gen_ai.completion.0.annotations", "value": {"arrayValue": {"values": []}}},
]

OPENINFERENCE_SYSTEM_KEY = [
    value("openinference.span.kind", "LLM"),
    value("llm.input_messages.0.message.role", "system"),
    value("llm.input_messages.0.message.content", "be nice"),
    value("llm.input_messages.0.message.custom", "k"),
    value("llm.input_messages.1.message.role", "user"),
    value("llm.input_messages.1.message.content", "hi"),
    value("llm.output_messages.0.message.role", "assistant"),
    value("llm.output_messages.0.message.content", "yo"),
]

INSTRUCTED = [SystemMessage(content="be nice", metadata={"otel": {"system_instructions": True}}),
              HumanMessage(content="hi"), AIMessage(content="yo")]


def test_flat_annotations_marker_is_not_carried_over() -> None:
    read = otel.to_messages(document(span(SYSTEM_INSTRUCTIONS + TRACELOOP_ANNOTATED)))
    assert read == INSTRUCTED
    for convention in ("auto", "genai"):
        assert otel.to_messages(otel.from_messages(read, convention=convention)) == read


def test_own_key_on_system_instructions_message_is_not_carried_over() -> None:
    read = otel.to_messages(document(span(SYSTEM_INSTRUCTIONS + OPENINFERENCE_SYSTEM_KEY)))
    assert read == INSTRUCTED
    assert otel.to_messages(otel.from_messages(read)) == read


def test_own_key_genai_spells_itself_is_not_carried_over() -> None:
    parts = value("llm.output_messages.0.message.parts", "v")
    trace = document(span(genai([text("user", "hi")], [REPLY]) + OPENINFERENCE + [parts]))
    read = otel.to_messages(trace)
    assert read == [HumanMessage(content="hi"), AIMessage(content="yo")]
    assert otel.to_messages(otel.from_messages(read)) == read


def test_traceloop_own_key_contents_is_kept() -> None:
    """``contents`` is OpenInference's part list; a Traceloop message's key of that name is
    one of its own, kept, and not carried onto OpenInference's reading of the same span."""
    contents = value("gen_ai.prompt.0.contents", "c")
    alone = otel.to_messages(document(span([value("llm.request.type", "chat"), *TRACELOOP,
                                            contents])))
    assert alone == [HumanMessage(content="hi", metadata={"otel": {"fields": {"contents": "c"}}}),
                     AIMessage(content="yo")]
    both = otel.to_messages(document(span(OPENINFERENCE + TRACELOOP + [contents])))
    assert both == [HumanMessage(content="hi"), AIMessage(content="yo")]


def test_part_key_genai_spells_itself_is_not_carried_over() -> None:
    trace = document(span(genai([text("user", "hi")], [REPLY])
                          + traceloop_parts({"type": "text", "text": "yo", "modality": "x",
                                             "lang": "en"})))
    read = otel.to_messages(trace)
    assert read == [HumanMessage(content="hi"), AIMessage(content=[
        TextPart(text="yo", metadata={"otel": {"fields": {"lang": "en"}}})])]
    assert otel.to_messages(otel.from_messages(read)) == read


TOOL_CALL = {"type": "tool_call", "id": "call_1", "name": "get_weather",
             "arguments": {"city": "Paris"}}
TRACELOOP_TOOL_CALL = [
    value("gen_ai.prompt.0.role", "user"), value("gen_ai.prompt.0.content", "weather?"),
    value("gen_ai.completion.0.role", "assistant"),
    value("gen_ai.completion.0.tool_calls.0.id", "call_1"),
    value("gen_ai.completion.0.tool_calls.0.name", "get_weather"),
    value("gen_ai.completion.0.tool_calls.0.arguments", '{"city": "Paris"}'),
]


def tool_call_span(genai_reason: str, traceloop_reason: str) -> dict[str, Any]:
    answered = {"role": "assistant", "finish_reason": genai_reason, "parts": [TOOL_CALL]}
    return document(span([*genai([text("user", "weather?")], [answered]),
                          *TRACELOOP_TOOL_CALL,
                          value("gen_ai.completion.0.finish_reason", traceloop_reason)]))


@pytest.mark.parametrize("traceloop_reason", ["tool_calls", "function_call", "tool_use"])
def test_finish_reason_spelled_by_provider_is_genai_tool_call(traceloop_reason: str) -> None:
    read = otel.to_messages(tool_call_span("tool_call", traceloop_reason), allow_pending=True)
    assert read == [HumanMessage(content="weather?"), AIMessage(
        content="", tool_calls=[ToolCall(id="call_1", name="get_weather",
                                         args={"city": "Paris"})],
        metadata={"otel": {"fields": {"finish_reason": "tool_call"}}})]


@pytest.mark.parametrize(("genai_reason", "traceloop_reason"),
                         [("stop", "end_turn"), ("stop", "stop_sequence"),
                          ("length", "max_tokens")])
def test_finish_reason_equivalents_keep_the_first(genai_reason: str,
                                                  traceloop_reason: str) -> None:
    answered = {**REPLY, "finish_reason": genai_reason}
    trace = document(span([*genai([text("user", "hi")], [answered]), *TRACELOOP,
                           value("gen_ai.completion.0.finish_reason", traceloop_reason)]))
    assert otel.to_messages(trace) == [HumanMessage(content="hi"), AIMessage(
        content="yo", metadata={"otel": {"fields": {"finish_reason": genai_reason}}})]


def test_finish_reason_contradiction_is_still_conflicting_fields() -> None:
    error = refused(tool_call_span("tool_call", "stop"), allow_pending=True)
    key = "gen_ai.completion.0.finish_reason"
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes[{key!r}]")
    assert str(error) == (
        f"otel: {SPAN}.attributes[{key!r}]: the span's gen_ai.output.messages* attributes "
        f"and {key} record different values of 'finish_reason' for one message "
        "('tool_call' and 'stop') [conflicting_fields]"
    )


def test_own_key_true_and_one_are_conflicting_fields() -> None:
    answered = {**REPLY, "flag": True}
    flag = {"key": "llm.output_messages.0.message.flag", "value": {"intValue": "1"}}
    error = refused(document(span(genai([text("user", "hi")], [answered])
                                  + OPENINFERENCE + [flag])))
    key = "llm.output_messages.0.message.flag"
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes[{key!r}]")
    assert str(error) == (
        f"otel: {SPAN}.attributes[{key!r}]: the span's gen_ai.output.messages* attributes "
        f"and {key} record different values of 'flag' for one message (True and 1) "
        "[conflicting_fields]"
    )


DUAL_CONVENTION = {
    "finish_reason": genai([text("user", "hi")], [REPLY]) + TRACELOOP_STOP,
    "same_finish_reason": genai([text("user", "hi")], [REPLY_STOP]) + TRACELOOP_STOP,
    "traceloop_first": TRACELOOP_STOP + genai([text("user", "hi")], [REPLY]),
    "openinference_own_key": genai([text("user", "hi")], [REPLY]) + OPENINFERENCE + [
        value("llm.output_messages.0.message.custom_key", "v")],
    "openinference_parts_key": genai([text("user", "hi")], [REPLY]) + OPENINFERENCE + [
        value("llm.output_messages.0.message.parts", "v")],
    "part_key": genai([text("user", "hi")], [REPLY]) + traceloop_parts(
        {"type": "text", "text": "yo", "lang": "en"}),
    "annotations": SYSTEM_INSTRUCTIONS + TRACELOOP_ANNOTATED,
    "system_instructions_own_key": SYSTEM_INSTRUCTIONS + OPENINFERENCE_SYSTEM_KEY,
    "three_conventions": genai([text("user", "hi")], [REPLY]) + OPENINFERENCE + TRACELOOP_STOP,
    "openinference_then_traceloop": OPENINFERENCE + TRACELOOP_STOP + [
        value("gen_ai.prompt.0.contents", "c")],
}


@pytest.mark.parametrize("name", sorted(DUAL_CONVENTION))
def test_dual_convention_reading_is_written_back(name: str) -> None:
    read = otel.to_messages(document(span(DUAL_CONVENTION[name])))
    assert otel.to_messages(otel.from_messages(read)) == read


@pytest.mark.parametrize("reason", ["tool_calls", "function_call", "tool_use"])
def test_dual_convention_tool_call_reading_is_written_back(reason: str) -> None:
    read = otel.to_messages(tool_call_span("tool_call", reason), allow_pending=True)
    written = otel.from_messages(read)
    assert otel.to_messages(written, allow_pending=True) == read
