"""Event streams as a FunctionAgent writes them, for any conversation: property tests.

The stream is built the way ``FunctionAgent`` builds it: before each model step an
``AgentInput`` whose input is the system prompt plus the whole history so far, then the
``AgentOutput``, then one ``ToolCallResult`` per call whose ``tool_output`` is what
``ToolOutput(...).model_dump(mode="json")`` writes (blocks, ``tool_name``, ``raw_input``,
``raw_output``, ``is_error``), built by LlamaIndex itself. The same stream is also read as the
event objects LlamaIndex builds from it.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from llama_index.core import workflow as core_workflow
from llama_index.core.agent import workflow
from llama_index.core.base.llms.types import ImageBlock
from llama_index.core.tools import ToolOutput

from tracebridge import AIMessage, HumanMessage, ImagePart, Message, SystemMessage, ToolMessage
from tracebridge.adapters import llama_index

from law_kits.llama_index import expressible
from strategies import Shape, conversations

SHAPE = Shape(metadata=False, message_ids=False, names=False, system=False)
PROMPT = {"role": "system", "additional_kwargs": {}, "blocks": [{"block_type": "text",
                                                                  "text": "Be helpful."}]}


def event(kind: str, **data: Any) -> dict[str, Any]:
    return {"event": kind, "data": data}


def tool_output(result: ToolMessage, dump: dict[str, Any], kwargs: dict[str, Any],
                name: str) -> dict[str, Any]:
    """What ``FunctionAgent`` records for ``result``, as its ``ToolOutput``'s JSON dump: a
    tool that ran returned the text or the blocks the model is shown (``raw_input`` holds its
    call's ``args`` and ``kwargs``); a failed one records the arguments themselves and no value
    (as for a tool the agent does not have)."""
    returned: Any = result.content if isinstance(result.content, str) else dump["blocks"]
    output = ToolOutput(
        tool_name=name,
        blocks=dump["blocks"],
        raw_input=kwargs if result.is_error else {"args": (), "kwargs": kwargs},
        raw_output=None if result.is_error else returned,
        is_error=result.is_error,
    )
    return output.model_dump(mode="json")


def stream(messages: list[Message], agent: str) -> list[dict[str, Any]]:
    history = [m.model_dump(mode="json")
               for m in llama_index.from_messages(messages, drop={"is_error"})]
    calls = {c.id: c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    events: list[dict[str, Any]] = []
    for k, (typed, dump) in enumerate(zip(messages, history, strict=True)):
        if isinstance(typed, AIMessage):
            events.append(event("AgentInput", input=[PROMPT, *history[:k]],
                                current_agent_name=agent))
            events.append(event("AgentStream", delta="", response="", current_agent_name=agent))
            events.append(event("AgentOutput", response=dump, current_agent_name=agent))
            events += [event("ToolCall", tool_name=c.name, tool_kwargs=c.args, tool_id=c.id)
                       for c in typed.tool_calls]
        elif isinstance(typed, ToolMessage):
            assert typed.tool_call_id is not None
            call = calls[typed.tool_call_id]  # the result names its call, as FunctionAgent's do
            output = tool_output(typed, dump, call.args, call.name)
            events.append(event("ToolCallResult", tool_name=call.name, tool_kwargs=call.args,
                                tool_id=typed.tool_call_id, tool_output=output,
                                return_direct=False))
    if isinstance(messages[-1], HumanMessage):
        events.append(event("AgentInput", input=[PROMPT, *history], current_agent_name=agent))
    events.append(event("StopEvent", result=None))
    return events


def with_event_facts(messages: list[Message], agent: str) -> list[Message]:
    """What the events know on top of the history: the prompt, agent and tool names, and the
    arguments a call whose text did not parse was run with (its result's ``tool_kwargs``)."""
    calls = {c.id: c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    named: list[Message] = [SystemMessage(content="Be helpful.")]
    for message in messages:
        if isinstance(message, AIMessage):
            message = message.model_copy(update={"name": agent})
        elif isinstance(message, ToolMessage):
            call = calls[message.tool_call_id]
            update: dict[str, Any] = {"name": call.name}
            if call.invalid_args is not None:
                update["metadata"] = {"llama_index": {"event": {"tool_kwargs": call.args}}}
            message = message.model_copy(update=update)
        named.append(message)
    return named


def objects(events: list[dict[str, Any]]) -> list[Any]:
    """The event objects LlamaIndex builds from the dumps (``StopEvent`` is the workflow's)."""
    return [(getattr(workflow, e["event"], None) or getattr(core_workflow, e["event"]))
            .model_validate(e["data"]) for e in events]


def _sniffed(part: Any) -> Any:
    """An image given by data with no mime type gets the one LlamaIndex reads from the data
    whenever it builds an ImageBlock (a ChatMessage or ToolOutput object, not its dump), so
    that objects and dumps of the same run say the same."""
    if isinstance(part, ImagePart) and part.data is not None and part.mime_type is None:
        sniffed = ImageBlock(image=part.data.encode()).image_mimetype
        return part.model_copy(update={"mime_type": sniffed})
    return part


def _with_sniffed_images(message: Message) -> Message:
    if isinstance(message.content, str):
        return message
    return message.model_copy(update={"content": [_sniffed(p) for p in message.content]})


@st.composite
def agent_runs(draw: st.DrawFn) -> list[Message]:
    """Conversations a history can hold, with some tool results failed (only events say so)."""
    messages = draw(conversations(SHAPE).map(expressible))
    return [
        _with_sniffed_images(m).model_copy(update={"is_error": draw(st.booleans())})
        if isinstance(m, ToolMessage) else _with_sniffed_images(m)
        for m in messages
    ]


@given(agent_runs(), st.sampled_from(["Agent", "planner"]))
def test_events_give_the_conversation_with_prompt_and_names(
    messages: list[Message], agent: str
) -> None:
    assert llama_index.events_to_messages(stream(messages, agent)) == with_event_facts(
        messages, agent
    )


@given(agent_runs(), st.sampled_from(["Agent", "planner"]))
def test_event_objects_give_what_their_dumps_give(messages: list[Message], agent: str) -> None:
    # The object road: the events as LlamaIndex builds them from the dumps above.
    dumps = stream(messages, agent)
    read = llama_index.events_to_messages(objects(dumps))
    assert read == llama_index.events_to_messages(dumps)
    assert read == with_event_facts(messages, agent)


@given(agent_runs())
def test_events_and_history_agree_after_removing_event_extras(messages: list[Message]) -> None:
    history = llama_index.from_messages(messages, drop={"is_error"})
    from_events = llama_index.events_to_messages(stream(messages, "Agent"))
    assert llama_index.strip_event_extras(from_events) == llama_index.to_messages(history)
