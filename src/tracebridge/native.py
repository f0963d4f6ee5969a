"""tracebridge's own JSON: a MultiTurnSample, or a list of typed messages.

It lets the CLI and ``convert`` work on stored typed conversations, with the same two
functions every adapter has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ._json import is_plain_json
from ._json_model import unwritable_in
from .errors import TraceError, short_repr
from .messages import (
    AIMessage,
    HumanMessage,
    Message,
    SystemMessage,
    ToolMessage,
    checked_messages,
)
from .sample import ALLOW_PENDING, MultiTurnSample, loc_path, locate
from .validation import validate

__all__ = ["NAME", "detect", "from_messages", "to_messages", "to_sample"]

NAME = "tracebridge"
_MESSAGES = TypeAdapter(list[Message])
_TYPED = (HumanMessage, AIMessage, ToolMessage, SystemMessage)


def to_messages(trace: Any, *, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a ``MultiTurnSample`` (object or JSON dict) or a list of messages."""
    try:
        return _read(trace, allow_pending)
    except TraceError as error:
        raise error.relocated(source=NAME) from None


def to_sample(trace: Any, *, allow_pending: bool = False) -> MultiTurnSample:
    """The ``MultiTurnSample`` ``trace`` is: itself, or read from its JSON object as
    ``to_messages`` reads it, references and all (``convert`` keeps them)."""
    if allow_pending is not True and allow_pending is not False:
        raise ValueError(f"allow_pending must be True or False, got {allow_pending!r}")
    if isinstance(trace, MultiTurnSample):
        _check_again(trace, allow_pending)
        return trace
    if not isinstance(trace, dict):
        raise TraceError("malformed_event", f"expected a MultiTurnSample or its JSON object; "
                         f"got {type(trace).__name__}", source=NAME)
    try:
        return _sample(trace, allow_pending)
    except TraceError as error:
        raise error.relocated(source=NAME) from None


def _read(trace: Any, allow_pending: bool) -> list[Message]:
    if allow_pending is not True and allow_pending is not False:
        raise ValueError(f"allow_pending must be True or False, got {allow_pending!r}")
    if isinstance(trace, MultiTurnSample):
        _check_again(trace, allow_pending)
        return list(trace.messages)
    if isinstance(trace, dict):
        return list(_sample(trace, allow_pending).messages)
    if not isinstance(trace, list):
        raise TraceError(
            "malformed_event",
            f"expected a MultiTurnSample, its JSON object, or a list of messages; "
            f"got {type(trace).__name__}",
            source=NAME,
        )
    messages = _validate_items(trace)
    validate(messages, allow_pending=allow_pending, source=NAME)
    return messages


def _check_again(sample: MultiTurnSample, allow_pending: bool) -> None:
    """The rules, over a sample object's messages as they are now: its list can have been
    changed since it was built (``sample.messages.append(...)``, or replaced with
    ``model_copy(update=...)``), so it is read as its JSON would be, with the caller's
    ``allow_pending`` (the sample keeps no record of the one it was built with)."""
    validate(sample.messages, allow_pending=allow_pending, source=NAME)


def from_messages(messages: Sequence[Message] | MultiTurnSample) -> list[dict[str, Any]]:
    """The messages (a list, any iterable of them, or a ``MultiTurnSample``'s) as JSON-ready
    dicts: each message's ``model_dump()``; ``malformed_event`` at ``messages`` (or
    ``messages[i]``) for what is not typed messages, and ``unserializable_value`` at a value
    Python's ``json`` cannot write (``messages[1].tool_calls[0].args.l``: an object, NaN, a
    value nested past Python's depth or holding itself, put in after validation).

    Python's form, as ``MultiTurnSample.model_dump_json`` dumps a sample its JSON writer
    refuses: every string as it is, so a lone surrogate (an escaped half of a pair, read from
    JSON) in a kept metadata key reaches the JSON writer, which escapes it (``\\ud83c``).
    pydantic's ``mode="json"`` raises on such a key, or replaces its characters with U+FFFD.
    For a message the two forms are otherwise equal: every field holds JSON.

    A sample is written as its messages, whatever else it holds (unlike every other writer,
    which refuses a sample with references): the rest is the ``tracebridge`` format's too,
    and ``convert(sample, target="tracebridge")`` writes it beside them.
    """
    if isinstance(messages, MultiTurnSample):
        messages = messages.messages
    return [_dumped(message, i) for i, message in enumerate(checked_messages(messages, NAME))]


def _dumped(message: Message, index: int) -> dict[str, Any]:
    """``message.model_dump()``, refused where Python's ``json`` cannot write it (the message
    at ``index``). What it writes as it is not (a tuple, an int key) is handed on as before."""
    try:
        dumped = message.model_dump()
    except RecursionError:  # a value nested past Python's depth
        refused = unwritable_in(message, None, f"messages[{index}]")
        if refused is None:
            raise
        raise refused.relocated(source=NAME) from None
    if not is_plain_json(dumped):  # the usual dump is: nothing more to look at
        refused = unwritable_in(message, dumped, f"messages[{index}]")
        if refused is not None:
            raise refused.relocated(source=NAME)
    return dumped


def detect(trace: Any) -> bool:
    """True for a ``MultiTurnSample`` or typed messages, as objects or their JSON."""
    if isinstance(trace, MultiTurnSample):
        return True
    if isinstance(trace, dict):
        items = trace.get("messages", trace.get("user_input"))
        return isinstance(items, list) and bool(items) and all(map(_looks_typed, items))
    return isinstance(trace, list) and bool(trace) and all(map(_looks_typed, trace))


_FIELDS = {kind.model_fields["type"].default: frozenset(kind.model_fields) for kind in _TYPED}


def _looks_typed(item: Any) -> bool:
    """A typed message, or a dict with its tag and only its fields.

    LangChain's dumps share the tags: ``messages_to_dict`` wraps the fields in ``data``, and a
    flat ``model_dump()`` has ``additional_kwargs``, which no typed message has.
    """
    if isinstance(item, _TYPED):
        return True
    if not isinstance(item, dict):
        return False
    tag = item.get("type")
    return isinstance(tag, str) and tag in _FIELDS and item.keys() <= _FIELDS[tag]


def _sample(trace: dict[str, Any], allow_pending: bool = False) -> MultiTurnSample:
    """The sample, read strictly (a mistyped value is refused, not converted); a problem
    outside the messages (a missing or unknown field) is malformed. ``allow_pending``: its
    last block may hold unanswered calls."""
    try:
        return MultiTurnSample.model_validate(
            trace, strict=True, context=ALLOW_PENDING if allow_pending else None
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        path = loc_path(first["loc"])
        raise TraceError(
            "malformed_event",
            f"not a MultiTurnSample: {first['msg']} (got {short_repr(first['input'])})",
            path=path,
            source=NAME,
        ) from None


def _validate_items(items: list[Any]) -> list[Message]:
    try:
        return _MESSAGES.validate_python(items, strict=True)
    except ValidationError:
        # The sample translates pydantic's complaint about a message into a TraceError
        # with its index; the conversation rules run afterwards with the caller's options.
        _sample({"messages": items})
        raise
    except TraceError as error:  # a value that is not JSON, deep in one message: which?
        # the sample says where, or tells a fault pydantic met before it (as for one)
        _sample({"messages": items})
        raise locate(error, {"messages": items}) from None
