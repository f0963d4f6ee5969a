"""LlamaIndex: a developer message is history, the first rule fault of a stream wins, and the
writer keeps the conversation rules.

* A developer message of the history given to a run leads the agents' inputs after the
  agent's prompt; it is history (only a history holds one), read once, not part of the
  prompt: a handoff, the next turn back at the root agent, or a token limit that drops it
  neither reads it again nor reads the unchanged prompt again. A system message of the
  history that a token limit drops leaves the agent's prompt read once too.
* Two calls of one reply with one id are ``duplicate_tool_call_id`` at the second, whatever
  their arguments; a result logged twice is ``orphan_tool_result`` at the repeat; a call
  left unanswered keeps ``unanswered_tool_call`` when a later input follows it: the fault is
  told where the events have it, not as a later event that disagrees with what was read.
* ``from_messages`` checks the conversation rules first, as its reader does.

Every stream is a real ``FunctionAgent`` / ``AgentWorkflow`` run with a scripted mock LLM, read
in the three forms a stream comes in (objects, ``dump_events`` JSON, the workflow
serializer's JSON).
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory
from test_llama_index_events_audit import call, calls, kinds, read, refused, say, scripted

from tracebridge import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import llama_index

EVENT = "llama_index"
HISTORY = [ChatMessage(role="developer", content="dev note"),
           ChatMessage(role="user", content="earlier"),
           ChatMessage(role="assistant", content="ok")]


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def slow_add(a: int, b: int) -> int:
    """Add two numbers (the larger ``a``, the later the result)."""
    await asyncio.sleep(0.02 * a)
    return a + b


def run_turns(workflow: Any, turns: list[str], memory: Any = None,
              history: list[ChatMessage] | None = None,
              first: dict[str, Any] | None = None) -> tuple[list[Any], list[Any]]:
    """The events of each turn's run on one memory (``history`` given to the first run as
    ``chat_history``, ``first`` its other options), and what memory holds at the end."""
    shared = memory or Memory.from_defaults(session_id="s46", token_limit=1_000_000)

    async def go() -> tuple[list[Any], list[Any]]:
        events: list[Any] = []
        for k, text in enumerate(turns):
            options = {**(first or {}), **({"chat_history": history} if history else {})}
            handler = workflow.run(user_msg=text, memory=shared, **(options if k == 0 else {}))
            async for event in handler.stream_events():
                events.append(copy.deepcopy(event))
            await handler
        return events, await shared.aget_all()

    return asyncio.run(go())


def seen(messages: list[Any]) -> list[tuple[str, str | None, str]]:
    """Each message as (type, role of a system message or name of a reply, text)."""
    return [(m.type, getattr(m, "role", None) or getattr(m, "name", None), m.text)
            for m in messages]


# --- a developer message is history ---------------------------------------------------------


def _handoff(math_prompt: str | None) -> tuple[list[Any], list[Any]]:
    triage = FunctionAgent(name="triage", description="t", system_prompt="you triage",
                           llm=scripted([calls(call("h1", "handoff", to_agent="math",
                                                    reason="r")), say("t2")]),
                           can_handoff_to=["math"], streaming=False)
    math = FunctionAgent(name="math", description="m", system_prompt=math_prompt,
                         llm=scripted([say("3")]), can_handoff_to=["triage"], streaming=False)
    workflow = AgentWorkflow(agents=[triage, math], root_agent="triage")
    return run_turns(workflow, ["add 1 2", "again"], history=HISTORY)


def test_a_developer_message_of_the_history_is_read_once_across_handoffs() -> None:
    events, memory = _handoff("math sys")
    messages = read(events)
    assert [(m.type, m.text) for m in messages if isinstance(m, SystemMessage)] == [
        ("system", "you triage"), ("system", "dev note"), ("system", "math sys"),
        ("system", "you triage")]
    assert seen(messages)[:4] == [("system", "system", "you triage"),
                                  ("system", "developer", "dev note"),
                                  ("human", None, "earlier"), ("ai", None, "ok")]
    assert [m for m in messages if getattr(m, "role", None) == "developer"] == [
        SystemMessage(content="dev note", role="developer")]
    assert llama_index.strip_event_extras(messages) == llama_index.to_messages(memory)


def test_a_handoff_to_an_agent_without_a_prompt_is_marked_not_a_developer_message_again(
) -> None:
    events, memory = _handoff(None)
    messages = read(events)
    assert seen(messages) == [
        ("system", "system", "you triage"), ("system", "developer", "dev note"),
        ("human", None, "earlier"), ("ai", None, "ok"), ("human", None, "add 1 2"),
        ("ai", "triage", ""), ("tool", "handoff", messages[6].text), ("ai", "math", "3"),
        ("system", "system", "you triage"), ("human", None, "again"), ("ai", "triage", "t2")]
    assert messages[7].metadata == {EVENT: {"event": {"no_system_prompt": True}}}
    assert llama_index.strip_event_extras(messages) == llama_index.to_messages(memory)


@pytest.mark.parametrize("role", ["developer", "system"])
def test_a_token_limit_that_drops_a_message_of_the_history_reads_no_prompt_again(
        role: str) -> None:
    long = " word" * 10
    agent = FunctionAgent(name="calc", tools=[add], system_prompt="sys", llm=scripted([
        answer for k in range(6)
        for answer in (calls(call(f"c{k}", "add", a=k, b=1)), say(f"answer {k}{long}"))]))
    memory = Memory.from_defaults(session_id="s46-flush", token_limit=200,
                                  chat_history_token_ratio=0.7, token_flush_size=40)
    history = [ChatMessage(role=role, content="house rules"),
               ChatMessage(role="user", content="old q"),
               ChatMessage(role="assistant", content="old a")]
    events, held = run_turns(agent, [f"q{k}{long}" for k in range(6)], memory=memory,
                             history=history)
    inputs = [event.input for event in events if type(event).__name__ == "AgentInput"]
    assert [item.role.value for item in inputs[0][:2]] == ["system", role]
    assert [item.role.value for item in inputs[-1][:2]] == ["system", "user"]  # dropped
    messages = read(events)
    assert [(i, m.role, m.text) for i, m in enumerate(messages)
            if isinstance(m, SystemMessage)] == [(0, "system", "sys"), (1, role, "house rules")]
    assert len(messages) == 28
    if role == "developer":  # (a history's system message is stripped too: documented)
        assert llama_index.strip_event_extras(messages) == llama_index.to_messages(held)


# --- the first fault of a stream is told where it is ----------------------------------------


@pytest.mark.parametrize("second", [{"a": 2, "b": 2}, {"a": 1, "b": 2}], ids=["other", "same"])
def test_two_calls_of_one_reply_with_one_id_are_a_duplicate_id(second: dict[str, int]) -> None:
    agent = FunctionAgent(name="calc", tools=[add], system_prompt="sys", streaming=False,
                          llm=scripted([calls(call("c1", "add", a=1, b=2),
                                              call("c1", "add", **second)), say("done")]))
    events, memory = run_turns(agent, ["hi"])
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "ToolCallResult",
                             "ToolCall", "ToolCallResult", "AgentInput", "AgentOutput",
                             "StopEvent"]
    assert refused(events) == (
        "duplicate_tool_call_id", 1, "events[1].data.response.tool_calls[1].id",
        "tool call id 'c1' is already used at events[1].data.response")
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(memory)
    assert (caught.value.code, caught.value.path) == (
        "duplicate_tool_call_id", "messages[1].tool_calls[1].id")


def _parallel_run() -> list[Any]:
    agent = FunctionAgent(name="calc", tools=[slow_add], system_prompt="sys", streaming=False,
                          llm=scripted([calls(call("c1", "slow_add", a=1, b=2),
                                              call("c2", "slow_add", a=2, b=2)),
                                        say("done"), say("again done")]))
    events, _ = run_turns(agent, ["hi", "again"])
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "ToolCall",
                             "ToolCallResult", "ToolCallResult", "AgentInput", "AgentOutput",
                             "StopEvent", "AgentInput", "AgentOutput", "StopEvent"]
    assert [events[4].tool_id, events[5].tool_id] == ["c1", "c2"]
    return events


@pytest.mark.parametrize("repeated", [4, 5], ids=["first", "second"])
@pytest.mark.parametrize("cut", [False, True], ids=["events-after", "ends-there"])
def test_a_result_logged_twice_is_an_orphan_at_the_repeat(repeated: int, cut: bool) -> None:
    events = _parallel_run()
    broken = [*events[:repeated + 1], events[repeated],
              *([] if cut else events[repeated + 1:])]
    at = repeated + 1
    assert refused(broken, allow_pending=True) == (
        "orphan_tool_result", at, f"events[{at}].data.tool_id",
        f"tool_call_id {events[repeated].tool_id!r} was already answered at "
        f"events[{repeated}].data")


def test_a_result_of_an_earlier_reply_logged_again_is_an_orphan_there() -> None:
    events = _parallel_run()
    broken = [*events[:10], events[4], *events[10:]]  # after the second run's input
    assert refused(broken) == (
        "orphan_tool_result", 10, "events[10].data.tool_id",
        "tool result answers nothing: it must follow an AIMessage or a ToolMessage, not a "
        "human message")


def test_a_call_cut_by_the_iteration_limit_stays_unanswered_when_a_turn_follows() -> None:
    agent = FunctionAgent(name="a", tools=[add], system_prompt="sys", streaming=False,
                          llm=scripted([calls(call("c0", "add", a=1, b=2)), say("gave up"),
                                        say("t2")]))
    events, _ = run_turns(agent, ["one", "two"],
                          first={"max_iterations": 1, "early_stopping_method": "generate"})
    assert kinds(events) == ["AgentInput", "AgentOutput", "AgentOutput", "StopEvent",
                             "AgentInput", "AgentOutput", "StopEvent"]
    expected = ("unanswered_tool_call", 1, "events[1].data.response.tool_calls[0]",
                "tool call 'add' (id 'c0') has no result before events[2].data.response")
    assert refused(events) == expected
    assert refused(events, allow_pending=True) == expected
    assert refused(events[:4]) == expected  # the run alone, as before


# --- the writer keeps the rules -------------------------------------------------------------

ASK = HumanMessage(content="q")
CALL = AIMessage(tool_calls=[ToolCall(name="f", args={"a": 1}, id="c1")])


@pytest.mark.parametrize(("conversation", "expected"), [
    pytest.param([], ("empty_conversation", None, None), id="empty"),
    pytest.param([ASK, ToolMessage(content="r", tool_call_id="c1")],
                 ("orphan_tool_result", 1, "messages[1].tool_call_id"), id="orphan"),
    pytest.param([ASK, CALL, ToolMessage(content="r", tool_call_id="c1"),
                  ToolMessage(content="r", tool_call_id="c1")],
                 ("orphan_tool_result", 3, "messages[3].tool_call_id"), id="answered-twice"),
    pytest.param([ASK, CALL, ToolMessage(content="r", tool_call_id="c1"), CALL],
                 ("duplicate_tool_call_id", 3, "messages[3].tool_calls[0].id"),
                 id="duplicate-id"),
    pytest.param([ASK, CALL, ASK], ("unanswered_tool_call", 1, "messages[1].tool_calls[0]"),
                 id="unanswered-mid-conversation"),
    pytest.param([ASK, AIMessage.model_construct(content="x", tool_calls=None)],
                 ("malformed_event", 1, "messages[1].tool_calls"), id="unchecked-message"),
])
def test_the_writer_refuses_what_breaks_the_rules(conversation: list[Any],
                                                  expected: tuple[Any, ...]) -> None:
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(conversation)
    assert (caught.value.code, caught.value.index, caught.value.path) == expected
    assert caught.value.source == "llama_index"


def test_the_writer_writes_calls_still_unanswered_at_the_end() -> None:
    written = llama_index.from_messages([ASK, CALL])
    assert [m.model_dump(mode="json") for m in written] == [
        {"role": "user", "additional_kwargs": {},
         "blocks": [{"block_type": "text", "text": "q"}]},
        {"role": "assistant", "additional_kwargs": {},
         "blocks": [{"block_type": "text", "text": ""},
                    {"block_type": "tool_call", "tool_call_id": "c1", "tool_name": "f",
                     "tool_kwargs": {"a": 1}}]}]
    assert llama_index.to_messages(written, allow_pending=True) == [ASK, CALL]
