"""Regression tests from a second audit of the openai_agents adapter, each on a real
``Runner.run`` with the golden generator's scripted ``Model``: a failed run's ``run_data`` of
a nested history, wrappers that are copies of stored RunItem dicts, which message each
wrapper is kept on (several model responses of one agent, an admitted input item), the
values ``drop_names`` takes, and agents released by ``result.release_agents()``."""

from __future__ import annotations

import asyncio
import gc
import json
from typing import Any

import pytest
from agents import Agent, Handoff, RunConfig, Runner, WebSearchTool, function_tool
from agents.exceptions import MaxTurnsExceeded
from openai.types.responses import ResponseFunctionWebSearch
from openai.types.responses.response_function_web_search import ActionSearch
from test_openai_agents import GENERATOR

from tracebridge import TraceError
from tracebridge.adapters import openai_agents
from tracebridge.adapters.openai_agents import Handoff as ListedHandoff


def ran(agent: Agent[Any], given: Any, **options: Any) -> Any:
    return asyncio.run(Runner.run(agent, given, **options))


def outcome(read: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``read`` gives, or the ``(code, index, path)`` of the TraceError it raises."""
    try:
        return read(*args, **kwargs)
    except TraceError as error:
        return (error.code, error.index, error.path)


def placed(messages: list[Any]) -> list[tuple[str, str | None, list[str]]]:
    """Each message's type, name and the types of the RunItem wrappers kept on it."""
    return [
        (m.type, m.name,
         [record["type"] for record in m.metadata.get("openai_agents", {}).get("run_items", [])])
        for m in messages
    ]


# --- a failed run's run_data of a nested history ------------------------------------------------


def failed_nested_run(first_response: list[Any]) -> Any:
    """Front Desk hands off to Billing Agent with RunConfig(nest_handoff_history=True); the
    run stops at max_turns=2, before Billing Agent answers."""
    model = GENERATOR.ScriptModel([
        first_response,
        [GENERATOR.call("call_h2", "get_balance", '{"account_id":"ACC-77"}')],
        [GENERATOR.call("call_h3", "get_balance", '{"account_id":"ACC-77"}')],
    ])
    with pytest.raises(MaxTurnsExceeded) as caught:
        ran(GENERATOR.support_agents(model), "Balance of ACC-77?", max_turns=2,
            run_config=RunConfig(nest_handoff_history=True))
    details = caught.value.run_data
    assert details is not None
    assert not hasattr(details, "to_input_list")
    return details


def test_a_failed_runs_data_of_a_nested_history_that_copies_an_item_is_ambiguous() -> None:
    details = failed_nested_run([
        GENERATOR.message("msg_h1", "Let me pass you to billing."),
        GENERATOR.call("call_h1", "transfer_to_billing_agent", "{}"),
    ])
    # the rewritten input holds the summary and a copy of msg_h1, which new_items hold too
    assert [item.get("id") for item in details.input] == [None, "msg_h1", None]
    assert [item.type for item in details.new_items] == [
        "message_output_item", "handoff_call_item", "handoff_output_item", "tool_call_item",
        "tool_call_output_item",
    ]
    assert outcome(openai_agents.to_messages, details, allow_pending=True) == (
        "ambiguous_trace", 0, "new_items[0]"
    )
    assert outcome(openai_agents.handoffs, details) == ("ambiguous_trace", 0, "new_items[0]")
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(details, allow_pending=True)
    assert "also in the run's input, at input[1]" in caught.value.detail
    assert "after the SDK's nested-history summary at input[0]" in caught.value.detail
    assert "this run hands off after the item, at new_items[2]" in caught.value.detail
    # the same as its items after its input
    assert outcome(openai_agents.to_messages, details.new_items, input=details.input,
                   allow_pending=True) == ("ambiguous_trace", 0, "items[0]")


def test_a_failed_runs_data_of_a_nested_history_that_copies_nothing_reads() -> None:
    details = failed_nested_run([GENERATOR.call("call_h1", "transfer_to_billing_agent", "{}")])
    messages = openai_agents.to_messages(details)
    assert [(m.type, m.name) for m in messages] == [
        ("ai", "Front Desk"), ("tool", None), ("ai", "Billing Agent"), ("tool", None),
    ]
    assert messages[0].text.startswith("For context, here is the conversation so far")
    assert openai_agents.to_messages(details.new_items, input=details.input) == messages


# --- stored RunItem dicts: the wrappers kept are copies -----------------------------------------


def test_changing_a_stored_run_item_after_reading_changes_nothing_read() -> None:
    result = asyncio.run(GENERATOR.CASES["handoff"].run()).result
    stored = json.loads(result.to_state().to_string())["generated_items"]
    messages = openai_agents.to_messages(stored, input=result.input)
    dumped = [m.model_dump() for m in messages]
    assert stored[2]["type"] == "handoff_output_item"
    stored[2]["target_agent"]["name"] = "Mallory"
    stored[2]["source_agent"]["name"] = "Mallory"
    stored[2]["agent"]["name"] = "Mallory"
    stored[3]["tool_origin"]["type"] = "changed"
    assert openai_agents.handoffs(messages) == [
        ListedHandoff(2, "Front Desk", "Billing Agent")
    ]
    assert [m.model_dump() for m in messages] == dumped


def test_changing_a_stored_approval_after_reading_changes_nothing_read() -> None:
    result = asyncio.run(GENERATOR.CASES["approval_pending"].run()).result
    stored = json.loads(result.to_state().to_string())["generated_items"]
    messages = openai_agents.to_messages(stored, input=result.input, allow_pending=True)
    dumped = [m.model_dump() for m in messages]
    approval = stored[2]
    assert approval["type"] == "tool_approval_item"
    approval["raw_item"]["arguments"] = '{"path": "/etc/passwd"}'
    approval["tool_lookup_key"]["name"] = "changed"
    kept = messages[1].metadata["openai_agents"]["run_items"][2]
    assert kept["raw_item"]["arguments"] == '{"path":"/tmp/report.txt"}'
    assert kept["tool_lookup_key"] == {"kind": "bare", "name": "delete_file"}
    assert [m.model_dump() for m in messages] == dumped


# --- which message each wrapper is kept on ------------------------------------------------------


def web_search(item_id: str) -> ResponseFunctionWebSearch:
    return ResponseFunctionWebSearch(
        id=item_id, type="web_search_call", status="completed",
        action=ActionSearch(type="search", query="weather Paris", sources=None),
    )


def every_route(result: Any) -> list[Any]:
    """The result's reading, checked equal to its items after its input and its stored
    state's items after its original input."""
    messages = openai_agents.to_messages(result)
    assert openai_agents.to_messages(result.new_items, input=result.input) == messages
    state = json.loads(result.to_state().to_string())
    assert openai_agents.to_messages(
        state["generated_items"], input=state["original_input"]
    ) == messages
    return messages


def test_a_later_model_responses_wrapper_is_kept_on_its_own_message() -> None:
    # response 1 is a hosted web search alone (the SDK calls the model again), response 2 the
    # answer: RunItems do not tell this from one response that searched and answered
    model = GENERATOR.ScriptModel([[web_search("ws_1")], [GENERATOR.message("msg_2", "Sunny.")]])
    result = ran(Agent(name="Searcher", model=model, tools=[WebSearchTool()]), "Weather?")
    assert len(model.inputs) == 2
    assert placed(every_route(result)) == [
        ("human", None, []),
        ("ai", "Searcher", ["tool_call_item"]),
        ("tool", "web_search", []),
        ("ai", "Searcher", ["message_output_item"]),
    ]


def test_each_wrapper_of_one_response_read_as_several_turns_is_on_its_items_turn() -> None:
    model = GENERATOR.ScriptModel([[
        GENERATOR.reasoning("rs_1", "Search first."), web_search("ws_1"),
        GENERATOR.message("msg_1", "Searching again."), web_search("ws_2"),
        GENERATOR.message("msg_2", "Sunny."),
    ]])
    result = ran(Agent(name="Searcher", model=model, tools=[WebSearchTool()]), "Weather?")
    assert placed(every_route(result)) == [
        ("human", None, []),
        ("ai", "Searcher", ["reasoning_item", "tool_call_item"]),
        ("tool", "web_search", []),
        ("ai", "Searcher", ["message_output_item", "tool_call_item"]),
        ("tool", "web_search", []),
        ("ai", "Searcher", ["message_output_item"]),
    ]


@function_tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file (asks for approval first)."""
    return f"deleted {path}"


def resumed_with_a_note(second_response: list[Any]) -> Any:
    """File Clerk's call waits for approval; the application approves it and admits an
    assistant note (state.add_input), then the run goes on."""
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("call_1", "delete_file", '{"path":"/a"}')], second_response,
    ])
    agent = Agent(name="File Clerk", tools=[delete_file], model=model)
    first = ran(agent, "Delete /a")
    state = first.to_state()
    state.approve(first.interruptions[0])
    state.add_input([{"role": "assistant", "content": "Approved by the operator."}])
    return ran(agent, state)


def test_an_admitted_input_item_is_no_agents_turn() -> None:
    result = resumed_with_a_note([GENERATOR.message("msg_2", "Deleted /a.")])
    assert [item.type for item in result.new_items] == [
        "tool_call_item", "tool_approval_item", "tool_call_output_item", "input_item",
        "message_output_item",
    ]
    assert result.new_items[3].agent.name == "File Clerk"  # the SDK records the agent
    messages = openai_agents.to_messages(result)
    assert placed(messages) == [
        ("human", None, []),
        ("ai", "File Clerk", ["tool_call_item", "tool_approval_item"]),
        ("tool", None, ["tool_call_output_item"]),
        ("ai", None, ["input_item"]),
        ("ai", "File Clerk", ["message_output_item"]),
    ]
    assert messages[3].metadata["openai_agents"]["run_items"][0]["agent"] == {
        "name": "File Clerk"
    }
    assert openai_agents.to_messages(result.new_items, input=result.input) == messages


def test_an_admitted_assistant_note_that_meets_the_agents_call_is_the_agents_turn() -> None:
    result = resumed_with_a_note([GENERATOR.call("call_2", "delete_file", '{"path":"/b"}')])
    messages = openai_agents.to_messages(result, allow_pending=True)
    assert placed(messages) == [
        ("human", None, []),
        ("ai", "File Clerk", ["tool_call_item", "tool_approval_item"]),
        ("tool", None, ["tool_call_output_item"]),
        ("ai", "File Clerk", ["input_item", "tool_call_item", "tool_approval_item"]),
    ]
    assert messages[3].text == "Approved by the operator."


# --- drop_names is True or False ----------------------------------------------------------------


@pytest.mark.parametrize("value", ["false", "no", "", 1, 0, None, [0]])
def test_drop_names_other_than_true_or_false_is_a_value_error(value: Any) -> None:
    messages = openai_agents.to_messages(asyncio.run(GENERATOR.CASES["handoff"].run()).result)
    with pytest.raises(ValueError, match=r"^drop_names must be True or False") as caught:
        openai_agents.from_messages(messages, drop_names=value)
    assert str(caught.value) == f"drop_names must be True or False, got {value!r}"


def test_drop_names_true_and_false_work_as_before() -> None:
    result = asyncio.run(GENERATOR.CASES["handoff"].run()).result
    messages = openai_agents.to_messages(result)
    assert openai_agents.from_messages(messages, drop_names=True) == result.to_input_list()
    assert outcome(openai_agents.from_messages, messages, drop_names=False) == (
        "not_representable", 1, "messages[1].name"
    )


# --- agents released by result.release_agents() ------------------------------------------------


def released_run() -> Any:
    """Front hands off through a Handoff that builds its agent when invoked (nothing else
    holds it), then the result's agents are released and collected."""
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("call_h1", "transfer_to_night", "{}")],
        [GENERATOR.message("msg_2", "Night shift here.")],
    ])

    async def make_night(context: Any, arguments: str) -> Agent[Any]:
        return Agent(name="Night", model=model)

    night = Handoff(tool_name="transfer_to_night", tool_description="Night shift.",
                    input_json_schema={}, on_invoke_handoff=make_night, agent_name="Night")
    result = ran(Agent(name="Front", model=model, handoffs=[night]), "hi")
    assert [(m.type, m.name) for m in openai_agents.to_messages(result)] == [
        ("human", None), ("ai", "Front"), ("tool", None), ("ai", "Night"),
    ]
    result.release_agents()
    gc.collect()
    assert result.new_items[1].target_agent is None
    assert result.new_items[2].agent is None
    return result


def released(cls: str, field: str, path: str) -> str:
    return (
        f"openai_agents: {path}: this {cls} no longer holds its {field}: the agent was released "
        "(result.release_agents()) and has since been garbage-collected, so its name is gone; "
        "read the result before release_agents() [malformed_event]"
    )


def test_a_released_agent_is_refused_as_released() -> None:
    result = released_run()
    for read, args, where in [
        (openai_agents.to_messages, (result,), "new_items[1].target_agent"),
        (openai_agents.handoffs, (result,), "new_items[1].target_agent"),
        (openai_agents.to_messages, (result.new_items,), "items[1].target_agent"),
    ]:
        with pytest.raises(TraceError) as caught:
            read(*args)
        assert (caught.value.code, caught.value.index, caught.value.path) == (
            "malformed_event", 1, where
        )
        assert str(caught.value) == released("HandoffOutputItem", "target_agent", where)
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages([result.new_items[2]], input="hi")
    assert (caught.value.index, caught.value.path) == (0, "items[0].agent")
    assert str(caught.value) == released("MessageOutputItem", "agent", "items[0].agent")
