"""Core fixes: joined lone surrogates in JSON, the models' own JSON methods, linear render of
blank-line runs, values nested too deep to show, ``hashed_messages`` of a sample, and the
path of a rubric key that is not a string."""

from __future__ import annotations

import random
import re
import sys
from typing import Any

import pytest
from pydantic import ValidationError

from tracebridge import (
    AIMessage,
    AudioReference,
    Citation,
    HumanMessage,
    ImagePart,
    MultiTurnSample,
    OpaquePart,
    TextPart,
    ToolCall,
    TraceError,
    convert,
    native,
    render,
    transcript_hash,
)
from tracebridge.errors import short_repr
from tracebridge.hashing import hashed_messages

_RENDER = sys.modules["tracebridge.render"]


def _error(work: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        work()
    return caught.value


def _where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


# 1. a lone high surrogate right before a lone low one


def test_joined_lone_surrogates_in_a_sample_are_refused_not_written_as_another_character() -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="a\ud800" + "\udcffb")])
    error = _error(sample.model_dump_json)
    assert _where(error) == ("unserializable_value", 0, "messages[0].content")
    assert error.detail == (
        "a lone high surrogate right before a lone low one: JSON spells the two as one other "
        "character, which is what would be read back"
    )


def test_joined_lone_surrogates_in_a_dict_key_of_a_sample_are_refused_at_the_key() -> None:
    message = HumanMessage(content="x")
    sample = MultiTurnSample(
        messages=[HumanMessage(content="q"), message.model_copy(
            update={"metadata": {"ok": 1, "k\ud800\udcff": 2}})],
    )
    error = _error(lambda: sample.model_dump_json(indent=2))
    assert _where(error) == ("unserializable_value", 1, "messages[1].metadata['k\\ud800\\udcff']")


def test_joined_lone_surrogates_in_a_message_alone_are_refused_at_the_field() -> None:
    error = _error(HumanMessage(content="a\ud800\udcffb").model_dump_json)
    assert _where(error) == ("unserializable_value", None, "content")


def test_a_lone_low_then_a_lone_high_surrogate_still_round_trip() -> None:
    sample = MultiTurnSample(messages=[HumanMessage(content="a\udcff\ud800b")])
    back = MultiTurnSample.model_validate_json(sample.model_dump_json())
    assert back == sample
    assert back.messages[0].content == "a\udcff\ud800b"
    assert back.transcript_hash() == sample.transcript_hash()


# 2. the messages', ToolCall's and the parts' own JSON methods


@pytest.mark.parametrize(
    "model",
    [
        HumanMessage(content="x", metadata={"report\udcff.pdf": 1}),
        HumanMessage(content="caf\udce9"),
        AIMessage(content="x", tool_calls=[ToolCall(name="f", args={"\udcff": 1})]),
        ToolCall(name="f", args={"\udcff": 1}),
        ToolCall(name="f\ud800", args={"a": "\udce9"}),
        TextPart(text="a", metadata={"\ud800": 1}),
        ImagePart(url="https://x/y\udcff.png"),
        OpaquePart(kind="k", value={"\udcff": ["\ud800"]}),
        Citation(cited_text="\udcff", metadata={"\udcfe": 1}),
        AudioReference(id="a", transcript="\ud800"),
    ],
    ids=["message-key", "message-value", "ai-call-key", "call-key", "call-values", "text-part",
         "image-part", "opaque-part", "citation", "audio"],
)
@pytest.mark.parametrize("options", [{}, {"indent": 2}, {"ensure_ascii": True}],
                         ids=["plain", "indent", "ascii"])
def test_a_models_own_json_round_trip_keeps_a_lone_surrogate(
    model: Any, options: dict[str, Any]
) -> None:
    back = type(model).model_validate_json(model.model_dump_json(**options))
    assert back == model
    assert back.model_dump() == model.model_dump()


def test_two_messages_whose_keys_differ_in_a_lone_surrogate_dump_apart() -> None:
    a = HumanMessage(content="x", metadata={"\udcff": 1})
    b = HumanMessage(content="x", metadata={"\udcfe": 1})
    assert a.model_dump_json() == (
        '{"type":"human","content":"x","name":null,"id":null,"metadata":{"\\udcff":1}}'
    )
    assert b.model_dump_json() == (
        '{"type":"human","content":"x","name":null,"id":null,"metadata":{"\\udcfe":1}}'
    )


def test_a_messages_json_reader_refuses_a_repeated_key() -> None:
    text = '{"type":"human","content":"a","metadata":{"eur":100,"eur":1000000}}'
    with pytest.raises(ValidationError) as caught:
        HumanMessage.model_validate_json(text)
    (problem,) = caught.value.errors()
    assert problem["type"] == "json_invalid"
    assert problem["ctx"] == {
        "error": "an object has the key 'eur' twice (which value is meant is not known)"
    }


def test_valid_messages_json_is_pydantics_own() -> None:
    message = AIMessage(content="héllo", tool_calls=[ToolCall(name="f", args={"a": 1}, id="c")])
    assert message.model_dump_json() == (
        '{"type":"ai","content":"héllo","tool_calls":[{"name":"f","args":{"a":1},"id":"c",'
        '"invalid_args":null,"kind":"function","metadata":{}}],"name":null,"citations":[],'
        '"audio":null,"id":null,"metadata":{}}'
    )
    assert AIMessage.model_validate_json(message.model_dump_json()) == message


# 3. render is linear on runs of blank lines, with the same output


def _old_some_line_looks_made() -> re.Pattern[str]:
    before = "[\\s\\\\" + _RENDER._INVISIBLE + "]*"
    return re.compile(r"(?:^|\n)" + before + r"(?:->|\[)")


def test_the_some_line_search_agrees_with_the_one_it_replaces_on_random_texts() -> None:
    old, new = _old_some_line_looks_made(), _RENDER._SOME_LINE_LOOKS_MADE
    alphabet = ["\n", "\n", " ", "\t", "[", "->", "-", ">", "\\", "\u200b", "\ufeff", "a", "b",
                "\u3000", "\xa0"]
    chance = random.Random(44)
    found = 0
    for _ in range(30_000):
        text = "".join(chance.choice(alphabet) for _ in range(chance.randrange(0, 14)))
        expected = old.search(text) is not None
        assert (new.search(text) is not None) is expected, repr(text)
        found += expected
    assert 0 < found < 30_000  # both answers were met


def test_render_of_many_blank_lines_then_text() -> None:
    content = "\n" * 200_000 + "x"
    assert render([HumanMessage(content=content)]) == "[0] human:" + "\n" * 200_000 + "    x"


def test_render_of_a_blank_line_run_then_a_mark_still_marks_it() -> None:
    content = "Title" + "\n        " * 50_000 + "[done]"
    rendered = HumanMessage(content=content).pretty_repr()
    assert rendered.endswith("\n    \\        [done]")
    assert rendered.count("\n") == 50_000


# 4. a value nested too deep for repr


def _deep(levels: int = 5_000) -> Any:
    deep: Any = 1
    for _ in range(levels):
        deep = [deep]
    return deep


def test_short_repr_names_a_value_nested_too_deep_to_show() -> None:
    assert short_repr(_deep()) == "<a list nested too deep to show>"
    assert short_repr({"a": _deep()}) == "<a dict nested too deep to show>"
    assert short_repr("x" * 200, 10) == "'xxxxxx..."


def test_a_deep_value_where_content_goes_is_malformed_at_its_place() -> None:
    error = _error(lambda: MultiTurnSample.model_validate(
        {"messages": [{"type": "human", "content": _deep()}]}))
    assert _where(error) == ("malformed_event", 0, "messages[0].content[0]")
    assert error.detail == ("Input should be a valid dictionary or object to extract fields "
                            "from (got list <a list nested too deep to show>)")


def test_a_deep_reference_is_malformed_at_reference() -> None:
    error = _error(lambda: MultiTurnSample.model_validate(
        {"messages": [{"type": "human", "content": "hi"}], "reference": _deep()}))
    assert _where(error) == ("malformed_event", None, "reference")
    assert error.detail == (
        "Input should be a valid string (got list <a list nested too deep to show>)")


def test_native_reading_a_deep_name_or_an_unknown_deep_field_is_malformed() -> None:
    error = _error(lambda: native.to_messages(
        [{"type": "human", "content": "hi", "name": _deep()}]))
    assert _where(error) == ("malformed_event", 0, "messages[0].name")
    error = _error(lambda: native.to_sample(
        {"messages": [{"type": "human", "content": "hi"}], "zzz": _deep()}))
    assert _where(error) == ("malformed_event", None, "zzz")
    assert error.detail == ("not a MultiTurnSample: Extra inputs are not permitted "
                            "(got <a list nested too deep to show>)")


def test_convert_and_render_of_deep_values_are_malformed() -> None:
    error = _error(lambda: convert([{"type": "human", "content": _deep()}],
                                   source="tracebridge", target="openai_chat"))
    assert _where(error) == ("malformed_event", 0, "messages[0].content[0]")
    unchecked = HumanMessage(content="x").model_copy(update={"name": _deep()})
    error = _error(lambda: render([unchecked]))
    assert _where(error) == ("malformed_event", 0, "messages[0].name")


# 5. hashed_messages, rubric keys


def test_hashed_messages_takes_a_sample_as_transcript_hash_does() -> None:
    messages = [HumanMessage(content="x", id="m1"), AIMessage(content="y", metadata={"a": 1})]
    sample = MultiTurnSample(messages=messages)
    expected = [{"type": "human", "content": "x", "name": None},
                {"type": "ai", "content": "y", "tool_calls": [], "name": None}]
    assert hashed_messages(sample) == expected
    assert hashed_messages(messages) == expected
    assert transcript_hash(sample) == transcript_hash(messages) == sample.transcript_hash()


@pytest.mark.parametrize("wrong", ["abc", 5, {"messages": []}])
def test_hashed_messages_refuses_what_is_not_messages(wrong: Any) -> None:
    error = _error(lambda: hashed_messages(wrong))
    assert _where(error) == ("malformed_event", None, "messages")


def test_hashed_messages_refuses_an_item_that_is_not_a_message() -> None:
    error = _error(lambda: hashed_messages([HumanMessage(content="x"), "y"]))
    assert _where(error) == ("malformed_event", 1, "messages[1]")


NAN = float("nan")


def test_the_same_message_in_a_sample_keeps_its_path() -> None:
    error = _error(lambda: MultiTurnSample.model_validate({"messages": [
        {"type": "human", "content": "q"},
        {"type": "ai", "tool_calls": [{"name": "f", "args": {}},
                                      {"name": "g", "args": {"when": NAN}}]}]}))
    assert _where(error) == ("unserializable_value", 1, "messages[1].tool_calls[1].args.when")


def test_a_rubric_key_that_is_not_a_string_is_malformed_at_rubrics() -> None:
    error = _error(lambda: MultiTurnSample(messages=[HumanMessage(content="x")],
                                           rubrics={1: "x"}))  # type: ignore[dict-item]
    assert _where(error) == ("malformed_event", None, "rubrics")
    assert error.detail == "keys must be strings (got int 1)"
    error = _error(lambda: native.to_sample(
        {"messages": [{"type": "human", "content": "x"}], "rubrics": {1: "x"}}))
    assert _where(error) == ("malformed_event", None, "rubrics")


def test_a_rubric_named_like_pydantics_key_mark_is_still_told_as_itself() -> None:
    error = _error(lambda: MultiTurnSample(messages=[HumanMessage(content="x")],
                                           rubrics={"[key]": 1}))  # type: ignore[dict-item]
    assert _where(error) == ("malformed_event", None, "rubrics['[key]']")
    assert error.detail == "Input should be a valid string (got int 1)"


# Review: the models' model_validate_json given what is not text is pydantic's to refuse
# (a ValidationError of type json_type), as it was, not a raw TypeError.


@pytest.mark.parametrize("model", [HumanMessage, ToolCall, TextPart, MultiTurnSample])
@pytest.mark.parametrize("given", [None, 1.5, {"type": "human", "content": "x"},
                                   memoryview(b'{"type": "human", "content": "x"}')])
def test_model_validate_json_of_what_is_not_text_is_a_json_type_error(
    model: Any, given: Any
) -> None:
    with pytest.raises(ValidationError) as caught:
        model.model_validate_json(given)
    assert [error["type"] for error in caught.value.errors()] == ["json_type"]


# Mutation audit: limits and copies the tests above left open.


def test_short_repr_keeps_a_repr_of_exactly_120_characters_whole() -> None:
    assert short_repr("x" * 118) == repr("x" * 118)
    assert len(short_repr("x" * 118)) == 120


def test_short_repr_cuts_a_repr_of_121_characters_to_120() -> None:
    assert short_repr("x" * 119) == "'" + "x" * 116 + "..."
    assert len(short_repr("x" * 119)) == 120


def test_a_wrong_value_in_a_sample_is_shown_cut_to_80_characters() -> None:
    error = _error(lambda: MultiTurnSample(
        messages=[HumanMessage(content="a"), AIMessage(content="b")],
        rubrics={"tone": ["y" * 100]},  # type: ignore[dict-item]
    ))
    assert _where(error) == ("malformed_event", None, "rubrics.tone")
    assert error.detail == "Input should be a valid string (got list ['" + "y" * 75 + "...)"


def test_editing_hashed_messages_changes_no_message() -> None:
    message = AIMessage(content="x", tool_calls=[ToolCall(id="c1", name="f", args={"a": [1]})])
    hashed = hashed_messages([message])
    assert hashed == [{"type": "ai", "content": "x", "tool_calls": [
        {"name": "f", "args": {"a": [1]}, "id": "c1", "invalid_args": None}], "name": None}]
    before = transcript_hash([message])
    hashed[0]["tool_calls"][0]["args"]["a"].append(2)
    hashed[0]["tool_calls"][0]["args"]["b"] = 3
    hashed[0]["content"] = "y"
    assert message.tool_calls[0].args == {"a": [1]}
    assert message.content == "x"
    assert transcript_hash([message]) == before
    assert hashed_messages([message]) == [{"type": "ai", "content": "x", "tool_calls": [
        {"name": "f", "args": {"a": [1]}, "id": "c1", "invalid_args": None}], "name": None}]


def test_joined_lone_surrogates_past_message_9_name_their_two_digit_index() -> None:
    messages: list[Any] = []
    for k in range(6):
        messages += [HumanMessage(content=f"q{k}"), AIMessage(content=f"a{k}")]
    messages[10] = HumanMessage(content="x\ud800\udcff")
    error = _error(MultiTurnSample(messages=messages).model_dump_json)
    assert _where(error) == ("unserializable_value", 10, "messages[10].content")
