"""OpenAI Swarm histories <-> tracebridge messages.

A Swarm history is a list of Chat Completions message dicts where assistant messages carry
``sender`` (the agent that spoke, -> ``AIMessage.name``) and tool messages carry ``tool_name``
(-> ``ToolMessage.name``). Swarm writes two shapes and both round-trip exactly:

* non-streaming (``Swarm.run``): every ``ChatCompletionMessage`` field, nulls included;
* streaming (``Swarm.run(stream=True)``): only ``content`` (``""`` rather than null),
  ``sender``, ``role``, ``function_call`` and ``tool_calls``.

A handoff is the tool result ``{"assistant": "<agent>"}``; it stays a tool result and
``handoffs()`` lists them. In the streaming shape ``sender`` keeps naming the *starting* agent
after a handoff; ``sender`` is kept as given, and ``handoffs()`` tells who really spoke.

Everything else works as in ``openai_chat`` (this module reuses it), with metadata kept under
``metadata["swarm"]``. ``to_messages`` takes the history list (``Response.messages``, or the
user's messages followed by them); the ``{"messages", "agent", "context_variables"}`` wrapper
is rejected with a pointer to its ``messages``, since agents and context variables are not
messages.

>>> from tracebridge.adapters import swarm
>>> history = [{"role": "user", "content": "hi"},
...            {"role": "assistant", "content": "hello", "sender": "Front Desk"}]
>>> swarm.to_messages(history)[1].name
'Front Desk'
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from tracebridge.errors import TraceError
from tracebridge.messages import (
    AIMessage,
    HumanMessage,
    Message,
    SystemMessage,
    ToolMessage,
    messages_of,
)

from .. import openai_chat
from ..openai_chat._read import read_trace
from ..openai_chat._write import write_trace

__all__ = [
    "DROPPABLE",
    "NAME",
    "Handoff",
    "detect",
    "from_messages",
    "handoffs",
    "to_messages",
]

NAME = "swarm"
DROPPABLE = openai_chat.DROPPABLE
"""What ``from_messages(drop=...)`` may leave out: the Chat Completions writer's names."""
_NAME_KEYS = {role: "name" for role in openai_chat.ROLES} | {
    "assistant": "sender",
    "tool": "tool_name",
}
SWARM = openai_chat.Dialect(NAME, _NAME_KEYS)


def to_messages(trace: Any, *, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a Swarm history (a list of message dicts)."""
    if isinstance(trace, dict) and "messages" in trace:
        raise TraceError(
            "malformed_event",
            f"expected the history list, got a dict with keys {sorted(trace)}: pass its "
            "'messages' (agent and context_variables are not messages)",
            source=NAME,
        )
    return read_trace(trace, SWARM, allow_pending=allow_pending)


def from_messages(messages: Any, *, drop: Collection[str] = ()) -> list[dict[str, Any]]:
    """Swarm history dicts (``sender`` on assistant messages, ``tool_name`` on tool results).

    ``drop`` works as in ``openai_chat.from_messages``.
    """
    return write_trace(messages, SWARM, drop=drop)


def detect(trace: Any) -> bool:
    """True for a list of role-keyed dicts with at least one ``sender`` or ``tool_name``."""
    if not isinstance(trace, list) or not trace:
        return False
    if not all(isinstance(item, dict) and item.get("role") in openai_chat.ROLES for item in trace):
        return False
    return any("sender" in item or "tool_name" in item for item in trace)


@dataclass(frozen=True)
class Handoff:
    """One agent handing the conversation to another."""

    index: int
    """Position of the handoff's tool result in the conversation."""
    from_agent: str | None
    """The agent that was active when it handed off (None when no agent name is known)."""
    to_agent: str
    """The agent that takes over."""


def handoffs(messages: Any) -> list[Handoff]:
    """Every handoff in a conversation (typed messages, or a Swarm history), in order.

    The active agent starts as the name of the first AIMessage and changes only at a
    handoff, so this is right for the streaming shape too (where ``sender`` is stale).

    >>> from tracebridge.adapters import swarm
    >>> history = [
    ...     {"role": "user", "content": "balance?"},
    ...     {"role": "assistant", "content": "", "sender": "Front Desk", "tool_calls": [
    ...         {"id": "c1", "type": "function",
    ...          "function": {"name": "transfer_to_billing", "arguments": "{}"}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "tool_name": "transfer_to_billing",
    ...      "content": '{"assistant": "Billing Agent"}'},
    ... ]
    >>> swarm.handoffs(swarm.to_messages(history))
    [Handoff(index=2, from_agent='Front Desk', to_agent='Billing Agent')]
    """
    found: list[Handoff] = []
    active: str | None = None
    seen_agent = False
    typed = messages_of(messages, NAME)
    if not all(isinstance(m, (AIMessage, ToolMessage, HumanMessage, SystemMessage)) for m in typed):
        typed = to_messages(messages)  # a Swarm history as stored; its errors say what is wrong
    for index, message in enumerate(typed):
        if isinstance(message, AIMessage) and not seen_agent:
            active, seen_agent = message.name, True
        elif isinstance(message, ToolMessage):
            target = _handoff_target(message)
            if target is not None:
                found.append(Handoff(index, active, target))
                active = target
    return found


def _handoff_target(message: ToolMessage) -> str | None:
    """The agent named by a ``{"assistant": "<agent>"}`` result, else None."""
    if not isinstance(message.content, str):
        return None
    try:
        value = json.loads(message.content)
    except ValueError:
        return None  # an ordinary tool result in plain text
    if isinstance(value, dict) and list(value) == ["assistant"]:
        target = value["assistant"]
        return target if isinstance(target, str) else None
    return None
