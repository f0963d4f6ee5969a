"""Typed messages built from values already checked, without a second validation pass.

A reader's fast path has checked every value it passes here exactly as the model would: each
string is a ``str`` (not a subclass), each dict is the reader's own fresh copy and plain JSON
(``tracebridge._json.json_copy_checked``), each list holds typed objects. Building through
pydantic would check all of that again, which costs as much as the reading itself.

What these functions return equals, field for field, what the model's constructor returns when
given ``content`` and the keywords that differ from their defaults, ``model_fields_set``
included; the readers' fast-path tests hold every fast path to the general reader's output.

Messages built here of one shape share one ``model_fields_set``: the models are frozen, so
pydantic never adds to it (``model_copy`` copies it before changing it), and it is never
changed here. A fresh set per message costs a twentieth of the reading.
"""

from __future__ import annotations

from itertools import compress, product
from typing import Any

from pydantic import BaseModel

from .messages import AIMessage, Content, HumanMessage, SystemMessage, ToolCall, ToolMessage

__all__ = ["ai", "call", "human", "system", "tool"]

_new = object.__new__
# The instance dict and the slots every pydantic model instance has, set through their
# descriptors (the models are frozen: their own __setattr__ refuses); each builder sets all
# four, written out in place (a shared helper costs a call per message).
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _given(required: str, *optional: str) -> tuple[set[str], ...]:
    """The fields-set of each shape: entry ``k`` holds ``required`` and the ``optional``
    names whose bit is set in ``k`` (bit 0 for the first)."""
    return tuple(
        {required, *compress(optional, reversed(bits))}
        for bits in product((False, True), repeat=len(optional))
    )


_HUMAN = _given("content", "name", "id", "metadata")
_SYSTEM = _given("content", "role", "name", "id", "metadata")
_TOOL = _given("content", "tool_call_id", "name", "is_error", "id", "metadata")
_AI = _given("content", "tool_calls", "name", "id", "metadata")
_CALL = _given("name", "args", "id", "metadata")


def human(
    content: Content,
    name: str | None = None,
    id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> HumanMessage:
    if name is None and id is None and not metadata:  # the common case, in one step
        plain: HumanMessage = _new(HumanMessage)
        _set_dict(
            plain, {"type": "human", "content": content, "name": None, "id": None, "metadata": {}}
        )
        _set_fields_set(plain, _HUMAN[0])
        _set_extra(plain, None)
        _set_private(plain, None)
        return plain
    fields: dict[str, Any] = {
        "type": "human", "content": content, "name": name, "id": id, "metadata": metadata or {},
    }
    result: HumanMessage = _new(HumanMessage)
    _set_dict(result, fields)
    _set_fields_set(
        result, _HUMAN[(name is not None) + 2 * (id is not None) + (4 if metadata else 0)]
    )
    _set_extra(result, None)
    _set_private(result, None)
    return result


def system(
    content: Content,
    role: str = "system",
    name: str | None = None,
    id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> SystemMessage:
    if role != "system" and role != "developer":
        raise ValueError(f"a system message's role is system or developer, not {role!r}")
    fields: dict[str, Any] = {
        "type": "system", "content": content, "role": role, "name": name, "id": id,
        "metadata": metadata or {},
    }
    result: SystemMessage = _new(SystemMessage)
    _set_dict(result, fields)
    _set_fields_set(
        result,
        _SYSTEM[
            (role != "system")
            + 2 * (name is not None)
            + 4 * (id is not None)
            + (8 if metadata else 0)
        ],
    )
    _set_extra(result, None)
    _set_private(result, None)
    return result


def tool(
    content: Content,
    tool_call_id: str | None = None,
    name: str | None = None,
    is_error: bool = False,
    id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> ToolMessage:
    if not is_error and id is None and not metadata and tool_call_id is not None:
        plain: ToolMessage = _new(ToolMessage)  # the common cases, in one step
        _set_dict(
            plain,
            {
                "type": "tool", "content": content, "tool_call_id": tool_call_id, "name": name,
                "is_error": False, "id": None, "metadata": {},
            },
        )
        _set_fields_set(plain, _TOOL[1] if name is None else _TOOL[3])
        _set_extra(plain, None)
        _set_private(plain, None)
        return plain
    fields: dict[str, Any] = {
        "type": "tool", "content": content, "tool_call_id": tool_call_id, "name": name,
        "is_error": is_error, "id": id, "metadata": metadata or {},
    }
    result: ToolMessage = _new(ToolMessage)
    _set_dict(result, fields)
    _set_fields_set(
        result,
        _TOOL[
            (tool_call_id is not None)
            + 2 * (name is not None)
            + 4 * is_error
            + 8 * (id is not None)
            + (16 if metadata else 0)
        ],
    )
    _set_extra(result, None)
    _set_private(result, None)
    return result


def ai(
    content: Content = "",
    tool_calls: list[ToolCall] | None = None,
    name: str | None = None,
    id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> AIMessage:
    """An AI message without citations or audio (the fast paths leave those to the models)."""
    if id is None and not metadata:  # the common cases, in one step
        plain: AIMessage = _new(AIMessage)
        _set_dict(
            plain,
            {
                "type": "ai", "content": content, "tool_calls": tool_calls or [], "name": name,
                "citations": [], "audio": None, "id": None, "metadata": {},
            },
        )
        if tool_calls:
            _set_fields_set(plain, _AI[1] if name is None else _AI[3])
        else:
            _set_fields_set(plain, _AI[0] if name is None else _AI[2])
        _set_extra(plain, None)
        _set_private(plain, None)
        return plain
    fields: dict[str, Any] = {
        "type": "ai", "content": content, "tool_calls": tool_calls or [], "name": name,
        "citations": [], "audio": None, "id": id, "metadata": metadata or {},
    }
    result: AIMessage = _new(AIMessage)
    _set_dict(result, fields)
    _set_fields_set(
        result,
        _AI[
            (1 if tool_calls else 0)
            + 2 * (name is not None)
            + 4 * (id is not None)
            + (8 if metadata else 0)
        ],
    )
    _set_extra(result, None)
    _set_private(result, None)
    return result


def call(
    name: str,
    args: dict[str, Any],
    id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> ToolCall:
    """A parsed function call (no ``invalid_args``, kind ``function``)."""
    if id is not None and not metadata:  # the common cases, in one step
        plain: ToolCall = _new(ToolCall)
        _set_dict(
            plain,
            {
                "name": name, "args": args, "id": id, "invalid_args": None, "kind": "function",
                "metadata": {},
            },
        )
        _set_fields_set(plain, _CALL[3] if args else _CALL[2])
        _set_extra(plain, None)
        _set_private(plain, None)
        return plain
    fields: dict[str, Any] = {
        "name": name, "args": args, "id": id, "invalid_args": None, "kind": "function",
        "metadata": metadata or {},
    }
    result: ToolCall = _new(ToolCall)
    _set_dict(result, fields)
    _set_fields_set(
        result, _CALL[(1 if args else 0) + 2 * (id is not None) + (4 if metadata else 0)]
    )
    _set_extra(result, None)
    _set_private(result, None)
    return result
