"""The fast paths of the llama_index adapter give exactly what the general paths give.

``_fast`` reads the common ChatMessage shapes (objects and dicts) into typed messages and
writes typed messages in the common shapes as ChatMessage objects built without LlamaIndex's
validating constructor. Whatever a fast path takes, its result must equal the general path's
field for field (the fields set included, on every nested model); what it hands back (None)
is left to the general path, which gives the same message or the error.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
from pydantic import BaseModel

from tracebridge import AIMessage, HumanMessage, Message, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import llama_index
from tracebridge.adapters.llama_index import _events, _fast
from tracebridge.adapters.llama_index import _messages as general
from tracebridge.adapters.llama_index._blocks import llama_types

from law_kits.llama_index import chat_histories, typed_conversations
from strategies import Shape, conversations

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "llama_index"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def same(made: Any, expected: Any) -> bool:
    """Equal values, and for pydantic models the same class, fields, fields set, extra and
    private values all the way down (``==`` alone does not look at the fields set)."""
    if isinstance(expected, BaseModel):
        return (
            type(made) is type(expected)
            and made.__pydantic_fields_set__ == expected.__pydantic_fields_set__
            and made.__pydantic_extra__ == expected.__pydantic_extra__
            and made.__pydantic_private__ == expected.__pydantic_private__
            and made.__dict__.keys() == expected.__dict__.keys()
            and all(same(value, expected.__dict__[key]) for key, value in made.__dict__.items())
        )
    if isinstance(expected, list):
        return (type(made) is list and len(made) == len(expected)
                and all(map(same, made, expected)))
    if isinstance(expected, dict):
        return (type(made) is dict and made.keys() == expected.keys()
                and all(same(made[key], expected[key]) for key in expected))
    return type(made) is type(expected) and bool(made == expected)


def general_read(item: Any, index: int) -> Any:
    """The general reader alone: the typed message, or the error code."""
    dump = general.chat_message_dump(item) if general.is_chat_message(item) else item
    try:
        return general.message_from_dump(dump, index, f"messages[{index}]")
    except TraceError as error:
        return error.code


def check_read(trace: list[Any]) -> int:
    """How many items took the fast path; each equals the general reader's message."""
    taken = 0
    for i, item in enumerate(trace):
        is_object = isinstance(item, ChatMessage)
        before = item.model_dump() if is_object else copy.deepcopy(item)
        read = _fast.read_item(item)
        assert (item.model_dump() if is_object else item) == before  # its input left alone
        if not is_object:
            assert same(_fast.read_dump(item), read)  # the shortcut agrees with the reader
        if read is not None:
            taken += 1
            expected = general_read(item, i)
            assert same(read, expected), (item, read, expected)
    return taken


def golden_traces() -> list[list[Any]]:
    return [json.loads(path.read_text(encoding="utf-8"))["trace"]
            for path in sorted(GOLDEN.glob("*.json"))]


def test_the_fast_reader_takes_the_golden_messages_it_can_and_agrees() -> None:
    taken = sum(check_read(trace) for trace in golden_traces())
    assert taken >= 20


def test_the_fast_reader_agrees_on_objects_of_the_golden_messages() -> None:
    taken = 0
    for trace in golden_traces():
        objects = []
        for dump in trace:
            if not dump["additional_kwargs"].get("images"):
                objects.append(ChatMessage.model_validate(dump))
        taken += check_read(objects)
    assert taken >= 20


@given(chat_histories())
def test_the_fast_reader_agrees_on_generated_histories(trace: list[Any]) -> None:
    check_read(trace)


# Common shapes, and one step off them: what the general path keeps in metadata or refuses.
ODD_DUMPS: list[Any] = [
    {"role": "user", "blocks": [{"block_type": "text", "text": "hi"}]},  # no kwargs at all
    {"role": "user", "additional_kwargs": {}, "blocks": []},
    {"role": "user", "additional_kwargs": {}, "blocks": [
        {"block_type": "text", "text": "a"}, {"block_type": "text", "text": "b"}]},
    {"role": "developer", "additional_kwargs": {"name": "ops"}, "blocks": [
        {"block_type": "text", "text": "be brief"}]},
    {"role": "system", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "s"}]},
    {"role": "tool", "additional_kwargs": {"name": "f"}, "blocks": [
        {"block_type": "text", "text": "r"}]},
    {"role": "tool", "additional_kwargs": {"call_id": "c"}, "blocks": [
        {"block_type": "text", "text": "r"}]},
    {"role": "tool", "additional_kwargs": {"tool_call_id": 3}, "blocks": []},
    {"role": "function", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "r"}]},
    {"role": "chatbot", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "a"}]},
    {"role": "nobody", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": "a"}]},
    {"role": "user", "additional_kwargs": {"name": 3}, "blocks": []},
    {"role": "user", "additional_kwargs": {"tool_call_id": "c"}, "blocks": []},
    {"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text", "text": 3}]},
    {"role": "user", "additional_kwargs": {}, "blocks": [
        {"block_type": "text", "text": "t", "extra": 1}]},
    {"role": "user", "additional_kwargs": [], "blocks": []},
    {"role": "user", "additional_kwargs": {}, "blocks": {}},
    {"role": "user", "additional_kwargs": {}, "blocks": [], "extra": 1},
    {"role": "user", "additional_kwargs": {}},
    {"role": "user", "additional_kwargs": {}, "blocks": [
        {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "f",
         "tool_kwargs": {"a": 1}}]},
    {"role": "assistant", "additional_kwargs": {}, "blocks": [
        {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "f", "tool_kwargs": {}}]},
    {"role": "assistant", "additional_kwargs": {}, "blocks": [
        {"block_type": "tool_call", "tool_call_id": None, "tool_name": "f",
         "tool_kwargs": {"a": 1}}]},
    {"role": "assistant", "additional_kwargs": {}, "blocks": [
        {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "f",
         "tool_kwargs": '{"a": 1}'}]},
    {"role": "assistant", "additional_kwargs": {}, "blocks": [
        {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "f",
         "tool_kwargs": {"a": float("nan")}}]},
    {"role": "assistant", "additional_kwargs": {}, "blocks": [
        {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "f",
         "tool_kwargs": {"a": {"b": [1, 2.5, None]}}}]},
    {"role": "assistant", "additional_kwargs": {}, "blocks": [
        {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "f",
         "tool_kwargs": {"a": 1}},
        {"block_type": "text", "text": "after the call"}]},
    {"role": "assistant", "additional_kwargs": {"refusal": "no"}, "blocks": [
        {"block_type": "text", "text": "t"}]},
    {"role": "assistant", "additional_kwargs": {"name": "bot"}, "blocks": [
        {"block_type": "text", "text": "t"},
        {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "f",
         "tool_kwargs": {"a": 1}}]},
    {"role": "assistant", "additional_kwargs": {}, "blocks": [
        {"block_type": "image", "url": "https://example.com/a.png"}]},
    {"role": "assistant", "additional_kwargs": {}, "blocks": ["text"]},
    "not a message",
]


@pytest.mark.parametrize("dump", ODD_DUMPS)
def test_the_fast_reader_agrees_or_hands_back(dump: Any) -> None:
    check_read([dump])


def test_the_fast_reader_hands_back_what_the_general_reader_keeps_or_refuses() -> None:
    for dump in ODD_DUMPS:
        expected = general_read(dump, 0)
        kept = isinstance(expected, str) or bool(expected.metadata)
        if kept:
            assert _fast.read_item(dump) is None, dump


def test_a_response_reads_as_the_general_path_reads_it() -> None:
    for dump in ODD_DUMPS + [m.model_dump(mode="json") for m in _plain_history(30)]:
        fast = _fast.response_read(dump, "agent")
        if fast is None:
            continue
        general = _events._Rebuild().response(copy.deepcopy(dump), "agent", 0, "events[0].data")
        assert same(fast, general), dump


def _tool_output_blocks() -> list[list[Any]]:
    """Block lists of every shape above, and of the golden messages (dicts)."""
    found = [dump["blocks"] for dump in ODD_DUMPS
             if isinstance(dump, dict) and isinstance(dump.get("blocks"), list)]
    return found + [dump["blocks"] for trace in golden_traces() for dump in trace]


def test_a_tool_output_reads_as_the_general_path_reads_it() -> None:
    taken = 0
    for blocks in _tool_output_blocks():
        fast = _fast.dump_blocks(blocks, False)
        try:
            _, fields = general.message_fields({"role": "tool", "blocks": blocks}, 0, "x")
        except TraceError:
            assert fast is None
            continue
        if fast is not None:
            taken += 1
            assert fast[1] == []
            assert same(fast[0], fields["content"]), blocks
    assert taken >= 20


def test_tool_output_objects_read_as_their_dumps() -> None:
    taken = 0
    for blocks in _tool_output_blocks():
        try:
            objects = ChatMessage.model_validate({"role": "tool", "blocks": blocks}).blocks
        except ValueError:
            continue
        fast = _fast.object_blocks(objects, False)
        if fast is not None:
            taken += 1
            dump = {"role": "tool", "blocks": general.blocks_dump(objects)}
            _, fields = general.message_fields(dump, 0, "x")
            assert fast[1] == []
            assert same(fast[0], fields["content"]), blocks
    assert taken >= 20


def test_a_str_subclass_role_is_left_to_the_general_reader() -> None:
    role = llama_types().MessageRole.USER  # a str enum in a dict is not a JSON role
    dump = {"role": role, "additional_kwargs": {}, "blocks": [{"block_type": "text",
                                                               "text": "x"}]}
    assert _fast.read_item(dump) is None
    assert _fast.read_dump(dump) is None
    assert general_read(dump, 0) == "unknown_role"


def _plain_history(size: int) -> list[Any]:
    """The ChatMessages of a plain conversation (text, calls with ids, results)."""
    import sys

    sys.path.insert(0, str(BENCHMARKS))
    try:
        import _inputs
    finally:
        sys.path.remove(str(BENCHMARKS))
    return llama_index.from_messages(_inputs.conversation(size))


def test_the_plain_history_takes_the_fast_paths_throughout() -> None:
    history = _plain_history(40)
    assert check_read(history) == len(history)
    assert check_read([m.model_dump(mode="json") for m in history]) == len(history)


def test_a_read_call_shares_no_dict_with_its_block() -> None:
    block = {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "f",
             "tool_kwargs": {"a": {"b": 1}}}
    dump = {"role": "assistant", "additional_kwargs": {}, "blocks": [block]}
    for item in (dump, ChatMessage.model_validate(dump)):
        read = _fast.read_item(item)
        assert isinstance(read, AIMessage)
        assert read.tool_calls[0].args == {"a": {"b": 1}}
        kwargs = block["tool_kwargs"] if item is dump else item.blocks[0].tool_kwargs
        assert read.tool_calls[0].args is not kwargs
        assert read.tool_calls[0].args["a"] is not kwargs["a"]


# --- writing ------------------------------------------------------------------------------


def general_write(message: Message, k: int, drop: frozenset[str]) -> Any:
    """The general writer alone: the ChatMessage LlamaIndex validates, or the error code."""
    try:
        return llama_index._chat_message(
            llama_types(), general.dump_from_message(message, k, drop), k
        )
    except TraceError as error:
        return error.code


def check_write(messages: list[Message], drop: frozenset[str] = frozenset()) -> int:
    taken = 0
    for k, message in enumerate(messages):
        made = _fast.write(message, drop)
        if made is not None:
            taken += 1
            expected = general_write(message, k, drop)
            assert same(made, expected), (message, made, expected)
            assert made == expected
    return taken


def test_the_installed_llama_index_builds_objects_as_the_fast_writer_does() -> None:
    assert _fast.writer() is _fast.write


@given(typed_conversations(), st.sampled_from([frozenset(), frozenset({"is_error"})]))
def test_the_fast_writer_agrees_on_generated_conversations(
    messages: list[Message], drop: frozenset[str]
) -> None:
    check_write(messages, drop)


@given(conversations(Shape()), st.sampled_from([frozenset(), frozenset({"is_error"})]))
def test_the_fast_writer_agrees_on_plain_conversations(
    messages: list[Message], drop: frozenset[str]
) -> None:
    check_write(messages, drop)


def test_the_fast_writer_takes_the_plain_history_and_the_goldens_it_can() -> None:
    plain = llama_index.to_messages(_plain_history(40))
    assert check_write(plain) == len(plain)
    taken = sum(check_write(llama_index.to_messages(trace), frozenset({"is_error"}))
                for trace in golden_traces())
    assert taken >= 20


@pytest.mark.parametrize(
    "message",
    [
        ToolMessage(content="boom", tool_call_id="c", is_error=True),
        AIMessage(content="", tool_calls=[ToolCall(name="f", invalid_args="{")]),
        AIMessage(content="", tool_calls=[ToolCall(name="f", args={"input": "x"}, kind="custom")]),
        AIMessage(content="", tool_calls=[ToolCall(name="f", metadata={"llama_index": {}})]),
        HumanMessage(content="hi", metadata={"llama_index": {"role": "chatbot"}}),
    ],
)
def test_the_fast_writer_hands_back_what_needs_the_general_writer(message: Message) -> None:
    assert _fast.write(message, frozenset()) is None


def test_a_written_message_shares_no_dict_with_the_typed_message() -> None:
    call = ToolCall(name="f", args={"a": 1}, id="c")
    (fast,) = llama_index.from_messages([AIMessage(content="hi", tool_calls=[call])])
    assert fast.blocks[1].tool_kwargs == call.args
    assert fast.blocks[1].tool_kwargs is not call.args  # as the validator copies it
    fast.blocks[1].tool_kwargs["a"] = 2
    assert call.args == {"a": 1}


def test_a_written_message_is_a_working_llama_index_object() -> None:
    (made,) = llama_index.from_messages([AIMessage(
        content="hi", name="bot", tool_calls=[ToolCall(name="f", args={"a": 1}, id="c")])])
    made.blocks.append(TextBlock(text="more"))  # its fields set and lists are its own
    made.additional_kwargs["x"] = "y"
    assert "additional_kwargs" in made.model_fields_set
    (again,) = llama_index.from_messages([AIMessage(
        content="hi", name="bot", tool_calls=[ToolCall(name="f", args={"a": 1}, id="c")])])
    assert again.blocks == [TextBlock(text="hi"), ToolCallBlock(
        tool_call_id="c", tool_name="f", tool_kwargs={"a": 1})]
    assert again.model_dump(mode="json") == ChatMessage.model_validate(
        again.model_dump(mode="json")).model_dump(mode="json")
    assert again.content == "hi"
