"""LlamaIndex, fixes s48: a key holding a lone surrogate in a field LlamaIndex's JSON dump
rewrites (a ToolCallBlock's ``tool_kwargs``, a thinking block's ``additional_information``, a
ToolSelection's, a ToolCall's or a ToolCallResult's ``tool_kwargs``) is refused on every road
as ``dump_events`` refuses it, and not written by ``from_messages``; and a run whose tool waits
for a human (``ctx.wait_for_event`` with an ``InputRequiredEvent``) is read, its human-input
events kept verbatim on the reply whose calls were running."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.agent.workflow.workflow_events import (
    AgentInput,
    AgentOutput,
    ToolCallResult,
)
from llama_index.core.agent.workflow.workflow_events import ToolCall as ToolCallEvent
from llama_index.core.base.llms.types import TextBlock, ThinkingBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.tools import ToolOutput
from workflows import Context
from workflows.context.serializers import JsonSerializer
from workflows.events import HumanResponseEvent, InputRequiredEvent

from tracebridge import (
    AIMessage,
    HumanMessage,
    ReasoningPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index

NS = "llama_index"
LONE = "\udc00"


def caught(call: Callable[[], Any]) -> tuple[Any, ...]:
    with pytest.raises(TraceError) as error:
        call()
    return (error.value.code, error.value.index, error.value.path, error.value.detail)


# --- 1. a key holding a lone surrogate ---------------------------------------------------

REWRITTEN = ("the key '\\udc00' holds a lone surrogate, which LlamaIndex's JSON dump writes as "
             "'\\ufffd\\ufffd\\ufffd' (or cannot write at all)")


def _cannot_write(cls: str, error: str = "UnicodeEncodeError") -> str:
    prefix = ("PydanticSerializationError: Error calling function `custom_model_dump`: "
              if error == "PydanticSerializationError" else "")
    return (f"LlamaIndex cannot write this {cls} as JSON: {prefix}UnicodeEncodeError: 'utf-8' "
            f"codec can't encode character '\\udc00' in position 0: surrogates not allowed")


def _call_message(kwargs: dict[str, Any], tool: str = "f") -> ChatMessage:
    return ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name=tool, tool_kwargs=kwargs)])


def _history(kwargs: dict[str, Any]) -> list[ChatMessage]:
    return [ChatMessage(role="user", content="q"), _call_message(kwargs),
            ChatMessage(role="tool", content="r", additional_kwargs={"tool_call_id": "c1"})]


def test_a_surrogate_key_in_tool_kwargs_is_refused_on_objects() -> None:
    history = _history({LONE: 1})
    rewritten = history[1].model_dump(mode="json")["blocks"][0]["tool_kwargs"]
    assert rewritten == {"\ufffd\ufffd\ufffd": 1}  # LlamaIndex's own dump changes the key
    assert caught(lambda: llama_index.to_messages(history)) == (
        "unserializable_value", 1, "messages[1].blocks[0].tool_kwargs", REWRITTEN)
    # a text block before the call: the general reader, not the fast one
    history[1].blocks.insert(0, TextBlock(text="t"))
    assert caught(lambda: llama_index.to_messages(history)) == (
        "unserializable_value", 1, "messages[1].blocks[1].tool_kwargs", REWRITTEN)
    # a key LlamaIndex writes as itself is still read from the object, as from its dump
    plain = _history({"clé": 1, "ok": [1.5]})
    read = llama_index.to_messages(plain)
    assert read == llama_index.to_messages([m.model_dump(mode="json") for m in plain])
    assert read[1] == AIMessage(content=[], tool_calls=[
        ToolCall(name="f", args={"clé": 1, "ok": [1.5]}, id="c1")])


def test_a_nested_surrogate_key_in_tool_kwargs_is_refused_where_llama_index_falls() -> None:
    history = _history({"a": {LONE: [1.5]}})
    with pytest.raises(UnicodeEncodeError):
        history[1].model_dump(mode="json")
    assert caught(lambda: llama_index.to_messages(history)) == (
        "unserializable_value", 1, "messages[1].blocks[0].tool_kwargs",
        _cannot_write("ToolCallBlock"))


def test_a_surrogate_key_in_thinking_information_is_refused_on_objects() -> None:
    history = [ChatMessage(role="user", content="q"), ChatMessage(role="assistant", blocks=[
        ThinkingBlock(content="t", additional_information={LONE: 1}), TextBlock(text="a")])]
    assert caught(lambda: llama_index.to_messages(history)) == (
        "unserializable_value", 1, "messages[1].blocks[0].additional_information", REWRITTEN)


def _result(kwargs: dict[str, Any]) -> ToolCallResult:
    return ToolCallResult(tool_name="f", tool_kwargs=kwargs, tool_id="c1",
                          tool_output=ToolOutput(content="r", tool_name="f", raw_input={},
                                                 raw_output="r"),
                          return_direct=False)


def _stream(output: AgentOutput, *after: Any) -> list[Any]:
    return [AgentInput(input=[ChatMessage(role="user", content="q")], current_agent_name="a"),
            output, *after]


def _output(kwargs: dict[str, Any], selections: list[Any] | None = None) -> AgentOutput:
    return AgentOutput(response=_call_message(kwargs), current_agent_name="a",
                       tool_calls=selections or [])


SURROGATE_STREAMS = {
    "response": (lambda: _stream(_output({LONE: 1})),
                 (1, "events[1].data.response.blocks[0].tool_kwargs", REWRITTEN)),
    "response and selection": (
        lambda: _stream(_output({LONE: 1}, [ToolSelection(tool_id="c1", tool_name="f",
                                                          tool_kwargs={LONE: 1})])),
        (1, "events[1].data.response.blocks[0].tool_kwargs", REWRITTEN)),
    "selection": (
        lambda: _stream(_output({"k": 1}, [ToolSelection(tool_id="c1", tool_name="f",
                                                         tool_kwargs={LONE: 1})])),
        (1, "events[1].data.tool_calls[0].tool_kwargs", REWRITTEN)),
    "tool call": (
        lambda: _stream(_output({"k": 1}),
                        ToolCallEvent(tool_id="c1", tool_name="f", tool_kwargs={LONE: 1})),
        (2, "events[2].data.tool_kwargs",
         _cannot_write("ToolCall", "PydanticSerializationError"))),
    "tool call result": (
        lambda: _stream(_output({"k": 1}), _result({LONE: 1})),
        (2, "events[2].data.tool_kwargs",
         _cannot_write("ToolCallResult", "PydanticSerializationError"))),
}


@pytest.mark.parametrize("name", list(SURROGATE_STREAMS))
def test_a_surrogate_key_in_an_event_is_refused_as_dump_events_refuses_it(name: str) -> None:
    make, (index, path, detail) = SURROGATE_STREAMS[name]
    refused = ("unserializable_value", index, path, detail)
    assert caught(lambda: llama_index.dump_events(make())) == refused
    for _ in range(2):  # an event type met for the first time, and one met before
        assert caught(lambda: llama_index.events_to_messages(make(), allow_pending=True)) == (
            refused)


def test_a_surrogate_key_is_not_written() -> None:
    why = REWRITTEN + "; the ChatMessage would not read back"
    for args, at in [({LONE: 1}, ""), ({"a": {LONE: 1}}, ".a")]:
        messages = [HumanMessage(content="q"), AIMessage(tool_calls=[
            ToolCall(name="f", args=args, id="c1")]), ToolMessage(content="r", tool_call_id="c1")]
        assert caught(lambda written=messages: llama_index.from_messages(written)) == (
            "not_representable", 1, f"messages[1].tool_calls[0].args{at}", why)
    kept = [HumanMessage(content="q", metadata={NS: {"additional_kwargs": {LONE: 1}}})]
    assert caught(lambda: llama_index.from_messages(kept)) == (
        "not_representable", 0, "messages[0].metadata.llama_index.additional_kwargs", why)
    reasoning = [HumanMessage(content="q"), AIMessage(content=[ReasoningPart(
        text="t", metadata={NS: {"additional_information": {LONE: 1}}})])]
    assert caught(lambda: llama_index.from_messages(reasoning)) == (
        "not_representable", 1,
        "messages[1].content[0].metadata.llama_index.additional_information", why)


# --- 2. a tool that waits for a human ------------------------------------------------------


def _script() -> MockFunctionCallingLLM:
    replies = [_call_message({"q": "ok?"}, "ask"), ChatMessage(role="assistant", content="fine")]

    def respond(messages: Any, **kwargs: Any) -> ChatMessage:
        return replies.pop(0)

    return MockFunctionCallingLLM(response_generator=respond)


async def ask(ctx: Context, q: str) -> str:
    """Ask the human."""
    answer = await ctx.wait_for_event(
        HumanResponseEvent, waiter_event=InputRequiredEvent(prefix=q, user_name="bob"))
    return str(answer.response)


# LlamaIndex finds the context parameter by its annotation, which this module's postponed
# annotations leave as text
ask.__annotations__ = {"ctx": Context, "q": str, "return": str}


async def _run(streaming: bool, workflow: bool) -> tuple[list[Any], list[Any]]:
    agent = FunctionAgent(name="x", description="d", tools=[ask], llm=_script(),
                          streaming=streaming)
    runner: Any = AgentWorkflow(agents=[agent]) if workflow else agent
    memory = Memory.from_defaults(session_id="s48", token_limit=10**9)
    handler = runner.run(user_msg="go", memory=memory)
    events = []
    async for event in handler.stream_events():
        events.append(copy.deepcopy(event))
        if isinstance(event, InputRequiredEvent):
            handler.ctx.send_event(HumanResponseEvent(response="yes", user_name="bob"))
    await handler
    return await memory.aget_all(), events


ASKED = {"event": "InputRequiredEvent", "data": {"_data": {"prefix": "ok?", "user_name": "bob"}}}
ANSWERED = {"event": "HumanResponseEvent",
            "data": {"_data": {"response": "yes", "user_name": "bob"}}}


def _read(human_input: list[dict[str, Any]]) -> list[Any]:
    return [
        HumanMessage(content="go"),
        AIMessage(content=[], name="x", tool_calls=[ToolCall(name="ask", args={"q": "ok?"},
                                                             id="c1")],
                  metadata={NS: {"event": {"human_input": human_input}}}),
        ToolMessage(content="yes", tool_call_id="c1", name="ask"),  # the human's answer
        AIMessage(content="fine", name="x"),
    ]


@pytest.mark.parametrize("workflow", [False, True], ids=["FunctionAgent", "AgentWorkflow"])
@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streaming"])
def test_a_run_that_waits_for_a_human_is_read(streaming: bool, workflow: bool) -> None:
    memory, events = asyncio.run(_run(streaming, workflow))
    kinds = [type(event).__name__ for event in events]
    asked = kinds.index("InputRequiredEvent")
    assert kinds[asked - 1] == kinds[asked + 1] == "ToolCall"  # said again when answered
    assert events[asked - 1] == events[asked + 1]
    read = llama_index.events_to_messages(events)
    assert read == _read([ASKED])
    dumped = json.loads(json.dumps(llama_index.dump_events(events)))
    assert dumped[asked] == ASKED
    assert llama_index.events_to_messages(dumped) == read
    serialized = [json.loads(JsonSerializer().serialize(event)) for event in events]
    assert llama_index.events_to_messages(serialized) == read
    assert llama_index.strip_event_extras(read) == llama_index.to_messages(memory)


def test_a_logged_human_answer_is_kept_after_the_question() -> None:
    _, events = asyncio.run(_run(False, False))
    asked = [type(event).__name__ for event in events].index("InputRequiredEvent")
    events.insert(asked + 1, HumanResponseEvent(response="yes", user_name="bob"))
    read = llama_index.events_to_messages(events)
    assert read == _read([ASKED, ANSWERED])
    assert llama_index.events_to_messages(llama_index.dump_events(events)) == read


def test_human_input_is_an_event_extra_of_the_writer() -> None:
    _, events = asyncio.run(_run(False, False))
    read = llama_index.events_to_messages(events)
    assert caught(lambda: llama_index.from_messages(read))[:3] == (
        "not_representable", 1, "messages[1].metadata.llama_index.event")
    written = llama_index.from_messages(read, drop=["event_extras"])
    assert llama_index.to_messages(written) == [  # all but the events kept
        message.model_copy(update={"metadata": {}}) for message in read]


def test_human_input_before_any_reply_is_malformed() -> None:
    events = [{"event": "AgentInput", "data": {"input": [
        {"role": "user", "additional_kwargs": {}, "blocks": [{"block_type": "text",
                                                              "text": "q"}]}],
        "current_agent_name": "a"}}, ASKED]
    assert caught(lambda: llama_index.events_to_messages(events)) == (
        "malformed_event", 1, "events[1]", "an InputRequiredEvent with no AgentOutput before "
        "it: it is kept with the reply whose tool waited for the human")


def test_human_input_json_is_what_dump_events_writes() -> None:
    _, events = asyncio.run(_run(False, False))
    dumped = llama_index.dump_events(events)
    asked = [event["event"] for event in dumped].index("InputRequiredEvent")
    dumped[asked] = {"event": "InputRequiredEvent", "data": {"prefix": "ok?"}}
    assert caught(lambda: llama_index.events_to_messages(dumped)) == (
        "malformed_event", asked, f"events[{asked}].data.prefix",
        "an InputRequiredEvent's JSON is {'_data': {...}} (the fields it was made with, as "
        "dump_events writes them); found 'prefix' = 'ok?'")
    dumped[asked] = {"event": "InputRequiredEvent", "data": {}}  # made with no fields
    assert llama_index.events_to_messages(dumped) == _read(
        [{"event": "InputRequiredEvent", "data": {}}])


class _Key(str):
    """A key of a str subclass (an enum's, say)."""


def _listing_run(raw_input: Any, raw_output: Any) -> list[Any]:
    """A run whose one tool's output (``os.listdir`` of a non-UTF-8 name, say) holds
    ``raw_input`` and ``raw_output``."""
    from llama_index.core.agent.workflow import AgentInput, AgentOutput, ToolCallResult
    from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
    from llama_index.core.tools import ToolOutput

    call = ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="ls", tool_kwargs={})])
    return [
        AgentInput(input=[ChatMessage(role="user", content="ls")], current_agent_name="a"),
        AgentOutput(response=call, current_agent_name="a", tool_calls=[]),
        ToolCallResult(tool_id="c1", tool_name="ls", tool_kwargs={}, return_direct=False,
                       tool_output=ToolOutput(content="2 files", tool_name="ls",
                                              raw_input=raw_input, raw_output=raw_output)),
    ]


@pytest.mark.parametrize(("raw_input", "raw_output", "field"), [
    ({"args": [], "kwargs": {}}, {"dir": {"caf\udce9.txt": 12}}, "raw_output"),
    ({"args": [], "kwargs": {}}, [{"\udc00": 1}], "raw_output"),
    ({"args": [], "kwargs": {"x": {"a": {"\udc00": 1}}}}, "ok", "raw_input"),
    ({"args": [], "kwargs": {}}, ({"\udc00": 1},), "raw_output"),  # a tool returning a tuple
    ({"args": [], "kwargs": {}}, {"d": {_Key("\udc00"): 1}}, "raw_output"),
])
def test_a_nested_surrogate_key_in_a_tool_output_is_refused_where_dump_events_refuses_it(
    raw_input: Any, raw_output: Any, field: str
) -> None:
    """LlamaIndex's dump cannot write the key: both roads say so at the field (before: the
    object road said it was rewritten, at the inner dict)."""
    events = _listing_run(raw_input, raw_output)
    refusals = []
    for read in (llama_index.events_to_messages, llama_index.dump_events):
        with pytest.raises(TraceError) as caught:
            read(events)
        refusals.append((caught.value.code, caught.value.index, caught.value.path))
        assert "LlamaIndex cannot write this ToolOutput as JSON: UnicodeEncodeError" in str(
            caught.value)
    assert refusals == [("unserializable_value", 2, f"events[2].data.tool_output.{field}")] * 2
