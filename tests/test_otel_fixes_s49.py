"""The otel reader and writer on a span in three conventions, own keys GenAI spells itself,
and an earlier turn's result of several text parts (docs/adapters/otel.md).

1. A span in GenAI, OpenInference and Traceloop's older keys: what the second keeps is
   carried onto the first's messages, and a third that records another value of that key is
   ``conflicting_fields`` at the third's key, naming the second's key (which recorded the
   other value), not the first convention's.
2. A message's own key ``parts`` (or a call's ``name`` / ``arguments``) that OpenInference
   keeps is a key GenAI spells itself: ``convention="auto"`` writes such a conversation as
   OpenInference, so it reads back as it was read.
3. In an earlier turn, the result the next model call was sent tells which tool span
   answered; a result of several text parts is compared as its texts joined by newlines.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from otel_helpers import refused, text, where
from test_otel_fixes_s47 import CALL, HI, chat, recorded, tool
from test_otel_fixes_s48 import OPENINFERENCE, REPLY, SPAN, TRACELOOP, document, genai, span, value

from tracebridge import AIMessage, HumanMessage, Message, TextPart, ToolCall, ToolMessage
from tracebridge.adapters import otel
from tracebridge.errors import TraceError

Convention = Literal["auto", "genai", "openinference"]


# 1. A clash found against the third convention names the keys that disagree


def three_conventions(genai_reply: dict[str, Any], *extra: dict[str, Any]) -> dict[str, Any]:
    return document(span([*genai([text("user", "hi")], [genai_reply]), *OPENINFERENCE,
                          *TRACELOOP, *extra]))


def test_third_convention_clash_with_the_second_names_the_second_key() -> None:
    error = refused(three_conventions(
        REPLY, value("llm.output_messages.0.message.custom_key", "v"),
        value("gen_ai.completion.0.custom_key", "w")))
    key = "gen_ai.completion.0.custom_key"
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes[{key!r}]")
    assert str(error) == (
        f"otel: {SPAN}.attributes[{key!r}]: the span's "
        f"llm.output_messages.0.message.custom_key and {key} record different values of "
        "'custom_key' for one message ('v' and 'w') [conflicting_fields]"
    )


def test_third_convention_clash_on_an_input_message_names_the_second_key() -> None:
    error = refused(three_conventions(
        REPLY, value("llm.input_messages.0.message.custom_key", "v"),
        value("gen_ai.prompt.0.custom_key", "w")))
    key = "gen_ai.prompt.0.custom_key"
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes[{key!r}]")
    assert str(error) == (
        f"otel: {SPAN}.attributes[{key!r}]: the span's "
        f"llm.input_messages.0.message.custom_key and {key} record different values of "
        "'custom_key' for one message ('v' and 'w') [conflicting_fields]"
    )


def test_third_convention_clash_with_the_first_names_the_first_convention() -> None:
    error = refused(three_conventions({**REPLY, "custom_key": "u"},
                                      value("gen_ai.completion.0.custom_key", "w")))
    key = "gen_ai.completion.0.custom_key"
    assert where(error) == ("conflicting_fields", 0, f"{SPAN}.attributes[{key!r}]")
    assert str(error) == (
        f"otel: {SPAN}.attributes[{key!r}]: the span's gen_ai.output.messages* attributes "
        f"and {key} record different values of 'custom_key' for one message ('u' and 'w') "
        "[conflicting_fields]"
    )


def test_third_convention_agreeing_with_the_second_reads_once() -> None:
    read = otel.to_messages(three_conventions(
        REPLY, value("llm.output_messages.0.message.custom_key", "v"),
        value("gen_ai.completion.0.custom_key", "v")))
    assert read == [HumanMessage(content="hi"), AIMessage(
        content="yo", metadata={"otel": {"fields": {"custom_key": "v"}}})]


# 2. An own key GenAI spells itself, kept from OpenInference, is written as OpenInference

PARTS_KEY = [*OPENINFERENCE, value("llm.output_messages.0.message.parts", "v")]

PARTS_KEPT = [HumanMessage(content="hi"),
              AIMessage(content="yo", metadata={"otel": {"fields": {"parts": "v"}}})]


def attribute_keys(written: dict[str, Any]) -> list[str]:
    spans = written["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return [item["key"] for item in spans[-1]["attributes"]]


def test_openinference_own_key_parts_is_written_back_by_auto() -> None:
    read = otel.to_messages(document(span(PARTS_KEY)))
    assert read == PARTS_KEPT
    written = otel.from_messages(read)
    assert "llm.output_messages.0.message.parts" in attribute_keys(written)
    assert otel.to_messages(json.loads(json.dumps(written))) == read


def test_openinference_own_key_parts_is_still_refused_in_genai() -> None:
    with pytest.raises(TraceError) as caught:
        otel.from_messages(PARTS_KEPT, convention="genai")
    assert where(caught.value) == ("not_representable", 1,
                                   "messages[1].metadata.otel.fields.parts")


CALLED_WITH_KEYS = [
    HumanMessage(content="weather?"),
    AIMessage(content="let me look", tool_calls=[ToolCall(
        name="f", args={"a": 1}, id="c1",
        metadata={"otel": {"fields": {"name": "N", "arguments": "A"}}})]),
    ToolMessage(content="sunny", tool_call_id="c1"),
    AIMessage(content="sunny"),
]


def test_call_own_keys_name_and_arguments_are_written_back_by_auto() -> None:
    written = otel.from_messages(CALLED_WITH_KEYS)
    keys = attribute_keys(written)
    assert "llm.input_messages.1.message.tool_calls.0.tool_call.name" in keys
    assert "llm.input_messages.1.message.tool_calls.0.tool_call.arguments" in keys
    assert otel.to_messages(json.loads(json.dumps(written))) == CALLED_WITH_KEYS


# 3. An earlier turn's result of several text parts, matched as its joined text

TURN = [HumanMessage(content="hi"),
        AIMessage(content="", tool_calls=[ToolCall(name="f", args={"a": 1}, id="c1")])]
OK = AIMessage(content="ok")
PARTS = [TextPart(text="R1"), TextPart(text="R2")]


def earlier_turn_of_parts(*runs: tuple[str | None, bool]) -> list[Any]:
    """The call of ``c1``, tool spans per (result, failed), then the next model call, whose
    input holds the result as the text parts R1 and R2."""
    response = [{"type": "text", "content": "R1"}, {"type": "text", "content": "R2"}]
    answered = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
                                           "response": response}]}

    def build(tracer: Any) -> None:
        chat(tracer, [HI], [CALL])
        for result, failed in runs:
            tool(tracer, result, failed=failed)
        chat(tracer, [HI, CALL, answered], [text("assistant", "ok")])

    return recorded(build)


SENT_THE_SUCCESS = [
    pytest.param([("R1\nR2", False), ("E", True)], 1, id="success,fail"),
    pytest.param([("E", True), ("R1\nR2", False), ("E2", True)], 2, id="fail,success,fail"),
    pytest.param([("R1\nR2", False), (None, True), ("E", True)], 2,
                 id="success,fail without result,fail"),
]


@pytest.mark.parametrize(("runs", "attempts"), SENT_THE_SUCCESS)
def test_a_result_of_text_parts_matching_the_success_was_its_answer(
    runs: list[tuple[str | None, bool]], attempts: int
) -> None:
    assert otel.to_messages(earlier_turn_of_parts(*runs)) == [
        *TURN, ToolMessage(content=PARTS, tool_call_id="c1",
                           metadata={"otel": {"failed_attempts": attempts}}), OK]


@pytest.mark.parametrize("convention", ["auto", "genai", "openinference"])
@pytest.mark.parametrize(("runs", "attempts"), SENT_THE_SUCCESS)
def test_a_result_of_text_parts_matching_the_success_round_trips(
    runs: list[tuple[str | None, bool]], attempts: int, convention: Convention
) -> None:
    messages: list[Message] = otel.to_messages(earlier_turn_of_parts(*runs))
    written = otel.from_messages(messages, convention=convention)
    assert otel.to_messages(json.loads(json.dumps(written))) == messages


@pytest.mark.parametrize("success", ["R1R2", "R1 R2", '["R1", "R2"]'])
def test_a_result_of_text_parts_not_the_success_text_is_the_last_failure(success: str) -> None:
    assert otel.to_messages(earlier_turn_of_parts((success, False), ("E", True))) == [
        *TURN, ToolMessage(content=PARTS, tool_call_id="c1", is_error=True), OK]


def test_a_failure_that_recorded_the_joined_text_answers() -> None:
    assert otel.to_messages(earlier_turn_of_parts(("R1\nR2", False), ("R1\nR2", True))) == [
        *TURN, ToolMessage(content=PARTS, tool_call_id="c1", is_error=True), OK]
