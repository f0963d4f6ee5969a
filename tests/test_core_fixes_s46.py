"""The core on values put into a message after validation (nested past Python's depth,
holding themselves, not JSON), keys that are no fields, ``==`` as JSON, and the type an
unknown message reports."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    OpaquePart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    render,
    transcript_hash,
)
from tracebridge.hashing import hashed_messages
from tracebridge.metrics import ToolCallAccuracy, ToolCallF1

TOO_DEEP = (
    "a value nested more than 128 levels deep, or one that holds itself (a dict or list inside "
    "its own contents): JSON readers stop before its end"
)
AN_OBJECT = "expected a JSON value (dict, list, str, int, float, bool, None), got object <object"


def nested(levels: int) -> Any:
    """``[[...[1]...]]``, ``levels`` lists deep."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def conversation(**args: Any) -> list[Any]:
    return [
        HumanMessage(content="h"),
        AIMessage(content="", tool_calls=[ToolCall(name="f", args=args or {"l": 1}, id="c")]),
        ToolMessage(content="r", tool_call_id="c"),
    ]


def with_deep_args() -> MultiTurnSample:
    """A sample whose call's arguments were edited in place after validation (a dict inside a
    frozen message) to hold a value nested far past Python's depth."""
    sample = MultiTurnSample(
        messages=conversation(), reference_tool_calls=[ToolCall(name="f", args={"l": 1})]
    )
    sample.messages[1].tool_calls[0].args["l"] = nested(100_000)
    return sample


def with_self_holding_args() -> list[Any]:
    messages = conversation(a=1)
    args = messages[1].tool_calls[0].args
    args["self"] = args
    return messages


def told(error: TraceError) -> tuple[str, int | None, str | None, str | None, str]:
    return (error.code, error.index, error.path, error.source, error.detail)


AT_ARGS = ("unserializable_value", 1, "messages[1].tool_calls[0].args.l", None, TOO_DEEP)


# --- a value nested past Python's depth: the documented error, never RecursionError ------


@pytest.mark.parametrize(
    "reading",
    [
        pytest.param(render, id="render"),
        pytest.param(lambda sample: render(sample.messages), id="render-messages"),
        pytest.param(transcript_hash, id="transcript_hash"),
        pytest.param(hashed_messages, id="hashed_messages"),
        pytest.param(lambda sample: ToolCallAccuracy().score(sample), id="ToolCallAccuracy"),
        pytest.param(lambda sample: ToolCallF1().score(sample), id="ToolCallF1"),
    ],
)
def test_a_value_nested_past_pythons_depth_is_unserializable_value_at_its_path(
    reading: Any,
) -> None:
    with pytest.raises(TraceError) as caught:
        reading(with_deep_args())
    assert told(caught.value) == AT_ARGS


def test_pretty_repr_of_a_message_with_a_value_nested_past_pythons_depth() -> None:
    message = with_deep_args().messages[1]
    with pytest.raises(TraceError) as caught:
        message.pretty_repr()
    assert told(caught.value) == (
        "unserializable_value", None, "tool_calls[0].args.l", None, TOO_DEEP
    )


@pytest.mark.parametrize("target", ["openai_chat", "langchain"])
def test_writing_a_value_nested_past_pythons_depth_is_unserializable_value(target: str) -> None:
    messages = with_deep_args().messages
    with pytest.raises(TraceError) as caught:
        convert(messages, source="tracebridge", target=target)
    assert told(caught.value) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.l", target, TOO_DEEP
    )


def test_render_of_a_message_made_unchecked_with_a_value_nested_past_pythons_depth() -> None:
    call = ToolCall.model_construct(
        name="f", args={"l": nested(100_000)}, id="c", invalid_args=None, kind="function",
        metadata={},
    )
    made = AIMessage.model_construct(content="", tool_calls=[call])
    with pytest.raises(TraceError) as caught:
        render([HumanMessage(content="h"), made])
    assert told(caught.value) == AT_ARGS


def test_render_of_an_opaque_value_nested_past_pythons_depth() -> None:
    part = OpaquePart.model_construct(kind="x", value=nested(100_000), metadata={})
    made = HumanMessage.model_construct(content=[part], name=None, id=None, metadata={})
    with pytest.raises(TraceError) as caught:
        render([made])
    assert told(caught.value) == (
        "unserializable_value", 0, "messages[0].content[0].value[0]", None, TOO_DEEP
    )


# --- the hash tells a bad value at the value, as render does ------------------------------


@pytest.mark.parametrize("reading", [transcript_hash, hashed_messages, render])
def test_a_dict_holding_itself_is_told_at_the_value(reading: Any) -> None:
    with pytest.raises(TraceError) as caught:
        reading(with_self_holding_args())
    assert told(caught.value) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.self", None, TOO_DEEP
    )


def test_the_hash_tells_a_nested_object_at_the_value() -> None:
    messages = conversation(a=1)
    messages[1].tool_calls[0].args["a"] = [{"o": object()}]
    with pytest.raises(TraceError) as caught:
        transcript_hash(messages)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.a[0].o"
    )
    assert error.detail.startswith(AN_OBJECT)


# --- model_dump_json: Python's json only for lone surrogates ---------------------------------


def edited_metadata(value: Any) -> HumanMessage:
    message = HumanMessage(content="x", metadata={"a": 1})
    message.metadata["a"] = value
    return message


def holding_itself() -> HumanMessage:
    message = HumanMessage(content="x", metadata={"a": 1})
    message.metadata["a"] = message.metadata
    return message


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(edited_metadata(nested(100_000)), id="nested-past-pythons-depth"),
        pytest.param(holding_itself(), id="holding-itself"),
    ],
)
def test_model_dump_json_of_a_value_too_deep_is_unserializable_value(message: Any) -> None:
    with pytest.raises(TraceError) as caught:
        message.model_dump_json()
    assert told(caught.value) == ("unserializable_value", None, "metadata.a", None, TOO_DEEP)
    sample = MultiTurnSample.model_construct(messages=[HumanMessage(content="h"), message])
    with pytest.raises(TraceError) as caught:
        sample.model_dump_json()
    assert told(caught.value) == (
        "unserializable_value", 1, "messages[1].metadata.a", None, TOO_DEEP
    )


def test_model_dump_json_of_an_object_is_unserializable_value() -> None:
    message = edited_metadata({"o": object()})
    with pytest.raises(TraceError) as caught:
        message.model_dump_json()
    error = caught.value
    assert (error.code, error.index, error.path) == ("unserializable_value", None, "metadata.a.o")
    assert error.detail.startswith(AN_OBJECT)
    with pytest.raises(TraceError) as caught:
        MultiTurnSample(messages=[message]).model_dump_json(indent=2)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "unserializable_value", 0, "messages[0].metadata.a.o"
    )


def test_model_dump_json_with_a_lone_surrogate_refuses_nan_beside_it() -> None:
    """Python's ``json`` writes NaN as ``NaN``, which no JSON reader takes."""
    sample = MultiTurnSample(messages=[HumanMessage(content="a\udcff"), *conversation()[1:]])
    sample.messages[1].tool_calls[0].args["l"] = float("nan")
    with pytest.raises(TraceError) as caught:
        sample.model_dump_json()
    assert told(caught.value) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.l", None,
        "nan is not a finite number",
    )


def test_model_dump_json_with_a_lone_surrogate_still_reads_back() -> None:
    sample = MultiTurnSample(
        messages=[HumanMessage(content="a\udcff", metadata={"k\ud800": [1.0, -0.0]}),
                  *conversation(l=True)[1:]],
    )
    text = sample.model_dump_json()
    assert text.startswith('{"messages":[{"type":"human","content":"a\\udcff"')
    assert MultiTurnSample.model_validate_json(text) == sample


# --- the hash covers declared fields only ---------------------------------------------------


def test_a_key_that_is_no_field_is_not_hashed() -> None:
    """``model_copy(update=...)`` keeps a misspelt field name in the message's ``__dict__``;
    no dump, no rendering and no ``==`` sees it, and the hash does not either."""
    plain = HumanMessage(content="hi")
    stray = plain.model_copy(update={"nmae": "ana"})
    assert transcript_hash([stray]) == transcript_hash([plain])
    assert hashed_messages([stray]) == [{"type": "human", "content": "hi", "name": None}]
    sample = MultiTurnSample(messages=[stray, AIMessage(content="hello")])
    back = MultiTurnSample.model_validate_json(sample.model_dump_json())
    assert back.transcript_hash() == sample.transcript_hash()


def test_a_key_that_is_no_field_of_a_call_is_not_hashed() -> None:
    base = conversation()
    edited = list(base)
    call = base[1].tool_calls[0].model_copy(update={"arg": {"x": 1}})
    edited[1] = AIMessage(content="", tool_calls=[call])
    assert transcript_hash(edited) == transcript_hash(base)
    assert hashed_messages(edited)[1]["tool_calls"] == [
        {"name": "f", "args": {"l": 1}, "id": "c", "invalid_args": None}
    ]


# --- == is equality as JSON -----------------------------------------------------------------


def refund(value: Any) -> MultiTurnSample:
    return MultiTurnSample(
        messages=[
            HumanMessage(content="refund order 1"),
            AIMessage(content="", tool_calls=[
                ToolCall(name="refund", args={"order": value}, id="c")
            ]),
            ToolMessage(content="done", tool_call_id="c"),
        ],
        reference_tool_calls=[ToolCall(name="refund", args={"order": 1})],
    )


@pytest.mark.parametrize(
    ("one", "other"),
    [(1, 1.0), (1, True), (1.0, True), (0, False), (0.0, -0.0), ([1], [1.0]),
     ({"n": [0.0]}, {"n": [-0.0]}), ([1, {"a": True}], [1, {"a": 1}])],
)
def test_samples_that_differ_as_json_are_not_equal(one: Any, other: Any) -> None:
    first, second = refund(one), refund(other)
    assert first.transcript_hash() != second.transcript_hash()
    assert (first == second, first != second) == (False, True)
    assert (first.messages[1] == second.messages[1]) is False
    assert (first.messages[1].tool_calls[0] == second.messages[1].tool_calls[0]) is False


@pytest.mark.parametrize("value", [1, 1.0, True, -0.0, 0.0, [1, [2.5, None]], {"a": {"b": "c"}}])
def test_samples_equal_as_json_are_equal(value: Any) -> None:
    first, second = refund(value), refund(value if not isinstance(value, dict) else {**value})
    assert (first == second, first != second) == (True, False)
    assert first.transcript_hash() == second.transcript_hash()
    back = MultiTurnSample.model_validate_json(first.model_dump_json())
    assert back == first


def test_metadata_and_opaque_values_compare_as_json() -> None:
    assert HumanMessage(content="x", metadata={"a": 1}) != HumanMessage(
        content="x", metadata={"a": 1.0}
    )
    assert OpaquePart(kind="k", value=True) != OpaquePart(kind="k", value=1)
    assert TextPart(text="x", metadata={"z": -0.0}) != TextPart(text="x", metadata={"z": 0.0})
    assert HumanMessage(content=[TextPart(text="x", metadata={"a": [1]})]) != HumanMessage(
        content=[TextPart(text="x", metadata={"a": [True]})]
    )


def test_a_key_that_is_no_field_takes_no_part_in_equality() -> None:
    plain = HumanMessage(content="hi")
    stray = plain.model_copy(update={"nmae": "ana"})
    assert (stray == plain, plain == stray) == (True, True)


# --- an unknown message type reports the type found -----------------------------------------


def test_an_unknown_message_type_set_unchecked_is_reported_as_found() -> None:
    message = HumanMessage(content="hi").model_copy(update={"type": "assistant"})
    with pytest.raises(TraceError) as caught:
        MultiTurnSample(messages=[message])
    assert told(caught.value) == (
        "unknown_role", 0, "messages[0].type", None,
        "unknown message type 'assistant'; expected one of human, ai, tool, system",
    )


def test_an_unknown_part_type_set_unchecked_is_reported_as_found() -> None:
    part = TextPart(text="x").model_copy(update={"type": "txt"})
    with pytest.raises(TraceError) as caught:
        MultiTurnSample.model_validate({"messages": [{"type": "human", "content": [part]}]})
    assert told(caught.value) == (
        "malformed_event", 0, "messages[0].content[0].type", None,
        "unknown part type 'txt'; expected one of text, image, audio, file, reasoning, "
        "refusal, opaque",
    )
