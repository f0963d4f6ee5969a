"""LlamaIndex event streams of runs that ended early, and a memory's blocks in the user message.

Every stream here is a real ``FunctionAgent`` run of llama-index-core with its
``MockFunctionCallingLLM`` answering from a script, logged as a user logs it (each event
``handler.stream_events()`` yields, the last one included), and read in the three forms a
stream comes in (the event objects, ``dump_events`` JSON, the workflow ``JsonSerializer``'s
output):

* a failed, cancelled or timed-out run ends its stream with ``WorkflowFailedEvent``,
  ``WorkflowCancelledEvent`` or ``WorkflowTimedOutEvent``: no message, what it says kept with
  the last message read; a reply cut mid-stream is ``truncated_trace``, a run cut after a call
  honours ``allow_pending``, and the next run (a retry on the same memory) is read on;
* memory blocks put into the user message (``insert_method="user"``) show in the events only
  (documented in "The same run, seen two ways").
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory, StaticMemoryBlock
from test_llama_index_events_audit import kinds, read, refused
from workflows.errors import WorkflowCancelledByUser, WorkflowTimeoutError

from tracebridge import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index

EVENT = "llama_index"  # the metadata namespace
ENDED = (ConnectionError, WorkflowTimeoutError, WorkflowCancelledByUser)
"""What awaiting a run that failed, timed out or was cancelled raises."""


# --- real runs ------------------------------------------------------------------------------


def call(call_id: str, name: str, **kwargs: Any) -> ChatMessage:
    block = ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=kwargs)
    return ChatMessage(role="assistant", blocks=[block])


def say(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def connection_lost(messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
    raise ConnectionError("connection reset")


def broken_stream(messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
    async def chunks() -> Any:
        yield ChatMessage(role="assistant", content="The answer")
        raise ConnectionError("stream reset by peer")

    return chunks()


def scripted(script: list[Any]) -> MockFunctionCallingLLM:
    """A mock LLM answering each chat with the next scripted message, or what a scripted
    function makes of the chat (a stream of chunks, or an exception)."""
    remaining = list(script)

    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        answer = remaining.pop(0)
        return answer(messages, **kwargs) if callable(answer) else answer

    return MockFunctionCallingLLM(response_generator=respond)


async def add(a: int, b: int) -> int:
    """Add."""
    return a + b


async def slow(x: int) -> int:
    """Answer after five seconds."""
    await asyncio.sleep(5)
    return x


def run(agent: FunctionAgent, turns: list[str], memory: Any = None,
        cancel_after: str | None = None) -> list[Any]:
    """Every event of each turn's run, all runs sharing one memory, as a user logs them
    (copied as they come: the framework changes some later); a run that fails is logged and
    the next turn run. ``cancel_after``: the run is cancelled once that event came."""
    memory = memory or Memory.from_defaults(session_id="s40", token_limit=1_000_000)

    async def turns_run() -> list[Any]:
        events: list[Any] = []
        for text in turns:
            handler = agent.run(user_msg=text, memory=memory)
            async for event in handler.stream_events():
                events.append(copy.deepcopy(event))
                if type(event).__name__ == cancel_after:
                    await handler.cancel_run()
            with pytest.raises(ENDED):  # each run here ends early
                await handler
        return events

    return asyncio.run(turns_run())


def run_ok(agent: FunctionAgent, turns: list[str], memory: Any) -> list[Any]:
    async def turns_run() -> list[Any]:
        events: list[Any] = []
        for text in turns:
            handler = agent.run(user_msg=text, memory=memory)
            events.extend([copy.deepcopy(event) async for event in handler.stream_events()])
            await handler
        return events

    return asyncio.run(turns_run())


def ended(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """The metadata of the message a run ended after."""
    return {EVENT: {"event": {"run_ended": [{"event": kind, "data": data}]}}}


def failed(event: Any, message: str) -> dict[str, Any]:
    """The fields of a real WorkflowFailedEvent of the agent's step, as its JSON says them."""
    return {"step_name": "run_agent_step",
            "exception": {"exception_type": "builtins.ConnectionError",
                          "exception_message": message},
            "attempts": 1, "elapsed_seconds": event.elapsed_seconds}


SYSTEM = SystemMessage(content="Be brief.")


# --- a reply cut mid-stream, the failure event logged ----------------------------------------


CUT = (
    "truncated_trace", 1, "events[1]",
    "a reply was streamed from here (AgentStream), but no AgentOutput follows it before the "
    "run ended at events[2] (WorkflowFailedEvent: step 'run_agent_step' failed with "
    "builtins.ConnectionError: stream reset by peer): the run failed mid-reply, and the "
    "partial reply is no message",
)


def test_a_failed_run_cut_mid_reply_is_a_truncated_trace_at_the_stream() -> None:
    agent = FunctionAgent(name="calc", tools=[], llm=scripted([broken_stream]),
                          system_prompt="Be brief.", streaming=True)
    events = run(agent, ["what is 2+2?"])
    assert kinds(events) == ["AgentInput", "AgentStream", "WorkflowFailedEvent"]
    assert refused(events) == CUT
    assert refused(events, allow_pending=True) == CUT


def test_a_retry_after_a_reply_cut_mid_stream_is_still_refused_at_the_stream() -> None:
    agent = FunctionAgent(name="calc", tools=[], llm=scripted([broken_stream, say("4")]),
                          system_prompt="Be brief.", streaming=True)
    memory = Memory.from_defaults(session_id="retry-cut", token_limit=1_000_000)
    events = run(agent, ["what is 2+2?"], memory=memory) + run_ok(
        agent, ["again: what is 2+2?"], memory=memory)
    assert kinds(events) == ["AgentInput", "AgentStream", "WorkflowFailedEvent",
                             "AgentInput", "AgentStream", "AgentOutput", "StopEvent"]
    assert refused(events) == CUT


# --- a run cut after a call ------------------------------------------------------------------


def timed_out_agent(*answers: ChatMessage) -> FunctionAgent:
    return FunctionAgent(name="calc", tools=[slow], llm=scripted([call("c1", "slow", x=1),
                                                                  *answers]),
                         system_prompt="Be brief.", streaming=False, timeout=0.5)


CALL = AIMessage(content=[], tool_calls=[ToolCall(name="slow", args={"x": 1}, id="c1")],
                 name="calc")


def test_a_run_timed_out_in_a_tool_honours_allow_pending() -> None:
    events = run(timed_out_agent(), ["go"])
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "WorkflowTimedOutEvent"]
    assert read(events, allow_pending=True) == [
        SYSTEM, HumanMessage(content="go"),
        CALL.model_copy(update={"metadata": ended(
            "WorkflowTimedOutEvent", {"timeout": 0.5, "active_steps": ["call_tool"]})}),
    ]
    assert refused(events) == (
        "unanswered_tool_call", 1, "events[1].data.response.tool_calls[0]",
        "tool call 'slow' (id 'c1') has no result before the conversation ends "
        "(allow_pending=True accepts a trace cut mid-tool)")


def test_a_retry_after_a_timed_out_call_leaves_the_call_unanswered() -> None:
    memory = Memory.from_defaults(session_id="retry-timeout", token_limit=1_000_000)
    agent = timed_out_agent(say("ok"))
    events = run(agent, ["go"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "WorkflowTimedOutEvent",
                             "AgentInput", "AgentOutput", "StopEvent"]
    # the run saved nothing but the user message: the retry is given no call
    assert [m.content for m in events[4].input] == ["Be brief.", "go", "again"]
    expected = ("unanswered_tool_call", 1, "events[1].data.response.tool_calls[0]",
                "tool call 'slow' (id 'c1') has no result before events[4].data.input[2]")
    assert refused(events) == expected
    assert refused(events, allow_pending=True) == expected


def test_a_run_cancelled_in_a_tool_honours_allow_pending() -> None:
    events = run(timed_out_agent(), ["go"], cancel_after="ToolCall")
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "WorkflowCancelledEvent"]
    assert read(events, allow_pending=True) == [
        SYSTEM, HumanMessage(content="go"),
        CALL.model_copy(update={"metadata": ended("WorkflowCancelledEvent", {})}),
    ]


# --- a failed run, then a retry on the same memory ------------------------------------------


def test_a_retry_after_a_failed_model_call_reads_both_runs() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([connection_lost, say("3")]),
                          system_prompt="Be brief.", streaming=False)
    memory = Memory.from_defaults(session_id="retry", token_limit=1_000_000)
    events = run(agent, ["add 1 2"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    assert kinds(events) == ["AgentInput", "WorkflowFailedEvent", "AgentInput", "AgentOutput",
                             "StopEvent"]
    messages = read(events)
    assert messages == [
        SYSTEM,
        HumanMessage(content="add 1 2", metadata=ended(
            "WorkflowFailedEvent", failed(events[1], "connection reset"))),
        HumanMessage(content="again"),
        AIMessage(content="3", name="calc"),
    ]
    history = llama_index.to_messages(asyncio.run(memory.aget_all()))
    assert llama_index.strip_event_extras(messages) == history
    assert llama_index.dump_events(events)[1] == {
        "event": "WorkflowFailedEvent", "data": failed(events[1], "connection reset")}
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].metadata.llama_index.event")
    assert [m.content for m in llama_index.from_messages(messages, drop=["event_extras"])] == [
        "Be brief.", "add 1 2", "again", "3"]


def test_a_failure_after_a_tool_round_keeps_the_round_the_retry_is_not_given() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([
        call("c1", "add", a=1, b=2), connection_lost, say("3")]),
        system_prompt="Be brief.", streaming=False)
    memory = Memory.from_defaults(session_id="retry-round", token_limit=1_000_000)
    events = run(agent, ["add 1 2"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "ToolCallResult",
                             "AgentInput", "WorkflowFailedEvent", "AgentInput", "AgentOutput",
                             "StopEvent"]
    assert [m.content for m in events[6].input] == ["Be brief.", "add 1 2", "again"]
    data = failed(events[5], "connection reset")
    assert read(events) == [
        SYSTEM, HumanMessage(content="add 1 2"),
        AIMessage(content=[], tool_calls=[ToolCall(name="add", args={"a": 1, "b": 2},
                                                   id="c1")], name="calc"),
        ToolMessage(content="3", tool_call_id="c1", name="add", metadata={EVENT: {"event": {
            "raw_output": 3, "run_ended": [{"event": "WorkflowFailedEvent", "data": data}]}}}),
        HumanMessage(content="again"),
        AIMessage(content="3", name="calc"),
    ]
    # memory holds none of the round: the run saves it only when it finishes
    assert llama_index.to_messages(asyncio.run(memory.aget_all())) == [
        HumanMessage(content="add 1 2"), HumanMessage(content="again"), AIMessage(content="3")]


def test_a_log_that_begins_with_a_run_ending_event_is_a_truncated_trace() -> None:
    agent = FunctionAgent(name="calc", tools=[], llm=scripted([connection_lost]),
                          system_prompt="Be brief.", streaming=False)
    events = run(agent, ["add 1 2"])
    assert kinds(events) == ["AgentInput", "WorkflowFailedEvent"]
    assert refused(events[1:]) == (
        "truncated_trace", 0, "events[0]",
        "the run ended (WorkflowFailedEvent: step 'run_agent_step' failed with "
        "builtins.ConnectionError: connection reset) before any message was read: the events "
        "hold no conversation to keep it with")


FAILURE = {"step_name": "run_agent_step",
           "exception": {"exception_type": "builtins.ConnectionError",
                         "exception_message": "connection reset"},
           "attempts": 1, "elapsed_seconds": 0.5}
FIRST_INPUT = {"event": "AgentInput", "data": {
    "input": [{"role": "user", "blocks": [{"block_type": "text", "text": "hi"}]}],
    "current_agent_name": "calc"}}


@pytest.mark.parametrize(("change", "error"), [
    (lambda data: data.update(step_name=1),
     ("malformed_event", 1, "events[1].data.step_name", "'step_name' must be a str, found 1")),
    (lambda data: data["exception"].pop("exception_message"),
     ("malformed_event", 1, "events[1].data.exception.exception_message",
      "'exception_message' must be a str, found nothing")),
    (lambda data: data.update(note="x"),
     ("malformed_event", 1, "events[1].data.note",
      "the event holds 'note' = 'x', a field its type does not declare (an extra it was made "
      "with): AgentWorkflow makes none, and no message has a place for it")),
    (lambda data: data.update(elapsed_seconds=float("nan")),
     ("unserializable_value", 1, "events[1].data.elapsed_seconds", None)),
])
def test_a_failure_event_dict_is_checked_where_it_is_wrong(
    change: Callable[[dict[str, Any]], Any], error: tuple[Any, ...]
) -> None:
    data = copy.deepcopy(FAILURE)
    change(data)
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages([FIRST_INPUT, {"event": "WorkflowFailedEvent",
                                                      "data": data}])
    found = (caught.value.code, caught.value.index, caught.value.path, caught.value.detail)
    assert found[:3] == error[:3]
    if error[3] is not None:
        assert found[3] == error[3]


def test_a_timed_out_event_dict_is_kept_verbatim() -> None:
    data = {"timeout": 2.0, "active_steps": ["call_tool", "aggregate_tool_results"]}
    assert llama_index.events_to_messages(
        [FIRST_INPUT, {"event": "WorkflowTimedOutEvent", "data": data}]) == [
        HumanMessage(content="hi", metadata=ended("WorkflowTimedOutEvent", data))]


def test_the_run_ending_events_are_listed() -> None:
    assert list(llama_index.EVENT_TYPES)[-3:] == [
        "WorkflowFailedEvent", "WorkflowCancelledEvent", "WorkflowTimedOutEvent"]


# --- memory blocks in the user message: the same run, seen two ways -------------------------


def test_memory_blocks_in_the_user_message_show_in_the_events_only() -> None:
    agent = FunctionAgent(tools=[add], llm=scripted([call("c1", "add", a=1, b=2), say("3"),
                                                     say("bye")]),
                          system_prompt="sys", streaming=False)
    memory = Memory.from_defaults(
        session_id="blocks", token_limit=1_000_000, insert_method="user",
        memory_blocks=[StaticMemoryBlock(name="profile", static_content="User is Bob.",
                                         priority=0)])
    events = run_ok(agent, ["add 1 2", "thanks"], memory=memory)
    block = TextPart(text="<memory>\n<profile>\nUser is Bob.\n</profile>\n</memory>")
    answer = AIMessage(content=[], tool_calls=[ToolCall(name="add", args={"a": 1, "b": 2},
                                                        id="c1")])
    result = ToolMessage(content="3", tool_call_id="c1")
    # the events: each user message as the model first got it, the memory blocks before it
    assert llama_index.strip_event_extras(read(events)) == [
        HumanMessage(content=[block, TextPart(text="add 1 2")]), answer, result,
        AIMessage(content="3"), HumanMessage(content=[block, TextPart(text="thanks")]),
        AIMessage(content="bye"),
    ]
    # every input of a run gives its user message with the blocks; the next run's, plain
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "ToolCallResult",
                             "AgentInput", "AgentOutput", "StopEvent", "AgentInput",
                             "AgentOutput", "StopEvent"]
    assert events[4].input[1] == events[0].input[1]
    assert [m.content for m in events[7].input[:2]] == ["sys", "add 1 2"]
    # memory: plain
    assert llama_index.to_messages(asyncio.run(memory.aget_all())) == [
        HumanMessage(content="add 1 2"), answer, result, AIMessage(content="3"),
        HumanMessage(content="thanks"), AIMessage(content="bye"),
    ]


def test_a_retry_after_a_failure_before_the_answer_with_memory_blocks_reads_on() -> None:
    agent = FunctionAgent(tools=[], llm=scripted([connection_lost, say("3")]),
                          system_prompt="sys", streaming=False)
    memory = Memory.from_defaults(
        session_id="blocks-retry", token_limit=1_000_000, insert_method="user",
        memory_blocks=[StaticMemoryBlock(name="profile", static_content="User is Bob.",
                                         priority=0)])
    events = run(agent, ["add 1 2"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    assert kinds(events) == ["AgentInput", "WorkflowFailedEvent", "AgentInput", "AgentOutput",
                             "StopEvent"]
    # the retry holds the failed run's message plain, the blocks before its own
    block = TextPart(text="<memory>\n<profile>\nUser is Bob.\n</profile>\n</memory>")
    assert read(events) == [
        SystemMessage(content="sys"),
        HumanMessage(content=[block, TextPart(text="add 1 2")], metadata=ended(
            "WorkflowFailedEvent", failed(events[1], "connection reset"))),
        HumanMessage(content=[block, TextPart(text="again")]),
        AIMessage(content="3", name="Agent"),
    ]
