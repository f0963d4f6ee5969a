"""Regression tests of the openai_responses, openai_agents and openai_chat adapters: a nested
handoff history under openai-agents 0.25 (new items replayed before a moved one), call args
changed in place after validation, a list marked only by ``phase``, SDK parts inside an input
dict of an Agents run, and an audio part in a tool output."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, function_tool
from test_openai_agents import GENERATOR

from tracebridge import (
    AIMessage,
    AudioPart,
    HumanMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
)
from tracebridge.adapters import galtea, openai_agents, openai_chat, openai_responses
from tracebridge.registry import detect_format

NESTED = RunConfig(nest_handoff_history=True)
SUMMARY = "For context, here is the conversation so far between the user and the previous agent:"


def turns(messages: list[Any]) -> list[tuple[str, str | None, list[str]]]:
    """Each message's type, name and the types of the RunItem wrappers it keeps."""
    return [
        (m.type, m.name,
         [w["type"] for w in m.metadata.get("openai_agents", {}).get("run_items", [])])
        for m in messages
    ]


def refused(write: Any, *args: Any, **kwargs: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        write(*args, **kwargs)
    return caught.value.code, caught.value.index, caught.value.path


# --- a nested handoff history (openai-agents 0.25) -------------------------------------------


@function_tool
def lookup(q: str) -> str:
    """Look an account up."""
    return "found"


def tool_then_nested_handoff_agent() -> Agent[Any]:
    """Front runs ``lookup``, then says a line and hands off to Billing, which answers."""
    model = GENERATOR.ScriptModel([
        [GENERATOR.call("call_t", "lookup", '{"q":"acct"}')],
        [GENERATOR.message("msg_h1", "Passing you to billing."),
         GENERATOR.call("call_h1", "transfer_to_billing", "{}")],
        [GENERATOR.message("msg_f", "Balance 120.")],
    ])
    billing = Agent(name="Billing", model=model)
    return Agent(name="Front", model=model, tools=[lookup], handoffs=[billing])


TOOL_THEN_HANDOFF = [
    ("ai", None, []),  # the summary
    ("ai", None, []),  # Front's line, moved into the rewritten input
    # the second summary and Front's own call, which was not moved: one turn, named for Front
    ("ai", "Front", ["tool_call_item"]),
    ("tool", None, ["tool_call_output_item"]),
    ("ai", "Front", ["handoff_call_item"]),
    ("tool", None, ["handoff_output_item"]),
    ("ai", "Billing", ["message_output_item"]),
]


def test_a_nested_handoff_after_a_tool_call_keeps_the_calls_agent_and_wrappers() -> None:
    result = asyncio.run(Runner.run(tool_then_nested_handoff_agent(), "Balance?",
                                    run_config=NESTED))
    replay = result.to_input_list()
    assert [i.get("id") or i.get("call_id") for i in replay[3:]] == [
        "fc_call_t", "call_t", "fc_call_h1", "call_h1", "msg_f"
    ]
    messages = openai_agents.to_messages(result)
    assert turns(messages) == TOOL_THEN_HANDOFF
    assert messages[0].text.startswith(SUMMARY)
    assert messages[2].text.startswith(SUMMARY)
    assert [c.name for c in messages[2].tool_calls] == ["lookup"]
    wrapper = messages[2].metadata["openai_agents"]["run_items"][0]
    assert (wrapper["agent"], wrapper["tool_origin"]) == ({"name": "Front"}, {"type": "function"})
    assert messages[3].metadata["openai_agents"]["run_items"][0]["output"] == "found"
    assert [(h.index, h.from_agent, h.to_agent) for h in openai_agents.handoffs(result)] == [
        (5, "Front", "Billing")
    ]
    assert openai_agents.from_messages(messages, drop_names=True) == replay


def test_a_streamed_nested_handoff_after_a_tool_call_reads_the_same() -> None:
    async def streamed() -> Any:
        run = Runner.run_streamed(tool_then_nested_handoff_agent(), "Balance?", run_config=NESTED)
        async for _ in run.stream_events():
            pass
        return run

    result = asyncio.run(streamed())
    messages = openai_agents.to_messages(result)
    assert turns(messages) == TOOL_THEN_HANDOFF
    assert openai_agents.from_messages(messages, drop_names=True) == result.to_input_list()


def test_two_nested_handoffs_keep_the_first_handoffs_agent_and_output() -> None:
    model = GENERATOR.ScriptModel([
        [GENERATOR.message("msg_h1", "To billing."),
         GENERATOR.call("call_h1", "transfer_to_billing", "{}")],
        [GENERATOR.message("msg_h2", "To audit."),
         GENERATOR.call("call_h2", "transfer_to_audit", "{}")],
        [GENERATOR.call("call_b", "lookup", '{"q":"A"}')],
        [GENERATOR.message("msg_f", "Balance 120.")],
    ])
    audit = Agent(name="Audit", model=model, tools=[lookup])
    billing = Agent(name="Billing", model=model, handoffs=[audit])
    front = Agent(name="Front", model=model, handoffs=[billing])
    result = asyncio.run(Runner.run(front, "Balance?", run_config=NESTED))
    messages = openai_agents.to_messages(result)
    assert turns(messages) == [
        ("ai", None, []),  # the summary
        ("ai", None, []),  # Billing's line, moved into the rewritten input
        ("ai", None, []),  # the second summary
        ("ai", "Front", ["message_output_item", "handoff_call_item"]),
        ("tool", None, ["handoff_output_item"]),
        ("ai", "Billing", ["handoff_call_item"]),
        ("tool", None, ["handoff_output_item"]),
        ("ai", "Audit", ["tool_call_item"]),
        ("tool", None, ["tool_call_output_item"]),
        ("ai", "Audit", ["message_output_item"]),
    ]
    assert (messages[1].text, messages[3].text) == ("To audit.", "To billing.")
    assert [(h.index, h.from_agent, h.to_agent) for h in openai_agents.handoffs(result)] == [
        (4, "Front", "Billing"), (6, "Billing", "Audit")
    ]
    assert openai_agents.from_messages(messages, drop_names=True) == result.to_input_list()


# --- SDK part objects inside an input dict of a run ------------------------------------------


def test_sdk_parts_inside_an_input_dict_are_named_with_the_other_route() -> None:
    previous = GENERATOR.message("msg_0", "prev")
    given = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": previous.content},
        {"role": "user", "content": "hi"},
    ]
    model = GENERATOR.ScriptModel([[GENERATOR.message("msg_2", "ok")]])
    result = asyncio.run(Runner.run(Agent(name="N", model=model), given))
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(result)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "to_input_list()[1].content[0]"
    )
    assert error.detail.startswith(
        "the run's input[1].content[0] is an OpenAI SDK object (ResponseOutputText), which the "
        "Agents SDK lists in to_input_list() (and sent to the model) as a list of [field, "
        "value] pairs: [['annotations', []], ['text', 'prev'], ['type', 'output_text'], "
        "['logprobs', None]]."
    )
    assert error.detail.endswith(
        "to read the object as given, pass to_messages(result.new_items, input=result.input)"
    )
    read = openai_agents.to_messages(result.new_items, input=result.input)
    assert [(m.type, m.text) for m in read] == [
        ("human", "a"), ("ai", "prev"), ("human", "hi"), ("ai", "ok")
    ]


# --- call args changed in place after validation ---------------------------------------------


def function_call_conversation() -> list[Any]:
    return [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="f", args={"a": 1}, id="c1")]),
        ToolMessage(content="ok", tool_call_id="c1"),
    ]


WRITERS = [openai_responses.from_messages, openai_agents.from_messages,
           openai_chat.from_messages]


@pytest.mark.parametrize("write", WRITERS)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_number_put_in_a_calls_args_is_refused_at_it(write: Any, value: float) -> None:
    messages = function_call_conversation()
    messages[1].tool_calls[0].args["x"] = {"y": [value]}
    assert refused(write, messages) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.x.y[0]"
    )


def test_a_non_finite_number_in_an_id_less_calls_args_is_refused_at_it() -> None:
    messages = [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="f", args={"a": 1})]),
        ToolMessage(content="ok", name="f"),
    ]
    messages[1].tool_calls[0].args["x"] = float("nan")
    assert refused(openai_chat.from_messages, messages) == (
        "unserializable_value", 1, "messages[1].tool_calls[0].args.x"
    )


USER = {"role": "user", "content": "q"}
COMPUTER = [
    USER,
    {"type": "computer_call", "id": "cu_1", "call_id": "c1",
     "action": {"type": "click", "x": 1, "y": 2, "button": "left"},
     "pending_safety_checks": [], "status": "completed"},
    {"type": "computer_call_output", "call_id": "c1",
     "output": {"type": "computer_screenshot", "image_url": "https://x/s.png"}},
]
WEB_SEARCH = [
    USER,
    {"type": "web_search_call", "id": "ws_1", "status": "completed",
     "action": {"type": "search", "query": "q"}},
    {"type": "message", "role": "assistant",
     "content": [{"type": "output_text", "text": "x", "annotations": []}]},
]


@pytest.mark.parametrize("write", WRITERS[:2])
@pytest.mark.parametrize(("items", "key", "value"), [
    (COMPUTER, "x", float("nan")),
    (COMPUTER, "x", {1}),
    (WEB_SEARCH, "query", float("inf")),
])
def test_a_value_that_is_no_json_put_in_an_item_kept_calls_input_is_refused_at_it(
    write: Any, items: list[Any], key: str, value: Any
) -> None:
    messages = openai_responses.to_messages(items)
    messages[1].tool_calls[0].args["action"][key] = value
    assert refused(write, messages) == (
        "unserializable_value", 1, f"messages[1].tool_calls[0].args.action.{key}"
    )


CUSTOM = [
    USER,
    {"type": "custom_tool_call", "call_id": "c1", "name": "g", "input": "raw"},
    {"type": "custom_tool_call_output", "call_id": "c1", "output": "ok"},
]


@pytest.mark.parametrize("write", WRITERS)
@pytest.mark.parametrize(("key", "value"), [
    ("more", "text"), ("input", float("nan")), ("input", None), ("input", ["x"]),
])
def test_a_custom_calls_args_changed_in_place_are_refused(
    write: Any, key: str, value: Any
) -> None:
    messages = openai_responses.to_messages(CUSTOM)
    messages[1].tool_calls[0].args[key] = value
    assert refused(write, messages) == ("malformed_event", 1, "messages[1].tool_calls[0].args")


def test_a_custom_call_as_read_is_still_written() -> None:
    assert openai_responses.from_messages(openai_responses.to_messages(CUSTOM)) == CUSTOM


# --- a list marked only by phase --------------------------------------------------------------


PHASED = [
    {"role": "developer", "content": "d"},
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "Let me check.", "phase": "commentary"},
    {"role": "assistant", "content": "Done.", "phase": "final_answer"},
]


@pytest.mark.parametrize("trace", [PHASED, PHASED[1:3], [PHASED[1], PHASED[3]]])
def test_a_list_marked_only_by_phase_is_a_responses_list(trace: list[Any]) -> None:
    assert (openai_responses.detect(trace), openai_chat.detect(trace), galtea.detect(trace)) == (
        True, False, False
    )
    assert detect_format(trace) == "openai_responses"
    assert convert(trace, target="openai_responses") == trace


# --- an audio part in a tool output ----------------------------------------------------------


def audio_result() -> list[Any]:
    return [
        HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="rec", args={}, id="c1")]),
        ToolMessage(content=[TextPart(text="x"), AudioPart(data="UklGRg==", mime_type="audio/wav")],
                    tool_call_id="c1"),
    ]


@pytest.mark.parametrize("write", WRITERS[:2])
def test_an_audio_part_in_a_tool_output_names_and_takes_drop_audio_parts(write: Any) -> None:
    with pytest.raises(TraceError) as caught:
        write(audio_result())
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 2, "messages[2].content[1]"
    )
    assert "pass drop=['audio_parts'] to leave it out" in error.detail
    assert write(audio_result(), drop=["audio_parts"])[2] == {
        "type": "function_call_output", "call_id": "c1",
        "output": [{"type": "input_text", "text": "x"}],
    }
