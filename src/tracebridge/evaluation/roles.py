"""The role/``call_id`` transcript form that case files may hold, read strictly.

::

    {"role": "human", "content": "Open a ticket for the double charge."}
    {"role": "ai", "content": "Opening it now.", "tool_calls": [
        {"name": "create_ticket", "args": {"category": "billing"}, "call_id": "call-1"}]}
    {"role": "tool", "call_id": "call-1", "content": "Creation failed: service unavailable."}
    {"role": "system", "content": "You are the billing desk's agent."}

Each message has ``role`` (``human``, ``ai``, ``tool`` or ``system``) and ``content`` (a string;
an ``ai`` message may leave it out). An ``ai`` message may have ``tool_calls``, each with
``name``, ``args`` (a JSON object, default ``{}``) and ``call_id``; a ``tool`` message names the
call it answers by ``call_id`` and may say ``is_error``; ``human``, ``ai`` and ``tool`` messages
may have a ``name``. Nothing else is accepted: an unknown role is ``unknown_role``, an unknown
key or a wrong type is ``malformed_event``, and the conversation rules apply as everywhere
(a result that answers no call is ``orphan_tool_result``), each with the message's index and
the path ``transcript[i]...``.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import TraceError, short_repr, with_article
from ..messages import AIMessage, HumanMessage, Message, SystemMessage, ToolCall, ToolMessage
from ..validation import validate

__all__ = ["ROLES", "detect", "to_messages"]

ROLES = "roles"
"""The name a case's ``source`` gives this form."""

_KEYS: dict[str, frozenset[str]] = {
    "human": frozenset({"role", "content", "name"}),
    "ai": frozenset({"role", "content", "tool_calls", "name"}),
    "tool": frozenset({"role", "content", "call_id", "name", "is_error"}),
    "system": frozenset({"role", "content"}),
}
_CALL_KEYS = frozenset({"name", "args", "call_id"})
_PENDING_HINT = " (allow_pending=True accepts a trace cut mid-tool)"
_OWN_ROLES = frozenset({"human", "ai"})
"""Roles only this form has (``tool`` and ``system`` are also OpenAI's)."""
_OWN_WORDS = (("messages[", "transcript["), ("tool_call_id", "call_id"),
              ("tool call id", "call_id"), ("(id ", "(call_id "), ("AIMessage", "ai message"),
              ("ToolMessage", "tool message"))
"""The typed model's words in a rule's text, each with this form's word for it."""
_QUOTED = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")
"""A quoted value in a rule's text (an id, a name): the case's own, never reworded."""


def detect(trace: Any) -> bool:
    """A non-empty list of dicts with ``role``, at least one of them ``human`` or ``ai``."""
    return (
        isinstance(trace, list)
        and bool(trace)
        and all(isinstance(item, dict) and "role" in item for item in trace)
        and any(item["role"] in _OWN_ROLES for item in trace)
    )


def to_messages(trace: Any) -> list[Message]:
    """Typed messages from a role/``call_id`` list; ``TraceError`` for anything else."""
    if not isinstance(trace, list):
        raise _error("malformed_event", f"expected a list of messages, got "
                     f"{type(trace).__name__}", None, "transcript")
    messages = [_message(item, i) for i, item in enumerate(trace)]
    try:
        validate(messages, source=ROLES)
    except TraceError as exc:
        path = exc.path
        if path is not None and path.startswith("messages"):
            path = _own_keys("transcript" + path[len("messages"):])
        # a case file has no allow_pending switch: the hint about it would lead nowhere
        detail = _own_words(exc.detail.replace(_PENDING_HINT, ""))
        raise TraceError(exc.code, detail, index=exc.index, path=path, source=ROLES) from None
    return messages


def _own_words(detail: str) -> str:
    """A rule's text in this form's words, as its path is: ``transcript[1]``, ``call_id``,
    ``ai message``. Quoted values are the case's own and stay as they are."""
    pieces = _QUOTED.split(detail)
    for k in range(0, len(pieces), 2):  # the even pieces lie between the quoted values
        for typed, own in _OWN_WORDS:
            pieces[k] = pieces[k].replace(typed, own)
    return "".join(pieces)


def _own_keys(path: str) -> str:
    """A rule's path in this form's keys: a result's and a call's id are ``call_id`` here
    (the typed model's ``tool_call_id`` and ``tool_calls[k].id``)."""
    if path.endswith(".tool_call_id"):
        return path[: -len("tool_call_id")] + "call_id"
    if path.endswith("].id") and ".tool_calls[" in path:
        return path[: -len("id")] + "call_id"
    return path


def _error(code: Any, detail: str, index: int | None, path: str) -> TraceError:
    return TraceError(code, detail, index=index, path=path, source=ROLES)


def _message(item: Any, i: int) -> Message:
    at = f"transcript[{i}]"
    if not isinstance(item, dict):
        raise _error("malformed_event", f"expected a message object, got "
                     f"{type(item).__name__} {short_repr(item)}", i, at)
    if "role" not in item:
        raise _error("malformed_event", "a message needs 'role'", i, f"{at}.role")
    role = item["role"]
    if not isinstance(role, str) or role not in _KEYS:
        raise _error("unknown_role", f"unknown role {short_repr(role)}; expected one of "
                     f"{', '.join(_KEYS)}", i, f"{at}.role")
    unknown = sorted(set(item) - _KEYS[role])
    if unknown:
        raise _error("malformed_event",
                     f"unknown key {unknown[0]!r} in {with_article(role)} message; "
                     f"accepted: {', '.join(sorted(_KEYS[role]))}", i, f"{at}.{unknown[0]}")
    name = _optional_str(item, "name", i, at)
    if role == "ai":
        calls = item.get("tool_calls", [])
        if not isinstance(calls, list):
            raise _error("malformed_event", f"tool_calls must be a list, got "
                         f"{type(calls).__name__}", i, f"{at}.tool_calls")
        return AIMessage(
            content=_content(item, i, at, required=False),
            tool_calls=[_call(call, i, f"{at}.tool_calls[{k}]") for k, call in enumerate(calls)],
            name=name,
        )
    content = _content(item, i, at, required=True)
    if role == "human":
        return HumanMessage(content=content, name=name)
    if role == "system":
        return SystemMessage(content=content)
    call_id = _required_str(item, "call_id", i, at)
    is_error = item.get("is_error", False)
    if not isinstance(is_error, bool):
        raise _error("malformed_event", f"is_error must be true or false, got "
                     f"{short_repr(is_error)}", i, f"{at}.is_error")
    return ToolMessage(content=content, tool_call_id=call_id, name=name, is_error=is_error)


def _content(item: dict[str, Any], i: int, at: str, *, required: bool) -> str:
    if "content" not in item:
        if required:
            raise _error("malformed_event",
                         f"{with_article(item['role'])} message needs 'content'", i,
                         f"{at}.content")
        return ""
    content = item["content"]
    if not isinstance(content, str):
        raise _error("malformed_event", f"content must be a string, got "
                     f"{type(content).__name__} {short_repr(content)}", i, f"{at}.content")
    return content


def _call(call: Any, i: int, at: str) -> ToolCall:
    if not isinstance(call, dict):
        raise _error("malformed_event", f"expected a tool call object, got "
                     f"{type(call).__name__} {short_repr(call)}", i, at)
    unknown = sorted(set(call) - _CALL_KEYS)
    if unknown:
        raise _error("malformed_event", f"unknown key {unknown[0]!r} in a tool call; accepted: "
                     f"{', '.join(sorted(_CALL_KEYS))}", i, f"{at}.{unknown[0]}")
    args = call.get("args", {})
    if not isinstance(args, dict):
        raise _error("malformed_event", f"args must be a JSON object, got "
                     f"{type(args).__name__} {short_repr(args)}", i, f"{at}.args")
    name = _required_str(call, "name", i, at)
    call_id = _required_str(call, "call_id", i, at)
    try:
        return ToolCall(name=name, args=args, id=call_id)
    except TraceError as exc:  # a value in args that is not JSON
        raise exc.relocated(index=i, path=f"{at}.args", source=ROLES) from None


def _required_str(item: dict[str, Any], key: str, i: int, at: str) -> str:
    if key not in item:
        raise _error("malformed_event", f"missing {key!r}", i, f"{at}.{key}")
    value = item[key]
    if not isinstance(value, str) or not value:
        raise _error("malformed_event", f"{key} must be a non-empty string, got "
                     f"{short_repr(value)}", i, f"{at}.{key}")
    return value


def _optional_str(item: dict[str, Any], key: str, i: int, at: str) -> str | None:
    value = item.get(key)
    if value is not None and not isinstance(value, str):
        raise _error("malformed_event", f"{key} must be a string, got {short_repr(value)}", i,
                     f"{at}.{key}")
    return value
