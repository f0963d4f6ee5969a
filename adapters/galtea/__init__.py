"""Galtea conversations <-> tracebridge messages, as the Galtea SDK (5.12) holds them.

What ``to_messages`` reads:

* **role turns**, the SDK's ``ConversationMessage``: ``{"role": "user" | "assistant",
  "content": str, "retrieval_context"?, "metadata"?, "input_files"?, "output_files"?}`` (dicts,
  the objects, their dumps in snake or camel case): what ``traces.create_batch`` sends and what
  agents receive. Each turn becomes one message; attached files become ``FilePart``s;
* **pairs** ``{"input", "actual_output", "retrieval_context"?}``: the conversation turns of
  Galtea's earlier evaluation-task API; each becomes a ``HumanMessage`` and an ``AIMessage``;
* **``Trace`` records** (``traces.list``; ``traces.get``'s one ``Trace`` as ``[trace]``): read
  as the SDK rebuilds the conversation from them, pending traces and file-only inputs included
  (``_records.py``);
* an **``AgentInput``** (what ``Agent.call`` receives): its ``messages``.

What the typed model has no field for is kept under ``metadata["galtea"]`` (see
``docs/adapters/galtea.md``): ``shape`` (pairs), ``retrieval_context``, ``metadata``,
``empty_files``, ``aliases`` (camelCase spellings), ``extra`` (other keys, verbatim), ``trace``
and ``agent_input``. ``from_messages`` writes ``roles``, ``history``
(``test_cases.create(conversation_history=...)``) or ``pairs``, and refuses what a shape cannot
hold with ``not_representable`` unless the caller accepts that loss by name.

>>> from tracebridge.adapters import galtea
>>> galtea.to_messages([{"role": "user", "content": "hi"}, {"role": "assistant",
...                      "content": "hello", "retrieval_context": "greetings"}])[1].metadata
{'galtea': {'retrieval_context': 'greetings'}}
"""

from __future__ import annotations

from typing import Any, Literal

from tracebridge._gc import pause_gc, resume_gc
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import Message
from tracebridge.options import AdapterOptions
from tracebridge.validation import validate

from ._current import CurrentTurn, split_current_turn
from ._read import error, from_pair, from_role_turn, plain_turns
from ._records import (
    from_agent_input,
    from_records,
    is_agent_input,
    is_record,
    is_sdk_model,
    marks_record,
    sdk_dump,
)
from ._turns import from_messages
from ._write import DROPPABLE, NAME, SHAPES, Omission, OmissionKind, Shape

__all__ = [
    "DROPPABLE",
    "NAME",
    "SHAPES",
    "CurrentTurn",
    "Omission",
    "OmissionKind",
    "Shape",
    "detect",
    "from_messages",
    "options",
    "split_current_turn",
    "to_messages",
]

options = AdapterOptions(NAME)
"""What ``to_messages`` and ``from_messages`` accept (``reader`` and ``writer``)."""

_Kind = Literal["pairs", "roles", "traces"]
_NOUN: dict[_Kind, str] = {"pairs": "pair", "roles": "role turn", "traces": "trace record"}


def to_messages(trace: Any, *, allow_pending: bool = False) -> list[Message]:
    """Typed messages from Galtea turns (either shape), ``Trace`` records or an ``AgentInput``.

    Errors point at the turn (``index``) and the key (``path``, e.g.
    ``conversation_turns[2].content``, ``traces[1].input``, ``messages[0].role``).
    ``allow_pending`` is accepted for symmetry with the other adapters; Galtea turns hold no
    tool calls, so nothing can be pending.
    """
    paused = pause_gc()
    try:
        return _to_messages(trace, sdk_dump(trace), allow_pending)
    finally:
        resume_gc(paused)


def _to_messages(given: Any, trace: Any, allow_pending: bool) -> list[Message]:
    """The messages of ``trace``, the dump of what the caller ``given``."""
    origin: list[int] = []
    if is_agent_input(trace):
        messages = from_agent_input(trace, origin)
    elif isinstance(trace, list):
        # The plain role turns ahead of anything else are read on a fast path that gives what
        # from_role_turn gives; the rest of the list goes through the general reader.
        messages = plain_turns(trace)
        taken = len(messages)
        origin.extend(range(taken))
        if taken < len(trace):
            rest = [sdk_dump(item, i, f"conversation_turns[{i}]")
                    for i, item in enumerate(trace[taken:], taken)]
            messages.extend(_from_list(rest, origin, taken, "roles" if taken else None))
    else:
        raise _not_a_list(given, trace)
    validate(messages, allow_pending=allow_pending, source=NAME, origin=origin)
    return messages


def _not_a_list(given: Any, trace: Any) -> TraceError:
    """``malformed_event`` for what is neither a list nor an AgentInput, named as given (a
    ``Trace``, not the dict it dumps to); a single record (what ``traces.get`` returns) is
    read in a list."""
    hint = ""
    if is_record(trace):
        noun, name = ("Trace", "trace") if is_sdk_model(type(given)) else ("record", "record")
        hint = f"; a single {noun} (what traces.get returns) is read in a list: pass [{name}]"
    return TraceError(
        "malformed_event",
        f"expected a list of conversation turns or Trace records, or an AgentInput; got "
        f"{type(given).__name__} {short_repr(trace)}{hint}",
        path="conversation_turns",
        source=NAME,
    )


def _from_list(items: list[Any], origin: list[int], start: int = 0,
               kind: _Kind | None = None) -> list[Message]:
    """The messages of ``items``, the turns of the list from index ``start`` on; ``kind`` is the
    shape the turns before ``start`` set (None when there are none)."""
    for i, item in enumerate(items, start):
        # a record missing a required field is refused at it (``from_records``)
        item_kind = "traces" if kind == "traces" and marks_record(item) else _kind_of(item, i)
        if kind is None:
            kind = item_kind
        elif item_kind != kind:
            raise error(
                "malformed_event",
                f"{with_article(_NOUN[item_kind])} in a list of {_NOUN[kind]}s (turn 0 set the "
                "shape); one list holds one shape",
                i,
            )
    if kind == "traces":
        return from_records(items, origin)
    messages: list[Message] = []
    for i, turn in enumerate(items, start):
        converted = from_pair(turn, i) if kind == "pairs" else [from_role_turn(turn, i)]
        messages.extend(converted)
        origin.extend([i] * len(converted))
    return messages


def detect(trace: Any) -> bool:
    """True for a non-empty list of pairs, of user/assistant role turns with str content, or
    of Trace records, and for an AgentInput (objects or dumps). Turns, records and an
    AgentInput may be any mapping (an ``OrderedDict``), as ``to_messages`` reads them.

    A role list also has the shape of an OpenAI chat history; ``detect_format`` then takes it
    when both readers give the same typed messages, and says how they differ otherwise.
    """
    try:
        trace = sdk_dump(trace)
        if is_agent_input(trace):
            return True
        if not isinstance(trace, list) or not trace:
            return False
        items = [sdk_dump(item) for item in trace]
    except TraceError:
        return True  # a Galtea SDK object that cannot dump itself: to_messages says where
    if not all(type(item) is dict for item in items):
        return False
    if any("phase" in item for item in items) and _responses_detect(trace):
        return False  # Responses messages marked by their phase (openai_responses)
    return (all(map(_looks_like_pair, items)) or all(map(_looks_like_role_turn, items))
            or all(map(is_record, items)))


def _responses_detect(trace: Any) -> bool:
    from .. import openai_responses  # (asked only for a list with a ``phase`` key)

    return openai_responses.detect(trace)


def _kind_of(turn: Any, i: int) -> _Kind:
    if not isinstance(turn, dict):
        raise error(
            "malformed_event",
            f"expected a turn dict, got {type(turn).__name__} {short_repr(turn)}",
            i,
        )
    if is_record(turn):
        return "traces"
    has_role = "role" in turn
    has_pair = "input" in turn or "actual_output" in turn
    if has_role and has_pair:
        raise error(
            "malformed_event",
            f"the turn has keys of both shapes: 'role' (a role turn) and 'input'/'actual_output' "
            f"(a pair); got keys {short_repr(list(turn))}",
            i,
        )
    if has_role:
        return "roles"
    if has_pair:
        return "pairs"
    raise error(
        "malformed_event",
        f"expected a role turn ('role', 'content') or a pair ('input', 'actual_output'); "
        f"got keys {short_repr(list(turn))}",
        i,
    )


def _looks_like_pair(turn: dict[str, Any]) -> bool:
    return (
        "role" not in turn
        and type(turn.get("input")) is str
        and type(turn.get("actual_output")) is str
    )


def _looks_like_role_turn(turn: dict[str, Any]) -> bool:
    return (
        isinstance(role := turn.get("role"), str)  # no == on a value of another class
        and role in ("user", "assistant")
        and type(turn.get("content")) is str
        and "input" not in turn
        and "actual_output" not in turn
        and "type" not in turn  # a Responses message item (openai_responses)
        and _CHAT_ONLY.isdisjoint(turn)
    )


_CHAT_ONLY = frozenset(
    ("name", "refusal", "annotations", "audio", "function_call", "tool_calls", "tool_call_id",
     "reasoning_content", "reasoning", "content_parts")
)
"""Keys of a Chat Completions message that no Galtea turn has: a list with them is a chat
history (``openai_chat``), not role turns."""
