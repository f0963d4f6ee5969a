"""Which typed message each item of a run became, so that it carries its agent's name.

The Responses reader turns the run's items into messages: a model response (its reasoning,
message and call items, one after another) becomes one assistant turn, or several when a
hosted tool's call and result live in one item; every other item (a user message, a tool
output) becomes one message. So the items are cut into *groups* -- each maximal stretch of
model-output items of one agent, and each other item alone -- and a group of model items is
read on its own, once, to learn how many messages it is and which of them each item was
first read into (two adjacent groups are also read together, to learn whether they meet in
one message). Where the model responses of two named agents meet (a handoff whose input
filter left its call and output out of the run, ``handoff_filters.remove_all_tools``), the
reader would make one turn of them: the run is read apart there, each agent's items as its
own turns. Each message then has a *slot*: an assistant
message takes its slot's agent as ``name``, and keeps under
``metadata["openai_agents"]["run_items"]`` the ``RunItem`` wrappers of the items first read
into it. (RunItems do not say where one model response ends and the next begins: a stretch
may hold several, and each wrapper goes with its own item.)

An ``input_item`` admits an item of the application (``RunState.add_input``), no model's: it
reads as input items do, with no agent, whatever agent the SDK records for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from tracebridge.errors import TraceError
from tracebridge.messages import AIMessage, Message, ToolMessage
from tracebridge.validation import validate

from ._bridge import NAME, count_read, placed_read, read
from ._run import ADMITTED, Entry

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
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    """Each RunItem wrapper with the position in ``items`` of its item (of an approval: of
    the call it waits on)."""
    first_index: int | None = None
    first_path: str = ""
    """Where its first item is in the source trace."""
    start: int = 0
    """How many items (approvals left out) come before its first."""


def _field(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def is_model_item(item: Any) -> bool:
    """True for an item a model response produced (an assistant message, a call, reasoning)."""
    kind = _field(item, "type")
    if isinstance(kind, str) and kind in MODEL_ITEM_TYPES:  # (a changed type may be a dict)
        return True
    return kind in ("message", None) and _field(item, "role") == "assistant"


def groups(entries: list[Entry]) -> list[Group]:
    """The entries cut into groups (an approval joins the group of the call it waits on)."""
    found: list[Group] = []
    start = 0
    for entry in entries:
        last = found[-1] if found else None
        if entry.approval:  # no item of its own
            _approve(found, entry)
            continue
        model = is_model_item(entry.item)
        record = entry.record
        # an admitted input item is the application's: no agent's model response
        agent = None if record is not None and record.get("type") == ADMITTED else entry.agent
        if not (model and last is not None and last.model and last.agent == agent):
            last = Group(model, agent, first_index=entry.index, first_path=entry.path,
                         start=start)
            found.append(last)
        start += 1
        last.items.append(entry.item)
        if record is not None:
            last.records.append((len(last.items) - 1, record))
    return found


_BEFORE_APPROVALS = frozenset({"tool_call_output_item", "mcp_approval_response_item"})
"""RunItems the SDK lists between a model response and the approvals its calls wait on: the
outputs of the calls it ran at once, and the MCP approvals it answered itself."""


def _approve(found: list[Group], entry: Entry) -> None:
    """Keep an approval's wrapper with the call it waits on: a call of its agent's last model
    response, which only that response's outputs (of the calls run at once) may follow."""
    waits_on = _field((entry.record or {}).get("raw_item") or {}, "call_id")
    response = None
    for group in reversed(found):
        if group.model:
            response = group
            break
        if group.agent != entry.agent or not group.records or any(
            record.get("type") not in _BEFORE_APPROVALS for _, record in group.records
        ):
            break
    calls = [] if response is None else [_field(item, "call_id") for item in response.items]
    if response is None or response.agent != entry.agent or waits_on not in calls:
        raise TraceError(
            "malformed_event",
            f"a tool_approval_item for call {waits_on!r} must come after the model response "
            "of its agent that made that call, with only that response's tool outputs between",
            index=entry.index,
            path=entry.path,
            source=NAME,
        )
    if entry.record is not None:
        response.records.append((len(calls) - 1 - calls[::-1].index(waits_on), entry.record))


def apart(kept: list[Entry], grouped: list[Group], *, allow_pending: bool) -> list[Message]:
    """The messages of the run's items (``kept``), read in parts where the model responses of
    two named agents meet, so that each agent's items are turns of its own; each item is read
    once. Where the run breaks a rule, its error is the one the whole run read at once gives.

    ``conflicting_fields`` at the later agent's first item where a call of the earlier one
    still waits for its output there: its output after the other agent's items would make
    them one turn."""
    starts = [group for previous, group in pairwise(grouped) if _two_agents(previous, group)]
    if not starts:
        return read(kept, allow_pending=allow_pending)
    try:
        return _read_apart(kept, starts, allow_pending=allow_pending)
    except TraceError:
        read(kept, allow_pending=allow_pending)  # the whole run's own error comes first
        raise


def _read_apart(kept: list[Entry], starts: list[Group], *, allow_pending: bool) -> list[Message]:
    """The parts of ``kept`` cut at ``starts``, each read on its own, then checked together
    (a call id used again in a later part)."""
    out: list[Message] = []
    begin = 0
    for group in starts:
        part = read(kept[begin:group.start], allow_pending=True)
        _refuse_waiting(part, group)  # so each call's output is in its own part
        out.extend(part)
        begin = group.start
    out.extend(read(kept[begin:], allow_pending=allow_pending))
    validate(out, allow_pending=allow_pending, source=NAME)
    return out


def _two_agents(left: Group, right: Group) -> bool:
    """True where the model items of two named agents meet."""
    return left.model and right.model and None not in (left.agent, right.agent) and (
        left.agent != right.agent
    )


def _refuse_waiting(part: list[Message], group: Group) -> None:
    """``conflicting_fields`` at ``group``'s first item when a call of ``part`` waits for its
    output (read with calls left pending, only the calls of its last reply may)."""
    answered: set[str | None] = set()
    for message in reversed(part):
        if isinstance(message, ToolMessage):
            answered.add(message.tool_call_id)
            continue
        calls = message.tool_calls if isinstance(message, AIMessage) else []
        waiting = [call.id for call in calls if call.id not in answered]
        if waiting:
            raise TraceError(
                "conflicting_fields",
                f"the agent {group.agent!r} speaks while the call {waiting[0]!r} of an earlier "
                "agent still waits for its output: the items of the two agents read as one "
                "assistant message",
                index=group.first_index,
                path=group.first_path,
                source=NAME,
            )
        return


@dataclass
class Slot:
    """What one message of the reading came from."""

    agent: str | None
    model: bool
    records: list[dict[str, Any]] = field(default_factory=list)


def attributed(messages: list[Message], grouped: list[Group]) -> list[Message]:
    """``messages`` (the run's reading, ``apart`` where two agents meet) with agent names and
    RunItem wrappers set."""
    slots = _slots(grouped)
    if len(slots) != len(messages):
        raise TraceError(
            "conflicting_fields",
            f"the run's items read as {len(messages)} messages, but group by group as "
            f"{len(slots)}",
            source=NAME,
        )
    out: list[Message] = []
    for slot, message in zip(slots, messages, strict=True):
        update: dict[str, Any] = {}
        if slot.model and isinstance(message, AIMessage) and slot.agent is not None:
            update["name"] = slot.agent
        if slot.records:
            space = dict(message.metadata.get(NAME, {}))
            space["run_items"] = slot.records
            update["metadata"] = {**message.metadata, NAME: space}
        out.append(message.model_copy(update=update) if update else message)
    return out


def _slots(grouped: list[Group]) -> list[Slot]:
    """One slot per message the groups read as, in order.

    A group of model items reads as the messages it reads as alone, each wrapper on the
    message its item was first read into (the assistant turn that holds it; a hosted call's
    result follows that turn); a group of one other item as one message. Two adjacent model
    groups, one of them no agent's (the run's input ending in an assistant message, then the
    first agent's call), may read as one message where they meet: then that message is the
    agent's. Two named agents' groups are read apart (``apart``): they never meet.
    """
    slots: list[Slot] = []
    previous: Group | None = None
    previous_count = 0
    for group in grouped:
        places: list[int] | None = None
        if group.model:
            read, places = placed_read(group.items)
            count = len(read)
        else:
            count = 1
        mine = [Slot(group.agent, group.model) for _ in range(count)]
        if mine and group.records:
            for at, record in group.records:
                mine[0 if places is None else places[at]].records.append(record)
        if previous is not None and previous.model and group.model and slots and mine and (
            not _two_agents(previous, group)
        ):
            both = len(count_read([*previous.items, *group.items]))
            if both == previous_count + count - 1:
                mine[0] = _met(slots.pop(), mine[0])
        slots.extend(mine)
        previous, previous_count = group, count
    return slots


def _met(left: Slot, right: Slot) -> Slot:
    """The one message two groups' items meet in (one of them no agent's)."""
    agent = right.agent if right.agent is not None else left.agent  # "" is a name too
    return Slot(agent, True, [*left.records, *right.records])
