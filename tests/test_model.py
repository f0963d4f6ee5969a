"""The typed model: frozen, strict, discriminated, JSON-only metadata, exact JSON round trip."""

from __future__ import annotations

import pydantic
import pytest
from hypothesis import given

from tracebridge import (
    AIMessage,
    FilePart,
    HumanMessage,
    ImagePart,
    MultiTurnSample,
    OpaquePart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)

from strategies import conversations, json_objects


def test_models_are_frozen() -> None:
    message = HumanMessage(content="hi")
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        message.content = "changed"  # type: ignore[misc]


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match="Extra inputs are not permitted"):
        HumanMessage(content="hi", role="user")  # type: ignore[call-arg]


def test_messages_are_discriminated_on_type() -> None:
    sample = MultiTurnSample.model_validate(
        {"messages": [{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello"}]}
    )
    assert [type(m) for m in sample.messages] == [HumanMessage, AIMessage]


def test_text_joins_text_parts_with_newlines_and_skips_other_parts() -> None:
    message = HumanMessage(
        content=[
            TextPart(text="first"),
            ImagePart(url="https://example.com/cat.png", mime_type="image/png"),
            TextPart(text="second"),
            ReasoningPart(text="not said aloud"),
        ]
    )
    assert message.text == "first\nsecond"
    assert AIMessage(content="plain").text == "plain"


def test_defaults() -> None:
    assert AIMessage().model_dump() == {
        "type": "ai", "content": "", "tool_calls": [], "name": None, "citations": [],
        "audio": None, "id": None, "metadata": {},
    }
    assert SystemMessage(content="x").role == "system"
    assert ImagePart(url="https://x/a.png").detail is None
    assert ToolMessage(content="x").is_error is False
    assert ToolCall(name="f").args == {}


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"when": object()}, "metadata.when"),
        ({"xs": [1, (2, 3)]}, "metadata.xs[1]"),
        ({"n": float("nan")}, "metadata.n"),
        ({"deep": {1: "int key"}}, "metadata.deep"),
        ({"s": {1, 2}}, "metadata.s"),
        ({"odd key": b"bytes"}, "metadata['odd key']"),
    ],
)
def test_metadata_must_be_json_and_the_error_names_the_path(value: dict, path: str) -> None:
    with pytest.raises(TraceError) as caught:
        SystemMessage(content="x", metadata=value)
    assert (caught.value.code, caught.value.path) == ("unserializable_value", path)


def test_tool_arguments_must_be_json() -> None:
    with pytest.raises(TraceError) as caught:
        ToolCall(name="f", args={"at": object()})
    assert (caught.value.code, caught.value.path) == ("unserializable_value", "args.at")


def test_a_non_json_value_deep_in_a_sample_is_located() -> None:
    with pytest.raises(TraceError) as caught:
        MultiTurnSample(
            messages=[
                {"type": "human", "content": "hi"},
                {"type": "ai", "tool_calls": [{"name": "f", "id": "a"},
                                              {"name": "g", "id": "b", "args": {"x": {1.5j}}}]},
            ]  # type: ignore[list-item]
        )
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unserializable_value", 1, "messages[1].tool_calls[1].args.x",
    )


def test_opaque_values_must_be_json() -> None:
    with pytest.raises(TraceError) as caught:
        OpaquePart(kind="citation", value={"span": (1, 2)})
    assert (caught.value.code, caught.value.path) == ("unserializable_value", "value.span")


def test_invalid_args_leave_args_empty() -> None:
    call = ToolCall(name="f", invalid_args='{"city": ')
    assert (call.args, call.invalid_args) == ({}, '{"city": ')
    with pytest.raises(pydantic.ValidationError, match="invalid_args"):
        ToolCall(name="f", args={"city": "Paris"}, invalid_args='{"city": ')


def test_a_part_needs_a_source() -> None:
    with pytest.raises(pydantic.ValidationError, match="url, data"):
        ImagePart(mime_type="image/png")
    assert FilePart(file_id="file-1").file_id == "file-1"


def test_user_input_is_an_alias_of_messages() -> None:
    sample = MultiTurnSample(user_input=[HumanMessage(content="hi")])  # type: ignore[call-arg]
    assert sample.messages == sample.user_input == [HumanMessage(content="hi")]


def test_malformed_message_json_becomes_a_trace_error_with_index() -> None:
    with pytest.raises(TraceError) as caught:
        MultiTurnSample.model_validate(
            {"messages": [{"type": "human", "content": "hi"}, {"type": "tool"}]}
        )
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 1, "messages[1].content",
    )


def test_a_sample_keeps_its_references() -> None:
    sample = MultiTurnSample(
        messages=[HumanMessage(content="hi")],
        reference="greets back",
        reference_tool_calls=[ToolCall(name="wave", args={"times": 2})],
        reference_topics=["greetings"],
        rubrics={"role": "a polite receptionist"},
        metadata={"dataset": "smoke"},
    )
    assert MultiTurnSample.model_validate_json(sample.model_dump_json()) == sample


@given(conversations(), json_objects)
def test_json_round_trip_is_the_identity(messages: list, metadata: dict) -> None:
    sample = MultiTurnSample(messages=messages, metadata=metadata)
    text = sample.model_dump_json()
    again = MultiTurnSample.model_validate_json(text)
    assert again == sample
    assert again.model_dump_json() == text


def test_a_custom_call_holds_its_text_as_input() -> None:
    call = ToolCall(name="run_sql", args={"input": "select 1"}, id="c1", kind="custom")
    assert call.kind == "custom"
    assert ToolCall(name="f").kind == "function"
    for args in ({}, {"input": 1}, {"input": "x", "more": "y"}):
        ai = {"type": "ai",
              "tool_calls": [{"name": "run_sql", "args": args, "id": "c1", "kind": "custom"}]}
        with pytest.raises(TraceError) as caught:
            MultiTurnSample(messages=[{"type": "human", "content": "q"}, ai])
        assert (caught.value.code, caught.value.path) == (
            "malformed_event", "messages[1].tool_calls[0].kind"
        )
