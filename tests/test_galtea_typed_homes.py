"""Galtea turns hold text only: every typed home a turn cannot hold is refused by name."""

from __future__ import annotations

import pytest

from tracebridge import (
    AIMessage,
    AudioReference,
    Citation,
    HumanMessage,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import galtea
from tracebridge.adapters.galtea import Omission

QUESTION = HumanMessage(content="How do I pick a lock?")


def refused(messages: list, **options: object) -> TraceError:
    with pytest.raises(TraceError) as caught:
        galtea.from_messages(messages, **options)
    assert (caught.value.code, caught.value.source) == ("not_representable", "galtea")
    return caught.value


def test_a_refusal_is_refused_unless_written_as_text_by_name() -> None:
    messages = [QUESTION, AIMessage(content=[RefusalPart(text="I can't help with that.")])]
    error = refused(messages)
    assert (error.index, error.path) == (1, "messages[1].content[0]")
    assert error.detail == (
        "a refusal: Galtea turns hold only user and assistant text and files; "
        "drop=['refusals'] leaves it out (recorded in omitted)"
    )
    omitted: list[Omission] = []
    assert galtea.from_messages(messages, drop=["refusals"], omitted=omitted) == [
        {"role": "user", "content": "How do I pick a lock?"},
        {"role": "assistant", "content": "I can't help with that."},
    ]
    assert omitted == [
        Omission(1, "refusal", "drop=refusals", "refusal at content[0] written as text")
    ]


def test_drop_non_text_does_not_turn_a_refusal_into_an_empty_answer() -> None:
    messages = [QUESTION, AIMessage(content=[RefusalPart(text="No.")])]
    assert refused(messages, drop_non_text=True).path == "messages[1].content[0]"


def test_citations_and_audio_replies_are_refused_unless_dropped_by_name() -> None:
    answer = AIMessage(
        content="Use a locksmith.",
        citations=[Citation(url="https://example.com/locksmiths")],
        audio=AudioReference(id="audio_1", transcript="Use a locksmith."),
    )
    assert refused([QUESTION, answer]).path == "messages[1].citations"
    assert refused([QUESTION, answer], drop=["citations"]).path == "messages[1].audio"
    omitted: list[Omission] = []
    turns = galtea.from_messages(
        [QUESTION, answer], drop=["citations", "audio_replies"], omitted=omitted
    )
    assert turns[1] == {"role": "assistant", "content": "Use a locksmith."}
    assert [(o.what, o.option) for o in omitted] == [
        ("citations", "drop=citations"), ("audio_reply", "drop=audio_replies"),
    ]


def test_several_text_parts_are_one_turn_only_by_name() -> None:
    # Joined by a newline, two parts would read back as one string: a different transcript.
    parts = [TextPart(text=""), TextPart(text="")]
    messages = [HumanMessage(content=parts), AIMessage(content="?")]
    error = refused(messages)
    assert (error.index, error.path) == (0, "messages[0].content")
    assert galtea.from_messages(messages, drop=["part_boundaries"])[0] == {
        "role": "user", "content": "\n"
    }


@pytest.mark.parametrize("kind", [HumanMessage, AIMessage])
def test_content_of_no_parts_is_empty_text_only_by_name(kind: type) -> None:
    # Read back, the turn's "" is a string, not a list of no parts: a different transcript.
    messages = [HumanMessage(content="hi"), kind(content=[])]
    error = refused(messages)
    assert (error.index, error.path, error.detail) == (
        1, "messages[1].content",
        "content of no parts: a Galtea turn holds one text; drop=['part_boundaries'] leaves it "
        "out (recorded in omitted)")
    omitted: list[Omission] = []
    turns = galtea.from_messages(messages, drop=["part_boundaries"], omitted=omitted)
    assert turns[1] == {"role": "user" if kind is HumanMessage else "assistant", "content": ""}
    assert [(o.index, o.what, o.detail) for o in omitted] == [
        (1, "part_boundaries", "content of no parts written as empty text")]


def test_an_answer_of_no_parts_whose_calls_are_folded_needs_no_other_option() -> None:
    calls = [ToolCall(name="lookup", args={}, id="c1")]
    messages = [HumanMessage(content="hi"), AIMessage(content=[], tool_calls=calls),
                ToolMessage(content="found", tool_call_id="c1"), AIMessage(content="done")]
    omitted: list[Omission] = []
    galtea.from_messages(messages, fold_tools=True, omitted=omitted)
    assert [(o.index, o.what) for o in omitted] == [(1, "tool_calls"), (2, "tool_result")]


def test_one_text_part_is_its_text() -> None:
    messages = [HumanMessage(content=[TextPart(text="hi")]), AIMessage(content="hello")]
    assert galtea.from_messages(messages)[0] == {"role": "user", "content": "hi"}


def test_a_developer_prompt_is_a_system_message_to_skip() -> None:
    messages = [SystemMessage(content="Be brief.", role="developer"), QUESTION]
    assert refused(messages).path == "messages[0]"
    omitted: list[Omission] = []
    assert galtea.from_messages(messages, skip_system=True, omitted=omitted) == [
        {"role": "user", "content": "How do I pick a lock?"}
    ]
    assert omitted[0].what == "system_message"


@pytest.mark.parametrize(("drop", "message"), [
    (["reasoning"], r"^drop=\['reasoning'\] names nothing droppable; "),
    ("refusals", r"^drop= takes a list of names from \('refusals', .*\), got 'refusals'$"),
])
def test_drop_names_only_what_galtea_can_drop(drop: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        galtea.from_messages([QUESTION], drop=drop)  # type: ignore[arg-type]
