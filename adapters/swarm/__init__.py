"""OpenAI Swarm histories <-> tracebridge messages.

A Swarm history is a list of Chat Completions message dicts where assistant messages carry
``sender`` (the agent that spoke, -> ``AIMessage.name``) and tool messages carry ``tool_name``
(-> ``ToolMessage.name``). Swarm writes two shapes and both round-trip exactly:

* non-streaming (``Swarm.run``): every ``ChatCompletionMessage`` field, nulls included;
* streaming (``Swarm.run(stream=True)``): only ``content`` (``""`` rather than null),
  ``sender``, ``role``, ``function_call`` and ``tool_calls``.

A handoff is the tool result ``{"assistant": "<agent>"}`` (or a ``Result(agent=...)``, seen
only where ``sender`` changes); it stays a tool result and ``handoffs()`` lists them. In the
streaming shape ``sender`` keeps naming the *starting* agent after a handoff; ``sender`` is
kept as given, and ``handoffs()`` follows the agents through the handoffs.

Everything else works as in ``openai_chat`` (this module reuses it), with metadata kept under
``metadata["swarm"]``. ``to_messages`` takes the history list (``Response.messages``, or the
user's messages followed by them); the ``{"messages", "agent", "context_variables"}`` wrapper,
and the ``Response`` object it is the record of, are rejected with a pointer to its
``messages``, since agents and context variables are not messages.

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
from tracebridge.options import AdapterOptions

from .. import openai_chat
from ..openai_chat._parts import API_AUDIO_FORMATS, API_IMAGE_DETAILS, STRING_ROLES
from ..openai_chat._read import has_swarm_keys, is_sdk_message, read_trace
from ..openai_chat._reply import REASONING_KEYS
from ..openai_chat._write import write_trace

__all__ = [
    "DROPPABLE",
    "NAME",
    "Handoff",
    "detect",
    "from_messages",
    "options",
    "handoffs",
    "to_messages",
]

NAME = "swarm"
options = AdapterOptions(NAME)
"""What ``to_messages`` and ``from_messages`` accept (``reader`` and ``writer``)."""
DROPPABLE = openai_chat.DROPPABLE
"""What ``from_messages(drop=...)`` may leave out: the Chat Completions writer's names."""
_NAME_KEYS = {role: "name" for role in openai_chat.ROLES} | {
    "assistant": "sender",
    "tool": "tool_name",
}
SWARM = openai_chat.Dialect(
    NAME, _NAME_KEYS, REASONING_KEYS, STRING_ROLES, API_AUDIO_FORMATS, API_IMAGE_DETAILS,
    whole_citations=True,
)


def to_messages(trace: Any, *, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a Swarm history (a list of message dicts)."""
    _refuse_run_result(trace)
    try:
        return read_trace(trace, SWARM, allow_pending=allow_pending)
    except TraceError as error:
        # Looked for only once the reader refused (a marker has no role): a history read
        # pays nothing for it.
        marker = _stream_marker(trace)
        if marker is None or (error.index is not None and error.index < marker):
            raise  # no marker, or a fault before the first one
        raise _streamed_output(marker, trace[marker]) from None


_RESPONSE_FIELDS = ("messages", "agent", "context_variables")
"""The fields of Swarm's ``Response`` (what ``Swarm.run`` returns)."""
_STREAM_DELIMS = ("start", "end")
"""``{"delim": ...}`` around each reply's deltas in ``Swarm.run(stream=True)``'s output."""


def _stream_marker(trace: Any) -> int | None:
    """The position of the first item of ``trace`` that is one of the markers
    ``Swarm.run(stream=True)`` yields beside the deltas (``{"delim": "start"}``,
    ``{"delim": "end"}``, and last ``{"response": Response}``); None when there is none."""
    if not isinstance(trace, list):
        return None
    for index, item in enumerate(trace):
        if isinstance(item, dict) and _is_stream_marker(item):
            return index
    return None


def _is_stream_marker(item: dict[Any, Any]) -> bool:
    """Whether ``item`` is exactly ``{"delim": "start"}``, ``{"delim": "end"}`` or
    ``{"response": ...}`` (a message has a ``role`` beside its other keys)."""
    keys = list(item)
    if keys == ["delim"]:
        delim = item["delim"]
        # a string first: ``in`` asks ``==``, whose answer may have no truth value
        return isinstance(delim, str) and delim in _STREAM_DELIMS
    return keys == ["response"]


def _streamed_output(index: int, item: dict[str, Any]) -> TraceError:
    """``streaming_chunk`` at the marker: the stream's last item holds the history."""
    if "delim" in item:
        detail = (
            f"{item!r} marks a reply's deltas in Swarm.run(stream=True)'s output, which is "
            "no history: pass the messages of the stream's last item, {'response': Response} "
            "(its response.messages)"
        )
    else:
        detail = (
            "{'response': ...} is the last item of Swarm.run(stream=True)'s output, not a "
            "message: pass its response.messages rather than the streamed items"
        )
    return TraceError("streaming_chunk", detail, index=index, path=f"messages[{index}]",
                      source=NAME)


def _refuse_run_result(trace: Any) -> None:
    """Refuse a run's result in place of its history, pointing at its ``messages``: the
    record of a ``Response`` (a dict with ``messages``) or the ``Response`` itself (an object
    with its three fields, as ``swarm.types.Response`` is)."""
    if isinstance(trace, dict) and "messages" in trace:
        raise TraceError(
            "malformed_event",
            f"expected the history list, got a dict with keys {sorted(trace)}: pass its "
            "'messages' (agent and context_variables are not messages)",
            source=NAME,
        )
    if not isinstance(trace, (dict, list)) and all(hasattr(trace, f) for f in _RESPONSE_FIELDS):
        raise TraceError(
            "malformed_event",
            f"expected the history list, got {type(trace).__name__} (a run's result, with "
            "messages, agent and context_variables): pass its .messages (agent and "
            "context_variables are not messages)",
            source=NAME,
        )


def from_messages(messages: Any, *, drop: Collection[str] = ()) -> list[dict[str, Any]]:
    """Swarm history dicts (``sender`` on assistant messages, ``tool_name`` on tool results).

    ``drop`` works as in ``openai_chat.from_messages``.
    """
    return write_trace(messages, SWARM, drop=drop)


def detect(trace: Any) -> bool:
    """True for a list of role-keyed dicts and SDK message objects (``ChatCompletionMessage``)
    with at least one ``sender`` or ``tool_name`` (a key of a dict, or set on an object, as
    Swarm's run loop sets ``sender`` on each reply); and for the record of a ``Response``
    (``messages``, ``agent`` or ``final_agent``, ``context_variables``), which ``to_messages``
    refuses saying what to pass instead."""
    if _is_response_record(trace):
        return True
    if not isinstance(trace, list) or not trace:
        return False
    if not all(_is_message(item) for item in trace):
        return False
    return any(has_swarm_keys(item) for item in trace)


def _is_response_record(trace: Any) -> bool:
    """A ``Response``'s record, as dumped (``agent``) or stored (``final_agent``)."""
    return (isinstance(trace, dict) and isinstance(trace.get("messages"), list)
            and "context_variables" in trace and ("agent" in trace or "final_agent" in trace))


def _is_message(item: Any) -> bool:
    return is_sdk_message(item) or (isinstance(item, dict) and _known_role(item.get("role")))


def _known_role(role: Any) -> bool:
    # a string first: ``in`` asks ``==``, whose answer may have no truth value (numpy's)
    return isinstance(role, str) and role in openai_chat.ROLES


@dataclass(frozen=True)
class Handoff:
    """One agent handing the conversation to another."""

    index: int
    """Position of the handoff's tool result in the conversation."""
    from_agent: str | None
    """The agent that made the call (None when no agent name is known)."""
    to_agent: str
    """The agent that takes over."""


def handoffs(messages: Any, *, allow_pending: bool = False) -> list[Handoff]:
    """The handoffs that took effect in a conversation (typed messages or a Swarm history,
    read with ``to_messages(messages, allow_pending=allow_pending)``: a history of
    ``Swarm.run(..., execute_tools=False)`` ends on calls not run yet).

    Swarm runs every call of an assistant message, then switches to the agent returned
    *last*; so each block of tool results yields at most one handoff, from the agent that
    made the calls. It is seen two ways:

    * a result ``{"assistant": "<agent>"}`` (a function returned an ``Agent``);
    * the next assistant message's ``sender`` changing to an agent the results do not
      name (a function returned ``Result(value=..., agent=...)``, whose value is free text).
      ``sender`` is only trusted where it changes or a run starts (right after a user
      message, a system message or an assistant message without ``sender``): in the
      streaming shape it stays the starting agent, so there such a handoff cannot be seen.

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
    _refuse_run_result(messages)
    # a sample's references are not what handoffs read: its conversation is
    typed = messages_of(getattr(messages, "messages", messages), NAME)
    if not all(isinstance(m, (AIMessage, ToolMessage, HumanMessage, SystemMessage)) for m in typed):
        # a Swarm history as stored; its errors say what is wrong
        typed = to_messages(messages, allow_pending=allow_pending)
    found: list[Handoff] = []
    active: str | None = None  # the agent Swarm would run next
    seen_agent = False
    last_sender: str | None = None  # ``sender`` of the previous assistant message
    block: list[tuple[int, ToolMessage]] = []  # the tool results since the last other message
    run_start = False  # the previous message is one Swarm's run loop never writes in a run
    for index, message in enumerate(typed):
        if isinstance(message, ToolMessage):
            block.append((index, message))
            continue
        # an assistant message without sender (one the caller put in the history: a
        # greeting, an operator's line) names no agent: it changes none
        sender = message.name if isinstance(message, AIMessage) else None
        # A changed sender is the agent that really spoke in both shapes: the streaming
        # shape's sender changes only where a new run starts, and then names its agent.
        changed = seen_agent and None not in (sender, last_sender) and sender != last_sender
        if block:
            handoff = _block_handoff(block, active, sender if changed else None)
            if handoff is not None:
                found.append(handoff)
                active = handoff.to_agent
            block = []
        if sender is not None:  # an assistant message that names its agent
            if not seen_agent or changed or run_start:
                # the first agent, a run started with another agent, or any run's start:
                # a run's first reply names the run's agent in both shapes
                active = sender
            seen_agent = True
            last_sender = sender
        # Inside a run Swarm writes only replies with a sender and their results: after
        # anything else (a user's, a system or a caller's sender-less message) a run starts.
        run_start = sender is None
    if block:
        handoff = _block_handoff(block, active, None)
        if handoff is not None:
            found.append(handoff)
    return found


def _block_handoff(
    block: list[tuple[int, ToolMessage]], caller: str | None, next_sender: str | None
) -> Handoff | None:
    """The handoff one block of tool results made, if any.

    ``next_sender`` is the changed ``sender`` of the assistant message right after the block
    (None when it did not change, or no assistant message follows).
    """
    transfers = [(i, target) for i, m in block if (target := _handoff_target(m)) is not None]
    last_named = transfers[-1][1] if transfers else caller
    if next_sender is not None and next_sender != last_named:
        # A Result(agent=...) after the block's last transfer (the last agent returned wins).
        after = transfers[-1][0] if transfers else -1
        could = [i for i, m in block if i > after and not _missing_tool(m)]
        if could:
            return Handoff(could[0], caller, next_sender)
    if transfers:
        return Handoff(transfers[-1][0], caller, transfers[-1][1])
    return None


def _missing_tool(message: ToolMessage) -> bool:
    """Swarm's answer to a call of a function the agent lacks: nothing ran, nothing handed off."""
    return message.content == f"Error: Tool {message.name} not found."


def _handoff_target(message: ToolMessage) -> str | None:
    """The agent named by a ``{"assistant": "<agent>"}`` result, else None."""
    if not isinstance(message.content, str):
        return None
    try:
        value = json.loads(message.content)
    except (ValueError, RecursionError):
        # An ordinary tool result in plain text, or JSON nested deeper than the decoder
        # goes (legal tool output; a handoff is one flat object).
        return None
    if isinstance(value, dict) and list(value) == ["assistant"]:
        target = value["assistant"]
        return target if isinstance(target, str) else None
    return None
