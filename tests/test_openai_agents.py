"""The openai_agents adapter on live Agents SDK objects: runs made by the golden generator's
cases (real ``Runner.run`` with a scripted ``Model``), their ``RunItem`` objects, unfinished
streams, failed runs, and ``Runner.run`` fed what ``from_messages`` writes."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner
from agents import items as sdk_items
from agents.exceptions import MaxTurnsExceeded
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from tracebridge import AIMessage, HumanMessage, Message, TraceError
from tracebridge.adapters import openai_agents

from law_kits import openai_agents as agents_kit

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden_traces" / "openai_agents"
MESSAGES = TypeAdapter(list[Message])


def generator() -> ModuleType:
    """``scripts/golden/openai_agents.py``, loaded under a name that does not hide the package."""
    name = "golden_openai_agents"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, ROOT / "scripts" / "golden" / "openai_agents.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


GENERATOR = generator()
CASES = sorted(GENERATOR.CASES)


def golden(name: str) -> dict[str, Any]:
    content: dict[str, Any] = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    return content


def finished(name: str) -> Any:
    return asyncio.run(GENERATOR.CASES[name].run())


@pytest.mark.parametrize("name", CASES)
def test_a_run_result_reads_as_its_golden_named_messages(name: str) -> None:
    run = finished(name)
    options = golden(name).get("to_options", {})
    expected = MESSAGES.validate_python(golden(name)["expected_named"])
    assert openai_agents.to_messages(run.result, **options) == expected
    # The same run as RunItem objects after its input, and as its stored item dicts.
    assert openai_agents.to_messages(
        run.result.new_items, input=run.result.input, **options
    ) == expected


@pytest.mark.parametrize("name", CASES)
def test_the_input_list_of_a_live_run_reads_as_its_golden(name: str) -> None:
    run = finished(name)
    options = golden(name).get("to_options", {})
    listed = run.result.to_input_list() if run.session_items is None else run.session_items
    expected = MESSAGES.validate_python(golden(name)["expected"])
    assert openai_agents.to_messages(listed, **options) == expected


def test_every_run_item_class_of_the_sdk_is_known() -> None:
    classes = typing.get_args(sdk_items.RunItem)
    declared = [cls.__dataclass_fields__["type"].default for cls in classes]
    assert sorted(declared) == sorted(openai_agents.RUN_ITEM_TYPES)


async def test_an_unfinished_streaming_run_is_refused() -> None:
    agent = GENERATOR.weather_agent(GENERATOR.ScriptModel(GENERATOR.tool_calling_steps()))
    result = Runner.run_streamed(agent, "What's the weather in Paris?")
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(result)
    assert (caught.value.code, caught.value.index, caught.value.source) == (
        "streaming_chunk", None, "openai_agents"
    )
    assert "stream_events()" in str(caught.value)
    async for _ in result.stream_events():
        pass
    named = openai_agents.to_messages(result)
    assert named == MESSAGES.validate_python(golden("tool_calling")["expected_named"])


def test_a_run_result_takes_no_separate_input() -> None:
    run = finished("tool_calling")
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(run.result, input="again")
    assert (caught.value.code, caught.value.index) == ("malformed_event", None)


def test_a_failed_run_reads_from_the_exceptions_run_data() -> None:
    # max_turns=1: the tool runs, then the run stops before the model answers.
    agent = GENERATOR.weather_agent(GENERATOR.ScriptModel(GENERATOR.tool_calling_steps()))
    with pytest.raises(MaxTurnsExceeded) as caught:
        asyncio.run(Runner.run(agent, "What's the weather in Paris?", max_turns=1))
    details = caught.value.run_data
    assert details is not None
    messages = openai_agents.to_messages(details)
    expected = MESSAGES.validate_python(golden("tool_calling")["expected_named"])
    assert messages == expected[:3]


def test_input_items_mixed_with_run_items_read_in_order() -> None:
    run = finished("handoff")
    mixed = [*run.result.to_input_list()[:1], *run.result.new_items]
    assert openai_agents.to_messages(mixed) == openai_agents.to_messages(run.result)


def test_a_string_input_reads_as_the_user_message_the_sdk_sends() -> None:
    run = finished("refusal")
    messages = openai_agents.to_messages(run.result)
    assert messages[0].model_dump() == {
        "type": "human", "content": "How do I break into a car?", "name": None, "id": None,
        "metadata": {},
    }
    reply = messages[1]
    assert isinstance(reply, AIMessage)
    assert reply.name == "Helper"
    assert [part.type for part in reply.content if not isinstance(part, str)] == ["refusal"]


def test_handoffs_of_a_live_result() -> None:
    run = finished("handoff")
    assert [vars(h) for h in openai_agents.handoffs(run.result)] == [
        {"index": 2, "from_agent": "Front Desk", "to_agent": "Billing Agent"}
    ]


def test_an_object_of_the_sdk_that_is_no_run_item_is_unknown_role() -> None:
    run = finished("tool_calling")
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages([*run.result.new_items, run.result.context_wrapper])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unknown_role", 4, "items[4]"
    )


@pytest.mark.parametrize("name", [n for n in CASES if "trace" in golden(n)])
def test_runner_run_accepts_what_from_messages_writes(name: str) -> None:
    # The written history plus a new user turn goes to Runner.run as input; the model is
    # sent exactly that, the run goes on, and the new run reads as the old one plus its turn.
    run = finished(name)
    written = openai_agents.from_messages(openai_agents.to_messages(run.result), drop_names=True)
    turn: dict[str, Any] = {"role": "user", "content": "Thanks! And tomorrow?"}
    model = GENERATOR.ScriptModel([[GENERATOR.message("msg_next", "Tomorrow: 20 C.")]])
    agent = Agent(name="Follow-up", instructions="Answer.", model=model)
    again = asyncio.run(Runner.run(agent, [*written, turn]))
    assert model.inputs == [[*written, turn]]
    messages = openai_agents.to_messages(again)
    assert messages[: len(messages) - 2] == openai_agents.to_messages(written)
    assert [(m.type, m.name, m.text) for m in messages[-2:]] == [
        ("human", None, "Thanks! And tomorrow?"), ("ai", "Follow-up", "Tomorrow: 20 C.")
    ]


def test_detect_claims_results_and_run_item_lists_only() -> None:
    run = finished("tool_calling")
    assert openai_agents.detect(run.result)
    assert openai_agents.detect(run.result.new_items)
    assert not openai_agents.detect(run.result.to_input_list())
    assert not openai_agents.detect([])
    assert not openai_agents.detect("hello")


# --- generated runs --------------------------------------------------------------------------


def without_agents(message: Message) -> Message:
    """``message`` without its agent name and RunItem wrappers (what input items carry)."""
    space = {k: v for k, v in message.metadata.get("openai_agents", {}).items() if k != "run_items"}
    metadata = {k: v for k, v in message.metadata.items() if k != "openai_agents"}
    if space:
        metadata["openai_agents"] = space
    update: dict[str, Any] = {"metadata": metadata}
    if isinstance(message, AIMessage):
        update["name"] = None
    return message.model_copy(update=update)


@settings(max_examples=60)
@given(data=st.data())
def test_run_items_read_as_their_input_items_plus_each_turns_agent(data: st.DataObject) -> None:
    # A generated history as a run: the items before one user message are the run's input,
    # the rest RunItem dicts, each turn (one user message to the next) by its own agent.
    items = openai_agents.from_messages(data.draw(agents_kit.conversations, label="messages"))
    users = [j for j, item in enumerate(items) if item.get("role") == "user"]
    cut = data.draw(st.sampled_from(users), label="cut")
    named = openai_agents.to_messages(agents_kit.run_items(items, cut), input=items[:cut])
    plain = openai_agents.to_messages(items)
    assert [without_agents(m) for m in named] == plain
    first_turn = agents_kit.turns(items)[cut]
    turn = 0
    for message in named:
        turn += isinstance(message, HumanMessage)
        if isinstance(message, AIMessage):
            agent = agents_kit.AGENTS[turn % 3] if turn >= first_turn else None
            assert message.name == agent
    assert openai_agents.from_messages(named, drop_names=True) == items


# --- every other RunItem class -----------------------------------------------------------------


def other_run_items() -> tuple[Any, list[Any]]:
    """An agent and one RunItem object of each class the golden runs do not produce."""
    from openai.types.responses.response_output_item import (
        McpApprovalRequest,
        McpApprovalResponse,
        McpListTools,
        McpListToolsTool,
    )

    agent = Agent(name="MCP Agent")
    listed = McpListTools(id="mcpl_1", server_label="files", type="mcp_list_tools",
                          tools=[McpListToolsTool(name="read", input_schema={})])
    asked = McpApprovalRequest(id="mcpr_1", arguments="{}", name="read", server_label="files",
                               type="mcp_approval_request")
    answered = McpApprovalResponse(id="mcpa_1", approval_request_id="mcpr_1", approve=True,
                                   type="mcp_approval_response")
    return agent, [
        sdk_items.InputItem(agent=agent, raw_item={"role": "user", "content": "Read a.txt"}),
        sdk_items.MCPListToolsItem(agent=agent, raw_item=listed),
        sdk_items.MCPApprovalRequestItem(agent=agent, raw_item=asked),
        sdk_items.MCPApprovalResponseItem(agent=agent, raw_item=answered),
    ]


def test_input_and_mcp_run_items_read_through_the_responses_reader() -> None:
    _, run = other_run_items()
    messages = openai_agents.to_messages(run)
    assert [(m.type, m.name) for m in messages] == [
        ("human", None), ("ai", "MCP Agent"), ("human", None)
    ]
    listed = [w["type"] for w in messages[1].metadata["openai_agents"]["run_items"]]
    assert listed == ["mcp_list_tools_item", "mcp_approval_request_item"]
    assert messages[0].metadata["openai_agents"]["run_items"][0]["input_id"] == run[0].input_id
    # The RunItem wrappers are provenance: writing gives the input items the SDK replays.
    assert openai_agents.from_messages(messages, drop_names=True) == [
        item.to_input_item() for item in run
    ]


@pytest.mark.parametrize(
    ("kind", "raw"),
    [
        ("ToolSearchCallItem", {"type": "tool_search_call", "id": "ts_1", "call_id": "ts_1",
                                "arguments": {}, "execution": "server", "status": "completed"}),
        ("ToolSearchOutputItem", {"type": "tool_search_output", "id": "tso_1",
                                  "call_id": "ts_1", "execution": "server", "tools": [],
                                  "status": "completed"}),
        ("CompactionItem", {"type": "compaction", "id": "cmp_1", "encrypted_content": "x"}),
    ],
)
def test_run_items_whose_items_the_responses_reader_does_not_know_are_unknown_role(
    kind: str, raw: dict[str, Any]
) -> None:
    agent = Agent(name="Searcher")
    item = getattr(sdk_items, kind)(agent=agent, raw_item=raw)
    user = {"role": "user", "content": "find the tool"}
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages([item], input=[user])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unknown_role", 0, "items[0].raw_item.type"
    )


def test_a_history_the_sdk_nested_reads_as_its_input_list_with_the_agents_it_can_tell() -> None:
    # RunConfig(nest_handoff_history=True) (beta) moves the turns before a handoff into the
    # next agent's input as summary messages: result.input is rewritten and holds items that
    # new_items holds too. The run reads as to_input_list() gives it; the new items that end
    # that list keep their agents, the summaries (SDK-written input) have none.
    model = GENERATOR.ScriptModel([
        [GENERATOR.message("msg_h1", "Let me pass you to billing."),
         GENERATOR.call("call_h1", "transfer_to_billing_agent", "{}")],
        [GENERATOR.call("call_h2", "get_balance", '{"account_id":"ACC-77"}')],
        [GENERATOR.message("msg_h3", "Your balance is 120.50 EUR.")],
    ])
    result = asyncio.run(Runner.run(GENERATOR.support_agents(model), "Balance of ACC-77?",
                                    run_config=RunConfig(nest_handoff_history=True)))
    messages = openai_agents.to_messages(result)
    assert [(m.type, m.name) for m in messages] == [
        ("ai", None), ("ai", None), ("ai", "Front Desk"), ("tool", None),
        ("ai", "Billing Agent"), ("tool", None), ("ai", "Billing Agent"),
    ]
    assert messages[0].text.startswith("For context, here is the conversation so far")
    assert openai_agents.from_messages(messages, drop_names=True) == result.to_input_list()
    assert [without_agents(m) for m in messages] == openai_agents.to_messages(
        result.to_input_list()
    )


def test_a_stored_run_state_reads_from_its_generated_items_and_original_input() -> None:
    run = finished("handoff")
    stored = json.loads(run.result.to_state().to_string())
    messages = openai_agents.to_messages(stored["generated_items"], input=stored["original_input"])
    assert messages == openai_agents.to_messages(run.result)
