"""The reader's fast path: one LangChain message object of the common kind, read without
``model_dump()`` and without the general machinery.

It takes a ``HumanMessage``, ``AIMessage``, ``ToolMessage`` or ``SystemMessage`` (the classes
themselves) whose content is a string and that has no extra attributes; an ``AIMessage``
whose calls are all parsed (no ``invalid_tool_calls``), whose raw provider calls (if any)
name exactly those calls, and without the ``additional_kwargs`` the general reader has
homes for beyond those (``function_call``, ``annotations``, ``audio``, ``reasoning``,
``tool_outputs``, a text ``refusal`` or ``reasoning_content``).
Anything else, and anything that would raise (a value that is not JSON, raw calls that
disagree), gives None: the general reader then reads the message and raises its own
precise error. What this path returns equals what the general reader returns for the same
message (a test holds both to that on every law-kit trace). The usual AIMessage with
ChatOpenAI's raw calls beside its parsed ones is read in ``_fast_calls``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracebridge import _build
from tracebridge._json import NotPlainJson, json_copy_checked, same_json
from tracebridge.messages import Message, ToolCall

from ._call_blocks import parse_arguments
from ._fast_calls import raw_calls_ai
from ._homes import DEVELOPER_KEY, REASONING_KEY

__all__ = ["Plan", "Reader", "kwargs_copy", "plans", "typed_fast"]

_CALL_KEYS = frozenset({"name", "args", "id", "type"})
_ABSENT: Any = object()
"""A key not there (of no type a value may have)."""
_AI_HOMES = frozenset({"function_call", "annotations", "audio", "reasoning", "tool_outputs"})
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


Reader = Callable[[Any], "Message | None"]
"""The fast path for one class: the typed message, or None when the general reader must
read it."""


def plans(
    lc: Any,
    defaults: Any,
    mapped: frozenset[str],
    required: object,
    metadata_name: str,
    *,
    special: bool = True,
) -> dict[type, Reader]:
    """The fast path for each class it takes (those whose every field without a typed home
    has a default).

    A class whose fields without a typed home are the ones LangChain declares today gets a
    reader written out for them (``special``); any other (a LangChain version that adds a
    field) gets ``typed_fast`` with its plan, which reads the same way from the plan."""
    out: dict[type, Reader] = {}
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
        if any(default is required for _, default, _, _ in kept):
            continue
        shape = tuple((k, type(v), v) for k, v, _, _ in kept)
        if special and shape == tuple((k, type(v), v) for k, v in _DECLARED[kind]):
            out[cls] = _special(kind, metadata_name)
        else:
            out[cls] = functools.partial(
                typed_fast, plan=Plan(kind, kept), metadata_name=metadata_name
            )
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
            elif key == "usage_metadata" and not _counts(value):
                return None  # LangChain would refuse it or store another value
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


def _special(kind: str, metadata_name: str) -> Reader:
    """The reader of one class whose fields without a typed home are ``_DECLARED[kind]``:
    what ``typed_fast`` does with that plan, written out for those fields, one reader per
    class (a branch on the kind per message costs a tenth of reading a plain one)."""
    if kind == "human":

        def read(message: Any) -> Message | None:
            fields = message.__dict__
            content = fields["content"]
            if type(content) is not str or fields["type"] != "human" or message.__pydantic_extra__:
                return None
            name = fields["name"]
            message_id = fields["id"]
            if (name is not None and type(name) is not str) or (
                message_id is not None and type(message_id) is not str
            ):
                return None
            kwargs = fields["additional_kwargs"]
            response = fields["response_metadata"]
            if type(kwargs) is not dict or type(response) is not dict:
                return None  # LangChain keeps a dict here: the general reader says why not
            if not kwargs and not response:
                return _build.human(content, name, message_id)
            metadata = _kept("human", kwargs, response, None, None, metadata_name)
            if metadata is None:
                return None
            return _build.human(content, name, message_id, metadata)

    elif kind == "tool":

        def read(message: Any) -> Message | None:
            fields = message.__dict__
            content = fields["content"]
            if type(content) is not str or fields["type"] != "tool" or message.__pydantic_extra__:
                return None
            name = fields["name"]
            message_id = fields["id"]
            if (name is not None and type(name) is not str) or (
                message_id is not None and type(message_id) is not str
            ):
                return None
            kwargs = fields["additional_kwargs"]
            response = fields["response_metadata"]
            if type(kwargs) is not dict or type(response) is not dict:
                return None  # LangChain keeps a dict here: the general reader says why not
            artifact = fields["artifact"]
            metadata = None
            if kwargs or response or artifact is not None:
                metadata = _kept("tool", kwargs, response, "artifact", artifact, metadata_name)
                if metadata is None:
                    return None
            call_id = fields["tool_call_id"]
            if type(call_id) is not str:
                return None
            status = fields["status"]
            if status == "success":
                return _build.tool(content, call_id, name, False, message_id, metadata)
            if status == "error":
                return _build.tool(content, call_id, name, True, message_id, metadata)
            return None

    elif kind == "system":

        def read(message: Any) -> Message | None:
            fields = message.__dict__
            content = fields["content"]
            if (
                type(content) is not str
                or fields["type"] != "system"
                or message.__pydantic_extra__
            ):
                return None
            name = fields["name"]
            message_id = fields["id"]
            if (name is not None and type(name) is not str) or (
                message_id is not None and type(message_id) is not str
            ):
                return None
            kwargs = fields["additional_kwargs"]
            response = fields["response_metadata"]
            if type(kwargs) is not dict or type(response) is not dict:
                return None  # LangChain keeps a dict here: the general reader says why not
            metadata = None
            if kwargs or response:
                metadata = _kept("system", kwargs, response, None, None, metadata_name)
                if metadata is None:
                    return None
                if kwargs and DEVELOPER_KEY in kwargs:
                    return None
            return _build.system(content, "system", name, message_id, metadata)

    else:

        def read(message: Any) -> Message | None:
            fields = message.__dict__
            content = fields["content"]
            if type(content) is not str or fields["type"] != "ai" or message.__pydantic_extra__:
                return None
            name = fields["name"]
            message_id = fields["id"]
            if (name is not None and type(name) is not str) or (
                message_id is not None and type(message_id) is not str
            ):
                return None
            kwargs = fields["additional_kwargs"]
            response = fields["response_metadata"]
            if type(kwargs) is not dict or type(response) is not dict:
                return None  # LangChain keeps a dict here: the general reader says why not
            usage = fields["usage_metadata"]
            if usage is not None and not _counts(usage):
                return None  # LangChain would store it as another value: the general reader says
            if not kwargs:
                metadata = None
                if response or usage is not None:
                    metadata = _kept("ai", kwargs, response, "usage_metadata", usage, metadata_name)
                    if metadata is None:
                        return None
                invalid = fields["invalid_tool_calls"]
                calls = fields["tool_calls"]
                if invalid or type(invalid) is not list or type(calls) is not list:
                    return None
                if not calls:
                    return _build.ai(content, None, name, message_id, metadata)
                typed_calls = _typed_calls(calls, None)
                if typed_calls is None:
                    return None
                return _build.ai(content, typed_calls, name, message_id, metadata)
            if (
                len(kwargs) == 1
                and not response
                and usage is None
                and type(raw := kwargs.get("tool_calls")) is list
                and raw
            ):
                return raw_calls_ai(fields, raw, content, name, message_id, metadata_name)
            metadata = _kept("ai", kwargs, response, "usage_metadata", usage, metadata_name)
            if metadata is None:
                return None
            return _ai(fields, kwargs, content, name, message_id, metadata)

    return read


_USAGE_KEYS = frozenset({"input_tokens", "output_tokens", "total_tokens"})
"""What LangChain's ``UsageMetadata`` requires, each an ``int``."""
_DETAIL_KEYS = frozenset({"input_token_details", "output_token_details"})
"""What ``UsageMetadata`` may have besides, each a dict (``InputTokenDetails``,
``OutputTokenDetails``) whose counts are ``int``s."""


def _counts(usage: Any) -> bool:
    """Whether ``usage_metadata`` holds counts as LangChain stores them: the three required
    counts whole numbers, the token details dicts of them, and any other key one or the
    other (LangChain keeps other keys as they are; this path takes only those two shapes).
    ``"1"`` would be stored as ``1``; a dict as a count, or a number as details, is
    refused: the general reader says where."""
    if type(usage) is not dict or not usage.keys() >= _USAGE_KEYS:
        return False
    for key, value in usage.items():
        if type(value) is int:
            if key in _DETAIL_KEYS:
                return False
        elif (
            key in _USAGE_KEYS
            or type(value) is not dict
            or not all(type(count) is int for count in value.values())
        ):
            return False
    return True


def _kept(
    kind: str,
    kwargs: dict[str, Any],
    response: dict[str, Any],
    third: str | None,
    extra: Any,
    metadata_name: str,
) -> dict[str, Any] | None:
    """The metadata of the fields kept as they are (copied and checked), in declared order;
    None when a value is not plain JSON."""
    kept: dict[str, Any] = {}
    try:
        if kwargs:
            kept["additional_kwargs"] = (
                kwargs_copy(kwargs) if kind == "ai" else json_copy_checked(kwargs)
            )
        if response:
            kept["response_metadata"] = json_copy_checked(response)
        if extra is not None:
            kept[third] = extra if type(extra) is str else json_copy_checked(extra)  # type: ignore[index]
    except NotPlainJson:
        return None  # a value that is not JSON: the general reader says where
    return {metadata_name: kept}


_DICTS: tuple[tuple[str, Any], ...] = (("additional_kwargs", {}), ("response_metadata", {}))
_DECLARED: dict[str, tuple[tuple[str, Any], ...]] = {
    "human": _DICTS,
    "system": _DICTS,
    "ai": (*_DICTS, ("usage_metadata", None)),
    "tool": (*_DICTS, ("artifact", None)),
}
"""The fields without a typed home (with their defaults) that ``_special`` is written for."""


def _ai(
    fields: dict[str, Any],
    kwargs: dict[str, Any] | None,
    content: str,
    name: str | None,
    message_id: str | None,
    metadata: dict[str, Any] | None,
) -> Message | None:
    if kwargs and (
        type(kwargs.get("refusal")) is str
        or type(kwargs.get(REASONING_KEY)) is str
        or not _AI_HOMES.isdisjoint(kwargs)
    ):
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
    typed_calls = _typed_calls(calls, raw)
    if typed_calls is None:
        return None
    return _build.ai(content, typed_calls, name, message_id, metadata)


def _typed_calls(calls: list[Any], raw: list[Any] | None) -> list[ToolCall] | None:
    """The typed calls of LangChain's parsed call dicts, each checked against the raw
    provider call at its position when there are ``raw`` calls; None when the general reader
    must read the message."""
    typed_calls: list[ToolCall] = []
    for k, call in enumerate(calls):
        if type(call) is not dict or not call.keys() <= _CALL_KEYS:
            return None
        if call.get("type") != "tool_call":  # LangChain's constructor always sets it
            return None
        args = call.get("args", _ABSENT)
        call_name = call.get("name", _ABSENT)
        call_id = call.get("id", _ABSENT)
        if type(args) is not dict or type(call_name) is not str or (
            call_id is not None and type(call_id) is not str
        ):
            return None
        if raw is not None:  # the raw provider call must name this call
            entry = raw[k]
            function = entry.get("function") if type(entry) is dict else None
            if (
                type(function) is not dict
                or entry.get("id") != call_id
                or function.get("name") != call_name
                or not same_json(parse_arguments(function.get("arguments")), args)
            ):
                return None
        try:
            typed_calls.append(_build.call(call_name, json_copy_checked(args), call_id))
        except NotPlainJson:
            return None
    return typed_calls


def kwargs_copy(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``json_copy_checked(kwargs)`` for an AIMessage's ``additional_kwargs`` dict, its raw
    provider calls of the usual shape copied without a walk."""
    raw = kwargs.get("tool_calls")
    if type(raw) is list and len(kwargs) == 1:  # the raw calls alone: nothing else to copy
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
