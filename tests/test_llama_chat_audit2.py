"""Regression tests for the second audit of the LlamaIndex chat adapter.

* a NaN, an infinity or a dict key that is not a string inside a real ChatMessage object
  (which LlamaIndex's JSON dump writes as null, or as the key's text) is refused as the dict
  of the same message is: ``unserializable_value`` at the value;
* the writer never lets this adapter's kept metadata go over typed data, or fall with a
  Python error: ``not_representable`` at the kept key;
* nothing is shared between typed messages and the ChatMessages written from them (or the
  dicts read into them);
* ``drop=`` takes a list of names; a null ``tool_call_id`` is kept verbatim, as documented.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from llama_index.core.agent.workflow.workflow_events import AgentInput, AgentOutput
from llama_index.core.base.llms.types import (
    ImageBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from llama_index.core.llms import ChatMessage
from llama_index.core.schema import ImageDocument

from tracebridge import (
    AIMessage,
    HumanMessage,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index
from tracebridge.hashing import transcript_hash

NS = "llama_index"
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
       "rkJggg==")


def refused(convert: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        convert(*args, **kwargs)
    return caught.value.code, caught.value.index, caught.value.path


def dumps(messages: list[Any]) -> list[dict[str, Any]]:
    return [message.model_dump(mode="json") for message in messages]


def user(text: str = "q", **extra: Any) -> ChatMessage:
    return ChatMessage(role="user", content=text, additional_kwargs=extra)


def calling(**kwargs: Any) -> ChatMessage:
    return ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs=kwargs)])


def result(call_id: str = "c1") -> ChatMessage:
    return ChatMessage(role="tool", content="r", additional_kwargs={"tool_call_id": call_id})


# --- 1. NaN and infinities in objects ------------------------------------------------------


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_tool_argument_of_an_object_is_unserializable(value: float) -> None:
    history = [user(), calling(x=value, y=1), result()]
    assert history[1].blocks[0].tool_kwargs["x"] is value  # LlamaIndex keeps it
    expected = ("unserializable_value", 1, "messages[1].blocks[0].tool_kwargs.x")
    assert refused(llama_index.to_messages, history) == expected
    as_dicts = dumps(history)
    as_dicts[1]["blocks"][0]["tool_kwargs"]["x"] = value
    assert refused(llama_index.to_messages, as_dicts) == expected  # the same on the dict road


def test_a_non_finite_value_nested_in_tool_arguments_is_found_where_it_is() -> None:
    history = [user(), calling(a={"b": [1, math.nan]}), result()]
    assert refused(llama_index.to_messages, history) == (
        "unserializable_value", 1, "messages[1].blocks[0].tool_kwargs.a.b[1]")


def test_a_non_finite_additional_kwargs_value_of_an_object_is_unserializable() -> None:
    expected = ("unserializable_value", 0, "messages[0].additional_kwargs.score")
    assert refused(llama_index.to_messages, [user(score=math.nan)]) == expected
    as_dict = {"role": "user", "additional_kwargs": {"score": math.nan},
               "blocks": [{"block_type": "text", "text": "q"}]}
    assert refused(llama_index.to_messages, [as_dict]) == expected


def test_a_non_finite_value_in_a_thinking_block_of_an_object_is_unserializable() -> None:
    history = [user(), ChatMessage(role="assistant", blocks=[
        ThinkingBlock(content="t", additional_information={"score": math.inf})])]
    assert refused(llama_index.to_messages, history) == (
        "unserializable_value", 1, "messages[1].blocks[0].additional_information.score")


def test_a_non_finite_value_in_an_event_object_is_refused_where_dump_events_refuses_it() -> None:
    events = [AgentInput(input=[user()], current_agent_name="a"),
              AgentOutput(response=calling(x=math.nan), tool_calls=[], raw=None,
                          current_agent_name="a")]
    expected = ("unserializable_value", 1, "events[1].data.response.blocks[0].tool_kwargs.x")
    assert refused(llama_index.events_to_messages, events, allow_pending=True) == expected
    assert refused(llama_index.dump_events, events) == expected
    inputs = [AgentInput(input=[user(s=math.inf, n=1)], current_agent_name="a"),
              AgentOutput(response=ChatMessage(role="assistant", content="x"), tool_calls=[],
                          raw=None, current_agent_name="a")]
    assert refused(llama_index.events_to_messages, inputs) == (
        "unserializable_value", 0, "events[0].data.input[0].additional_kwargs.s")


# --- 2. keys that are not strings ----------------------------------------------------------


@pytest.mark.parametrize("extra", [{1: "a"}, {1: "a", "n": 2}, {1: "int", "1": "str", "n": 2},
                                   {True: "bool", "true": "str", "n": 0}])
def test_a_non_string_key_of_additional_kwargs_is_unserializable(extra: dict[Any, Any]) -> None:
    message = user()
    message.additional_kwargs.update(extra)  # LlamaIndex does not check assignments
    expected = ("unserializable_value", 0, "messages[0].additional_kwargs")
    assert refused(llama_index.to_messages, [message]) == expected
    as_dict = {"role": "user", "additional_kwargs": dict(extra),
               "blocks": [{"block_type": "text", "text": "q"}]}
    assert refused(llama_index.to_messages, [as_dict]) == expected


def test_nested_non_string_keys_are_unserializable_on_every_road() -> None:
    # LlamaIndex validates none of these values: it takes them as they are
    kwargs = [user(meta={1: "int key", "1": "str key"})]
    assert refused(llama_index.to_messages, kwargs) == (
        "unserializable_value", 0, "messages[0].additional_kwargs.meta")
    assert refused(llama_index.to_messages, [
        {"role": "user", "additional_kwargs": {"meta": {1: "A", "1": "B"}},
         "blocks": [{"block_type": "text", "text": "q"}]}
    ]) == ("unserializable_value", 0, "messages[0].additional_kwargs.meta")
    thinking = [user(), ChatMessage(role="assistant", blocks=[
        ThinkingBlock(content="t", additional_information={"sig": {1: "A", "1": "B"}})])]
    assert refused(llama_index.to_messages, thinking) == (
        "unserializable_value", 1, "messages[1].blocks[0].additional_information.sig")
    args = [user(), calling(m={1: "A", "1": "B"}), result()]
    assert refused(llama_index.to_messages, args) == (
        "unserializable_value", 1, "messages[1].blocks[0].tool_kwargs.m")
    as_dicts = dumps([user(), calling(), result()])
    as_dicts[1]["blocks"][0]["tool_kwargs"] = {"m": {1: "A", "1": "B"}}
    assert refused(llama_index.to_messages, as_dicts) == (
        "unserializable_value", 1, "messages[1].blocks[0].tool_kwargs.m")
    events = [AgentInput(input=[user()], current_agent_name="a"),
              AgentOutput(response=calling(m={1: "A", "1": "B"}), tool_calls=[], raw=None,
                          current_agent_name="a")]
    expected = ("unserializable_value", 1, "events[1].data.response.blocks[0].tool_kwargs.m")
    assert refused(llama_index.events_to_messages, events, allow_pending=True) == expected
    assert refused(llama_index.dump_events, events) == expected


# --- 3. kept metadata never goes over typed data -------------------------------------------

H = HumanMessage(content="q")
A = AIMessage(content="", tool_calls=[ToolCall(name="f", id="c1")])


def test_content_is_null_is_refused_beside_reasoning_text() -> None:
    typed = llama_index.to_messages([user(), ChatMessage(role="assistant", blocks=[
        ThinkingBlock(content=None, num_tokens=5)])])
    part = typed[1].content[0]
    assert part == ReasoningPart(text="", metadata={NS: {"content_is_null": True,
                                                         "num_tokens": 5}})
    assert dumps(llama_index.from_messages(typed))[1]["blocks"] == [
        {"block_type": "thinking", "content": None, "num_tokens": 5,
         "additional_information": {}}]
    edited = AIMessage(content=[part.model_copy(update={"text": "the summarised reasoning"})])
    assert refused(llama_index.from_messages, [typed[0], edited]) == (
        "not_representable", 1, "messages[1].content[0].metadata.llama_index.content_is_null")


@pytest.mark.parametrize("key", ["name", "foo", ["x"], None])
def test_a_tool_call_id_key_no_reader_writes_is_not_representable(key: Any) -> None:
    tool = ToolMessage(content="r", tool_call_id="c1", name="lookup",
                       metadata={NS: {"tool_call_id_key": key}})
    assert refused(llama_index.from_messages, [H, A, tool]) == (
        "not_representable", 2, "messages[2].metadata.llama_index.tool_call_id_key")


def test_the_call_id_key_is_still_written() -> None:
    history = [user(), calling(), ChatMessage(role="tool", content="r",
                                              additional_kwargs={"call_id": "c1"})]
    typed = llama_index.to_messages(history)
    assert typed[2] == ToolMessage(content="r", tool_call_id="c1",
                                   metadata={NS: {"tool_call_id_key": "call_id"}})
    assert dumps(llama_index.from_messages(typed)) == dumps(history)


@pytest.mark.parametrize(("entry", "key"), [
    ({"type": "function", "id": "zzz", "function": {}}, "id"),
    ({"tool_kwargs": {}, "tool_id": "zzz"}, "tool_id"),
    ({"type": "custom", "id": "zzz", "custom": {}}, "id"),
])
def test_a_kept_entry_id_on_a_call_without_one_is_not_representable(
    entry: dict[str, Any], key: str
) -> None:
    kind = "custom" if entry.get("type") == "custom" else "function"
    args = {"input": "x"} if kind == "custom" else {}
    call = ToolCall(name="f", args=args, kind=kind, metadata={NS: {"entry": entry}})
    messages = [H, AIMessage(content="", tool_calls=[call]), ToolMessage(content="r")]
    assert refused(llama_index.from_messages, messages) == (
        "not_representable", 1, f"messages[1].tool_calls[0].metadata.llama_index.entry.{key}")


def test_a_kept_null_entry_id_on_a_call_without_one_is_written_back() -> None:
    history = [user(), ChatMessage(role="assistant", content="", additional_kwargs={
        "tool_calls": [{"id": None, "type": "function",
                        "function": {"name": "f", "arguments": "{}"}}]}),
        ChatMessage(role="tool", content="r")]
    typed = llama_index.to_messages(history)
    assert typed[1].tool_calls == [ToolCall(name="f", metadata={NS: {
        "entry": {"id": None, "type": "function", "function": {"arguments": "{}"}},
        "entry_index": 0, "in_blocks": False}})]
    assert dumps(llama_index.from_messages(typed)) == dumps(history)


@pytest.mark.parametrize(("images", "path"), [
    ([{"x": 1}], "messages[0].metadata.llama_index.additional_kwargs.images[0]"),
    ([1], "messages[0].metadata.llama_index.additional_kwargs.images[0]"),
    ("abc", "messages[0].metadata.llama_index.additional_kwargs.images"),
])
def test_kept_legacy_images_that_are_no_image_documents_are_not_representable(
    images: Any, path: str
) -> None:
    message = HumanMessage(content="a", metadata={NS: {"additional_kwargs": {"images": images}}})
    assert refused(llama_index.from_messages, [message]) == ("not_representable", 0, path)


def test_kept_legacy_images_are_still_written_back() -> None:
    history = [ChatMessage(role="user", content="see",
                           additional_kwargs={"images": [ImageDocument(image=PNG)]})]
    typed = llama_index.to_messages(history)
    assert dumps(llama_index.from_messages(typed)) == dumps(history)


# --- 4. nothing shared ---------------------------------------------------------------------


@pytest.mark.parametrize("metadata", [{}, {NS: {}}])
def test_written_tool_arguments_share_nothing_with_the_typed_call(
    metadata: dict[str, Any]
) -> None:
    typed = [H, AIMessage(content="", tool_calls=[ToolCall(
        name="f", args={"filters": {"city": "Paris"}, "ids": [1, 2]}, id="c1",
        metadata=metadata)]), ToolMessage(content="r", tool_call_id="c1")]
    before = transcript_hash(typed)
    kwargs = llama_index.from_messages(typed)[1].blocks[-1].tool_kwargs
    kwargs["filters"]["city"] = "Berlin"
    kwargs["ids"].append(3)
    assert typed[1].tool_calls[0].args == {"filters": {"city": "Paris"}, "ids": [1, 2]}
    assert transcript_hash(typed) == before


def test_written_kept_values_share_nothing_with_the_typed_messages() -> None:
    typed = llama_index.to_messages([user(extra={"a": [1]})])
    llama_index.from_messages(typed)[0].additional_kwargs["extra"]["a"].append(2)
    assert typed[0].metadata == {NS: {"additional_kwargs": {"extra": {"a": [1]}}}}

    info = {NS: {"additional_information": {"sig": {"parts": ["a"]}}}}
    typed = [H, AIMessage(content=[ReasoningPart(text="t", metadata=info)])]
    llama_index.from_messages(typed)[1].blocks[0].additional_information["sig"]["parts"].append(
        "EDITED")
    assert typed[1].content[0].metadata == info

    block = {"block_type": "tool_call", "tool_call_id": "x", "tool_name": "f",
             "tool_kwargs": {"a": {"b": [1]}}}
    typed = [HumanMessage(content=[TextPart(text="q"), OpaquePart(kind="tool_call",
                                                                    value=block)])]
    llama_index.from_messages(typed)[0].blocks[1].tool_kwargs["a"]["b"].append(2)
    assert typed[0].content[1].value["tool_kwargs"] == {"a": {"b": [1]}}

    selection = {"tool_kwargs": {"a": {"b": [1]}}}
    call = ToolCall(name="f", args={"a": {"b": [1]}}, id="c1",
                    metadata={NS: {"entry": selection, "entry_index": 0, "in_blocks": False}})
    typed = [H, AIMessage(content="", tool_calls=[call]), ToolMessage(content="r",
                                                                        tool_call_id="c1")]
    written = llama_index.from_messages(typed)[1].additional_kwargs["tool_calls"][0]
    written["tool_kwargs"]["a"]["b"].append(2)
    assert typed[1].tool_calls[0].args == {"a": {"b": [1]}}


def test_read_kept_values_share_nothing_with_the_source_dicts() -> None:
    source = [{"role": "user", "additional_kwargs": {"x": {"a": [1]}},
               "blocks": [{"block_type": "text", "text": "q"}]}]
    typed = llama_index.to_messages(source)
    source[0]["additional_kwargs"]["x"]["a"].append("EDITED")
    assert typed[0].metadata == {NS: {"additional_kwargs": {"x": {"a": [1]}}}}


# --- 5. odd kept metadata: not_representable, never a Python error -------------------------


@pytest.mark.parametrize(("messages", "index", "path"), [
    ([HumanMessage(content="q", metadata={NS: {"role": ["user"]}})], 0,
     "messages[0].metadata.llama_index.role"),
    ([HumanMessage(content="q", metadata={NS: {"role": {}}})], 0,
     "messages[0].metadata.llama_index.role"),
    ([H, A, ToolMessage(content="r", tool_call_id="c1",
                        metadata={NS: {"tool_call_id_key": ["x"]}})], 2,
     "messages[2].metadata.llama_index.tool_call_id_key"),
    ([H, AIMessage(content="a", metadata={NS: {"layout": ["part", "x"]}})], 1,
     "messages[1].metadata.llama_index.layout"),
    ([H, AIMessage(content="a", tool_calls=[ToolCall(name="f", id="c1")],
                   metadata={NS: {"layout": ["call", "part", None]}}),
      ToolMessage(content="r", tool_call_id="c1")], 1, "messages[1].metadata.llama_index.layout"),
    ([HumanMessage(content="q", metadata={NS: {"additional_kwargs": ["x"]}})], 0,
     "messages[0].metadata.llama_index.additional_kwargs"),
    ([HumanMessage(content="q", metadata={NS: [1]})], 0, "messages[0].metadata.llama_index"),
    ([HumanMessage(content=[ReasoningPart(text="t", metadata={NS: "x"})])], 0,
     "messages[0].content[0].metadata.llama_index"),
    ([H, AIMessage(content="", tool_calls=[ToolCall(name="f", id="c1", metadata={NS: 1})]),
      ToolMessage(content="r", tool_call_id="c1")], 1,
     "messages[1].tool_calls[0].metadata.llama_index"),
])
def test_odd_kept_metadata_is_not_representable(
    messages: list[Any], index: int, path: str
) -> None:
    assert refused(llama_index.from_messages, messages) == ("not_representable", index, path)


def test_a_layout_still_orders_calls_and_parts() -> None:
    history = [user(), ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={}),
        ImageBlock(image=PNG.encode(), image_mimetype="image/png")]), result()]
    typed = llama_index.to_messages(history)
    assert typed[1].metadata == {NS: {"layout": ["call", "part"]}}
    assert dumps(llama_index.from_messages(typed)) == dumps(history)


# --- 6. drop= takes a list of names --------------------------------------------------------


@pytest.mark.parametrize("drop", [None, 5, "is_error", b"is_error"])
def test_drop_that_is_not_a_list_of_names_is_a_value_error(drop: Any) -> None:
    conversation = [H, A, ToolMessage(content="boom", tool_call_id="c1", is_error=True)]
    with pytest.raises(ValueError, match=r"^drop= takes a list of names from \('is_error'"):
        llama_index.from_messages(conversation, drop=drop)
    written = llama_index.from_messages(conversation, drop=("is_error",))
    assert dumps(written)[2]["additional_kwargs"] == {"tool_call_id": "c1"}


# --- 7. a null tool_call_id is kept verbatim -----------------------------------------------


def test_a_null_tool_call_id_is_kept_verbatim() -> None:
    history = [user(), calling(), ChatMessage(role="tool", content="r",
                                              additional_kwargs={"tool_call_id": None})]
    typed = llama_index.to_messages(history)
    assert typed[2] == ToolMessage(content="r",
                                   metadata={NS: {"additional_kwargs": {"tool_call_id": None}}})
    assert dumps(llama_index.from_messages(typed)) == dumps(history)


@pytest.mark.parametrize("extra", [{"tool_call_id": "c1", "call_id": None},
                                   {"tool_call_id": None, "call_id": "c1"}])
def test_a_null_beside_the_call_id_is_kept_verbatim(extra: dict[str, Any]) -> None:
    history = [user(), calling(), ChatMessage(role="tool", content="r",
                                              additional_kwargs=dict(extra))]
    typed = llama_index.to_messages(history)
    null = next(key for key, value in extra.items() if value is None)
    kept: dict[str, Any] = {"additional_kwargs": {null: None}}
    if null == "tool_call_id":
        kept["tool_call_id_key"] = "call_id"
    assert typed[2] == ToolMessage(content="r", tool_call_id="c1", metadata={NS: kept})
    assert dumps(llama_index.from_messages(typed)) == dumps(history)
    as_dicts = dumps(history)
    assert llama_index.to_messages(as_dicts) == typed


def test_a_tool_call_id_of_another_type_is_still_malformed() -> None:
    history = [user(), calling(), ChatMessage(role="tool", content="r",
                                              additional_kwargs={"tool_call_id": 5})]
    assert refused(llama_index.to_messages, history) == (
        "malformed_event", 2, "messages[2].additional_kwargs.tool_call_id")


# --- 8. a Python-mode dump ----------------------------------------------------------------


def test_a_python_mode_dump_is_refused_saying_which_dump_to_use() -> None:
    dumped = [ChatMessage(role="user", content="q").model_dump()]
    assert llama_index.detect(dumped)
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(dumped)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unknown_role", 0, "messages[0].role")
    assert "model_dump(mode='json')" in str(caught.value)
