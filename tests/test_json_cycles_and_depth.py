"""A value that holds itself, or one nested past Python's depth, has no JSON form here: every
reader refuses it as ``unserializable_value`` where it is. Before, the JSON check walked a
cycle forever (a reader never returned), and LangChain's fast path let a RecursionError out.

A JSON value nests at most ``MAX_DEPTH`` (128) levels. pydantic's JSON reader stops at
about 200 levels counting the sample around a value, Python's ``json`` at about a thousand:
before, a deeper value was taken in, and then its sample's own JSON did not read back
(``model_validate_json`` refused it) or its transcript hash raised a raw RecursionError.
Every reader refuses it where it is, as ``unserializable_value``; argument text nested that
deep is kept verbatim as ``invalid_args`` by the Chat Completions reader, as text it cannot
parse is.
"""

from __future__ import annotations

from typing import Any

import langchain_core.messages as lc
import pytest

from tracebridge import (
    AIMessage,
    HumanMessage,
    MultiTurnSample,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge._json import MAX_DEPTH, NotPlainJson, check_json, json_copy_checked
from tracebridge.adapters import langchain, openai_chat, swarm


def _cyclic(kind: str) -> Any:
    if kind == "list":
        value: Any = []
        value.append(["inner", value])
        return value
    value = {}
    value["inner"] = {"again": value}
    return value


def _deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


def _refused(read: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        read()
    return caught.value.code, caught.value.index, caught.value.path


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_a_value_that_holds_itself_is_not_json(kind: str) -> None:
    assert _refused(lambda: check_json({"a": _cyclic(kind)}, "here")) == (
        "unserializable_value", None, "here.a")
    with pytest.raises(NotPlainJson):
        json_copy_checked({"a": _cyclic(kind)})


def test_a_value_nested_past_the_bound_is_refused_where_it_is() -> None:
    # JSON, but deeper than JSON readers go (tracebridge._json.MAX_DEPTH; see
    # test_json_depth_bound.py): refused at the value
    assert _refused(lambda: check_json({"a": _deep(5000)}, "here")) == (
        "unserializable_value", None, "here.a")


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_openai_chat_refuses_a_value_that_holds_itself(kind: str) -> None:
    trace = [{"role": "user", "content": "x", "vendor": _cyclic(kind)}]
    assert _refused(lambda: openai_chat.to_messages(trace)) == (
        "unserializable_value", 0, "messages[0].vendor")


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_langchain_refuses_a_value_that_holds_itself_where_it_is(kind: str) -> None:
    kwargs = [lc.HumanMessage(content="x", additional_kwargs={"vendor": _cyclic(kind)})]
    assert _refused(lambda: langchain.to_messages(kwargs)) == (
        "unserializable_value", 0, "messages[0].additional_kwargs.vendor")
    calls = [
        lc.HumanMessage(content="x"),
        lc.AIMessage(content="", tool_calls=[{"name": "f", "args": {"a": _cyclic(kind)},
                                              "id": "c1"}]),
        lc.ToolMessage(content="ok", tool_call_id="c1"),
    ]
    assert _refused(lambda: langchain.to_messages(calls)) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.a")


def test_langchain_refuses_a_value_nested_past_pythons_depth() -> None:
    trace = [lc.HumanMessage(content="x", additional_kwargs={"vendor": _deep(5000)})]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "unserializable_value", 0, "messages[0].additional_kwargs.vendor")


def test_the_bound_is_128_levels() -> None:
    assert MAX_DEPTH == 128
    check_json(_deep(128), "here")
    assert json_copy_checked(_deep(128)) == _deep(128)
    assert _refused(lambda: check_json(_deep(129), "here")) == (
        "unserializable_value", None, "here[0]")
    with pytest.raises(NotPlainJson):
        json_copy_checked(_deep(129))


def test_objects_count_as_levels_too() -> None:
    value: Any = 1
    for _ in range(128):
        value = {"a": value}
    check_json(value, "here")
    assert _refused(lambda: check_json({"b": value}, "here")) == (
        "unserializable_value", None, "here.b")


def test_a_sample_holding_the_deepest_values_in_its_deepest_places_reads_back() -> None:
    deepest = {"a": _deep(127)}  # 128 levels, the object one of them
    sample = MultiTurnSample(
        messages=[
            HumanMessage(content="x", metadata=deepest),
            AIMessage(tool_calls=[ToolCall(name="f", id="c1", args=deepest,
                                           metadata=deepest)]),
            ToolMessage(content="ok", tool_call_id="c1"),
        ],
        reference_tool_calls=[ToolCall(name="f", args=deepest)],
    )
    assert sample.transcript_hash().startswith("tb1:")
    assert MultiTurnSample.model_validate_json(sample.model_dump_json()) == sample


def test_the_typed_model_refuses_a_value_past_the_bound() -> None:
    assert _refused(lambda: ToolCall(name="f", args={"a": _deep(128)})) == (
        "unserializable_value", None, "args.a")
    assert _refused(lambda: HumanMessage(content="x", metadata={"a": 1, "b": [_deep(1000)]})) == (
        "unserializable_value", None, "metadata.b")


def test_langchain_refuses_arguments_past_the_bound_where_they_are() -> None:
    trace = [
        lc.HumanMessage(content="x"),
        lc.AIMessage(content="", tool_calls=[{"name": "f", "args": {"a": _deep(128)},
                                              "id": "c1"}]),
        lc.ToolMessage(content="ok", tool_call_id="c1"),
    ]
    assert _refused(lambda: langchain.to_messages(trace)) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.a")


@pytest.mark.parametrize("adapter", [openai_chat, swarm])
def test_dict_readers_refuse_a_kept_value_past_the_bound(adapter: Any) -> None:
    trace = [{"role": "user", "content": "x", "vendor": _deep(300)}]
    assert _refused(lambda: adapter.to_messages(trace)) == (
        "unserializable_value", 0, "messages[0].vendor")


def _calling(arguments: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "f", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]


@pytest.mark.parametrize("levels", [129, 300, 5000])
def test_argument_text_past_the_bound_is_kept_as_invalid_args(levels: int) -> None:
    text = '{"a": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}"
    trace = _calling(text)
    call = openai_chat.to_messages(trace)[1].tool_calls[0]
    assert (call.args, call.invalid_args) == ({}, text)
    assert openai_chat.from_messages(openai_chat.to_messages(trace)) == trace


def test_argument_text_at_the_bound_is_read_as_arguments() -> None:
    text = '{"a": ' + "[" * 127 + "]" * 127 + "}"
    inside: Any = []
    for _ in range(126):
        inside = [inside]
    call = openai_chat.to_messages(_calling(text))[1].tool_calls[0]
    assert (call.args, call.invalid_args) == ({"a": inside}, None)
