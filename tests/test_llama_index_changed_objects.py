"""LlamaIndex objects whose fields were changed after they were made.

LlamaIndex does not check assignments, so a ChatMessage, a block or an event can hold what no
LlamaIndex constructor accepts. Reading one gives the conversation or a ``TraceError`` at the
field, never another exception, and the fast paths and the general ones agree on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from changed_objects import VALUES, change_one, outcome
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core.agent import workflow
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock, ToolCallBlock
from llama_index.core.tools import ToolOutput

from tracebridge import (
    AIMessage,
    HumanMessage,
    ImagePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index
from tracebridge.adapters.llama_index import _events


def history() -> list[Any]:
    return [
        ChatMessage(role="system", content="be brief"),
        ChatMessage(role="user", content="find q"),
        ChatMessage(role="user", blocks=[TextBlock(text="see"),
                                         ImageBlock(url="https://x.test/a.png")]),
        ChatMessage(role="assistant", blocks=[
            TextBlock(text="ok"),
            ToolCallBlock(tool_call_id="c1", tool_name="s", tool_kwargs={"q": 1}),
        ]),
        ChatMessage(role="tool", content="found",
                    additional_kwargs={"tool_call_id": "c1", "name": "s"}),
        ChatMessage(role="assistant", content="done", additional_kwargs={"name": "bot"}),
    ]


def events() -> list[Any]:
    """A FunctionAgent run: the reply object is both the AgentOutput's response and an item
    of the next AgentInput, as in a real stream."""
    prompt = [ChatMessage(role="system", content="be brief"),
              ChatMessage(role="user", content="go")]
    reply = ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c0", tool_name="f", tool_kwargs={"k": 0})])
    output = ToolOutput(content="r0", tool_name="f", raw_input={}, raw_output="r0")
    result = ChatMessage(role="tool", content="r0", additional_kwargs={"tool_call_id": "c0"})
    return [
        workflow.AgentInput(input=list(prompt), current_agent_name="a"),
        workflow.AgentOutput(response=reply, tool_calls=[], raw=None, current_agent_name="a"),
        workflow.ToolCallResult(tool_name="f", tool_kwargs={"k": 0}, tool_id="c0",
                                tool_output=output, return_direct=False),
        workflow.AgentInput(input=[*prompt, reply, result,
                                   ChatMessage(role="user", content="next")],
                            current_agent_name="a"),
        workflow.AgentOutput(response=ChatMessage(role="assistant", content="done"),
                             tool_calls=[], raw=None, current_agent_name="a"),
    ]


class _Miss(dict[Any, Any]):
    """An event-class cache that never knows a class: every event is read the general way."""

    def get(self, key: Any, default: Any = None) -> Any:
        return default


@contextmanager
def general_only() -> Iterator[None]:
    """Every fast path off: ChatMessages read from their dumps, events from their fields."""
    with mock.patch.object(llama_index, "read_item", return_value=None), \
            mock.patch.object(_events, "read_item", return_value=None), \
            mock.patch.object(_events, "object_blocks", return_value=None), \
            mock.patch.object(_events, "response_read", return_value=None), \
            mock.patch.object(_events, "dump_blocks", return_value=None), \
            mock.patch.object(_events, "_OBJECT_READERS", _Miss()):
        yield


def both(read: Callable[[Any], Any], trace: list[Any]) -> Any:
    """What the fast paths give, once the general ones are seen to give the same."""
    fast = outcome(read, trace)
    with general_only():
        assert outcome(read, trace) == fast
    return fast


_CHANGED = "holds what LlamaIndex does not make (was a field changed after it was made?)"


@pytest.mark.parametrize(
    ("change", "path", "said"),
    [
        (lambda t: setattr(t[1], "blocks", None), "messages[1].blocks",
         f"this ChatMessage {_CHANGED}: Input should be a valid list"),
        (lambda t: t[1].blocks.__setitem__(0, 5), "messages[1].blocks[0]",
         "Input should be a valid dictionary or object"),
        (lambda t: setattr(t[2].blocks[1], "block_type", "text"), "messages[2].blocks[1].detail",
         "a text block has no field 'detail'"),
        (lambda t: setattr(t[2].blocks[0], "text", None), "messages[2].blocks[0].text",
         "a text block needs 'text' as a string, got None"),
        (lambda t: setattr(t[3].blocks[1], "tool_name", None), "messages[3].blocks[1].tool_name",
         "a tool_call block needs 'tool_name' as a string, got None"),
        (lambda t: setattr(t[2].blocks[1], "url", 5), "messages[2].blocks[1].url",
         "'url' must be a string or null, got int 5"),
        (lambda t: setattr(t[1], "additional_kwargs", []), "messages[1].additional_kwargs",
         "expected a dict, got list []"),
    ],
)
@pytest.mark.filterwarnings("ignore")  # pydantic warns when dumping a changed field
def test_a_changed_chat_message_is_refused_where_it_is(
    change: Callable[[list[Any]], None], path: str, said: str
) -> None:
    trace = history()
    change(trace)
    index = int(path.split("[")[1].split("]")[0])
    assert both(llama_index.to_messages, trace) == ("malformed_event", index, path)
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(trace)
    assert said in str(caught.value)


@pytest.mark.filterwarnings("ignore")
def test_a_value_that_is_not_json_is_refused_where_it_is() -> None:
    """LlamaIndex takes anything in ``additional_kwargs`` and ``tool_kwargs``, but cannot
    write it as JSON."""
    trace = history()
    trace[3].blocks[1].tool_kwargs["q"] = object()
    assert both(llama_index.to_messages, trace) == (
        "unserializable_value", 3, "messages[3].blocks[1].tool_kwargs.q")
    trace = history()
    trace[4].additional_kwargs["tool_call_id"] = object()
    assert both(llama_index.to_messages, trace) == (
        "unserializable_value", 4, "messages[4].additional_kwargs.tool_call_id")


_NOT_JSON = object()
_MALFORMED = "malformed_event"


@pytest.mark.parametrize(
    ("change", "code", "index", "path", "detail"),
    [
        (lambda t: setattr(t[1], "response", 5), _MALFORMED, 1, "events[1].data.response",
         f"this AgentOutput {_CHANGED}: Input should be a valid dictionary or instance of "
         "ChatMessage"),
        (lambda t: setattr(t[1], "response", TextBlock(text="t")), _MALFORMED, 1,
         "events[1].data.response",
         f"this AgentOutput {_CHANGED}: Input should be a valid dictionary or instance of "
         "ChatMessage"),
        (lambda t: setattr(t[2], "tool_output", "x"), _MALFORMED, 2,
         "events[2].data.tool_output",
         f"this ToolCallResult {_CHANGED}: Input should be a valid dictionary or instance of "
         "ToolOutput"),
        (lambda t: setattr(t[2].tool_output, "blocks", None), _MALFORMED, 2,
         "events[2].data.tool_output.blocks",
         f"this ToolOutput {_CHANGED}: blocks is None, which it would have stored as []"),
        (lambda t: setattr(t[0].input[1], "blocks", None), _MALFORMED, 0,
         "events[0].data.input[1].blocks",
         f"this ChatMessage {_CHANGED}: Input should be a valid list"),
        (lambda t: setattr(t[1].response.blocks[0], "tool_kwargs", {"k": _NOT_JSON}),
         "unserializable_value", 1, "events[1].data.response.blocks[0].tool_kwargs.k",
         f"expected a JSON value, got object {_NOT_JSON!r}"),
        (lambda t: setattr(t[2].tool_output, "is_error", "no"), _MALFORMED, 2,
         "events[2].data.tool_output.is_error", "'is_error' must be a bool, found 'no'"),
        (lambda t: setattr(t[1], "current_agent_name", None), _MALFORMED, 1,
         "events[1].data.current_agent_name", "'current_agent_name' must be a str, found None"),
        (lambda t: t[0].input.__setitem__(1, None), _MALFORMED, 0, "events[0].data.input[1]",
         "expected a ChatMessage or its model_dump(mode='json') dict, got NoneType None"),
    ],
)
@pytest.mark.filterwarnings("ignore")
def test_a_changed_event_is_refused_where_it_is(
    change: Callable[[list[Any]], None], code: str, index: int, path: str, detail: str
) -> None:
    trace = events()
    change(trace)
    assert both(llama_index.events_to_messages, trace) == (code, index, path)
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(trace)
    assert (caught.value.code, caught.value.index, caught.value.path) == (code, index, path)
    assert caught.value.detail == detail


@pytest.mark.filterwarnings("ignore")
def test_a_text_or_call_block_is_what_its_class_says() -> None:
    """LlamaIndex tells these blocks by their class (``isinstance``), not by ``block_type``:
    so does every path here, whether a block is dumped by hand (flat arguments) or by
    pydantic (nested ones, or ``additional_kwargs`` that are not all strings)."""
    expected = both(llama_index.events_to_messages, events())
    for kwargs in ({"k": 0}, {"k": {"a": 1}}):
        for extra in ({}, {"n": 1}):
            trace = events()
            reply = trace[1].response
            reply.blocks[0].tool_kwargs = kwargs
            trace[2].tool_kwargs = kwargs  # the result's copy of its call, as LlamaIndex's is
            reply.blocks[0].block_type = "text"
            reply.additional_kwargs = extra
            read = both(llama_index.events_to_messages, trace)
            assert read[2].tool_calls[0].args == kwargs
            assert read[:2] + read[3:] == expected[:2] + expected[3:]
    trace = history()
    trace[1].blocks[0].block_type = "image"
    trace[3].blocks[0].block_type = "tool_call"
    assert both(llama_index.to_messages, trace) == both(llama_index.to_messages, history())


def test_a_fall_of_ours_on_objects_llama_index_accepts_shows_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Only what LlamaIndex refuses is blamed on the object."""

    def falls(*args: Any) -> Any:
        raise KeyError("ours")

    monkeypatch.setattr(llama_index, "message_from_dump", falls)
    with pytest.raises(KeyError, match="ours"):
        llama_index.to_messages(history())
    monkeypatch.setattr(_events, "message_fields", falls)
    with pytest.raises(KeyError, match="ours"):
        llama_index.events_to_messages([*events()[:1], workflow.AgentOutput(
            response=ChatMessage(role="assistant", content="hi", additional_kwargs={"n": 1}),
            tool_calls=[], raw=None, current_agent_name="a")])


def test_unchanged_objects_read() -> None:
    assert both(llama_index.to_messages, history()) == [
        SystemMessage(content="be brief"),
        HumanMessage(content="find q"),
        HumanMessage(content=[TextPart(text="see"), ImagePart(url="https://x.test/a.png")]),
        AIMessage(content="ok", tool_calls=[ToolCall(name="s", args={"q": 1}, id="c1")]),
        ToolMessage(content="found", tool_call_id="c1", name="s"),
        AIMessage(content="done", name="bot"),
    ]
    assert both(llama_index.events_to_messages, events()) == [
        SystemMessage(content="be brief"),
        HumanMessage(content="go"),
        AIMessage(content=[], tool_calls=[ToolCall(name="f", args={"k": 0}, id="c0")], name="a"),
        ToolMessage(content="r0", tool_call_id="c0", name="f",
                    metadata={"llama_index": {"event": {"raw_input": {}}}}),
        HumanMessage(content="next"),
        AIMessage(content="done", name="a"),
    ]


@settings(max_examples=200)
@given(st.data(), VALUES, st.booleans())
def test_any_changed_chat_message_reads_or_is_refused_the_same_on_both_paths(
    data: st.DataObject, value: Any, remove: bool
) -> None:
    trace = history()
    change_one(data, trace, value, remove)
    both(llama_index.to_messages, trace)  # any exception but a TraceError fails here


@settings(max_examples=200)
@given(st.data(), VALUES, st.booleans())
def test_any_changed_event_reads_or_is_refused_the_same_on_both_paths(
    data: st.DataObject, value: Any, remove: bool
) -> None:
    trace = events()
    change_one(data, trace, value, remove)
    both(llama_index.events_to_messages, trace)
