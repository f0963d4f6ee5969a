"""OpenAI Agents SDK runs <-> tracebridge messages.

An Agents SDK run is a list of Responses items (``openai_responses`` maps each of them), each
made by one agent. ``to_messages`` reads:

* a ``RunResult``, or a ``RunResultStreaming`` once its stream has been consumed (an unfinished
  one is refused with ``streaming_chunk``), or the ``run_data`` of an SDK exception: the run's
  ``input`` then its ``new_items``;
* a list of ``RunItem``s -- objects, or the dicts ``RunState.to_json()`` stores them as
  (``{"type": "tool_call_item", "raw_item": {...}, "agent": {"name": ...}, ...}``) -- with the
  run's input as ``input=`` (a string or input items), and plain input items mixed in;
* plain Responses input items: ``result.to_input_list()``, a session's ``get_items()``.

The agent that produced an item becomes ``AIMessage.name``; input items carry no agent, so a
``to_input_list()`` or session history reads with no names. Each ``RunItem``'s wrapper (its
``type``, agent, and fields such as ``tool_origin``, ``output``, ``source_agent`` /
``target_agent``) is kept verbatim under ``metadata["openai_agents"]["run_items"]`` of the first
message its item became (a model response's reasoning, message and calls become one turn); a
``tool_approval_item`` (a call waiting for approval, which is no input item) is kept with its
call. Everything the Responses reader keeps is under ``metadata["openai_agents"]`` as well.

A handoff is a function call (``transfer_to_<agent>``) and its output ``{"assistant": "<agent>"}``:
it stays a tool call and a tool result, and ``handoffs()`` lists them (from the
``handoff_output_item`` wrappers where the run's ``RunItem``s are read).

``from_messages`` writes the Responses input items ``Runner.run(agent, input=...)`` takes to
continue the conversation. Input items have no place for an agent's name: a named assistant
message is refused as ``not_representable`` unless ``drop_names=True`` accepts leaving names
out. The ``RunItem`` wrappers are provenance, like message ids: they are not written.

>>> from tracebridge.adapters import openai_agents
>>> items = [{"type": "message_output_item", "agent": {"name": "Helper"}, "raw_item": {
...     "type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
...     "content": [{"type": "output_text", "text": "Hi!", "annotations": []}]}}]
>>> openai_agents.to_messages(items, input="hello")[1].name
'Helper'
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from tracebridge._drop import check_flag
from tracebridge._shape import UNCHECKED, unchecked_field
from tracebridge.errors import TraceError
from tracebridge.messages import (
    AIMessage,
    HumanMessage,
    Message,
    SystemMessage,
    ToolMessage,
    checked_messages,
)
from tracebridge.options import AdapterOptions
from tracebridge.validation import validate

from .. import openai_responses, swarm
from ..openai_responses._write import check_drop
from ._agents import apart, attributed, groups
from ._bridge import read, write
from ._handoffs import handoffs_in
from ._overlap import refuse_overlap
from ._run import RUN_ITEM_TYPES, entries, is_result, is_run_item, module_of

__all__ = [
    "DROPPABLE",
    "NAME",
    "RUN_ITEM_TYPES",
    "Handoff",
    "detect",
    "from_messages",
    "handoffs",
    "options",
    "to_messages",
]

NAME = "openai_agents"
options = AdapterOptions(NAME)
"""What ``to_messages`` and ``from_messages`` accept (``reader`` and ``writer``)."""
DROPPABLE = openai_responses.DROPPABLE
"""What ``from_messages(drop=...)`` may leave out: the Responses writer's names."""

Handoff = swarm.Handoff


def to_messages(
    trace: Any, input: str | list[Any] | None = None, *, allow_pending: bool = False
) -> list[Message]:
    """Typed messages from a run, its RunItems (after ``input``), or its input items.

    ``input`` is the run's input (``Runner.run``'s, or ``result.input``), read before the items;
    it is data rather than an option, so the command line has no flag for it: there, give one
    list with the input items first (input items and RunItems may be mixed). ``allow_pending``
    accepts calls still unanswered when the trace ends (a run interrupted for an approval).
    """
    found = entries(trace, input)
    # RunItems carry agents; plain input items have none to tell.
    grouped = groups(found) if any(entry.record is not None for entry in found) else None
    kept = [entry for entry in found if not entry.approval]
    if grouped is None:
        messages = read(kept, allow_pending=allow_pending)
    else:
        try:
            messages = apart(kept, grouped, allow_pending=allow_pending)
        except TraceError:
            # the faults in their order: the run read whole, its nested history, its parts
            read(kept, allow_pending=allow_pending)
            _refuse_overlap(trace, found)
            raise
    _refuse_overlap(trace, found)
    return messages if grouped is None else attributed(messages, grouped)


def _refuse_overlap(trace: Any, found: list[Any]) -> None:
    """``refuse_overlap``, unless the trace is a result that lists its own history
    (``to_input_list()``), read as it lists it; any other input and items (an exception's
    ``run_data`` too) may hold a nested history's copies."""
    if not (is_result(trace) and hasattr(trace, "to_input_list")):
        refuse_overlap(found)


def from_messages(
    messages: Any, *, drop: Collection[str] = (), drop_names: bool = False
) -> list[Any]:
    """The Responses input items ``Runner.run(agent, input=...)`` accepts.

    ``drop`` works as in ``openai_responses.from_messages``. ``drop_names`` leaves out the
    names input items have no place for: an assistant turn's agent, a person's name, a tool's
    name on an output other than a function's. Without it they are ``not_representable``.
    With them left out, a turn of one agent right after another agent's (as a handoff that
    filters its tool items out leaves them) is ``not_representable``, as the same turns unnamed
    are: read back, the two would be one turn.
    It is True or False: any other value (``"false"``, ``1``, ``None``) is a ``ValueError``.
    """
    check_flag("drop_names", drop_names)
    check_drop(drop)  # options first: a bad one is its ValueError, whatever the messages hold
    typed: list[Message] = checked_messages(messages, NAME)
    try:
        return _written(typed, drop, drop_names)
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_field(typed, NAME)
        if refused is None:
            raise
        raise refused from None


def _written(typed: list[Message], drop: Collection[str], drop_names: bool) -> list[Any]:
    """The input items of ``typed``, its agent names left out; without ``drop_names``, a
    named reply is refused in its place among the faults: after the conversation rules, and
    after any refusal at an earlier message (at its own message, before the rest of it, as the
    Responses writer refuses a reply's name first)."""
    unnamed = [_unnamed(message) for message in typed]
    named = next((i for i, m in enumerate(typed) if m is not unnamed[i]), None)
    if named is None or drop_names:
        return write(unnamed, drop, drop_names)
    validate(typed, allow_pending=True, source=NAME)  # the conversation rules come first
    try:
        write(unnamed, drop, drop_names)
    except TraceError as error:
        if error.index is None or error.index < named:
            raise
    raise _agent_name_refused(typed[named], named)


def _unnamed(message: Message) -> Message:
    """``message`` without its agent name (itself when it names none)."""
    if isinstance(message, AIMessage) and message.name is not None:
        return message.model_copy(update={"name": None})
    return message


def _agent_name_refused(message: Message, index: int) -> TraceError:
    """The refusal of the agent name of ``message``, the reply at ``index``."""
    return TraceError(
        "not_representable",
        f"the agent name {message.name!r}: Responses input items have no place for it "
        "(Runner.run gets the agent from its first argument); drop_names=True leaves names out",
        index=index,
        path=f"messages[{index}].name",
        source=NAME,
    )


def detect(trace: Any) -> bool:
    """True for a run result, or a list holding at least one ``RunItem`` (object or dict).

    A list of plain Responses input items belongs to ``openai_responses``.
    """
    if is_result(trace):
        return True
    if not isinstance(trace, list) or not trace:
        return False
    return any(is_run_item(item) for item in trace) and all(
        isinstance(item, dict) or module_of(item).startswith(("agents.", "openai."))
        for item in trace
    )


def handoffs(trace: Any, *, allow_pending: bool = False) -> list[Handoff]:
    """Every handoff of a run (typed messages, or anything ``to_messages`` reads, with
    ``allow_pending`` as there), in order.

    ``index`` is the position of the handoff's tool result. A result read from a ``RunItem``
    is a handoff when its wrapper is a ``handoff_output_item``, from its ``source_agent`` to
    its ``target_agent``. A result read from an input item (no wrapper) is one when it is what
    the SDK writes for a handoff -- ``{"assistant": "<agent>"}`` answering a call of the
    default handoff tool ``transfer_to_<agent>`` -- from the agent named on the message that
    holds the call (None when unnamed).
    """
    typed = getattr(trace, "messages", trace)
    if is_result(trace) or not isinstance(typed, list) or not all(
        isinstance(m, (AIMessage, ToolMessage, HumanMessage, SystemMessage)) for m in typed
    ):
        typed = to_messages(trace, allow_pending=allow_pending)
    try:
        return handoffs_in(typed)
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_field(typed, NAME)
        if refused is None:
            raise
        raise refused from None
