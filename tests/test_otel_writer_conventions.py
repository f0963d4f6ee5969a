"""The otel writer writes back what its reader keeps: OpenInference's flat messages (a reply
whose content was left out, contents lists, refusals, a function's other fields) as
OpenInference attributes, each agent's own instructions as the model call it made, and the
GenAI markers where GenAI holds them. What neither convention can hold is refused with its
code, index and path, never dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import (
    AIMessage,
    FilePart,
    HumanMessage,
    ImagePart,
    Message,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import otel

from law_kits.otel import OTEL_CONVERSATIONS

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "otel"
GOLDEN = sorted(FOLDER.glob("*.json"))
OPENINFERENCE_PLAIN = {"openinference_llama_index_predict"}
"""OpenInference runs whose conversation keeps nothing the GenAI convention cannot write
(plain text turns): ``auto`` writes those as GenAI."""
OPENINFERENCE = [
    p for p in GOLDEN if p.stem.startswith("openinference") and p.stem not in OPENINFERENCE_PLAIN
]

H = HumanMessage(content="weather?")


def golden(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return case


def back(messages: list[Message], **options: Any) -> list[Message]:
    return otel.to_messages(otel.from_messages(messages, **options), allow_pending=True)


def refusal(messages: list[Message], **options: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        otel.from_messages(messages, **options)
    error = caught.value
    assert error.source == "otel"
    return error.code, error.index, error.path


def span_keys(document: dict[str, Any]) -> list[list[str]]:
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return [[a["key"] for a in span["attributes"]] for span in spans]


# --- the golden traces: every conversation the reader gives is written back as itself -------


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_a_golden_conversation_is_written_back_whole(path: Path) -> None:
    messages = otel.to_messages(golden(path)["trace"])
    assert back(messages) == messages


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_each_model_calls_view_is_written_back_whole(path: Path) -> None:
    for view in otel.calls(golden(path)["trace"]):
        messages = [*view.input, *view.output]
        assert back(messages) == messages


@pytest.mark.parametrize("path", OPENINFERENCE, ids=lambda p: p.stem)
def test_openinference_conversations_are_written_as_openinference(path: Path) -> None:
    messages = otel.to_messages(golden(path)["trace"])
    keys = span_keys(otel.from_messages(messages))
    last = [span for span in keys if "llm.input_messages.0.message.role" in span][-1]
    assert last[0] == "openinference.span.kind"
    assert "llm.input_messages.0.message.role" in last
    assert "llm.output_messages.0.message.role" in last
    assert not any(key.startswith("gen_ai.") for span in keys for key in span)


@pytest.mark.parametrize("stem", sorted(OPENINFERENCE_PLAIN))
def test_a_plain_openinference_conversation_is_written_as_genai_by_default(stem: str) -> None:
    messages = otel.to_messages(golden(FOLDER / f"{stem}.json")["trace"])
    assert all(not m.metadata for m in messages)  # nothing kept: no reason for OpenInference
    keys = [key for span in span_keys(otel.from_messages(messages)) for key in span]
    assert "gen_ai.input.messages" in keys
    assert not any(key.startswith(("openinference.", "llm.")) for key in keys)
    assert back(messages, convention="openinference") == messages


def test_an_agents_instructions_become_the_call_it_made() -> None:
    messages = otel.to_messages(golden(FOLDER / "openinference_agents_handoff.json")["trace"])
    marked = [i for i, m in enumerate(messages) if "instructions" in m.metadata.get("otel", {})]
    assert marked == [2]
    document = otel.from_messages(messages)
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [s["name"] for s in spans] == ["chat", "chat"]
    first = {a["key"]: a["value"] for a in spans[0]["attributes"]}
    assert first["llm.input_messages.0.message.role"] == {"stringValue": "system"}
    assert first["llm.input_messages.0.message.content"] == {
        "stringValue": "You hand weather questions to the weather agent."
    }
    assert back(messages) == messages


# --- OpenInference markers ----------------------------------------------------------------


def call_only(marker: str | None) -> list[Message]:
    metadata = {} if marker is None else {"otel": {"content": marker}}
    return [
        H,
        AIMessage(tool_calls=[ToolCall(name="f", args={"a": 1}, id="c1")], metadata=metadata),
        ToolMessage(content="r", tool_call_id="c1"),
        AIMessage(content="done"),
    ]


@pytest.mark.parametrize("marker", ["absent", "null"])
def test_a_reply_whose_content_was_left_out_or_null_reads_back_so(marker: str) -> None:
    messages = call_only(marker)
    document = otel.from_messages(messages)
    attributes = {
        a["key"]: a["value"] for a in document["resourceSpans"][0]["scopeSpans"][0]["spans"][0][
            "attributes"]
    }
    content = attributes.get("llm.input_messages.1.message.content")
    assert content == (None if marker == "absent" else {})
    assert back(messages) == messages


def test_without_markers_auto_writes_genai() -> None:
    keys = span_keys(otel.from_messages(call_only(None)))
    assert keys[0][:2] == ["gen_ai.operation.name", "gen_ai.input.messages"]


def test_a_refusal_beside_text_and_a_functions_other_fields_read_back() -> None:
    messages = [
        H,
        AIMessage(
            content=[TextPart(text="hello"), RefusalPart(text="I can't")],
            metadata={"otel": {"refusal": "after_text"}},
        ),
        HumanMessage(content="again"),
        AIMessage(
            tool_calls=[
                ToolCall(name="f", id="c1", metadata={"otel": {"inner": {"strict": True}}})
            ],
            metadata={"otel": {"content": "absent"}},
        ),
        ToolMessage(content="r", tool_call_id="c1", is_error=True),
        HumanMessage(content=[TextPart(text="and"), ImagePart(url="https://x/a.png")]),
        AIMessage(content=[TextPart(text="ok")]),
    ]
    document = otel.from_messages(messages)
    keys = span_keys(document)
    assert "llm.input_messages.1.message.refusal" in keys[0]
    assert "llm.input_messages.3.message.tool_calls.0.tool_call.function.strict" in keys[0]
    assert "llm.input_messages.5.message.contents.1.message_content.image.image.url" in keys[0]
    assert "llm.output_messages.0.message.contents.0.message_content.text" in keys[0]
    assert keys[1][:2] == ["openinference.span.kind", "tool_call.id"]  # the failed result
    assert back(messages) == messages


def test_explicit_conventions_refuse_the_others_markers() -> None:
    assert refusal(call_only("absent"), convention="genai") == (
        "not_representable", 1, "messages[1].metadata.otel.content"
    )
    instructed = [
        SystemMessage(content="s", metadata={"otel": {"system_instructions": True}}), H
    ]
    assert back(instructed) == instructed
    assert refusal(instructed, convention="openinference") == (
        "not_representable", 0, "messages[0].metadata.otel.system_instructions"
    )
    with pytest.raises(ValueError, match="convention='flat' is none of"):
        otel.from_messages([H], convention="flat")


def test_openinference_refuses_what_its_contents_cannot_hold() -> None:
    reasoning = [H, AIMessage(content=[ReasoningPart(text="r"), TextPart(text="a")],
                              metadata={"otel": {"content": "absent"}})]
    assert refusal(reasoning) == ("not_representable", 1, "messages[1].content[0]")
    detailed = [HumanMessage(content=[ImagePart(url="u", detail="low")]),
                AIMessage(content="", tool_calls=[ToolCall(name="f", id="c")],
                          metadata={"otel": {"content": "absent"}}),
                ToolMessage(content="r", tool_call_id="c")]
    assert refusal(detailed) == ("not_representable", 0, "messages[0].content[0]")
    custom = [H, AIMessage(tool_calls=[ToolCall(name="f", args={"input": "x"}, id="c",
                                                kind="custom")],
                           metadata={"otel": {"content": "absent"}}),
              ToolMessage(content="r", tool_call_id="c")]
    assert refusal(custom) == ("not_representable", 1, "messages[1].tool_calls[0]")
    dotted = [H, AIMessage(content="a", metadata={"otel": {"refusal": "absent",
                                                           "fields": {"a.b": 1}}})]
    assert refusal(dotted) == (
        "not_representable", 1, "messages[1].metadata.otel.fields['a.b']"
    )
    big = [H, AIMessage(content="a", metadata={"otel": {"refusal": "absent",
                                                        "fields": {"n": 2**64}}})]
    assert refusal(big) == ("not_representable", 1, "messages[1].metadata.otel.fields.n")


# --- instructions -------------------------------------------------------------------------


def instructed(instructions: Any, at: int = 1) -> list[Message]:
    messages: list[Message] = [
        SystemMessage(content="weather agent"),
        H,
        AIMessage(tool_calls=[ToolCall(name="handoff", id="c1")]),
        ToolMessage(content="{}", tool_call_id="c1"),
        AIMessage(content="sunny"),
    ]
    target = messages[2 if at == 1 else 4]
    marked = target.model_copy(update={"metadata": {"otel": {"instructions": instructions}}})
    messages[2 if at == 1 else 4] = marked
    return messages


def test_instructions_that_cannot_be_written_are_refused() -> None:
    triage = [SystemMessage(content="triage").model_dump(mode="json")]
    assert back(instructed(triage)) == instructed(triage)
    assert refusal(instructed(triage, at=2)) == (
        "not_representable", 4, "messages[4].metadata.otel.instructions"
    )
    same = [SystemMessage(content="weather agent").model_dump(mode="json")]
    assert refusal(instructed(same)) == (
        "malformed_event", 2, "messages[2].metadata.otel.instructions"
    )
    assert refusal(instructed([{"type": "human", "content": "x"}])) == (
        "malformed_event", 2, "messages[2].metadata.otel.instructions[0]"
    )
    assert refusal(instructed("triage")) == (
        "malformed_event", 2, "messages[2].metadata.otel.instructions"
    )


# --- GenAI: what the reader keeps is written, or refused where it would be read otherwise ---


def test_null_arguments_and_a_file_with_an_image_modality_read_back() -> None:
    null_args = [H, AIMessage(tool_calls=[ToolCall(name="f", id="c1", invalid_args="null",
                                                   metadata={"otel": {"arguments": None}})])]
    assert back(null_args) == null_args
    for modality in ("image", "audio"):
        as_file = [HumanMessage(content=[
            TextPart(text="t"), FilePart(url="u", metadata={"otel": {"modality": modality}})
        ])]
        assert back(as_file) == as_file


@pytest.mark.parametrize("modality", [None, 5, "file"])
def test_a_modality_to_messages_never_keeps_is_malformed(modality: Any) -> None:
    messages = [HumanMessage(content=[
        TextPart(text="t"), FilePart(url="u", metadata={"otel": {"modality": modality}})
    ])]
    assert refusal(messages) == (
        "malformed_event", 0, "messages[0].content[1].metadata.otel.modality"
    )


@pytest.mark.parametrize(
    ("messages", "path"),
    [
        ([HumanMessage(content="q", metadata={"otel": {"fields": {"role": "assistant"}}})],
         "messages[0].metadata.otel.fields.role"),
        ([HumanMessage(content=[TextPart(text="t"), ImagePart(
            url="u", metadata={"otel": {"fields": {"filename": "z"}}})])],
         "messages[0].content[1].metadata.otel.fields.filename"),
        ([HumanMessage(content=[TextPart(text="t"), OpaquePart(
            kind="x", value={"type": "x"}, metadata={"otel": {"fields": {"k": 1}}})])],
         "messages[0].content[1].metadata.otel.fields"),
        ([H, AIMessage(tool_calls=[ToolCall(name="f", id="c1",
                                            metadata={"otel": {"fields": {"id": "c2"}}})]),
          ToolMessage(content="r", tool_call_id="c1")],
         "messages[1].tool_calls[0].metadata.otel.fields.id"),
        ([H, AIMessage(tool_calls=[ToolCall(name="f", id="c1")]),
          ToolMessage(content="r", tool_call_id="c1",
                      metadata={"otel": {"part_fields": {"response": 1}}}),
          AIMessage(content="ok")],
         "messages[2].metadata.otel.part_fields.response"),
    ],
)
def test_kept_keys_genai_reads_as_its_own_are_refused(messages: list[Message], path: str) -> None:
    code, index, where = refusal(messages)
    assert (code, where) == ("not_representable", path)
    assert index == int(path.split("[")[1].split("]")[0])


def test_kept_key_parts_is_refused_in_genai_and_written_as_openinference_by_auto() -> None:
    """A message's own key ``parts`` (as OpenInference keeps it) is GenAI's part list:
    refused there; ``auto`` writes the conversation as OpenInference, which keeps it."""
    messages: list[Message] = [
        HumanMessage(content="q", metadata={"otel": {"fields": {"parts": []}}})]
    assert refusal(messages, convention="genai") == (
        "not_representable", 0, "messages[0].metadata.otel.fields.parts")
    assert "llm.input_messages.0.message.parts" in span_keys(otel.from_messages(messages))[0]
    assert back(messages) == messages


def trailing(content: str, namespace: dict[str, Any]) -> list[Message]:
    return [H, AIMessage(tool_calls=[ToolCall(name="f", id="c1")]),
            ToolMessage(content=content, tool_call_id="c1", metadata={"otel": namespace})]


@pytest.mark.parametrize(
    ("namespace", "path"),
    [
        ({"fields": {"finish_reason": "x"}}, "messages[2].metadata.otel.fields"),
        ({"part_fields": {"is_final": True}}, "messages[2].metadata.otel.part_fields"),
        ({"response": "json"}, "messages[2].metadata.otel.response"),
    ],
)
def test_a_result_after_the_last_call_refuses_what_its_tool_span_cannot_hold(
    namespace: dict[str, Any], path: str
) -> None:
    assert refusal(trailing('{"temp": 18}', namespace)) == ("not_representable", 2, path)


@pytest.mark.parametrize(
    ("text", "code"),
    [("not json", "not_representable"), ('"s"', "not_representable"),
     ('{"a":1}', "not_representable")],
)
def test_a_json_response_that_would_read_back_as_other_text_is_refused(
    text: str, code: str
) -> None:
    messages = [*trailing(text, {"response": "json"}), AIMessage(content="ok")]
    assert refusal(messages) == (code, 2, "messages[2].metadata.otel.response")
    spelled = [*trailing('{"a": 1}', {"response": "json"}), AIMessage(content="ok")]
    assert back(spelled) == spelled


def test_system_instructions_say_only_what_they_hold() -> None:
    for first in (
        SystemMessage(content="s", role="developer",
                      metadata={"otel": {"system_instructions": True}}),
        SystemMessage(content="s", name="n", metadata={"otel": {"system_instructions": True}}),
        SystemMessage(content="s", metadata={"otel": {"system_instructions": True,
                                                      "fields": {"x": 1}}}),
    ):
        assert refusal([first, H]) == (
            "not_representable", 0, "messages[0].metadata.otel.system_instructions"
        )
    later = [H, SystemMessage(content="s", metadata={"otel": {"system_instructions": True}})]
    assert refusal(later) == (
        "not_representable", 1, "messages[1].metadata.otel.system_instructions"
    )


# --- the law on generated conversations, in the OpenInference convention --------------------


def _flat_expressible(messages: list[Message]) -> list[Message]:
    """Content parts OpenInference holds (text, image URLs); a call-only reply's content
    marked absent or null at random positions is added by the test below."""
    out: list[Message] = []
    for message in messages:
        content = message.content
        images = isinstance(message, HumanMessage)  # (no other Chat Completions role has them)
        if isinstance(content, list):
            kept = [
                TextPart(text=p.text) if isinstance(p, TextPart)
                else ImagePart(url=p.url) if images and isinstance(p, ImagePart) and p.url
                else TextPart(text="x")
                for p in content
            ]
            content = kept or "empty"
        out.append(message.model_copy(update={"content": content}))
    return out


@given(OTEL_CONVERSATIONS.map(_flat_expressible), st.data())
def test_openinference_writer_is_faithful(messages: list[Message], data: st.DataObject) -> None:
    marked = []
    for message in messages:
        if isinstance(message, AIMessage) and message.content == "" and message.tool_calls:
            marker = data.draw(st.sampled_from([None, "absent", "null"]))
            if marker is not None:
                message = message.model_copy(update={"metadata": {"otel": {"content": marker}}})
        marked.append(message)
    document = otel.from_messages(marked, convention="openinference")
    assert not any(key.startswith("gen_ai.") for span in span_keys(document) for key in span)
    assert otel.to_messages(document, allow_pending=True) == marked


# --- what an earlier call's output said that the later call's input does not ---------------


def test_an_earlier_calls_output_fields_are_kept_and_written_back() -> None:
    case = golden(FOLDER / "openai_v2_tool_loop.json")
    messages = otel.to_messages(case["trace"])
    assert messages[2].metadata == {"otel": {"output": {"fields": {"finish_reason": "tool_calls"}}}}
    first = next(otel.calls(case["trace"])).output[0]
    assert first.metadata == {"otel": {"fields": {"finish_reason": "tool_calls"}}}
    document = otel.from_messages(messages)
    assert [s["name"] for s in document["resourceSpans"][0]["scopeSpans"][0]["spans"]] == [
        "chat", "chat"
    ]
    assert back(messages) == messages


def genai_span(number: int, given: list[Any], answered: list[Any]) -> dict[str, Any]:
    return {
        "traceId": "0" * 31 + "1", "spanId": f"{number:016x}", "name": "chat",
        "startTimeUnixNano": str(number), "endTimeUnixNano": str(number),
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(given)}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(answered)}},
        ],
    }


def test_an_earlier_output_that_says_other_fields_than_the_later_input_conflicts() -> None:
    ask = {"role": "user", "parts": [{"type": "text", "content": "q"}]}
    said = {"role": "assistant", "parts": [{"type": "text", "content": "a"}], "name": "bot"}
    renamed = {**said, "parts": [{"type": "text", "content": "a", "annotated": True}]}
    again = {"role": "user", "parts": [{"type": "text", "content": "more"}]}
    final = {"role": "assistant", "parts": [{"type": "text", "content": "b"}]}
    agreeing = {"resourceSpans": [{"scopeSpans": [{"spans": [
        genai_span(1, [ask], [said]), genai_span(2, [ask, said, again], [final])
    ]}]}]}
    assert otel.to_messages(agreeing)[1] == AIMessage(content="a", name="bot")
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [
        genai_span(1, [ask], [renamed]), genai_span(2, [ask, said, again], [final])
    ]}]}]}
    with pytest.raises(TraceError) as caught:
        otel.to_messages(document)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "conflicting_fields", 0, "resourceSpans[0].scopeSpans[0].spans[0]"
    )


def test_a_kept_output_that_cannot_be_written_is_refused() -> None:
    def marked(output: Any, at: int = 1) -> list[Message]:
        messages: list[Message] = [H, AIMessage(content="a"), HumanMessage(content="more"),
                                   AIMessage(content="b")]
        messages[at] = messages[at].model_copy(update={"metadata": {"otel": {"output": output}}})
        return messages

    finished = {"fields": {"finish_reason": "stop"}}
    assert back(marked(finished)) == marked(finished)
    assert refusal(marked(finished, at=3)) == (
        "not_representable", 3, "messages[3].metadata.otel.output"
    )
    for wrong in ("stop", {}):
        assert refusal(marked(wrong)) == ("malformed_event", 1, "messages[1].metadata.otel.output")
    absent = [H, AIMessage(tool_calls=[ToolCall(name="f", id="c1")],
                           metadata={"otel": {"output": {"content": "absent"}}}),
              ToolMessage(content="r", tool_call_id="c1"), AIMessage(content="b")]
    assert refusal(absent, convention="genai") == (
        "not_representable", 1, "messages[1].metadata.otel.output.content"
    )
    assert back(absent) == absent


# --- found by a fuzz of the writer: each was written and then refused, or read otherwise ---


def test_masked_text_is_refused_by_the_openinference_writer_too() -> None:
    flat = {"convention": "openinference"}
    assert refusal([HumanMessage(content="__REDACTED__")], **flat) == (
        "not_representable", 0, "messages[0].content"
    )
    image = [HumanMessage(content=[TextPart(text="t"), ImagePart(url="__REDACTED__")])]
    assert refusal(image, **flat) == ("not_representable", 0, "messages[0].content[1].url")
    unparsed = [H, AIMessage(tool_calls=[ToolCall(name="f", id="c", invalid_args="__REDACTED__")])]
    assert refusal(unparsed, **flat) == (
        "not_representable", 1, "messages[1].tool_calls[0].function.arguments"
    )


def test_the_masking_marker_is_looked_for_in_message_texts_only() -> None:
    for messages in (
        [H, AIMessage(tool_calls=[ToolCall(name="save", args={"content": "__REDACTED__"},
                                           id="c")]),
         ToolMessage(content="ok", tool_call_id="c")],
        [HumanMessage(content=[OpaquePart(kind="k", value={"response": "__REDACTED__"})])],
        [HumanMessage(content="x", metadata={"otel": {"fields": {"content": "__REDACTED__"}}})],
    ):
        assert back(messages) == messages


def test_values_nested_past_pythons_depth_are_read_or_refused_never_raised() -> None:
    deep: Any = []
    for _ in range(126):  # args at the deepest a JSON value may nest (MAX_DEPTH, 128)
        deep = [deep]
    messages = [H, AIMessage(tool_calls=[ToolCall(name="f", args={"a": deep}, id="c")]),
                ToolMessage(content="r", tool_call_id="c")]
    for convention in ("genai", "openinference"):
        assert back(messages, convention=convention) == messages
    spans = [{"traceId": "0" * 31 + "1", "spanId": "0" * 15 + "1", "attributes": [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": "[" * 400 + "]" * 400}},
    ]}]
    document = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    with pytest.raises(TraceError) as caught:
        list(otel.calls(document))
    assert (caught.value.code, caught.value.index) == ("malformed_event", 0)


def test_an_sdk_span_dict_with_an_attribute_name_that_is_not_text_is_malformed() -> None:
    span = {"context": {"trace_id": "0x" + "1" * 32, "span_id": "0x" + "1" * 16},
            "attributes": {5: "chat"}}
    with pytest.raises(TraceError) as caught:
        otel.to_messages([span])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 0, "[0].attributes"
    )


def test_a_conversation_that_starts_with_the_reply_is_genai_only() -> None:
    reply = [AIMessage(content="hi")]
    assert back(reply) == reply
    assert refusal(reply, convention="openinference") == ("not_representable", 0, "messages[0]")


def test_markers_flat_messages_never_make_are_refused() -> None:
    flat = {"convention": "openinference"}
    for marker in ("absent", "null"):
        assert refusal([HumanMessage(content="", metadata={"otel": {"content": marker}})],
                       **flat) == ("not_representable", 0, "messages[0].metadata.otel.content")
    absent = [H, AIMessage(content="", metadata={"otel": {"content": "absent"}})]
    assert refusal(absent) == ("not_representable", 1, "messages[1].metadata.otel.content")
    null = [H, AIMessage(content="", metadata={"otel": {"content": "null"}})]
    assert back(null) == null
    for key in ("role", "content", "tool_calls", "name"):
        named = [H, AIMessage(content="a", metadata={"otel": {"content": "absent",
                                                              "fields": {key: "x"}}})]
        assert refusal(named, **flat)[2] == f"messages[1].metadata.otel.fields.{key}"
    genai_args = [H, AIMessage(tool_calls=[ToolCall(name="f", id="c", invalid_args="[1, 2]",
                                                    metadata={"otel": {"arguments": [1, 2]}})],
                               metadata={"otel": {"content": "absent"}})]
    assert refusal(genai_args) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.otel.arguments"
    )


def test_made_by_markers_say_only_what_the_reader_keeps() -> None:
    on_human = [HumanMessage(content="q", metadata={"otel": {"output": {"fields": {"a": 1}}}}),
                AIMessage(content="a")]
    assert refusal(on_human) == ("malformed_event", 0, "messages[0].metadata.otel.output")
    nested = [H, AIMessage(content="a", metadata={"otel": {"output": {"instructions": []}}}),
              HumanMessage(content="more"), AIMessage(content="b")]
    assert refusal(nested) == (
        "malformed_event", 1, "messages[1].metadata.otel.output.instructions"
    )
    system = SystemMessage(content="x").model_dump(mode="json")
    for wrong in ({**system, "id": "m1"}, {"type": "system", "content": "x"},
                  {**system, "metadata": {"langchain": {"a": 1}}}):
        wrong_dump = [H, AIMessage(content="a", metadata={"otel": {"instructions": [wrong]}}),
                      HumanMessage(content="more"), AIMessage(content="b")]
        if wrong == {"type": "system", "content": "x"}:
            assert SystemMessage.model_validate(wrong).model_dump(mode="json") != wrong
        assert refusal(wrong_dump) == (
            "malformed_event", 1, "messages[1].metadata.otel.instructions[0]"
        )
    one_part = SystemMessage(content=[TextPart(text="x")]).model_dump(mode="json")
    lone = [H, AIMessage(content="a", metadata={"otel": {"instructions": [one_part]}}),
            HumanMessage(content="more"), AIMessage(content="b")]
    assert refusal(lone, convention="genai") == (
        "not_representable", 1, "messages[1].metadata.otel.instructions[0].content"
    )
    assert back(lone, convention="openinference") == lone


def test_a_fault_is_told_at_the_conversations_message_not_the_made_calls() -> None:
    made = {"otel": {"instructions": [SystemMessage(content="x").model_dump(mode="json")]}}
    empty = [HumanMessage(content=[]), AIMessage(content="a", metadata=made),
             HumanMessage(content="q"), AIMessage(content="b")]
    assert refusal(empty, convention="genai") == ("not_representable", 0, "messages[0].content")
    bad = {"otel": {"instructions": [SystemMessage(content=[]).model_dump(mode="json")]}}
    inside = [H, AIMessage(content="a", metadata=bad), HumanMessage(content="q"),
              AIMessage(content="b")]
    assert refusal(inside, convention="genai") == (
        "not_representable", 1, "messages[1].metadata.otel.instructions[0].content"
    )
