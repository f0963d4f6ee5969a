"""Regression tests from an audit of the openai_agents adapter, each on a real ``Runner.run``
with the golden generator's scripted ``Model``: which tool results ``handoffs()`` lists and
from which agent, same-name agents read alike from a result and from its stored state, an
agent named ``""``, classes whose ``__module__`` is no string, and the routes that cannot tell
a history the SDK nested (``nest_handoff_history=True``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool
from test_openai_agents import GENERATOR

from tracebridge import AIMessage, HumanMessage, TraceError
from tracebridge.adapters import openai_agents
from tracebridge.adapters.openai_agents import Handoff


def ran(agent: Agent[Any], given: Any, **options: Any) -> Any:
    return asyncio.run(Runner.run(agent, given, **options))


def outcome(read: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``read`` gives, or the ``(code, index, path)`` of the TraceError it raises."""
    try:
        return read(*args, **kwargs)
    except TraceError as error:
        return (error.code, error.index, error.path)


def without_run_items(messages: list[Any]) -> list[Any]:
    """``messages`` as typed messages built without the RunItem wrappers (names kept)."""
    return [m.model_copy(update={"metadata": {}}) for m in messages]


# --- handoffs(): from the handoff_output_item, else from the message holding the call ---------


def continued_run() -> tuple[Any, Any]:
    """Front Desk hands off to Billing; then the app runs Front Desk again on that history,
    and Front Desk hands off once more."""
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("call_h1", "transfer_to_billing_agent", "{}")],
        [GENERATOR.message("msg_2", "Your balance is 120.50 EUR.")],
        [GENERATOR.call("call_h2", "transfer_to_billing_agent", "{}")],
        [GENERATOR.message("msg_4", "Invoice sent.")],
    ])
    front_desk = GENERATOR.support_agents(model)
    first = ran(front_desk, "Balance of ACC-77?")
    again = ran(front_desk, [*first.to_input_list(), {"role": "user", "content": "Invoice?"}])
    return first, again


def test_a_continued_history_lists_each_handoff_from_the_agent_that_made_it() -> None:
    _, again = continued_run()
    messages = openai_agents.to_messages(again)
    assert [(m.type, m.name) for m in messages] == [
        ("human", None), ("ai", None), ("tool", None), ("ai", None), ("human", None),
        ("ai", "Front Desk"), ("tool", None), ("ai", "Billing Agent"),
    ]
    # the earlier handoff comes from input items (no agent); the new one from its RunItem
    expected = [Handoff(2, None, "Billing Agent"), Handoff(6, "Front Desk", "Billing Agent")]
    assert openai_agents.handoffs(again) == expected
    assert openai_agents.handoffs(messages) == expected
    assert openai_agents.handoffs(again.new_items) == [Handoff(1, "Front Desk", "Billing Agent")]
    # typed messages without the wrappers: the name of the message holding the call
    assert openai_agents.handoffs(without_run_items(messages)) == expected
    # the input list names no agent
    assert openai_agents.handoffs(again.to_input_list()) == [
        Handoff(2, None, "Billing Agent"), Handoff(6, None, "Billing Agent")
    ]


def test_a_handoff_read_from_its_run_item_names_its_source_and_target_agents() -> None:
    _, again = continued_run()
    messages = openai_agents.to_messages(again)
    # the wrapper says who handed off, even where the names of the messages would not
    renamed = [m.model_copy(update={"name": "Someone"}) if isinstance(m, AIMessage) else m
               for m in messages]
    assert openai_agents.handoffs(renamed) == [
        Handoff(2, "Someone", "Billing Agent"), Handoff(6, "Front Desk", "Billing Agent")
    ]


@function_tool
def current_assistant() -> str:
    """Which assistant is on duty."""
    return json.dumps({"assistant": "Night Shift"})


def test_a_function_tool_that_returns_an_assistant_is_no_handoff() -> None:
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("call_1", "current_assistant", "{}")],
        [GENERATOR.message("msg_2", "Night Shift is on duty.")],
    ])
    result = ran(Agent(name="Front", tools=[current_assistant], model=model), "Who is on duty?")
    assert [item.type for item in result.new_items] == [
        "tool_call_item", "tool_call_output_item", "message_output_item"
    ]
    messages = openai_agents.to_messages(result)
    assert messages[2].text == '{"assistant": "Night Shift"}'
    assert openai_agents.handoffs(result) == []
    assert openai_agents.handoffs(without_run_items(messages)) == []
    assert openai_agents.handoffs(result.to_input_list()) == []


def test_a_second_handoff_of_one_response_is_no_handoff() -> None:
    # The SDK runs the first handoff call and answers the others with an ordinary output.
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("call_h1", "transfer_to_billing_agent", "{}"),
         GENERATOR.call("call_h2", "transfer_to_billing_agent", "{}")],
        [GENERATOR.message("msg_2", "Billing here.")],
    ])
    result = ran(GENERATOR.support_agents(model), "Billing, please")
    expected = [Handoff(3, "Front Desk", "Billing Agent")]
    messages = openai_agents.to_messages(result)
    assert [m.type for m in messages] == ["human", "ai", "tool", "tool", "ai"]
    assert messages[2].text == "Multiple handoffs detected, ignoring this one."
    assert openai_agents.handoffs(result) == expected
    assert openai_agents.handoffs(result.to_input_list()) == [Handoff(3, None, "Billing Agent")]


def test_a_handoff_output_names_its_agents_or_is_refused() -> None:
    run = GENERATOR.CASES["handoff"]
    result = asyncio.run(run.run()).result
    stored = json.loads(result.to_state().to_string())["generated_items"]
    assert stored[2]["type"] == "handoff_output_item"
    stored[2]["target_agent"] = {"identity": "Billing Agent"}
    assert outcome(openai_agents.to_messages, stored, input=result.input) == (
        "malformed_event", 2, "items[2].target_agent"
    )
    messages = openai_agents.to_messages(result)
    wrapper = messages[2].metadata["openai_agents"]["run_items"][0]
    broken = {**wrapper, "source_agent": "Front Desk"}
    edited = [*messages[:2], messages[2].model_copy(update={"metadata": {
        "openai_agents": {"run_items": [broken]}}}), *messages[3:]]
    assert outcome(openai_agents.handoffs, edited) == (
        "malformed_event", 2, "messages[2].metadata.openai_agents.run_items[0].source_agent"
    )


def test_a_handoff_output_whose_agent_name_was_changed_is_refused() -> None:
    result = asyncio.run(GENERATOR.CASES["handoff"].run()).result
    changed = Agent(name="Billing Agent")
    changed.name = 5  # type: ignore[assignment]
    result.new_items[2].target_agent = changed
    assert outcome(openai_agents.to_messages, result) == (
        "malformed_event", 2, "new_items[2].target_agent.name"
    )


@pytest.mark.parametrize(
    ("agent", "tool"),
    [("Billing Agent", "transfer_to_billing_agent"), ("Støtte 24/7", "transfer_to_st_tte_24_7"),
     ("a\tb-c", "transfer_to_a_b_c")],
)
def test_input_items_know_a_handoff_by_the_sdks_tool_name(agent: str, tool: str) -> None:
    from agents.handoffs import Handoff as SDKHandoff

    assert SDKHandoff.default_tool_name(Agent(name=agent)) == tool
    items = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": tool, "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1",
         "output": json.dumps({"assistant": agent})},
    ]
    assert openai_agents.handoffs(items) == [Handoff(2, None, agent)]
    items[1]["name"] = "current_assistant"
    assert openai_agents.handoffs(items) == []


# --- same-name agents ---------------------------------------------------------------------------


def test_same_name_agents_read_alike_from_the_result_its_items_and_its_stored_state() -> None:
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("call_h1", "transfer_to_helper", "{}")],
        [GENERATOR.message("msg_2", "Done.")],
    ])
    second = Agent(name="Helper", model=model, handoff_description="The other helper.")
    first = Agent(name="Helper", handoffs=[second], model=model)
    result = ran(first, "hi")
    state = json.loads(result.to_state().to_string())
    assert [item["agent"] for item in state["generated_items"]] == [
        {"name": "Helper"}, {"name": "Helper"}, {"name": "Helper", "identity": "Helper#2"}
    ]
    live = openai_agents.to_messages(result)
    assert [m.metadata.get("openai_agents", {}).get("run_items") for m in live[1:]] == [
        [{"type": "handoff_call_item", "agent": {"name": "Helper"}}],
        [{"type": "handoff_output_item", "agent": {"name": "Helper"},
          "source_agent": {"name": "Helper"},
          "target_agent": {"name": "Helper", "identity": "Helper#2"}}],
        [{"type": "message_output_item", "agent": {"name": "Helper", "identity": "Helper#2"}}],
    ]
    assert openai_agents.to_messages(
        state["generated_items"], input=state["original_input"]
    ) == live
    assert openai_agents.to_messages(result.new_items, input=result.input) == live


# --- an agent named "" --------------------------------------------------------------------------


@function_tool
def look_up(x: int) -> str:
    """Look x up."""
    return "found"


def test_an_agent_named_empty_keeps_its_name_where_its_call_meets_the_input() -> None:
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("call_1", "look_up", '{"x": 1}')], [GENERATOR.message("msg_2", "Done.")]
    ])
    agent = Agent(name="", tools=[look_up], model=model)
    result = ran(agent, [{"role": "user", "content": "hi"},
                         {"role": "assistant", "content": "Earlier."}])
    messages = openai_agents.to_messages(result)
    assert [(m.type, m.name, m.text) for m in messages] == [
        ("human", None, "hi"), ("ai", "", "Earlier."), ("tool", None, "found"),
        ("ai", "", "Done."),
    ]


# --- classes whose __module__ is no string ------------------------------------------------------

Moduleless = type("Moduleless", (), {"__module__": None})
MappingWithoutModule = type("MappingWithoutModule", (dict,), {"__module__": None})


def test_an_object_whose_class_names_no_module_is_no_item() -> None:
    user = {"role": "user", "content": "hi"}
    assert openai_agents.detect([Moduleless()]) is False
    assert openai_agents.detect([user, Moduleless()]) is False
    assert outcome(openai_agents.to_messages, [Moduleless()]) == (
        "malformed_event", 0, "items[0]"
    )
    assert outcome(openai_agents.to_messages, [user, Moduleless()]) == (
        "malformed_event", 1, "items[1]"
    )
    assert outcome(openai_agents.to_messages, [], input=[user, Moduleless()]) == (
        "malformed_event", None, "input[1]"
    )
    # refused at its place: what is wrong before it is said first
    assert outcome(openai_agents.to_messages, [5, Moduleless()]) == (
        "malformed_event", 0, "items[0]"
    )
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages([Moduleless()])
    assert "expected a Responses item (an object with 'type'), got Moduleless <" in str(
        caught.value
    )
    # a mapping reads as the dict it holds
    assert openai_agents.to_messages([MappingWithoutModule(user)]) == [HumanMessage(content="hi")]


def test_a_result_holding_an_object_whose_class_names_no_module_is_refused() -> None:
    result = asyncio.run(GENERATOR.CASES["tool_calling"].run()).result
    result.new_items[1] = Moduleless()
    assert outcome(openai_agents.to_messages, result) == ("malformed_event", 1, "new_items[1]")


# --- a history the SDK nested -------------------------------------------------------------------


def nested_run() -> Any:
    model = GENERATOR.ScriptModel([
        [GENERATOR.message("msg_h1", "Let me pass you to billing."),
         GENERATOR.call("call_h1", "transfer_to_billing_agent", "{}")],
        [GENERATOR.call("call_h2", "get_balance", '{"account_id":"ACC-77"}')],
        [GENERATOR.message("msg_h3", "Your balance is 120.50 EUR.")],
    ])
    return ran(GENERATOR.support_agents(model), "Balance of ACC-77?",
               run_config=RunConfig(nest_handoff_history=True))


def test_the_items_of_a_nested_history_after_its_rewritten_input_are_ambiguous() -> None:
    result = nested_run()
    assert [item.get("id") for item in result.input] == [None, "msg_h1", None]
    assert outcome(openai_agents.to_messages, result.new_items, input=result.input) == (
        "ambiguous_trace", 0, "items[0]"
    )
    assert outcome(openai_agents.to_messages, [*result.input, *result.new_items]) == (
        "ambiguous_trace", 3, "items[3]"
    )
    state = json.loads(result.to_state().to_string())  # its session items hold all of them
    assert outcome(openai_agents.to_messages, state["session_items"],
                   input=state["original_input"]) == ("ambiguous_trace", 0, "items[0]")
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(result.new_items, input=result.input)
    assert "also in the run's input, at input[1]" in caught.value.detail
    assert "after the SDK's nested-history summary at input[0]" in caught.value.detail
    assert "this run hands off after the item, at items[2]" in caught.value.detail
    # the result itself tells which copy the history keeps
    messages = openai_agents.to_messages(result)
    assert [(m.type, m.name, m.id) for m in messages] == [
        ("ai", None, None), ("ai", None, "msg_h1"), ("ai", "Front Desk", None),
        ("tool", None, None), ("ai", "Billing Agent", None), ("tool", None, None),
        ("ai", "Billing Agent", "msg_h3"),
    ]
    assert openai_agents.handoffs(result) == [Handoff(3, "Front Desk", "Billing Agent")]


def test_the_stored_state_of_a_nested_history_reads_as_documented() -> None:
    # Not refused (nothing in the two lists shows the rewrite): generated_items holds only the
    # items after the handoff, so the handoff is not there, and the last summary meets the
    # next agent's first call.
    result = nested_run()
    state = json.loads(result.to_state().to_string())
    messages = openai_agents.to_messages(state["generated_items"], input=state["original_input"])
    assert [(m.type, m.name, m.id) for m in messages] == [
        ("ai", None, None), ("ai", None, "msg_h1"), ("ai", "Billing Agent", None),
        ("tool", None, None), ("ai", "Billing Agent", "msg_h3"),
    ]
    assert messages[2].text.startswith("For context, here is the conversation so far")
    assert openai_agents.handoffs(messages) == []


def test_a_nested_history_that_copies_no_item_reads_as_its_input_list_by_every_route() -> None:
    # The handing-off response is the call alone: the nested input copies nothing, so the
    # input followed by the items is what to_input_list() gives.
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("call_h1", "transfer_to_billing_agent", "{}")],
        [GENERATOR.message("msg_h2", "Your balance is 120.50 EUR.")],
    ])
    result = ran(GENERATOR.support_agents(model), "Balance of ACC-77?",
                 run_config=RunConfig(nest_handoff_history=True))
    assert result.input[0]["content"].startswith("For context, here is the conversation")
    messages = openai_agents.to_messages(result)
    assert openai_agents.to_messages(result.new_items, input=result.input) == messages
    assert openai_agents.handoffs(messages) == [Handoff(1, "Front Desk", "Billing Agent")]


def test_the_summary_preamble_is_the_sdks() -> None:
    from agents.handoffs import history

    from tracebridge.adapters.openai_agents._overlap import SUMMARY_PREAMBLE

    assert SUMMARY_PREAMBLE == history._CONVERSATION_HISTORY_PREAMBLE
