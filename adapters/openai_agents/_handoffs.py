"""Which tool results of a run are handoffs, and between which agents.

The SDK records a handoff as a ``HandoffOutputItem`` (``handoff_output_item``) with its
``source_agent`` and ``target_agent``: a tool result read from ``RunItem``s keeps that wrapper
under ``metadata["openai_agents"]["run_items"]``, and is a handoff exactly when the wrapper is
one (a ``tool_call_output_item`` never is, whatever it says: an ordinary tool may return
``{"assistant": ...}``, and a second handoff of one response is answered with an ordinary
output). Plain input items keep no wrapper: there a handoff is told by what the SDK writes for
one -- a call of the default handoff tool ``transfer_to_<agent>`` answered with
``{"assistant": "<agent>"}`` -- and made by the agent named on the message holding the call.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import AIMessage, Message, ToolMessage

from .. import swarm
from ._bridge import NAME, RUN_ITEMS
from ._run import HANDOFF_OUTPUT, agent_name


def handoffs_in(messages: list[Message]) -> list[swarm.Handoff]:
    """Every handoff of ``messages``, in order (``index``: the handoff's tool result)."""
    found = []
    for index, message in enumerate(messages):
        if not isinstance(message, ToolMessage):
            continue
        records = _run_items(message, index)
        if records is None:
            handoff = _from_input_items(messages, index, message)
        else:
            handoff = _recorded(records, index)
        if handoff is not None:
            found.append(handoff)
    return found


def default_tool_name(agent: str) -> str:
    """The name the SDK gives the tool that hands off to ``agent`` (``Handoff.default_tool_name``:
    ``transfer_to_<agent>``, each blank or character other than an ASCII letter, digit or ``_``
    made ``_``, lower-cased)."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", re.sub(r"\s", "_", f"transfer_to_{agent}")).lower()


def _run_items(message: ToolMessage, index: int) -> list[dict[str, Any]] | None:
    """The RunItem wrappers kept on ``message`` (None when it was read from an input item)."""
    space = message.metadata.get(NAME)
    if not isinstance(space, dict) or RUN_ITEMS not in space:
        return None
    records = space[RUN_ITEMS]
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise TraceError(
            "malformed_event",
            f"expected a list of RunItem wrappers (dicts), got {short_repr(records)}",
            index=index,
            path=f"messages[{index}].metadata.{NAME}.{RUN_ITEMS}",
            source=NAME,
        )
    return records


def _recorded(records: list[dict[str, Any]], index: int) -> swarm.Handoff | None:
    """The handoff a tool result's wrappers record (None when none is a handoff output)."""
    for j, record in enumerate(records):
        if record.get("type") != HANDOFF_OUTPUT:
            continue
        at = f"messages[{index}].metadata.{NAME}.{RUN_ITEMS}[{j}]"
        return swarm.Handoff(
            index, agent_name(record, "source_agent", index, at, f"as a {HANDOFF_OUTPUT} needs"),
            agent_name(record, "target_agent", index, at, f"as a {HANDOFF_OUTPUT} needs"),
        )
    return None




def _from_input_items(
    messages: list[Message], index: int, result: ToolMessage
) -> swarm.Handoff | None:
    """The handoff a tool result read from input items is, told by the SDK's own shape: an
    output ``{"assistant": "<agent>"}`` answering a call of ``transfer_to_<agent>``."""
    target = _transfer_target(result)
    if target is None:
        return None
    found = _answered_call(messages, index, result)
    if found is None:
        return None
    holder, call_name = found
    if call_name != default_tool_name(target):
        return None
    return swarm.Handoff(index, holder.name, target)


def _transfer_target(result: ToolMessage) -> str | None:
    """The agent of a result that is exactly the SDK's transfer message, else None."""
    try:
        value = json.loads(result.text)
    except (ValueError, RecursionError):  # no JSON (or nested past the parser's depth)
        return None
    if isinstance(value, dict) and list(value) == ["assistant"]:
        target = value["assistant"]
        if isinstance(target, str):
            return target
    return None


def _answered_call(
    messages: list[Message], index: int, result: ToolMessage
) -> tuple[AIMessage, str] | None:
    """The assistant message holding the call ``result`` answers, and the call's name."""
    start = index
    while start > 0 and isinstance(messages[start - 1], ToolMessage):
        start -= 1
    holder = messages[start - 1] if start > 0 else None
    if not isinstance(holder, AIMessage):
        return None
    if result.tool_call_id is not None:
        names = [c.name for c in holder.tool_calls if c.id == result.tool_call_id]
        return (holder, names[0]) if names else None
    position = index - start  # without ids, results answer calls in order
    if position < len(holder.tool_calls):
        return holder, holder.tool_calls[position].name
    return None
