"""Which typed message each item of a run became, so that it carries its agent's name.

The Responses reader turns the run's items into messages: a model response (its reasoning,
message and call items, one after another) becomes one assistant turn, or several when a
hosted tool's call and result live in one item; every other item (a user message, a tool
output) becomes one message. So the items are cut into *groups* -- each maximal stretch of
model-output items of one agent, and each other item alone -- and a group of model items is
read on its own to learn how many messages it is. The messages are then dealt out to the groups
in order: an assistant message takes its group's agent as ``name``, and the first message of
a group keeps the group's ``RunItem`` wrappers under ``metadata["openai_agents"]["run_items"]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracebridge.errors import TraceError
from tracebridge.messages import AIMessage, Message

from ._bridge import NAME, count_read
from ._run import Entry

MODEL_ITEM_TYPES = frozenset({
    "function_call",
    "custom_tool_call",
    "reasoning",
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "computer_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "tool_search_call",
})
"""Responses item types only a model response produces (besides assistant messages)."""


@dataclass
class Group:
    """Items that read as consecutive messages of one origin."""

    model: bool
    """Model-output items (read on their own to count their messages)."""
    agent: str | None
    items: list[Any] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    first_index: int | None = None


def _field(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def is_model_item(item: Any) -> bool:
    """True for an item a model response produced (an assistant message, a call, reasoning)."""
    kind = _field(item, "type")
    if kind in MODEL_ITEM_TYPES:
        return True
    return kind in ("message", None) and _field(item, "role") == "assistant"


def groups(entries: list[Entry]) -> list[Group]:
    """The entries cut into groups (an approval joins the group of the call it waits on)."""
    found: list[Group] = []
    for entry in entries:
        if entry.approval:  # no item of its own
            last = found[-1] if found else None
            waits_on = _field((entry.record or {}).get("raw_item") or {}, "call_id")
            if last is None or not last.model or last.agent != entry.agent or waits_on not in [
                _field(item, "call_id") for item in last.items
            ]:
                raise TraceError(
                    "malformed_event",
                    f"a tool_approval_item for call {waits_on!r} must come right after the "
                    "model response of its agent that made that call",
                    index=entry.index,
                    path=entry.path,
                    source=NAME,
                )
            if entry.record is not None:
                last.records.append(entry.record)
            continue
        model = is_model_item(entry.item)
        last = found[-1] if found else None
        if not (model and last is not None and last.model and last.agent == entry.agent):
            last = Group(model, entry.agent, first_index=entry.index)
            found.append(last)
        last.items.append(entry.item)
        if entry.record is not None:
            last.records.append(entry.record)
    return found


def attributed(messages: list[Message], grouped: list[Group]) -> list[Message]:
    """``messages`` (the whole run's reading) with agent names and RunItem wrappers set."""
    out: list[Message] = []
    position = 0
    for group in grouped:
        count = len(count_read(group.items)) if group.model else 1
        taken = messages[position : position + count]
        if len(taken) != count:
            break
        for offset, message in enumerate(taken):
            update: dict[str, Any] = {}
            if isinstance(message, AIMessage) and group.agent is not None:
                update["name"] = group.agent
            if offset == 0 and group.records:
                space = dict(message.metadata.get(NAME, {}))
                space["run_items"] = group.records
                update["metadata"] = {**message.metadata, NAME: space}
            out.append(message.model_copy(update=update) if update else message)
        position += count
    if position != len(messages) or len(out) != len(messages):
        raise TraceError(
            "conflicting_fields",
            f"the run's items read as {len(messages)} messages, but item by item as "
            f"{position}: items of different agents were read as one message",
            source=NAME,
        )
    return out
