"""LlamaIndex runs whose parallel calls without an id finish out of call order.

``FunctionAgent`` runs a reply's calls at once: each ``ToolCallResult`` is streamed when its
tool finishes, and memory gets the results in that order too. Every run here is a real
``FunctionAgent`` of llama-index-core, its model scripted (``MockFunctionCallingLLM``), its
tools sleeping so that they finish in a known order. The events name each result's call by
its tool name and arguments: they read, each result after the results of the calls before
its own (where the rules pair a result without an id). The history names no call: two or
more such results after one reply are refused.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from test_llama_index_events_audit import read
from test_llama_index_fixes_s47 import EVENT, IDLESS, calls, run, say, scripted

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import llama_index


async def slow_add(a: int, b: int) -> int:
    """Add, slowly."""
    await asyncio.sleep(0.2)
    return a + b


async def add(a: int, b: int) -> int:
    """Add."""
    return a + b


async def mid_add(a: int, b: int) -> int:
    """Add, not so slowly."""
    await asyncio.sleep(0.1)
    return a + b


def block(name: str, a: int, b: int, call_id: str | None = None) -> ToolCallBlock:
    return ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs={"a": a, "b": b})


def agent_run(script: list[ChatMessage]) -> tuple[list[Any], list[ChatMessage]]:
    agent = FunctionAgent(tools=[slow_add, mid_add, add], llm=scripted(script))
    return run(script, ["q"], agent)


def result_of(tool: str, total: int, call_id: str | None = None) -> ToolMessage:
    """A result as the events read it: of a call without an id unless ``call_id``."""
    kept = {} if call_id is not None else IDLESS[EVENT]
    return ToolMessage(content=str(total), name=tool, tool_call_id=call_id,
                       metadata={EVENT: {**kept, "event": {"raw_output": total}}})


def finished(events: list[Any]) -> list[str]:
    return [event.tool_name for event in events if type(event).__name__ == "ToolCallResult"]


SLOW_THEN_FAST = [calls(block("slow_add", 1, 2), block("add", 5, 2)), say("done")]


def test_idless_results_streamed_out_of_call_order_read_in_call_order() -> None:
    events, _ = agent_run(SLOW_THEN_FAST)
    assert finished(events) == ["add", "slow_add"]
    assert read(events) == [
        HumanMessage(content="q"),
        AIMessage(content=[], tool_calls=[ToolCall(name="slow_add", args={"a": 1, "b": 2}),
                                          ToolCall(name="add", args={"a": 5, "b": 2})],
                  name="Agent"),
        result_of("slow_add", 3),
        result_of("add", 7),
        AIMessage(content="done", name="Agent"),
    ]


def test_three_idless_results_in_reverse_order_each_pair_with_their_call() -> None:
    events, _ = agent_run([calls(block("slow_add", 1, 1), block("mid_add", 2, 2),
                                 block("add", 3, 3)), say("done")])
    assert finished(events) == ["add", "mid_add", "slow_add"]
    messages = read(events)
    assert [(c.name, c.args["a"]) for c in messages[1].tool_calls] == [
        ("slow_add", 1), ("mid_add", 2), ("add", 3)]
    assert messages[2:5] == [result_of("slow_add", 2), result_of("mid_add", 4),
                             result_of("add", 6)]


def test_out_of_order_idless_results_of_calls_whose_text_did_not_parse_keep_what_they_ran_with(
) -> None:
    texts = ['{"a": 1, "b": 2', '{"a": 5, "b": 2']
    events, _ = agent_run([calls(ToolCallBlock(tool_name="slow_add", tool_kwargs=texts[0]),
                                 ToolCallBlock(tool_name="add", tool_kwargs=texts[1])),
                           say("done")])
    assert finished(events) == ["add", "slow_add"]
    messages = read(events)
    assert messages[1].tool_calls == [ToolCall(name="slow_add", invalid_args=texts[0]),
                                      ToolCall(name="add", invalid_args=texts[1])]
    assert messages[2:4] == [
        ToolMessage(content="3", name="slow_add", metadata={EVENT: {**IDLESS[EVENT], "event": {
            "raw_output": 3, "tool_kwargs": {"a": 1, "b": 2}}}}),
        ToolMessage(content="7", name="add", metadata={EVENT: {**IDLESS[EVENT], "event": {
            "raw_output": 7, "tool_kwargs": {"a": 5, "b": 2}}}}),
    ]


def test_a_result_with_an_id_finishing_after_an_idless_one_goes_before_it() -> None:
    # the rules pair the id-less result with the first call not answered yet: the slow
    # call's, until its result (by id) comes before
    events, _ = agent_run([calls(block("slow_add", 1, 2, "c1"), block("add", 5, 2)),
                           say("done")])
    assert finished(events) == ["add", "slow_add"]
    assert read(events)[2:4] == [result_of("slow_add", 3, "c1"), result_of("add", 7)]


def test_a_result_with_an_id_finishing_first_stays_first() -> None:
    events, _ = agent_run([calls(block("slow_add", 1, 2), block("add", 5, 2, "c2")),
                           say("done")])
    assert finished(events) == ["add", "slow_add"]
    assert read(events)[2:4] == [result_of("add", 7, "c2"), result_of("slow_add", 3)]


def test_the_same_run_with_ids_reads_as_it_did() -> None:
    events, _ = agent_run([calls(block("slow_add", 1, 2, "c1"), block("add", 5, 2, "c2")),
                           say("done")])
    assert read(events)[2:4] == [result_of("add", 7, "c2"), result_of("slow_add", 3, "c1")]


def test_an_idless_result_naming_no_call_of_the_reply_is_still_conflicting() -> None:
    events, _ = agent_run(SLOW_THEN_FAST)
    first = next(k for k, event in enumerate(events)
                 if type(event).__name__ == "ToolCallResult")
    events[first].tool_kwargs = {"a": 9, "b": 2}
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "conflicting_fields", first, f"events[{first}].data")


def test_the_history_of_parallel_idless_calls_is_refused_where_its_order_says_nothing() -> None:
    _, history = agent_run(SLOW_THEN_FAST)
    assert [m.content for m in history[2:4]] == ["7", "3"]  # the order the tools finished
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(history)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "ambiguous_trace", 3, "messages[3].additional_kwargs.tool_call_id")
    assert error.detail.startswith(
        "messages[2] and messages[3] are results of calls without an id of messages[1], as "
        "FunctionAgent writes them")


def test_the_events_read_written_back_read_back_paired() -> None:
    events, _ = agent_run(SLOW_THEN_FAST)
    messages = read(events)
    written = llama_index.from_messages(messages, drop=["event_extras"])
    assert [m.additional_kwargs for m in written[2:4]] == [
        {"tool_call_id": "", "name": "slow_add"}, {"tool_call_id": "", "name": "add"}]
    assert llama_index.to_messages(written) == [
        message.model_copy(update={"metadata": {EVENT: IDLESS[EVENT]}})
        if isinstance(message, ToolMessage) else message for message in messages]
