"""ChatMessage and event objects read without pydantic's serializer where a dump is plain,
and event streams read in one pass over the conversation (the history each AgentInput repeats
is not dumped again).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from llama_index.core.agent import workflow
from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
from llama_index.core.tools import ToolOutput
from test_llama_index_events import agent_runs, stream

from tracebridge import AIMessage, HumanMessage, Message, ToolCall, ToolMessage
from tracebridge.adapters import llama_index
from tracebridge.adapters.llama_index import _events
from tracebridge.adapters.llama_index._fast import object_blocks as fast_object_blocks
from tracebridge.adapters.llama_index._fast import read_item as fast_read_item
from tracebridge.adapters.llama_index._messages import chat_message_dump

from law_kits.llama_index import expressible
from strategies import Shape, conversations

SHAPE = Shape(metadata=True, message_ids=False)


@given(conversations(SHAPE).map(expressible))
def test_a_chat_message_dumps_as_pydantic_dumps_it(messages: list[Message]) -> None:
    for chat_message in llama_index.from_messages(messages, drop={"is_error"}):
        assert chat_message_dump(chat_message) == chat_message.model_dump(mode="json")


def test_what_is_not_plain_is_left_to_pydantic() -> None:
    odd = [
        ChatMessage(role="user", content="hi", additional_kwargs={"n": 1, "seen": [0.5, None]}),
        ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id="c", tool_name="f", tool_kwargs={"a": {"b": 1.5}}),
            ToolCallBlock(tool_call_id=None, tool_name="g", tool_kwargs='{"x": 1}'),
            TextBlock(text="done"),
        ]),
    ]
    for chat_message in odd:
        assert chat_message_dump(chat_message) == chat_message.model_dump(mode="json")


def as_objects(events: list[dict[str, Any]]) -> list[Any]:
    """The event objects of the events that contribute a message."""
    objects: list[Any] = []
    for event in events:
        kind, data = event["event"], event["data"]
        if kind == "AgentOutput":
            data = {**data, "tool_calls": [], "raw": None}
        elif kind == "ToolCallResult":
            output = {**data["tool_output"], "tool_name": data["tool_name"], "raw_input": {},
                      "raw_output": None}
            data = {**data, "tool_output": ToolOutput.model_validate(output)}
        elif kind != "AgentInput":
            continue
        objects.append(getattr(workflow, kind).model_validate(data))
    return objects


@given(agent_runs())
def test_event_objects_read_as_their_dumps(messages: list[Message]) -> None:
    objects = as_objects(stream(messages, "Agent"))
    assert llama_index.events_to_messages(objects) == (
        llama_index.events_to_messages(llama_index.dump_events(objects))
    )


def test_an_event_stream_reads_each_new_message_once(monkeypatch: Any) -> None:
    history: list[Any] = [ChatMessage(role="user", content="go")]
    events: list[Any] = []
    for k in range(200):
        call = ToolCallBlock(tool_call_id=f"c{k}", tool_name="f", tool_kwargs={"k": k})
        reply = ChatMessage(role="assistant", blocks=[call])
        output = ToolOutput(content=f"r{k}", tool_name="f",  # as FunctionTool records a call
                            raw_input={"args": (), "kwargs": {"k": k}}, raw_output=f"r{k}")
        events += [
            workflow.AgentInput(input=list(history), current_agent_name="a"),
            workflow.AgentOutput(response=reply, tool_calls=[], raw=None, current_agent_name="a"),
            workflow.ToolCallResult(tool_name="f", tool_kwargs={"k": k}, tool_id=f"c{k}",
                                    tool_output=output, return_direct=False),
        ]
        history += [reply, ChatMessage(role="tool", content=f"r{k}",
                                       additional_kwargs={"tool_call_id": f"c{k}"}),
                    ChatMessage(role="user", content=f"next {k}")]
    # the first event of each class is read through its dump, once per process (see
    # _normalize): read them here, so that what follows counts the same run alone or after
    # other tests
    llama_index.events_to_messages(events[:3])
    dumped: list[Any] = []
    read: list[Any] = []

    def counting(message: Any) -> dict[str, Any]:
        dumped.append(message)
        return chat_message_dump(message)

    def reading(item: Any) -> Any:
        read.append(item)
        return fast_read_item(item)

    def reading_blocks(blocks: Any, response: bool) -> Any:
        read.append(blocks)
        return fast_object_blocks(blocks, response)

    monkeypatch.setattr(_events, "chat_message_dump", counting)
    monkeypatch.setattr(_events, "read_item", reading)
    monkeypatch.setattr(_events, "object_blocks", reading_blocks)
    messages = llama_index.events_to_messages(events)
    # every AgentInput repeats the history (30,000 items in all), yet each message of the
    # conversation is read once, in place (these plain messages need no dump): the first
    # user message and each later user turn from the inputs, each response and each tool
    # result from its own event
    assert (len(read), len(dumped)) == (1 + 199 + 200 + 200, 0)
    assert messages[:4] == [
        HumanMessage(content="go"),
        AIMessage(content=[], tool_calls=[ToolCall(name="f", args={"k": 0}, id="c0")],
                  name="a"),
        ToolMessage(content="r0", tool_call_id="c0", name="f"),
        HumanMessage(content="next 0"),
    ]
    assert len(messages) == 1 + 200 * 2 + 199
