"""LlamaIndex runs of a model whose tool calls carry no id.

Every run here is a real ``FunctionAgent`` of llama-index-core with its
``MockFunctionCallingLLM`` answering from a script whose ``ToolCallBlock``s have no
``tool_call_id``. FunctionAgent names such a call ``""`` everywhere it names it (the
output's ``ToolSelection``, ``ToolCall``, ``ToolCallResult``, the tool message it writes to
memory: ``{"tool_call_id": ""}``) while the response keeps the block as it came, id-less.
Both forms of the run read the same: an id-less call, and an id-less result (``""`` kept
verbatim in ``metadata["llama_index"]["additional_kwargs"]``) pairing with it by position;
but a history holding two or more such results after one reply is refused (FunctionAgent
writes them in the order the tools finished: see test_llama_index_fixes2_s47).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool
from test_llama_index_events_audit import forms, read, refused

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import llama_index

EVENT = "llama_index"  # the metadata namespace
IDLESS = {EVENT: {"additional_kwargs": {"tool_call_id": ""}}}
"""What a result of a call without an id keeps: FunctionAgent's ``""`` for its call id."""


def add_call(a: int, b: int) -> ToolCallBlock:
    return ToolCallBlock(tool_call_id=None, tool_name="add", tool_kwargs={"a": a, "b": b})


def calls(*blocks: ToolCallBlock) -> ChatMessage:
    return ChatMessage(role="assistant", blocks=list(blocks))


def say(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def scripted(script: list[ChatMessage]) -> MockFunctionCallingLLM:
    remaining = list(script)

    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        return remaining.pop(0)

    return MockFunctionCallingLLM(response_generator=respond)


async def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def answer(x: int) -> int:
    """Answer."""
    return x


def run(script: list[ChatMessage], turns: list[str],
        workflow: Any = None) -> tuple[list[Any], list[ChatMessage]]:
    """The events of each turn's run (copied as they come) and the memory they share; the
    workflow a FunctionAgent with ``add`` answering from ``script`` unless given."""
    agent = workflow or FunctionAgent(tools=[add], llm=scripted(script))
    memory = Memory.from_defaults(session_id="s47", token_limit=1_000_000)

    async def turns_run() -> tuple[list[Any], list[ChatMessage]]:
        events: list[Any] = []
        for text in turns:
            handler = agent.run(user_msg=text, memory=memory)
            events.extend([copy.deepcopy(event) async for event in handler.stream_events()])
            await handler
        return events, await memory.aget_all()

    return asyncio.run(turns_run())


def result(text: str, raw: int) -> ToolMessage:
    """An id-less result of ``add`` as the events read it."""
    return ToolMessage(content=text, name="add",
                       metadata={EVENT: {**IDLESS[EVENT], "event": {"raw_output": raw}}})


def call(a: int, b: int) -> ToolCall:
    return ToolCall(name="add", args={"a": a, "b": b})


ONE_CALL = [calls(add_call(1, 2)), say("3")]
PARALLEL_THEN_ONE = [calls(add_call(1, 2), add_call(5, 2)), say("3 and 7"),
                     calls(add_call(7, 2)), say("9")]


def test_the_run_really_names_an_idless_call_with_an_empty_id() -> None:
    events, history = run(ONE_CALL, ["1+2?"])
    assert [type(event).__name__ for event in events] == [
        "AgentInput", "AgentStream", "AgentOutput", "ToolCall", "ToolCallResult",
        "AgentInput", "AgentStream", "AgentOutput", "StopEvent"]
    assert events[2].response.blocks[0].tool_call_id is None
    assert [selection.tool_id for selection in events[2].tool_calls] == [""]
    assert (events[3].tool_id, events[4].tool_id) == ("", "")
    assert history[2].additional_kwargs == {"tool_call_id": ""}


def test_events_of_an_idless_call_read_as_an_idless_call_and_result() -> None:
    events, _ = run(ONE_CALL, ["1+2?"])
    assert read(events) == [
        HumanMessage(content="1+2?"),
        AIMessage(content=[], tool_calls=[call(1, 2)], name="Agent"),
        result("3", 3),
        AIMessage(content="3", name="Agent"),
    ]


def test_history_of_an_idless_call_reads_and_round_trips() -> None:
    _, history = run(ONE_CALL, ["1+2?"])
    messages = llama_index.to_messages(history)
    assert messages == [
        HumanMessage(content="1+2?"),
        AIMessage(content=[], tool_calls=[call(1, 2)]),
        ToolMessage(content="3", metadata=IDLESS),
        AIMessage(content="3"),
    ]
    written = llama_index.from_messages(messages)
    assert [m.model_dump(mode="json") for m in written] == [
        m.model_dump(mode="json") for m in history]
    assert llama_index.to_messages(written) == messages


def test_parallel_idless_calls_over_two_runs_read_in_both_forms() -> None:
    events, history = run(PARALLEL_THEN_ONE, ["q1", "q2"])
    expected = [
        HumanMessage(content="q1"),
        AIMessage(content=[], tool_calls=[call(1, 2), call(5, 2)], name="Agent"),
        result("3", 3),
        result("7", 7),
        AIMessage(content="3 and 7", name="Agent"),
        HumanMessage(content="q2"),
        AIMessage(content=[], tool_calls=[call(7, 2)], name="Agent"),
        result("9", 9),
        AIMessage(content="9", name="Agent"),
    ]
    assert read(events) == expected
    assert history_refused(history) == (
        "ambiguous_trace", 3, "messages[3].additional_kwargs.tool_call_id")
    assert llama_index.to_messages(history[5:]) == llama_index.strip_event_extras(expected[5:])
    written = llama_index.from_messages(expected, drop=["event_extras"])
    assert llama_index.to_messages(written) == without_event(expected)


def history_refused(history: list[ChatMessage]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(history)
    return caught.value.code, caught.value.index, caught.value.path


def without_event(messages: list[Any]) -> list[Any]:
    """The messages as written without what only the events say, read back."""
    return [message.model_copy(update={"metadata": {EVENT: IDLESS[EVENT]}})
            if isinstance(message, ToolMessage) else message for message in messages]


def test_an_idless_selection_that_says_other_arguments_is_still_conflicting() -> None:
    events, _ = run(ONE_CALL, ["1+2?"])
    events[2].tool_calls[0].tool_kwargs = {"a": 1, "b": 5}
    code, index, path, _ = refused(events)
    assert (code, index, path) == ("conflicting_fields", 2, "events[2].data.tool_calls[0]")


def test_an_idless_result_of_another_tool_call_is_still_conflicting() -> None:
    events, _ = run(ONE_CALL, ["1+2?"])
    events[4].tool_kwargs = {"a": 9, "b": 2}
    code, index, path, _ = refused(events)
    assert (code, index, path) == ("conflicting_fields", 4, "events[4].data")


def test_an_idless_tool_call_event_of_another_tool_is_still_conflicting() -> None:
    events, _ = run(ONE_CALL, ["1+2?"])
    events[3].tool_name = "mul"
    code, index, path, _ = refused(events)
    assert (code, index, path) == ("conflicting_fields", 3, "events[3].data")


def test_a_selection_naming_another_id_than_the_response_call_is_still_conflicting() -> None:
    events, _ = run([calls(ToolCallBlock(tool_call_id="c1", tool_name="add",
                                         tool_kwargs={"a": 1, "b": 2})), say("3")], ["1+2?"])
    events[2].tool_calls[0].tool_id = "c2"
    code, index, path, _ = refused(events)
    assert (code, index, path) == ("conflicting_fields", 2, "events[2].data.tool_calls[0]")


def test_a_result_with_an_empty_call_id_is_not_written() -> None:
    # its call, whose id is "" too, is refused first: LlamaIndex takes "" for no id, so a
    # ToolCallBlock saying "" reads back as a call without one
    conversation = [HumanMessage(content="hi"),
                    AIMessage(content="", tool_calls=[ToolCall(name="add", args={}, id="")]),
                    ToolMessage(content="3", tool_call_id="")]
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(conversation)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].id")


def test_every_form_of_the_events_agrees() -> None:
    events, _ = run(ONE_CALL, ["1+2?"])
    first, *others = [llama_index.events_to_messages(form) for form in forms(events)]
    assert all(other == first for other in others)


def both_forms(events: list[Any], history: list[ChatMessage]) -> list[Any]:
    """The messages of the events, once the history is seen to read the same and back."""
    messages = read(events)
    read_history = llama_index.to_messages(history)
    assert llama_index.strip_event_extras(messages) == read_history
    written = llama_index.from_messages(read_history)
    assert [m.model_dump(mode="json") for m in written] == [
        m.model_dump(mode="json") for m in history]
    return messages


def test_parallel_idless_calls_whose_text_did_not_parse_each_keep_what_they_ran_with() -> None:
    texts = ['{"a": 1, "b": 2', '{"a": 5, "b": 2']
    script = [calls(*[ToolCallBlock(tool_name="add", tool_kwargs=text) for text in texts]),
              say("3 and 7")]
    events, history = run(script, ["q1"])
    unparsed = [ToolCall(name="add", invalid_args=text) for text in texts]
    ran = [{"a": 1, "b": 2}, {"a": 5, "b": 2}]
    assert history_refused(history) == (
        "ambiguous_trace", 3, "messages[3].additional_kwargs.tool_call_id")
    assert read(events) == [
        HumanMessage(content="q1"),
        AIMessage(content=[], tool_calls=unparsed, name="Agent"),
        *[ToolMessage(content=str(raw["a"] + 2), name="add", metadata={EVENT: {
            **IDLESS[EVENT], "event": {"raw_output": raw["a"] + 2, "tool_kwargs": raw}}})
          for raw in ran],
        AIMessage(content="3 and 7", name="Agent"),
    ]


def test_an_idless_call_of_a_tool_that_returns_directly() -> None:
    tool = FunctionTool.from_defaults(fn=answer, return_direct=True)
    script = [calls(ToolCallBlock(tool_name="answer", tool_kwargs={"x": 4})), say("again")]
    agent = FunctionAgent(tools=[tool], llm=scripted(script))
    events, history = run(script, ["q1", "q2"], agent)
    assert both_forms(events, history) == [
        HumanMessage(content="q1"),
        AIMessage(content=[], tool_calls=[ToolCall(name="answer", args={"x": 4})], name="Agent"),
        ToolMessage(content="4", name="answer", metadata={EVENT: {
            **IDLESS[EVENT], "event": {"return_direct": True, "raw_output": 4}}}),
        AIMessage(content="4", metadata=IDLESS),  # what FunctionAgent writes to memory
        HumanMessage(content="q2"),
        AIMessage(content="again", name="Agent"),
    ]


def test_an_agent_workflow_handing_off_with_idless_calls() -> None:
    handoff = ToolCallBlock(tool_name="handoff", tool_kwargs={"to_agent": "b", "reason": "math"})
    router = FunctionAgent(name="a", description="router", tools=[], can_handoff_to=["b"],
                           llm=scripted([calls(handoff)]))
    maths = FunctionAgent(name="b", description="maths", tools=[add],
                          llm=scripted([calls(add_call(1, 2)), say("3")]))
    workflow = AgentWorkflow(agents=[router, maths], root_agent="a")
    events, history = run([], ["1+2?"], workflow)
    handed = ("Agent b is now handling the request due to the following reason: math.\n"
              "Please continue with the current request.")
    assert both_forms(events, history) == [
        HumanMessage(content="1+2?"),
        AIMessage(content=[], tool_calls=[
            ToolCall(name="handoff", args={"to_agent": "b", "reason": "math"})], name="a"),
        ToolMessage(content=handed, name="handoff", metadata={EVENT: {
            **IDLESS[EVENT], "event": {"return_direct": True}}}),
        AIMessage(content=[], tool_calls=[call(1, 2)], name="b"),
        result("3", 3),
        AIMessage(content="3", name="b"),
    ]


def test_an_idless_result_logged_twice_answers_nothing_the_second_time() -> None:
    events, _ = run(ONE_CALL, ["1+2?"])
    code, index, path, detail = refused([*events[:5], events[4], *events[5:]])
    assert (code, index, path, detail) == (
        "orphan_tool_result", 5, "events[5].data.tool_id",
        "tool result has no id and all 1 call(s) of events[2].data.response are already "
        "answered")
