"""Law kit for Agents SDK histories: the Responses input items ``result.to_input_list()`` and a
session's ``get_items()`` hold, and the ``RunItem``s a run produced.

* ``conversations``: the openai_responses kit's, with its metadata in this adapter's namespace
  (an Agents SDK history is Responses items; agent names have no place in them).
* ``traces``: the openai_responses kit's item lists (dicts mixed with SDK objects).
* ``broken``: the openai_responses kit's item-level mutations, and ``RunItem`` lists (the dicts
  ``RunState.to_json()`` stores) broken as a run's items are: a RunItem type the SDK does not
  have, an item without its agent, an approval before the call it waits on.
* ``rules``: the openai_responses kit's rule mutations, as item lists and as a run's items
  (where the broken field is the raw item's); an unknown role is also a RunItem type the SDK
  does not have.

``run_items`` turns an item list into a run: the items after ``cut`` wrapped as the SDK's
``RunItem`` dicts, each turn (from one user message to the next) by its own agent.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st
from pydantic import TypeAdapter

from tracebridge import Message
from tracebridge.adapters import openai_agents, openai_responses

from law_kits import BrokenTrace, LawKit
from law_kits import openai_responses as responses_kit

MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
AGENTS = ("Triage", "Billing Agent", "Weather Bot")

RUN_ITEM_OF = {
    "message": "message_output_item",
    "reasoning": "reasoning_item",
    "function_call": "tool_call_item",
    "custom_tool_call": "tool_call_item",
    "computer_call": "tool_call_item",
    "function_call_output": "tool_call_output_item",
    "custom_tool_call_output": "tool_call_output_item",
    "computer_call_output": "tool_call_output_item",
}
"""The RunItem class the SDK wraps each item type in (hosted calls are tool_call_items)."""


def _in_our_namespace(value: Any, metadata: bool = False) -> Any:
    if isinstance(value, list):
        return [_in_our_namespace(item) for item in value]
    if not isinstance(value, dict):
        return value
    if metadata:
        return {
            (openai_agents.NAME if key == openai_responses.NAME else key): item
            for key, item in value.items()
        }
    return {key: _in_our_namespace(item, key == "metadata") for key, item in value.items()}


def in_our_namespace(messages: list[Message]) -> list[Message]:
    """``messages`` with ``metadata["openai_responses"]`` moved to ``metadata["openai_agents"]``
    on messages, parts, calls and citations."""
    dumped = [message.model_dump() for message in messages]
    return MESSAGES.validate_python(_in_our_namespace(dumped))


def run_item_type(item: dict[str, Any]) -> str:
    if "role" in item and item.get("role") != "assistant":
        return "input_item"
    return RUN_ITEM_OF.get(item.get("type", "message"), "tool_call_item")


def turns(items: list[dict[str, Any]]) -> list[int]:
    """For each item, how many user messages came up to it (its turn)."""
    found, turn = [], 0
    for item in items:
        turn += item.get("role") == "user"
        found.append(turn)
    return found


def run_items(items: list[dict[str, Any]], cut: int) -> list[dict[str, Any]]:
    """``items[cut:]`` as RunItem dicts; each turn's items by ``AGENTS[turn % 3]``."""
    return [
        {"type": run_item_type(item), "raw_item": item, "agent": {"name": AGENTS[turn % 3]}}
        for item, turn in list(zip(items, turns(items), strict=True))[cut:]
    ]


conversations = responses_kit.expressible().map(in_our_namespace)


@st.composite
def broken_runs(draw: st.DrawFn, only: str | None = None) -> BrokenTrace:
    items = openai_agents.from_messages(draw(conversations))
    wrapped = copy.deepcopy(run_items(items, 0))
    at = draw(st.integers(0, len(wrapped) - 1))
    kind = only or draw(st.sampled_from(["unknown_type", "no_agent", "early_approval"]))
    if kind == "unknown_type":
        wrapped[at]["type"] = draw(st.sampled_from(["guardrail_item", "message", "handoff"]))
        return BrokenTrace(wrapped, "unknown_role", at, f"items[{at}].type")
    if kind == "no_agent":
        del wrapped[at]["agent"]
        return BrokenTrace(wrapped, "malformed_event", at)
    # An approval waits on a call made just before it; at the start, nothing was called.
    approval = {
        "type": "tool_approval_item",
        "raw_item": {"type": "function_call", "call_id": "call_x", "name": "delete_file",
                     "arguments": "{}"},
        "agent": {"name": AGENTS[0]},
        "tool_name": "delete_file",
    }
    return BrokenTrace([approval, *wrapped], "malformed_event", 0)


def as_run(broken: BrokenTrace) -> BrokenTrace:
    """The broken item list as a run's items: one RunItem per item, so the index stays and
    the broken field is the raw item's."""
    assert broken.path is not None
    assert broken.index is not None
    item = f"items[{broken.index}]"
    assert broken.path.startswith(item)
    path = f"{item}.raw_item{broken.path.removeprefix(item)}"
    return BrokenTrace(run_items(broken.trace, 0), broken.code, broken.index, path)


def rules() -> dict[str, st.SearchStrategy[BrokenTrace]]:
    """Each rule mutation of the openai_responses kit in both shapes (an unknown item type in
    a run is a conflict with its RunItem type: its own unknown role is the RunItem's)."""
    found = {code: st.one_of(items, items.map(as_run))
             for code, items in responses_kit.rules().items()}
    found["unknown_role"] = st.one_of(
        responses_kit.broken("unknown_type"), broken_runs(only="unknown_type")
    )
    return found


KIT = LawKit(
    traces=responses_kit.traces(),
    conversations=conversations,
    broken=st.one_of(responses_kit.broken(), broken_runs(), *rules().values()),
    canonical=responses_kit.canonical,
    rules=rules(),
)

__all__ = ["AGENTS", "KIT", "in_our_namespace", "run_items", "turns"]
