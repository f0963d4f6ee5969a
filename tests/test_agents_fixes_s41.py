"""Regression tests of the openai_agents adapter, each on a real ``Runner.run`` with the golden
generator's scripted ``Model``: a handoff whose input filter leaves its tool items out of the
run (two agents' turns meet), where an error in a RunItem's raw item is said to be, a run that
continues a nested history, a tool's non-finite return value, and an empty list."""

from __future__ import annotations

import asyncio
import copy
import json
import math
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool, handoff
from agents.extensions import handoff_filters
from test_openai_agents import GENERATOR

from tracebridge import TraceError
from tracebridge.adapters import openai_agents
from tracebridge.messages import (
    AIMessage,
    HumanMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)

FAKE_ID = "__fake_id__"
"""The id the SDK's LiteLLM and any-llm models give every output message."""


def ran(agent: Agent[Any], given: Any, **options: Any) -> Any:
    return asyncio.run(Runner.run(agent, given, **options))


def outcome(read: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``read`` gives, or the ``(code, index, path)`` of the TraceError it raises."""
    try:
        return read(*args, **kwargs)
    except TraceError as error:
        return (error.code, error.index, error.path)


def stored(result: Any) -> dict[str, Any]:
    """The run's state as ``RunState.to_json()`` stores it, through JSON."""
    state: dict[str, Any] = json.loads(json.dumps(result.to_state().to_json()))
    return state


# --- a handoff whose input filter leaves its call and output out of the run ------------------


def filtered_handoff_run() -> Any:
    """Front says something and hands off to Billing with the SDK's own
    ``handoff_filters.remove_all_tools``; Billing's first response is a function call."""
    model = GENERATOR.ScriptModel([
        [GENERATOR.message("m0", "Passing you to billing."),
         GENERATOR.call("h1", "transfer_to_billing", "{}")],
        [GENERATOR.call("c1", "get_balance", '{"account_id": "ACC-77"}')],
        [GENERATOR.message("m1", "Your balance is 120.50 EUR.")],
    ])
    billing = Agent(name="Billing", model=model, tools=[GENERATOR.get_balance])
    front = Agent(name="Front", model=model, handoffs=[
        handoff(billing, input_filter=handoff_filters.remove_all_tools)
    ])
    return ran(front, "balance?")


def filtered_handoff_messages() -> list[Any]:
    status = {"fields": {"status": "completed"}}
    tool = {"tool_origin": {"type": "function"}}
    return [
        HumanMessage(content="balance?"),
        AIMessage(
            content=[TextPart(text="Passing you to billing.")], name="Front", id="m0",
            metadata={"openai_agents": {**status, "run_items": [
                {"type": "message_output_item", "agent": {"name": "Front"}}]}},
        ),
        AIMessage(
            content="", name="Billing",
            tool_calls=[ToolCall(name="get_balance", args={"account_id": "ACC-77"}, id="c1",
                                 metadata={"openai_agents": {"id": "fc_c1", **status}})],
            metadata={"openai_agents": {"run_items": [
                {"type": "tool_call_item", "agent": {"name": "Billing"},
                 "tool_name": "get_balance", "description": "Balance of an account.", **tool}]}},
        ),
        ToolMessage(
            content="Balance of ACC-77: 120.50 EUR", tool_call_id="c1",
            metadata={"openai_agents": {"run_items": [
                {"type": "tool_call_output_item", "agent": {"name": "Billing"},
                 "output": "Balance of ACC-77: 120.50 EUR", **tool}]}},
        ),
        AIMessage(
            content=[TextPart(text="Your balance is 120.50 EUR.")], name="Billing", id="m1",
            metadata={"openai_agents": {**status, "run_items": [
                {"type": "message_output_item", "agent": {"name": "Billing"}}]}},
        ),
    ]


def test_two_agents_whose_turns_meet_after_a_filtered_handoff_read_as_their_own_turns() -> None:
    result = filtered_handoff_run()
    assert [(item.type, item.agent.name) for item in result.new_items] == [
        ("message_output_item", "Front"), ("tool_call_item", "Billing"),
        ("tool_call_output_item", "Billing"), ("message_output_item", "Billing"),
    ]
    expected = filtered_handoff_messages()
    assert openai_agents.to_messages(result) == expected
    assert openai_agents.to_messages(result.new_items, input=result.input) == expected
    state = stored(result)
    assert openai_agents.to_messages(state["generated_items"],
                                     input=state["original_input"]) == expected
    assert openai_agents.handoffs(result) == []  # the filter left the handoff out of the run


def test_two_agents_turns_that_meet_are_not_representable_with_names_left_out() -> None:
    result = filtered_handoff_run()
    messages = openai_agents.to_messages(result)
    # input items have no agents: the two turns would read back as one
    with pytest.raises(TraceError) as caught:
        openai_agents.from_messages(messages, drop_names=True)
    error = caught.value
    assert (error.code, error.index, error.path) == ("not_representable", 2, "messages[2]")
    assert error.detail == (
        "two replies in a row with no item between them read back as one reply (a "
        "function_call item right after a message item)"
    )
    # the SDK's own list, which has no agents, reads as one unnamed turn
    back = openai_agents.to_messages(result.to_input_list())
    assert [(m.type, m.name, m.text) for m in back] == [
        ("human", None, "balance?"), ("ai", None, "Passing you to billing."),
        ("tool", None, "Balance of ACC-77: 120.50 EUR"),
        ("ai", None, "Your balance is 120.50 EUR."),
    ]
    assert [call.id for call in back[1].tool_calls] == ["c1"]


def test_two_agents_turns_that_meet_are_refused_before_a_later_fault() -> None:
    messages = openai_agents.to_messages(filtered_handoff_run())
    messages[3] = messages[3].model_copy(update={"is_error": True})
    with pytest.raises(TraceError) as caught:
        openai_agents.from_messages(messages, drop_names=True)
    error = caught.value
    assert (error.code, error.index, error.path) == ("not_representable", 2, "messages[2]")


def test_an_agent_that_speaks_while_a_call_of_another_waits_is_refused_at_its_item() -> None:
    items = stored(filtered_handoff_run())["generated_items"]
    front_call = copy.deepcopy(items[1])
    front_call["agent"] = {"name": "Front"}
    # Front: its message and a call; Billing speaks before the call's output
    changed = [items[0], front_call, items[3], items[2]]
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(changed, input="balance?")
    error = caught.value
    assert (error.code, error.index, error.path) == ("conflicting_fields", 2, "items[2]")
    assert error.detail == (
        "the agent 'Billing' speaks while the call 'c1' of an earlier agent still waits for "
        "its output: the items of the two agents read as one assistant message"
    )


# --- where an error in a RunItem's raw item is -------------------------------------------------


def weather_run() -> Any:
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("c1", "get_weather", '{"city": "Paris"}')],
        [GENERATOR.message("m1", "Sunny.")],
    ])
    return ran(GENERATOR.weather_agent(model), "hi")


def test_an_error_in_a_run_items_raw_item_is_at_its_raw_item() -> None:
    result = weather_run()
    assert [item.type for item in result.new_items] == [
        "tool_call_item", "tool_call_output_item", "message_output_item"
    ]
    result.new_items[1].raw_item["output"] = 5  # the wrapper's own output is untouched
    assert outcome(openai_agents.to_messages, result) == (
        "malformed_event", 1, "new_items[1].raw_item.output"
    )


@pytest.mark.parametrize(
    ("at", "key", "expected"),
    [
        (1, "output", ("malformed_event", 1, "items[1].raw_item.output")),
        (0, "call_id", ("malformed_event", 0, "items[0].raw_item.call_id")),
        (0, "arguments", ("malformed_event", 0, "items[0].raw_item.arguments")),
    ],
)
def test_an_error_in_a_stored_run_items_raw_item_is_at_its_raw_item(
    at: int, key: str, expected: tuple[str, int, str]
) -> None:
    items = stored(weather_run())["generated_items"]
    items[at]["raw_item"][key] = 5
    assert outcome(openai_agents.to_messages, items, input="hi") == expected


def test_a_rule_broken_by_a_run_items_raw_item_is_at_its_raw_item() -> None:
    items = stored(weather_run())["generated_items"]
    items[1]["raw_item"]["call_id"] = "c9"  # an output that answers no call
    assert outcome(openai_agents.to_messages, items, input="hi") == (
        "orphan_tool_result", 1, "items[1].raw_item.call_id"
    )


# --- a run that continues a nested history -----------------------------------------------------


def continued_nested_run() -> tuple[Any, Any]:
    """Run 1 hands off with a nested history; run 2 continues its to_input_list() with no
    handoff of its own, and B says again what it said, under the same placeholder id."""
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("h1", "transfer_to_b", "{}")],
        [GENERATOR.message(FAKE_ID, "Anything else?")],
        [GENERATOR.message(FAKE_ID, "Anything else?")],
    ])
    b = Agent(name="B", model=model)
    a = Agent(name="A", model=model, handoffs=[b])
    first = ran(a, "hi", run_config=RunConfig(nest_handoff_history=True))
    second = ran(b, [*first.to_input_list(), {"role": "user", "content": "what?"}])
    return first, second


def test_a_run_that_continues_a_nested_history_reads_by_every_route() -> None:
    first, second = continued_nested_run()
    assert openai_agents.to_messages(first.to_input_list())[0].text.startswith(
        "For context, here is the conversation so far between the user and the previous agent:"
    )
    assert [item.type for item in second.new_items] == ["message_output_item"]
    assert second.new_items[0].raw_item.id == FAKE_ID
    expected = openai_agents.to_messages(second)
    assert [(m.type, m.name, m.id) for m in expected] == [
        ("ai", None, None), ("tool", None, None), ("ai", None, FAKE_ID), ("human", None, None),
        ("ai", "B", FAKE_ID),
    ]
    assert openai_agents.to_messages(second.new_items, input=second.input) == expected
    # the stored input holds the summary as an output_text part: the same turns
    state = stored(second)
    kept = openai_agents.to_messages(state["generated_items"], input=state["original_input"])
    assert [(m.type, m.name, m.id, m.text) for m in kept] == [
        (m.type, m.name, m.id, m.text) for m in expected
    ]
    assert kept[4] == expected[4]


# --- a tool's non-finite return value ----------------------------------------------------------


@function_tool
def mean_latency(service: str) -> float:
    """Mean latency over the last hour (NaN when there were no requests)."""
    return float("nan")


@function_tool
def peak_latency(service: str) -> float:
    """Peak latency over the last hour (infinite when a request never ended)."""
    return float("inf")


@pytest.mark.parametrize(("tool", "text"), [(mean_latency, "nan"), (peak_latency, "inf")])
def test_a_tool_that_returned_a_non_finite_float_is_unserializable_at_its_output(
    tool: Any, text: str
) -> None:
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("c1", tool.name, '{"service": "api"}')],
        [GENERATOR.message("m1", "No traffic in the last hour.")],
    ])
    result = ran(Agent(name="Ops", model=model, tools=[tool]), "latency?")
    assert math.isnan(result.new_items[1].output) or math.isinf(result.new_items[1].output)
    assert result.to_input_list()[2] == {
        "call_id": "c1", "output": text, "type": "function_call_output"
    }
    assert len(openai_agents.to_messages(result.to_input_list())) == 4
    assert outcome(openai_agents.to_messages, result) == (
        "unserializable_value", 1, "new_items[1].output"
    )
    assert outcome(openai_agents.to_messages, result.new_items, input=result.input) == (
        "unserializable_value", 1, "items[1].output"
    )
    state = json.loads(result.to_state().to_string())
    assert outcome(openai_agents.to_messages, state["generated_items"],
                   input=state["original_input"]) == ("unserializable_value", 1, "items[1].output")


# --- an empty list -----------------------------------------------------------------------------


@pytest.mark.parametrize("given", [None, []])
def test_an_empty_list_is_an_empty_conversation_with_no_path(given: Any) -> None:
    assert outcome(openai_agents.to_messages, [], input=given) == (
        "empty_conversation", None, None
    )


# --- writing two agents' turns with their names left out --------------------------------------


def _named_turns_meeting() -> list[Any]:
    return [
        HumanMessage(content="q"), AIMessage(content="a", name="A"),
        AIMessage(content="", name="B", tool_calls=[ToolCall(name="f", args={}, id="c1")]),
        ToolMessage(content="r", tool_call_id="c1"),
    ]


def test_two_named_turns_in_a_row_are_refused_with_their_names_left_out() -> None:
    with pytest.raises(TraceError) as caught:
        openai_agents.from_messages(_named_turns_meeting(), drop_names=True)
    error = caught.value
    assert (error.code, error.index, error.path) == ("not_representable", 2, "messages[2]")
    assert error.detail == (
        "two replies in a row with no item between them read back as one reply (a "
        "function_call item right after a message item)"
    )


def test_two_named_turns_in_a_row_are_refused_as_the_same_turns_unnamed() -> None:
    unnamed = [m.model_copy(update={"name": None}) for m in _named_turns_meeting()]
    assert outcome(openai_agents.from_messages, _named_turns_meeting(), drop_names=True) == (
        outcome(openai_agents.from_messages, unnamed)
    )


def test_a_reasoning_turn_and_another_agents_message_are_refused_with_names_left_out() -> None:
    from agents.items import MessageOutputItem, ReasoningItem
    from openai.types.responses import (
        ResponseOutputMessage,
        ResponseOutputText,
        ResponseReasoningItem,
    )

    first, second = Agent(name="A"), Agent(name="B")
    items = [
        ReasoningItem(agent=first, raw_item=ResponseReasoningItem(
            id="r0", type="reasoning", summary=[])),
        MessageOutputItem(agent=second, raw_item=ResponseOutputMessage(
            id="m1", type="message", role="assistant", status="completed",
            content=[ResponseOutputText(type="output_text", text="t1", annotations=[])])),
    ]
    messages = openai_agents.to_messages(items, input="q")
    assert [(m.type, m.name) for m in messages] == [("human", None), ("ai", "A"), ("ai", "B")]
    unnamed = [m.model_copy(update={"name": None}) for m in messages]
    refused = outcome(openai_agents.from_messages, messages, drop_names=True)
    assert refused == outcome(openai_agents.from_messages, unnamed)
    assert refused == ("not_representable", 2, "messages[2]")


def test_a_call_id_used_again_by_another_agent_is_refused_when_written() -> None:
    messages = [
        HumanMessage(content="q"),
        AIMessage(content="a", name="A", tool_calls=[ToolCall(name="f", args={}, id="c1")]),
        ToolMessage(content="r", tool_call_id="c1"),
        AIMessage(content="b", name="A"),
        AIMessage(content="", name="B", tool_calls=[ToolCall(name="f", args={}, id="c1")]),
        ToolMessage(content="r", tool_call_id="c1"),
    ]
    with pytest.raises(TraceError) as caught:
        openai_agents.from_messages(messages, drop_names=True)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "duplicate_tool_call_id", 4, "messages[4].tool_calls[0].id"
    )
    assert error.detail == "tool call id 'c1' is already used at messages[1]"


# --- reading where two agents meet: each item read once ----------------------------------------


def test_a_run_whose_agents_meet_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from tracebridge.adapters.openai_agents import _agents, _bridge

    read_items: list[int] = []
    original = _bridge.read

    def counted(entries: Any, *, allow_pending: bool) -> Any:
        read_items.append(len(entries))
        return original(entries, allow_pending=allow_pending)

    monkeypatch.setattr(_agents, "read", counted)
    monkeypatch.setattr(openai_agents, "read", counted)
    result = filtered_handoff_run()
    assert openai_agents.to_messages(result) == filtered_handoff_messages()
    assert sum(read_items) == 1 + len(result.new_items)  # the input, then each RunItem once


def test_a_call_id_used_again_after_two_agents_meet_is_refused_at_its_item() -> None:
    items = stored(filtered_handoff_run())["generated_items"]
    again = copy.deepcopy(items[1:3])
    again[0]["raw_item"]["id"] = "fc_c1b"
    # Front speaks, Billing calls c1 and reads its output, then calls c1 again
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages([*items, *again], input="balance?")
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "duplicate_tool_call_id", 4, "items[4].raw_item.call_id"
    )


def test_a_copy_of_a_nested_history_is_told_before_a_later_fault_of_the_parts() -> None:
    # a run that copies an item into a nested history and has one agent speak while another's
    # call waits: the copy (items[0]) is the first fault, as the run read whole tells it
    from agents.items import (
        HandoffCallItem,
        HandoffOutputItem,
        MessageOutputItem,
        ToolCallItem,
        ToolCallOutputItem,
    )
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    first, second, third = Agent(name="A"), Agent(name="B"), Agent(name="C")

    def said(agent: Any, k: int) -> Any:
        return MessageOutputItem(agent=agent, raw_item=ResponseOutputMessage(
            id=f"m{k}", type="message", role="assistant", status="completed",
            content=[ResponseOutputText(type="output_text", text=f"t{k}", annotations=[])]))

    def called(agent: Any, call_id: str, name: str = "f") -> Any:
        return ToolCallItem(agent=agent, raw_item=ResponseFunctionToolCall(
            id=f"fc_{call_id}", type="function_call", call_id=call_id, name=name,
            arguments="{}", status="completed"))

    copied = said(first, 5)
    items = [copied, called(first, "c1"), said(second, 6),
             ToolCallOutputItem(agent=second, raw_item={"type": "function_call_output",
                                                        "call_id": "c1", "output": "o"},
                                output="o"),
             HandoffCallItem(agent=second, raw_item=called(second, "h1", "transfer_to_c").raw_item),
             HandoffOutputItem(agent=second, raw_item={"type": "function_call_output",
                                                       "call_id": "h1",
                                                       "output": '{"assistant": "C"}'},
                               source_agent=second, target_agent=third)]
    summary = {"role": "assistant", "content": (
        "For context, here is the conversation so far between the user and the previous "
        "agent:\n<CONVERSATION HISTORY>\n1. user: q\n</CONVERSATION HISTORY>")}
    given = [{"role": "user", "content": "q"}, summary,
             copied.raw_item.model_dump(exclude_unset=True)]
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(items, input=given)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "ambiguous_trace", 0, "items[0]")
