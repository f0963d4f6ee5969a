"""The reader's fast path: one LangChain message object of the common kind, read without
``model_dump()`` and without the general machinery.

It takes a ``HumanMessage``, ``AIMessage``, ``ToolMessage`` or ``SystemMessage`` (the classes
themselves) whose content is a string and that has no extra attributes; an ``AIMessage``
whose calls are all parsed (no ``invalid_tool_calls``), whose raw provider calls (if any)
name exactly those calls, and without the ``additional_kwargs`` the general reader has
homes for beyond those (``function_call``, ``annotations``, ``audio``, a text ``refusal``).
Anything else, and anything that would raise (a value that is not JSON, raw calls that
disagree), gives None: the general reader then reads the message and raises its own
precise error. What this path returns equals what the general reader returns for the same
message (a test holds both to that on every law-kit trace).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracebridge import _build
from tracebridge._json import NotPlainJson, json_copy_checked
from tracebridge.messages import Message, ToolCall

from ._call_blocks import parse_arguments
from ._homes import DEVELOPER_KEY

__all__ = ["Plan", "kwargs_copy", "plans", "typed_fast"]

_CALL_KEYS = frozenset({"name", "args", "id", "type"})
_ABSENT: Any = object()
"""A key not there (of no type a value may have)."""
_AI_HOMES = frozenset({"function_call", "annotations", "audio"})
"""``additional_kwargs`` keys that send an AI message to the general reader."""


@dataclass(frozen=True)
class Plan:
    """What the fast path needs to know about one LangChain class."""

    kind: str
    kept: tuple[tuple[str, Any, bool, Callable[[Any], Any]], ...]
    """The declared fields without a typed home, in declared order: each with its default,
    whether that default is an empty plain dict (a value then equals it exactly when it is
    an empty plain dict itself: no comparison needed), and how a value is copied and checked
    (``json_copy_checked``, or for an AIMessage's ``additional_kwargs`` ``kwargs_copy``)."""


def plans(lc: Any, defaults: Any, mapped: frozenset[str], required: object) -> dict[type, Plan]:
    """The fast path's plan for each class it takes (those whose every field without a typed
    home has a default)."""
    out = {}
    for name, kind in (
        ("HumanMessage", "human"),
        ("AIMessage", "ai"),
        ("ToolMessage", "tool"),
        ("SystemMessage", "system"),
    ):
        cls = getattr(lc, name)
        kept = tuple(
            (
                k,
                v,
                type(v) is dict and not v,
                kwargs_copy if kind == "ai" and k == "additional_kwargs" else json_copy_checked,
            )
            for k, v in defaults(cls).items()
            if k not in mapped
        )
        if all(default is not required for _, default, _, _ in kept):
            out[cls] = Plan(kind, kept)
    return out


def typed_fast(message: Any, plan: Plan, metadata_name: str) -> Message | None:
    """The typed message for ``message``, or None when the general reader must read it."""
    fields = message.__dict__
    content = fields["content"]
    kind = plan.kind
    if type(content) is not str or fields["type"] != kind or message.__pydantic_extra__:
        return None
    name = fields["name"]
    message_id = fields["id"]
    if (name is not None and type(name) is not str) or (
        message_id is not None and type(message_id) is not str
    ):
        return None
    kept: dict[str, Any] = {}
    try:
        for key, default, empty_dict, copy in plan.kept:
            value = fields[key]
            if empty_dict:
                if type(value) is not dict:
                    return None  # LangChain keeps a dict here: the general reader says why not
                if not value:
                    continue
            elif value is default or (value == default and type(value) is type(default)):
                continue
            kept[key] = value if type(value) is str else copy(value)
    except NotPlainJson:
        return None  # a value that is not JSON: the general reader says where
    metadata = {metadata_name: kept} if kept else None
    if kind == "ai":
        return _ai(fields, kept.get("additional_kwargs"), content, name, message_id, metadata)
    if kind == "human":
        return _build.human(content, name, message_id, metadata)
    if kind == "tool":
        call_id = fields["tool_call_id"]
        if type(call_id) is not str:
            return None
        status = fields["status"]
        if status != "success" and status != "error":
            return None
        is_error = status == "error"
        return _build.tool(content, call_id, name, is_error, message_id, metadata)
    kwargs = kept.get("additional_kwargs")
    if kwargs and DEVELOPER_KEY in kwargs:
        return None
    return _build.system(content, "system", name, message_id, metadata)


def _ai(
    fields: dict[str, Any],
    kwargs: dict[str, Any] | None,
    content: str,
    name: str | None,
    message_id: str | None,
    metadata: dict[str, Any] | None,
) -> Message | None:
    if kwargs and (type(kwargs.get("refusal")) is str or not _AI_HOMES.isdisjoint(kwargs)):
        return None
    invalid = fields["invalid_tool_calls"]
    if invalid or type(invalid) is not list:
        return None
    calls = fields["tool_calls"]
    if type(calls) is not list:
        return None
    raw = kwargs.get("tool_calls") if kwargs else None
    if not calls:
        if raw:
            return None  # raw calls and no parsed ones: the general reader says which differ
        return _build.ai(content, None, name, message_id, metadata)
    if raw is not None and (type(raw) is not list or len(raw) != len(calls)):
        return None
    typed_calls: list[ToolCall] = []
    for k, call in enumerate(calls):
        if type(call) is not dict or not call.keys() <= _CALL_KEYS:
            return None
        if call.get("type", "tool_call") != "tool_call":
            return None
        args = call.get("args", _ABSENT)
        call_name = call.get("name", _ABSENT)
        call_id = call.get("id", _ABSENT)
        if type(args) is not dict or type(call_name) is not str or (
            call_id is not None and type(call_id) is not str
        ):
            return None
        if raw is not None and not _names(raw[k], call_id, call_name, args):
            return None
        try:
            typed_calls.append(_build.call(call_name, json_copy_checked(args), call_id))
        except NotPlainJson:
            return None
    return _build.ai(content, typed_calls, name, message_id, metadata)


def kwargs_copy(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``json_copy_checked(kwargs)`` for an AIMessage's ``additional_kwargs`` dict, its raw
    provider calls of the usual shape copied without a walk."""
    raw = kwargs.get("tool_calls")
    if type(raw) is list and len(kwargs) == 1:  # what ChatOpenAI leaves beside calls
        return {"tool_calls": list(map(_raw_call_copy, raw))}
    out = {}
    for key, value in kwargs.items():
        if type(key) is not str:
            raise NotPlainJson(key)
        if key == "tool_calls" and type(value) is list:
            out[key] = list(map(_raw_call_copy, value))
        else:
            out[key] = json_copy_checked(value)
    return out


def _raw_call_copy(entry: Any) -> Any:
    """``json_copy_checked(entry)``; for ``{"type": str, "id": str or None, "function":
    {"name": str, "arguments": str}}`` (in any key order) two dict copies, since those keys
    and values are plain JSON as they are."""
    if type(entry) is dict and len(entry) == 3:
        function = entry.get("function")
        call_id = entry.get("id", entry)  # the entry itself stands for "absent"
        if (
            type(function) is dict
            and len(function) == 2
            and type(entry.get("type")) is str
            and (type(call_id) is str or call_id is None)
            and type(function.get("name")) is str
            and type(function.get("arguments")) is str
        ):
            return {**entry, "function": {**function}}
    return json_copy_checked(entry)


def _names(entry: Any, call_id: Any, name: Any, args: Any) -> bool:
    """Whether one raw provider call names the parsed call (id, name and arguments)."""
    function = entry.get("function") if type(entry) is dict else None
    return (
        type(function) is dict
        and entry.get("id") == call_id
        and function.get("name") == name
        and parse_arguments(function.get("arguments")) == args
    )
