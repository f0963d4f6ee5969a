"""The otel writer on a message whose content is one text part alone, and the refusal of a
conversation that holds what only one convention keeps beside what only the other keeps
(docs/adapters/otel.md).

1. GenAI reads a message of one text part back as the plain text, so ``convention="genai"``
   refuses content that is one text part alone (``not_representable`` at the content) and
   ``convention="auto"`` writes such a conversation as OpenInference, which keeps it: an
   OpenInference ``message.contents.0`` or Traceloop content given as the JSON text of a
   one-part list reads back as it was read. A tool result of one text part, which GenAI
   keeps, is still written in GenAI.
2. A conversation ``auto`` writes as OpenInference for what only OpenInference keeps, which
   the OpenInference writer refuses for what only GenAI keeps: the refusal names both, not
   only the convention that refuses the other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest
from test_otel_fixes_s48 import OPENINFERENCE, document, span, value

from tracebridge import (
    AIMessage,
    HumanMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)
from tracebridge.adapters import otel
from tracebridge.errors import TraceError

Convention = Literal["auto", "genai", "openinference"]

GOLDEN = Path(__file__).resolve().parent.parent / "golden_traces" / "otel"


def attribute_keys(written: dict[str, Any]) -> set[str]:
    spans = written["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return {item["key"] for one in spans for item in one["attributes"]}


def read_back(written: dict[str, Any]) -> list[Message]:
    return otel.to_messages(json.loads(json.dumps(written)))


def refused_writing(messages: list[Any], convention: Convention) -> TraceError:
    with pytest.raises(TraceError) as caught:
        otel.from_messages(messages, convention=convention)
    return caught.value


def where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


# 1. Content of one text part alone: GenAI writes the text, which reads back as the plain
# text (one spelling to the transcript hash); kept by the formats that hold parts

LONE = "a GenAI message of one text part reads back as its plain text"

def test_genai_keeps_a_text_part_beside_another_or_keeping_fields() -> None:
    messages = [HumanMessage(content=[TextPart(text="hi"), TextPart(text="there")]),
                AIMessage(content=[TextPart(text="yo", metadata={"otel": {"fields": {"k": 1}}})])]
    assert read_back(otel.from_messages(messages, convention="genai")) == messages


@pytest.mark.parametrize("convention", ["auto", "genai"])
def test_a_tool_result_of_one_text_part_is_still_written_in_genai(
    convention: Convention
) -> None:
    messages = [HumanMessage(content="weather?"),
                AIMessage(content="", tool_calls=[ToolCall(name="f", args={}, id="c1")]),
                ToolMessage(content=[TextPart(text="sunny")], tool_call_id="c1"),
                AIMessage(content="sunny")]
    written = otel.from_messages(messages, convention=convention)
    assert "gen_ai.input.messages" in attribute_keys(written)
    assert read_back(written) == messages


INSTRUCTED_IN_A_PART = [
    SystemMessage(content="be brief"),
    HumanMessage(content="hi"),
    AIMessage(content="mid", metadata={"otel": {"instructions": [
        SystemMessage(content=[TextPart(text="be terse")]).model_dump(mode="json")]}}),
    HumanMessage(content="more"),
    AIMessage(content="end"),
]


def test_genai_refuses_an_earlier_call_instructed_in_one_text_part() -> None:
    error = refused_writing(INSTRUCTED_IN_A_PART, "genai")
    path = "messages[2].metadata.otel.instructions[0].content"
    assert where(error) == ("not_representable", 2, path)
    assert str(error) == f"otel: {path}: {LONE} [not_representable]"


def golden_files() -> list[Path]:
    return sorted(path for path in GOLDEN.glob("*.json"))


def test_there_are_sixteen_golden_traces() -> None:
    assert len(golden_files()) == 16


@pytest.mark.parametrize("path", golden_files(), ids=lambda path: path.stem)
def test_golden_traces_keep_their_convention_and_read_back_equal(path: Path) -> None:
    golden = json.loads(path.read_text())
    messages = otel.to_messages(golden["trace"], **(golden.get("to_options") or {}))
    written = otel.from_messages(messages)
    predict = path.stem == "openinference_llama_index_predict"  # (nothing only OpenInference keeps)
    flat = path.stem.startswith("openinference") and not predict
    assert ("openinference.span.kind" in attribute_keys(written)) is flat
    assert read_back(written) == messages


# 2. What only OpenInference keeps beside what only GenAI keeps


def chose_openinference_for(path: str, what: str) -> str:
    return (f"; but convention='auto' chose openinference for {path} ({what}), which "
            "convention='genai' would not keep: no convention holds both [not_representable]")


PARTS_KEY = "the kept key 'parts', which a GenAI message or call would read back as its own"

INSTRUCTED = {"otel": {"system_instructions": True}}


def test_kept_parts_beside_system_instructions_names_both() -> None:
    messages = [SystemMessage(content="be brief", metadata=INSTRUCTED),
                HumanMessage(content="hi"),
                AIMessage(content="yo", metadata={"otel": {"fields": {"parts": "v"}}})]
    error = refused_writing(messages, "auto")
    path = "messages[0].metadata.otel.system_instructions"
    assert where(error) == ("not_representable", 0, path)
    assert str(error) == (
        f"otel: {path}: metadata.otel.system_instructions was kept from GenAI messages and "
        "has no place in the openinference convention; write convention='genai', or remove "
        "it" + chose_openinference_for("messages[2].metadata.otel.fields.parts", PARTS_KEY))
    genai = refused_writing(messages, "genai")
    assert where(genai) == ("not_representable", 2, "messages[2].metadata.otel.fields.parts")


def test_mixed_trace_of_kept_parts_and_system_instructions_names_both() -> None:
    openinference = [*OPENINFERENCE[:4], value("llm.output_messages.0.message.content", "mid"),
                     value("llm.output_messages.0.message.parts", "Q")]
    given = [{"role": role, "parts": [{"type": "text", "content": said}]}
             for role, said in (("user", "hi"), ("assistant", "mid"), ("user", "more"))]
    genai = [value("gen_ai.operation.name", "chat"),
             value("gen_ai.system_instructions",
                   json.dumps([{"type": "text", "content": "be brief"}])),
             value("gen_ai.input.messages", json.dumps(given)),
             value("gen_ai.output.messages", json.dumps(
                 [{"role": "assistant", "parts": [{"type": "text", "content": "end"}]}]))]
    messages = otel.to_messages(document(span(openinference, "a" * 16, "1", "2"),
                                         span(genai, "b" * 16, "3", "4")))
    error = refused_writing(messages, "auto")
    assert where(error) == ("not_representable", 0,
                            "messages[0].metadata.otel.system_instructions")
    assert str(error).endswith(chose_openinference_for(
        "messages[2].metadata.otel.output.fields.parts", PARTS_KEY))


def test_kept_parts_beside_a_reasoning_part_names_both() -> None:
    messages = [HumanMessage(content="hi"),
                AIMessage(content=[ReasoningPart(text="t"), TextPart(text="yo")],
                          metadata={"otel": {"fields": {"parts": "v"}}})]
    error = refused_writing(messages, "auto")
    assert where(error) == ("not_representable", 1, "messages[1].content[0]")
    assert str(error) == (
        "otel: messages[1].content[0]: OpenInference message contents hold text and images; "
        "a reasoning part has no place there (convention='genai' writes it)"
        + chose_openinference_for("messages[1].metadata.otel.fields.parts", PARTS_KEY))


def test_a_call_without_id_keeping_its_name_names_both() -> None:
    messages = [HumanMessage(content="hi"),
                AIMessage(content="", tool_calls=[ToolCall(
                    name="f", args={}, metadata={"otel": {"fields": {"name": "v"}}})]),
                ToolMessage(content="r"), AIMessage(content="ok")]
    error = refused_writing(messages, "auto")
    assert where(error) == ("not_representable", 1,
                            "messages[1].tool_calls[0].metadata.otel.fields")
    assert str(error).endswith(chose_openinference_for(
        "messages[1].tool_calls[0].metadata.otel.fields.name",
        "the call's kept key 'name', which a GenAI message or call would read back as its own"))


def test_a_reply_without_input_keeping_parts_names_both() -> None:
    messages = [AIMessage(content="yo", metadata={"otel": {"fields": {"parts": "v"}}})]
    error = refused_writing(messages, "auto")
    assert where(error) == ("not_representable", 0, "messages[0]")
    assert str(error).endswith(chose_openinference_for(
        "messages[0].metadata.otel.fields.parts", PARTS_KEY))


def test_a_refusal_not_sending_to_genai_is_unchanged() -> None:
    messages = [HumanMessage(content="__REDACTED__"),
                AIMessage(content="yo", metadata={"otel": {"fields": {"parts": "v"}}})]
    error = refused_writing(messages, "auto")
    assert where(error) == ("not_representable", 0, "messages[0].content")
    assert str(error) == (
        "otel: messages[0].content: the text '__REDACTED__' is how OpenInference marks masked "
        "content: the reader would refuse it as content not captured [not_representable]")
