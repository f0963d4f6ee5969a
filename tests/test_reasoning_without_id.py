"""Reasoning items without an ``id``, as the Agents SDK replays them under
``RunConfig(reasoning_item_id_policy="omit")``: in ``to_input_list()``, in a session's items and
in what the model receives next turn. Both adapters read them, write them back as they were, and
a run keeps its agent names and RunItem wrappers (the id the SDK left out is kept under the
reasoning item's wrapper's ``stripped``)."""

from __future__ import annotations

import asyncio
import copy
import os
import tempfile
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession
from test_openai_agents import GENERATOR, MESSAGES, golden

from tracebridge import AIMessage, HumanMessage, TraceError
from tracebridge.adapters import openai_agents, openai_responses
from tracebridge.messages import ReasoningPart, TextPart, ToolCall, ToolMessage

OMIT = RunConfig(reasoning_item_id_policy="omit")
ASKED = "What's the weather in Paris?"


def outcome(read: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``read`` gives, or the ``(code, index, path)`` of the TraceError it raises."""
    try:
        return read(*args, **kwargs)
    except TraceError as error:
        return (error.code, error.index, error.path)


def reasoning(text: str, item_id: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"summary": [{"text": text, "type": "summary_text"}],
                            "type": "reasoning"}
    if item_id is not None:
        item["id"] = item_id
    return item


def weather_run(**options: Any) -> tuple[Any, Any]:
    model = GENERATOR.ScriptModel(GENERATOR.tool_calling_steps())
    agent = GENERATOR.weather_agent(model)
    return asyncio.run(Runner.run(agent, ASKED, **options)), model


def unnamed(messages: list[Any]) -> list[Any]:
    """``messages`` without agent names and RunItem wrappers: what the input list reads as."""
    plain = []
    for message in messages:
        kept = dict(message.metadata.get("openai_agents", {}))
        kept.pop("run_items", None)
        update: dict[str, Any] = {"metadata": {"openai_agents": kept} if kept else {}}
        if isinstance(message, AIMessage):
            update["name"] = None
        plain.append(message.model_copy(update=update))
    return plain


# --- openai_responses: plain items ----------------------------------------------------------

CALL = {"arguments": '{"city":"Paris"}', "call_id": "c1", "name": "get_weather",
        "type": "function_call"}
OUTPUT = {"call_id": "c1", "output": "sunny", "type": "function_call_output"}
SAID = {"content": [{"annotations": [], "text": "Sunny.", "type": "output_text"}],
        "role": "assistant", "type": "message", "id": "msg_1"}
ITEMS = [
    {"content": "Weather?", "role": "user"},
    reasoning("Call the tool."),
    CALL,
    OUTPUT,
    reasoning("Answer."),
    SAID,
]


def test_reasoning_without_id_reads_with_its_absence_marked() -> None:
    marked = {"openai_responses": {"id": None}}
    assert openai_responses.to_messages(ITEMS) == [
        HumanMessage(content="Weather?"),
        AIMessage(
            content=[ReasoningPart(text="Call the tool.", metadata=marked)],
            tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}, id="c1",
                                 metadata={"openai_responses": {"arguments": '{"city":"Paris"}'}})],
        ),
        ToolMessage(content="sunny", tool_call_id="c1"),
        AIMessage(
            content=[ReasoningPart(text="Answer.", metadata=marked), TextPart(text="Sunny.")],
            id="msg_1",
        ),
    ]


def test_reasoning_without_id_round_trips() -> None:
    assert openai_responses.from_messages(openai_responses.to_messages(ITEMS)) == ITEMS


@pytest.mark.parametrize(
    "items",
    [
        # reasoning, message; reasoning, call: the second reasoning opens the next reply
        [{"content": "Hi", "role": "user"}, reasoning("a"), SAID, reasoning("b"), CALL, OUTPUT],
        # with and without ids, mixed, in one reply
        [{"content": "Hi", "role": "user"}, reasoning("a"), reasoning("b", "rs_2"), CALL, OUTPUT],
        # reasoning alone, then reasoning and a message
        [{"content": "Hi", "role": "user"}, reasoning("a"), {"content": "Go on", "role": "user"},
         reasoning("b"), SAID],
        # kept fields beside a missing id
        [{"content": "Hi", "role": "user"},
         {**reasoning("a"), "encrypted_content": "gAAA", "status": "completed"}, SAID],
    ],
)
def test_reply_boundaries_round_trip_reasoning_without_id(items: list[dict[str, Any]]) -> None:
    messages = openai_responses.to_messages(items)
    assert openai_responses.from_messages(messages) == items
    assert openai_responses.to_messages(openai_responses.from_messages(messages)) == messages


def test_a_present_id_must_still_be_a_string() -> None:
    # ResponseReasoningItemParam: id is Required[str]; null is no spelling of "none"
    for bad in (None, 5):
        items = [{"content": "Hi", "role": "user"}, {**reasoning("a"), "id": bad}, SAID]
        assert outcome(openai_responses.to_messages, items) == (
            "malformed_event", 1, "items[1].id"
        )


def test_a_reasoning_part_of_another_format_is_still_refused_or_dropped() -> None:
    messages = [HumanMessage(content="Hi"),
                AIMessage(content=[ReasoningPart(text="a"), TextPart(text="Hello")])]
    assert outcome(openai_responses.from_messages, messages) == (
        "not_representable", 1, "messages[1].content[0]"
    )
    assert openai_responses.from_messages(messages, drop=["reasoning"]) == [
        {"content": "Hi", "role": "user"},
        {"role": "assistant", "type": "message",
         "content": [{"type": "output_text", "text": "Hello", "annotations": []}]},
    ]


# --- openai_agents: a real run with reasoning_item_id_policy="omit" -------------------------


def omitted_expected() -> list[Any]:
    """The golden ``tool_calling`` reading, with the reasoning item's id omitted by the SDK."""
    expected = copy.deepcopy(golden("tool_calling")["expected_named"])
    reply = expected[1]
    del reply["content"][0]["id"]
    reply["content"][0]["metadata"] = {"openai_agents": {"id": None}}
    reply["metadata"]["openai_agents"]["run_items"][0]["stripped"] = {"id": "rs_1"}
    return MESSAGES.validate_python(expected)


def test_a_run_with_omitted_reasoning_ids_reads_with_names_and_wrappers() -> None:
    result, model = weather_run(run_config=OMIT)
    assert result.to_input_list()[1] == reasoning(
        "The user wants the weather; call get_weather."
    )
    assert model.inputs[1][1] == result.to_input_list()[1]  # what the model got next turn
    messages = openai_agents.to_messages(result)
    assert messages == omitted_expected()
    assert [m.name for m in messages if isinstance(m, AIMessage)] == ["Weather Bot"] * 2


def test_a_run_with_omitted_reasoning_ids_reads_as_its_input_list_plus_names() -> None:
    result, _ = weather_run(run_config=OMIT)
    from_list = openai_agents.to_messages(result.to_input_list())
    assert unnamed(openai_agents.to_messages(result)) == from_list
    assert unnamed(omitted_expected()) == from_list


def test_a_run_with_omitted_reasoning_ids_writes_its_input_list() -> None:
    result, _ = weather_run(run_config=OMIT)
    written = openai_agents.from_messages(openai_agents.to_messages(result), drop_names=True)
    assert written == result.to_input_list()
    from_list = openai_agents.to_messages(result.to_input_list())
    assert openai_agents.from_messages(from_list) == result.to_input_list()


def test_runner_run_takes_what_is_written_without_reasoning_ids() -> None:
    result, _ = weather_run(run_config=OMIT)
    written = openai_agents.from_messages(openai_agents.to_messages(result), drop_names=True)
    model = GENERATOR.ScriptModel([[GENERATOR.message("msg_next", "Tomorrow: 20 C.")]])
    turn = {"role": "user", "content": "And tomorrow?"}
    asyncio.run(Runner.run(GENERATOR.weather_agent(model), [*written, turn], run_config=OMIT))
    assert model.inputs[0] == [*written, turn]


def test_a_streamed_run_with_omitted_reasoning_ids_reads_alike() -> None:
    async def streamed() -> Any:
        agent = GENERATOR.weather_agent(GENERATOR.ScriptModel(GENERATOR.tool_calling_steps()))
        result = Runner.run_streamed(agent, ASKED, run_config=OMIT)
        async for _ in result.stream_events():
            pass
        return result

    assert openai_agents.to_messages(asyncio.run(streamed())) == omitted_expected()


def test_the_run_items_still_hold_the_id_the_sdk_omits_from_replay() -> None:
    result, _ = weather_run(run_config=OMIT)
    # the RunItems keep the id: read as a list (nothing there tells the policy), they give it
    messages = openai_agents.to_messages(result.new_items, input=result.input)
    assert messages == MESSAGES.validate_python(golden("tool_calling")["expected_named"])


def test_session_items_with_omitted_reasoning_ids_read_and_round_trip() -> None:
    with tempfile.TemporaryDirectory() as folder:
        session = SQLiteSession("s", os.path.join(folder, "history.db"))
        weather_run(session=session, run_config=OMIT)
        stored = asyncio.run(session.get_items())
        session.close()
    assert stored[1] == reasoning("The user wants the weather; call get_weather.")
    messages = openai_agents.to_messages(stored)
    assert unnamed(omitted_expected()) == messages
    assert openai_agents.from_messages(messages) == stored


def handoff_run(config: RunConfig) -> Any:
    model = GENERATOR.ScriptModel([
        [GENERATOR.reasoning("rs_h1", "Route it."), GENERATOR.message("msg_h1", "Passing you."),
         GENERATOR.call("call_h1", "transfer_to_billing_agent", "{}")],
        [GENERATOR.reasoning("rs_h2", "Look it up."),
         GENERATOR.call("call_h2", "get_balance", '{"account_id":"ACC-77"}')],
        [GENERATOR.message("msg_h3", "Your balance is 120.50 EUR.")],
    ])
    agent: Agent[Any] = GENERATOR.support_agents(model)
    return asyncio.run(Runner.run(agent, "Balance of ACC-77?", run_config=config))


def wrappers(messages: list[Any]) -> list[list[str]]:
    return [[r["type"] for r in m.metadata.get("openai_agents", {}).get("run_items", [])]
            for m in messages]


@pytest.mark.parametrize("nested", [False, True])
def test_a_handoff_run_keeps_its_agents_whichever_the_policy(nested: bool) -> None:
    kept = handoff_run(RunConfig(nest_handoff_history=nested))
    omitted = handoff_run(RunConfig(nest_handoff_history=nested, reasoning_item_id_policy="omit"))
    read_kept = openai_agents.to_messages(kept)
    read_omitted = openai_agents.to_messages(omitted)
    assert [m.name for m in read_omitted] == [m.name for m in read_kept]
    assert wrappers(read_omitted) == wrappers(read_kept)
    assert openai_agents.from_messages(read_omitted, drop_names=True) == omitted.to_input_list()


def test_a_handoff_run_with_omitted_reasoning_ids_names_each_agent() -> None:
    messages = openai_agents.to_messages(handoff_run(OMIT))
    assert [(m.type, m.name) for m in messages] == [
        ("human", None), ("ai", "Front Desk"), ("tool", None), ("ai", "Billing Agent"),
        ("tool", None), ("ai", "Billing Agent"),
    ]
    assert wrappers(messages) == [
        [], ["reasoning_item", "message_output_item", "handoff_call_item"],
        ["handoff_output_item"], ["reasoning_item", "tool_call_item"],
        ["tool_call_output_item"], ["message_output_item"],
    ]
    stripped = [r.get("stripped") for m in messages
                for r in m.metadata.get("openai_agents", {}).get("run_items", [])
                if r["type"] == "reasoning_item"]
    assert stripped == [{"id": "rs_h1"}, {"id": "rs_h2"}]
