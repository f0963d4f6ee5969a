"""Audit s38 of the Responses and Agents SDK adapters, each finding a regression test.

1. One model response with reasoning (or a kept item) between its calls,
   ``[reasoning, function_call, reasoning, function_call]``, as reasoning models emit it: the SDK
   runs both calls and lists their outputs after the response. It reads as one reply (content
   in item order, ``calls_at`` keeping where each call stood), written back as it was.
2. A run whose input held OpenAI SDK objects, which the Agents SDK lists in ``to_input_list()``
   as lists of ``[field, value]`` pairs: refused at that entry's index, naming the other route.

Every run is a real ``Runner.run`` with the golden generator's scripted model.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import Runner
from openai.types.responses import response_output_item
from test_openai_agents import GENERATOR
from test_reasoning_without_id import unnamed

from tracebridge import AIMessage, HumanMessage, TraceError
from tracebridge.adapters import openai_agents, openai_responses
from tracebridge.messages import ReasoningPart, TextPart, ToolCall, ToolMessage

ASKED = "Weather in Paris and Rome?"


def outcome(read: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``read`` gives, or the ``(code, index, path)`` of the TraceError it raises."""
    try:
        return read(*args, **kwargs)
    except TraceError as error:
        return (error.code, error.index, error.path)


def run(steps: list[list[Any]], given: Any = ASKED) -> tuple[Any, Any]:
    model = GENERATOR.ScriptModel(steps)
    return asyncio.run(Runner.run(GENERATOR.weather_agent(model), given)), model


def reasoning_between_calls() -> tuple[Any, Any]:
    return run([
        [GENERATOR.reasoning("rs_1", "Paris first."),
         GENERATOR.call("c1", "get_weather", '{"city":"Paris"}'),
         GENERATOR.reasoning("rs_2", "Then Rome."),
         GENERATOR.call("c2", "get_weather", '{"city":"Rome"}')],
        [GENERATOR.message("msg_1", "Paris 18 C, Rome 24 C.")],
    ])


def kept_item_after_a_call() -> tuple[Any, Any]:
    listed = response_output_item.McpListTools.model_validate(
        {"id": "ml_1", "type": "mcp_list_tools", "server_label": "srv", "tools": []}
    )
    return run([
        [GENERATOR.call("c1", "get_weather", '{"city":"Paris"}'), listed],
        [GENERATOR.message("msg_1", "Paris 18 C.")],
    ])


def reasoned(text: str, item_id: str) -> ReasoningPart:
    return ReasoningPart(text=text, id=item_id)


def weather_call(call_id: str, city: str, source: str, sdk: bool = True) -> ToolCall:
    kept: dict[str, Any] = {"arguments": f'{{"city":"{city}"}}'}  # spelled as the model did
    if sdk:  # an SDK output item: its id and status
        kept = {"id": f"fc_{call_id}", **kept, "fields": {"status": "completed"}}
    return ToolCall(name="get_weather", args={"city": city}, id=call_id, metadata={source: kept})


# -- 1. reasoning between two calls of one response --


def test_reasoning_between_two_calls_reads_as_one_reply_of_a_live_run() -> None:
    result, model = reasoning_between_calls()
    listed = result.to_input_list()
    # the SDK ran both calls and sent the model the response, then both outputs
    assert [item.get("type") for item in model.inputs[1][1:]] == [
        "reasoning", "function_call", "reasoning", "function_call",
        "function_call_output", "function_call_output",
    ]
    source = "openai_agents"
    expected = [
        HumanMessage(content=ASKED),
        AIMessage(
            content=[reasoned("Paris first.", "rs_1"),
                     reasoned("Then Rome.", "rs_2")],
            tool_calls=[weather_call("c1", "Paris", source), weather_call("c2", "Rome", source)],
            metadata={source: {"calls_at": [1, 2]}},
        ),
        ToolMessage(content="18 C, sunny", tool_call_id="c1"),
        ToolMessage(content="24 C, clear", tool_call_id="c2"),
    ]
    read = openai_agents.to_messages(result)
    assert unnamed(read)[:4] == expected
    assert read[1].name == "Weather Bot"
    assert [r["type"] for r in read[1].metadata[source]["run_items"]] == [
        "reasoning_item", "tool_call_item", "reasoning_item", "tool_call_item",
    ]
    assert openai_agents.to_messages(listed)[:4] == expected
    assert openai_agents.to_messages(list(result.new_items), input=result.input) == read
    # Lossless: written back in the items' order, as the SDK lists them
    assert openai_agents.from_messages(openai_agents.to_messages(listed)) == listed
    assert openai_agents.from_messages(read, drop_names=True) == listed


def test_reasoning_between_two_calls_round_trips_through_the_responses_adapter() -> None:
    result, _ = reasoning_between_calls()
    listed = result.to_input_list()
    read = openai_responses.to_messages(listed)
    assert [type(message).__name__ for message in read] == [
        "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "AIMessage",
    ]
    assert read[1].metadata == {"openai_responses": {"calls_at": [1, 2]}}
    assert openai_responses.from_messages(read) == listed


def test_a_kept_item_after_a_call_joins_its_reply() -> None:
    result, _ = kept_item_after_a_call()
    listed = result.to_input_list()
    assert [item.get("type") for item in listed[1:4]] == [
        "function_call", "mcp_list_tools", "function_call_output",
    ]
    read = openai_agents.to_messages(result)
    assert [type(message).__name__ for message in read] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage",
    ]
    assert [part.kind for part in read[1].content] == ["mcp_list_tools"]  # type: ignore[union-attr]
    assert read[1].metadata["openai_agents"]["calls_at"] == [0]
    assert openai_agents.from_messages(read, drop_names=True) == listed
    assert openai_responses.from_messages(openai_responses.to_messages(listed)) == listed


MESSAGE_BETWEEN = [
    {"role": "user", "content": ASKED},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
    {"type": "function_call", "call_id": "c1", "name": "get_weather",
     "arguments": '{"city":"Paris"}'},
    {"id": "rs_2", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Rome."}]},
    {"type": "function_call", "call_id": "c2", "name": "get_weather",
     "arguments": '{"city":"Rome"}'},
    {"type": "function_call_output", "call_id": "c1", "output": "18 C"},
    {"type": "function_call_output", "call_id": "c2", "output": "24 C"},
]


def test_reasoning_after_the_message_joins_while_a_call_waits() -> None:
    read = openai_responses.to_messages(MESSAGE_BETWEEN)
    source = "openai_responses"
    assert read[1] == AIMessage(
        content=[TextPart(text="Checking."), reasoned("Rome.", "rs_2")],
        tool_calls=[weather_call("c1", "Paris", source, sdk=False),
                    weather_call("c2", "Rome", source, sdk=False)],
        id="msg_1",
        metadata={source: {"fields": {"status": "completed"}, "calls_at": [1, 2]}},
    )
    assert openai_responses.from_messages(read) == MESSAGE_BETWEEN


def test_a_response_cut_after_reasoning_behind_a_call_is_pending() -> None:
    cut = MESSAGE_BETWEEN[:4]
    read = openai_responses.to_messages(cut, allow_pending=True)
    assert [type(message).__name__ for message in read] == ["HumanMessage", "AIMessage"]
    assert read[1].metadata["openai_responses"]["calls_at"] == [1]
    assert outcome(openai_responses.to_messages, cut) == (
        "unanswered_tool_call", 2, "items[2]",
    )


def test_hosted_calls_between_reasoning_still_read_as_replies_of_their_own() -> None:
    search = [
        {"role": "user", "content": ASKED},
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "a"}]},
        {"id": "ws_1", "type": "web_search_call", "status": "completed",
         "action": {"type": "search", "query": "Paris"}},
        {"id": "rs_2", "type": "reasoning", "summary": [{"type": "summary_text", "text": "b"}]},
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "Found.", "annotations": []}]},
    ]
    read = openai_responses.to_messages(search)
    assert [type(message).__name__ for message in read] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage",
    ]
    assert all("calls_at" not in m.metadata.get("openai_responses", {}) for m in read)
    assert openai_responses.from_messages(read) == search


def test_calls_at_placing_content_after_hosted_calls_only_is_not_representable() -> None:
    search = [
        {"role": "user", "content": ASKED},
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "a"}]},
        {"id": "ws_1", "type": "web_search_call", "status": "completed",
         "action": {"type": "search", "query": "Paris"}},
    ]
    read = openai_responses.to_messages(search)
    moved = read[1].model_copy(update={"metadata": {"openai_responses": {"calls_at": [0]}}})
    assert outcome(openai_responses.from_messages, [read[0], moved, read[2]]) == (
        "not_representable", 1, "messages[1].metadata.openai_responses.calls_at",
    )


@pytest.mark.parametrize("calls_at", [[2, 1], [0], [0, 3], "1,2", [True, 2]])
def test_a_calls_at_not_as_the_reader_writes_it_is_malformed(calls_at: Any) -> None:
    read = openai_responses.to_messages(MESSAGE_BETWEEN)
    kept = {**read[1].metadata["openai_responses"], "calls_at": calls_at}
    edited = [read[0], read[1].model_copy(update={"metadata": {"openai_responses": kept}}),
              *read[2:]]
    assert outcome(openai_responses.from_messages, edited) == (
        "malformed_event", 1, "messages[1].metadata.openai_responses.calls_at",
    )


# -- 2. an input holding OpenAI SDK objects --


def test_a_result_whose_input_held_sdk_objects_is_refused_at_the_entry() -> None:
    given = [{"role": "user", "content": "hi"}, GENERATOR.message("m1", "earlier"),
             {"role": "user", "content": "again"}]
    result, model = run([[GENERATOR.message("m2", "done")]], given)
    assert isinstance(result.to_input_list()[1], list)  # the SDK's own listing, as sent
    assert isinstance(model.inputs[0][1], list)
    with pytest.raises(TraceError) as refused:
        openai_agents.to_messages(result)
    error = refused.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "to_input_list()[1]",
    )
    assert "input[1] is an OpenAI SDK object (ResponseOutputMessage)" in error.detail
    assert "to_messages(result.new_items, input=result.input)" in error.detail
    # the route the message names reads the object as given
    read = openai_agents.to_messages(list(result.new_items), input=result.input)
    assert [(message.type, message.text) for message in read] == [
        ("human", "hi"), ("ai", "earlier"), ("human", "again"), ("ai", "done"),
    ]
