"""langchain: tool-call arguments holding a raw control character (the newline a model writes
into code) are read as LangChain reads them in a summed chunk, a legacy ``function_call`` and
a streamed ``tool_use`` block, while arguments cut off mid-JSON are still refused; a LangGraph
``StateSnapshot`` is refused saying to pass ``snapshot.values["messages"]``, and ``detect``
takes the sequences the reader takes; a one-piece stream's last chunk is its whole reply.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    FunctionMessage,
    HumanMessage,
    ToolMessage,
    messages_to_dict,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from test_langchain_fixes_s48 import FORMS, in_form, where

import tracebridge
from tracebridge import TraceError
from tracebridge import messages as tm
from tracebridge.adapters import langchain
from tracebridge.registry import detect_format

LC = "langchain"
QUESTION = HumanMessage("run it", id="h1")
CODE = {"code": "print(1)\nprint(2)"}
FIRST_HALF = '{"code": "print(1)\n'  # a literal newline inside the JSON string
SECOND_HALF = 'print(2)"}'




def call_chunk(name: str | None, args: str, call_id: str | None) -> AIMessageChunk:
    return AIMessageChunk(
        "", id="r1", tool_call_chunks=[{"name": name, "args": args, "id": call_id, "index": 0}]
    )


def summed_call(*, last: bool) -> AIMessageChunk:
    """A streamed call summed with ``+`` (as langchain-core before 1.0 summed and stored it:
    without the ``chunk_position="last"`` marker, unless ``last``)."""
    whole = call_chunk("run", FIRST_HALF, "c1") + call_chunk(None, SECOND_HALF, None)
    return whole + AIMessageChunk("", id="r1", chunk_position="last") if last else whole


def function_call_chunk(name: str, arguments: str) -> AIMessageChunk:
    return AIMessageChunk(
        "", id="r1", additional_kwargs={"function_call": {"name": name, "arguments": arguments}}
    )


def tool_use_stream(*pieces: str) -> AIMessageChunk:
    """An Anthropic ``tool_use`` stream summed with ``+``: the block, then one
    ``input_json_delta`` per piece of the arguments, then the stream's last marker."""
    whole = AIMessageChunk(
        [{"type": "tool_use", "id": "c1", "name": "run", "input": {}, "index": 0}],
        id="r1",
        tool_call_chunks=[{"name": "run", "args": "", "id": "c1", "index": 0}],
    )
    for piece in pieces:
        whole += AIMessageChunk(
            [{"type": "input_json_delta", "partial_json": piece, "index": 0}],
            id="r1",
            tool_call_chunks=[{"name": None, "args": piece, "id": None, "index": 0}],
        )
    return whole + AIMessageChunk([], id="r1", chunk_position="last")


def read_call(trace: list[Any]) -> tm.ToolCall:
    messages = langchain.to_messages(trace)
    assert [m.type for m in messages] == ["human", "ai", "tool", "ai"]
    reply = messages[1]
    assert isinstance(reply, tm.AIMessage)
    assert len(reply.tool_calls) == 1
    return reply.tool_calls[0]


# --- raw control characters in the arguments: read as LangChain reads them -----------------


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("last", [False, True], ids=["unmarked", "marked-last"])
def test_summed_chunk_with_a_newline_in_its_arguments_is_read(form: str, last: bool) -> None:
    reply = summed_call(last=last)
    assert reply.tool_calls == [{"name": "run", "args": CODE, "id": "c1", "type": "tool_call"}]
    trace = [QUESTION, reply, ToolMessage("1\n2", tool_call_id="c1"), AIMessage("done")]
    call = read_call(in_form(trace, form))
    assert (call.id, call.name, call.args, call.invalid_args) == ("c1", "run", CODE, None)
    back = langchain.from_messages(langchain.to_messages(trace))
    assert messages_to_dict(back) == messages_to_dict(trace)


@pytest.mark.parametrize("form", FORMS)
def test_summed_function_call_chunk_with_a_newline_is_read(form: str) -> None:
    reply = function_call_chunk("run", FIRST_HALF) + function_call_chunk("", SECOND_HALF)
    assert reply.additional_kwargs["function_call"] == {
        "name": "run",
        "arguments": FIRST_HALF + SECOND_HALF,
    }
    trace = [QUESTION, reply, FunctionMessage("1\n2", name="run"), AIMessage("done")]
    call = read_call(in_form(trace, form))
    assert (call.name, call.args, call.invalid_args) == ("run", CODE, None)
    back = langchain.from_messages(langchain.to_messages(trace))
    assert messages_to_dict(back) == messages_to_dict(trace)


@pytest.mark.parametrize("form", FORMS)
def test_function_call_message_with_a_newline_is_read(form: str) -> None:
    function_call = {"name": "run", "arguments": FIRST_HALF + SECOND_HALF}
    reply = AIMessage("", additional_kwargs={"function_call": function_call})
    trace = [QUESTION, reply, FunctionMessage("1\n2", name="run"), AIMessage("done")]
    call = read_call(in_form(trace, form))
    assert (call.name, call.args, call.invalid_args) == ("run", CODE, None)


@pytest.mark.parametrize("form", FORMS)
def test_streamed_tool_use_with_a_newline_in_partial_json_is_read(form: str) -> None:
    reply = tool_use_stream(FIRST_HALF, SECOND_HALF)
    assert reply.content == [
        {
            "type": "tool_use",
            "id": "c1",
            "name": "run",
            "input": {},
            "index": 0,
            "partial_json": FIRST_HALF + SECOND_HALF,
        }
    ]
    assert reply.tool_calls == [{"name": "run", "args": CODE, "id": "c1", "type": "tool_call"}]
    trace = [QUESTION, reply, ToolMessage("1\n2", tool_call_id="c1"), AIMessage("done")]
    call = read_call(in_form(trace, form))
    assert (call.id, call.name, call.args, call.invalid_args) == ("c1", "run", CODE, None)
    back = langchain.from_messages(langchain.to_messages(trace))
    assert messages_to_dict(back) == messages_to_dict(trace)


# --- arguments cut off mid-JSON: still refused, as before ----------------------------------


@pytest.mark.parametrize("form", FORMS)
def test_chunk_cut_off_after_a_newline_is_still_a_piece(form: str) -> None:
    trace = [QUESTION, call_chunk("run", FIRST_HALF, "c1"), ToolMessage("1", tool_call_id="c1")]
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(in_form(trace, form))
    assert where(caught.value) == (
        "streaming_chunk",
        1,
        "messages[1].tool_call_chunks[0].args",
        LC,
    )


@pytest.mark.parametrize("form", FORMS)
def test_function_call_cut_off_after_a_newline_is_still_a_piece(form: str) -> None:
    trace = [QUESTION, function_call_chunk("run", FIRST_HALF), FunctionMessage("1", name="run")]
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(in_form(trace, form))
    assert where(caught.value) == (
        "streaming_chunk",
        1,
        "messages[1].additional_kwargs.function_call.arguments",
        LC,
    )


def test_tool_use_cut_off_after_a_newline_still_conflicts() -> None:
    trace = [QUESTION, tool_use_stream(FIRST_HALF), ToolMessage("1", tool_call_id="c1")]
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace)
    assert where(caught.value) == (
        "conflicting_fields",
        1,
        "messages[1].content[0].partial_json",
        LC,
    )
    assert "partial_json does not parse: Unterminated string starting at" in str(caught.value)


# --- the stream's last piece ---------------------------------------------------------------


def test_a_one_piece_stream_is_its_last_piece() -> None:
    """Why a lone ``chunk_position="last"`` piece is read, not refused: the sum of a
    one-piece stream is that piece in every field, so nothing tells the two apart."""
    model = GenericFakeChatModel(messages=iter([AIMessage("today")]))
    pieces = list(model.stream([HumanMessage("weather?")]))
    assert len(pieces) == 1
    assert pieces[0].chunk_position == "last"
    whole = pieces[0] + AIMessageChunk("", id=pieces[0].id)
    assert whole.model_dump() == pieces[0].model_dump()
    read = langchain.to_messages([HumanMessage("weather?"), pieces[0]])[1]
    assert read == tm.AIMessage(
        content="today",
        id=pieces[0].id,
        metadata={LC: {"class": "AIMessageChunk", "chunk_position": "last"}},
    )


# --- a LangGraph StateSnapshot --------------------------------------------------------------


def snapshots() -> tuple[Any, list[Any]]:
    graph = StateGraph(MessagesState)
    graph.add_node("bot", lambda state: {"messages": [AIMessage("hello", id="a1")]})
    graph.add_edge(START, "bot")
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "1"}}
    app.invoke({"messages": [HumanMessage("hi", id="h1")]}, config)
    return app.get_state(config), list(app.get_state_history(config))


SNAPSHOT_ERROR = (
    "langchain: trace: expected a list of messages or a state {'messages': [...]}, got a "
    "StateSnapshot (a named tuple of values, next, config, metadata, created_at, "
    "parent_config, tasks, interrupts): pass snapshot.values['messages'] (or "
    "snapshot.values, when 'messages' is its only key) [malformed_event]"
)


def test_state_snapshot_is_refused_saying_what_to_pass() -> None:
    snapshot, history = snapshots()
    for given in (snapshot, history[0], {"messages": snapshot}):
        with pytest.raises(TraceError) as caught:
            langchain.to_messages(given)
        assert where(caught.value) == ("malformed_event", None, None, LC)
        assert str(caught.value) == SNAPSHOT_ERROR
    expected = [tm.HumanMessage(content="hi", id="h1"), tm.AIMessage(content="hello", id="a1")]
    assert langchain.to_messages(snapshot.values["messages"]) == expected
    assert langchain.to_messages(snapshot.values) == expected


def test_convert_gives_the_snapshot_hint() -> None:
    snapshot, _ = snapshots()
    assert langchain.detect(snapshot) is True
    with pytest.raises(TraceError) as caught:
        tracebridge.convert(snapshot, target="openai_chat")
    assert where(caught.value) == ("malformed_event", None, None, LC)
    assert str(caught.value) == SNAPSHOT_ERROR


def test_another_named_tuple_is_read_as_the_tuple_it_is() -> None:
    """A named tuple of messages reads as a tuple of them, as before d9d3184 (which refused
    every named tuple); one holding other things is refused at the item, as a tuple is."""
    from typing import NamedTuple

    class Exchange(NamedTuple):
        question: Any
        answer: Any

    class Run(NamedTuple):
        messages: list[Any]
        score: float

    exchange = Exchange(HumanMessage("hi"), AIMessage("hello"))
    assert langchain.detect(exchange) is True
    assert langchain.to_messages(exchange) == [tm.HumanMessage(content="hi"),
                                               tm.AIMessage(content="hello")]
    run = Run([HumanMessage("hi")], 1.0)
    assert langchain.detect(run) is False
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(run)
    assert where(caught.value) == ("malformed_event", 0, "messages[0]", LC)


def test_a_snapshot_of_a_list_state_says_to_pass_its_values() -> None:
    """A graph whose state is the list of messages itself (before the review fix: 'pass
    snapshot.values['messages']', which a list does not take)."""
    from typing import Annotated

    from langgraph.graph.message import add_messages

    graph = StateGraph(Annotated[list, add_messages])  # a state that is the list of messages
    graph.add_node("bot", lambda messages: [AIMessage("hello", id="a1")])
    graph.add_edge(START, "bot")
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "1"}}
    app.invoke([HumanMessage("hi", id="h1")], config)
    snapshot = app.get_state(config)
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(snapshot)
    assert where(caught.value) == ("malformed_event", None, None, LC)
    assert str(caught.value).endswith("interrupts): pass snapshot.values [malformed_event]")
    assert langchain.to_messages(snapshot.values) == [
        tm.HumanMessage(content="hi", id="h1"), tm.AIMessage(content="hello", id="a1")]


@pytest.mark.parametrize(
    "trace",
    [
        (HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")),
        {"messages": (HumanMessage("hi", id="h1"), AIMessage("hello", id="a1"))},
    ],
    ids=["tuple", "state-of-tuple"],
)
def test_tuple_of_messages_is_detected_as_read(trace: Any) -> None:
    assert langchain.detect(trace) is True
    assert detect_format(trace) == "langchain"
    assert tracebridge.convert(trace, target="openai_chat") == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
    ]
