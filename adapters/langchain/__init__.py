"""LangChain / LangGraph messages <-> tracebridge messages.

``to_messages`` reads a list of ``BaseMessage`` objects, their ``messages_to_dict`` form
(``{"type": ..., "data": {...}}``), their flat ``message.model_dump()`` form
(``{"type": "ai", "content": ..., "additional_kwargs": ..., ...}``), or a LangGraph state
``{"messages": [...]}`` of any of these; ``from_messages`` gives ``BaseMessage`` objects back
(or the dicts, the flat dumps or a state, on request: ``form=``).

Each message maps to one typed message (an Anthropic-style human message holding
``tool_result`` blocks gives its tool results). ``AIMessage.tool_calls`` is authoritative;
``invalid_tool_calls`` become calls with ``invalid_args``; ``ToolMessage.status == "error"``
is ``is_error``; what ChatOpenAI keeps in ``additional_kwargs`` that has a typed home (the
developer role, a refusal, the audio reply, annotations) goes there. Every field that has
no typed home is kept verbatim under ``metadata["langchain"]`` when it differs from the
field's default, so ``messages_to_dict(from_messages(to_messages(t))) == messages_to_dict(t)``.
See ``docs/adapters/langchain.md`` for the full mapping table.

>>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
>>> trace = [HumanMessage("2+2?"), AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2},
...          "id": "c1"}]), ToolMessage("4", tool_call_id="c1")]
>>> [m.type for m in to_messages(trace)]
['human', 'ai', 'tool']
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Sequence
from typing import Any, Literal

from tracebridge._drop import check_drop, check_flag
from tracebridge._json import _INT_BOUND, _INT_FLOOR, json_path
from tracebridge._optional import module_of
from tracebridge._shape import UNCHECKED, unchecked_field
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import AnyMessage, Message, checked_messages
from tracebridge.options import AdapterOptions
from tracebridge.validation import validate

from ._classes import NAME, langchain_core_messages
from ._read import is_serialized, is_state_snapshot, read_trace
from ._write import write_trace

__all__ = [
    "DROPPABLE",
    "FORMS",
    "NAME",
    "detect",
    "from_messages",
    "options",
    "to_json",
    "to_messages",
]

options = AdapterOptions(NAME)
"""What ``to_messages`` and ``from_messages`` accept (``reader`` and ``writer``)."""

DROPPABLE = ("custom_calls", "citations")
"""What ``from_messages(drop=...)`` may leave out or change: ``custom_calls`` writes a custom
call LangChain cannot hold as a custom call (no id, or an empty content list) as a function
call with ``args={"input": text}``; ``citations`` leaves ``AIMessage.citations`` out (only
needed for citations whose kept text-block positions no longer fit)."""

FORMS = ("messages", "dicts", "model_dump", "state")
"""What ``from_messages(form=...)`` returns: ``BaseMessage`` objects, ``messages_to_dict``
dicts, flat ``message.model_dump()`` dicts, or a LangGraph state of objects."""

Form = Literal["messages", "dicts", "model_dump", "state"]

_DUMP_KEYS = frozenset({"type", "content", "additional_kwargs", "response_metadata"})
"""Keys every ``BaseMessage.model_dump()`` has (a typed tracebridge dump lacks the last two)."""


# --- detection -----------------------------------------------------------------------------


def _looks_like_message(item: Any) -> bool:
    if isinstance(item, dict):
        if is_serialized(item):
            return _serialized_message(item["id"])  # the reader says how to load it
        if set(item) == {"type", "data"}:
            return isinstance(item["data"], dict)
        return set(item) >= _DUMP_KEYS and type(item["type"]) is str
    if not module_of(type(item)).startswith(("langchain_core.", "langchain.")):
        # A user's subclass of a message class (``class TaggedHuman(HumanMessage)``), which
        # the reader reads: its base class was imported, so langchain-core is (detect
        # imports nothing)
        lc = sys.modules.get("langchain_core.messages")
        if lc is None or not isinstance(item, lc.BaseMessage):
            return False
    return isinstance(getattr(item, "type", None), str)


def _serialized_message(class_path: list[Any]) -> bool:
    """Whether a ``langchain_core.load`` class path names a LangChain message class."""
    return (
        len(class_path) > 1
        and class_path[0] in ("langchain", "langchain_core")
        and type(class_path[-1]) is str
        and class_path[-1].endswith(("Message", "MessageChunk"))
    )


def detect(trace: Any) -> bool:
    """True for LangChain messages (objects, dicts or flat dumps) in a list or tuple, or a
    state ``{"messages": [...]}`` of them; also for a LangGraph ``StateSnapshot`` holding such
    a state, which the reader refuses saying what to pass instead."""
    if is_state_snapshot(trace):
        return detect(trace.values)
    if isinstance(trace, dict):
        trace = trace.get("messages")
    return (
        isinstance(trace, (list, tuple))
        and bool(trace)
        and all(map(_looks_like_message, trace))
    )


# --- the two directions --------------------------------------------------------------------


def to_messages(
    trace: Any, *, allow_pending: bool = False, drop_artifacts: bool = False
) -> list[Message]:
    """Typed messages for a LangChain trace; see the module docstring for accepted forms.

    ``drop_artifacts=True`` accepts a ``ToolMessage.artifact`` that is not JSON by dropping it
    (recorded as ``metadata["langchain"]["artifact_dropped"]``, the artifact's type name);
    without it such an artifact raises ``unserializable_value``. Both flags must be True or
    False (``ValueError`` before anything is read: ``"false"`` is true).
    """
    check_flag("allow_pending", allow_pending)
    check_flag("drop_artifacts", drop_artifacts)
    return read_trace(trace, allow_pending=allow_pending, drop_artifacts=drop_artifacts)


def from_messages(
    messages: Sequence[Message], *, form: Form = "messages", drop: Collection[str] = ()
) -> Any:
    """LangChain messages for typed ones, in the ``form`` asked for (see ``FORMS``).

    The conversation rules are checked first, as the reader checks them with
    ``allow_pending=True``: an empty list, a result that answers nothing, a call left
    unanswered before the conversation goes on and a duplicate call id raise the rule's
    code; calls still unanswered at the end are written.

    Reads only ``metadata["langchain"]``. A tool result without ``tool_call_id`` but with a
    name becomes a ``FunctionMessage``. The provider's copies of a call kept with its message
    (raw ``additional_kwargs["tool_calls"]``, ``tool_call_chunks``, a legacy
    ``function_call``) are rewritten from a call edited after reading. Raises
    ``not_representable`` for what LangChain cannot hold: a tool result with neither, an
    invalid call placed before a valid one when nothing records that order, an opaque part
    that is not a block dict, (unless ``drop=["custom_calls"]``) a custom call without id,
    and an edit a kept copy cannot follow (calls added or removed beside it).
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}, not {form!r}")
    check_drop(drop, DROPPABLE)
    lc = langchain_core_messages()
    typed = checked_messages(messages, NAME)
    # the conversation rules first, as the reader checks them (a trace may end on calls
    # still unanswered, which the reader takes with allow_pending=True)
    validate(typed, allow_pending=True, source=NAME)
    try:
        out = write_trace(typed, lc, drop)
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_field(typed, NAME)
        if refused is None:
            raise
        raise refused from None
    if form == "dicts":
        return lc.messages_to_dict(out)
    if form == "model_dump":
        return [message.model_dump() for message in out]
    if form == "state":
        return {"messages": out}
    return out


def to_json(trace: Any) -> Any:
    """The JSON form of what ``from_messages`` returned: the dicts as they are, objects as
    ``messages_to_dict`` dicts (inside ``{"messages": ...}`` for a state); ``to_messages``
    reads it back.

    Anything else is ``malformed_event``: a trace that is no list (or state) of them, or an
    item that is neither a ``BaseMessage`` nor a dict (at its index; a typed tracebridge
    message is written by ``from_messages`` first). Raw ``bytes`` (a Bedrock Converse or
    Vertex AI block read from bytes goes back with them) have no JSON form LangChain reads
    back as bytes: ``not_representable`` at the first one (message index and path)."""
    items = _json_items(trace)
    lc = langchain_core_messages()
    out = [_json_form(item, i, lc) for i, item in enumerate(items)]
    try:
        json.dumps(out)  # the C encoder: the usual output is checked in one quick pass
    except (TypeError, ValueError):
        try:
            refused = _non_json_refusal(out)
        except RecursionError:  # a value that holds itself: json.dumps said so already
            refused = None
        if refused is None:
            raise
        raise refused from None
    return {"messages": out} if isinstance(trace, dict) else out


_TAKES = "to_json takes what from_messages returns"
"""How ``to_json`` starts the detail of an input it refuses."""


def _json_items(trace: Any) -> list[Any]:
    """The messages of a ``to_json`` trace: a list (or tuple) of them, or a state's."""
    state = isinstance(trace, dict) and set(trace) == {"messages"}
    items = trace["messages"] if state else trace
    if not isinstance(items, (list, tuple)):
        where = " in state['messages']" if state else ""
        raise TraceError(
            "malformed_event",
            f"{_TAKES} (a list of BaseMessage objects or their dicts, or a state "
            f"{{'messages': [...]}}); got {type(items).__name__} {short_repr(items)}{where}",
            source=NAME,
        )
    return list(items)


def _json_form(item: Any, i: int, lc: Any) -> Any:
    """One message of ``to_json``: a dict as it is, an object as ``messages_to_dict`` writes
    it."""
    if isinstance(item, dict):
        return item
    if isinstance(item, lc.BaseMessage):
        return lc.message_to_dict(item)
    if isinstance(item, AnyMessage):
        got = (
            f"a typed tracebridge {type(item).__name__}: pass from_messages(messages), the "
            "LangChain messages written for it"
        )
    else:
        got = f"{type(item).__name__} {short_repr(item)}"
    raise TraceError(
        "malformed_event",
        f"{_TAKES} (BaseMessage objects, or their dicts); got {got}",
        index=i,
        path=f"messages[{i}]",
        source=NAME,
    )


def _non_json_refusal(messages: list[Any]) -> TraceError | None:
    """``not_representable`` at the first value of ``messages`` that JSON cannot hold."""
    for i, message in enumerate(messages):
        found = _non_json_in(message, f"messages[{i}]")
        if found is None:
            continue
        path, value = found
        if type(value) is bytes:
            detail = (
                f"raw bytes ({short_repr(value)}), which LangChain's JSON forms cannot hold "
                f"(model_dump(mode='json') writes them as UTF-8 text, which reads back as "
                f"text; dumps() as a 'not_implemented' marker its loads() refuses); keep the "
                f"objects (form='messages'), or take metadata.langchain.bytes out of the typed "
                f"part to write its data as base64 text"
            )
        else:
            kind = with_article(type(value).__name__)
            detail = f"{kind} value ({short_repr(value)}), which is not JSON"
        return TraceError(
            "not_representable",
            f"the JSON form of this LangChain message holds {detail}",
            index=i,
            path=path,
            source=NAME,
        )
    return None


def _non_json_in(value: Any, path: str) -> tuple[str, Any] | None:
    """The path and value of the first thing in ``value`` ``json.dumps`` cannot write."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                return path, key
            found = _non_json_in(item, json_path(path, key if type(key) is str else str(key)))
            if found is not None:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for k, item in enumerate(value):
            found = _non_json_in(item, f"{path}[{k}]")
            if found is not None:
                return found
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return None if _INT_FLOOR < value < _INT_BOUND else (path, value)  # json's digits
    if isinstance(value, (str, float)) or value is None:
        return None
    return path, value
