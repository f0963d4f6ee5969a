"""Typed messages built from values already checked, without a second validation pass.

A reader's fast path has checked every value it passes here exactly as the model would: each
string is a ``str`` (not a subclass), each dict is the reader's own fresh copy and plain JSON
(``tracebridge._json.json_copy_checked``), each list holds typed objects. Building through
pydantic would check all of that again, which costs as much as the reading itself.

What these functions return equals, field for field, what the model's constructor returns when
given ``content`` and the keywords that differ from their defaults, ``model_fields_set``
included; the readers' fast-path tests hold every fast path to the general reader's output.
"""

from __future__ import annotations

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


def human(
    content: Content,
    name: str | None = None,
    id: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> HumanMessage:
    if name is None and id is None and not metadata:  # the common case, in one step
        fields: dict[str, Any] = {
            "type": "human", "content": content, "name": None, "id": None, "metadata": {},
        }
        plain: HumanMessage = _new(HumanMessage)
        _set_dict(plain, fields)
        _set_fields_set(plain, {"content"})
        _set_extra(plain, None)
        _set_private(plain, None)
        return plain
    given = {"content"}
    if name is not None:
        given.add("name")
    if id is not None:
        given.add("id")
    if metadata:
        given.add("metadata")
    else:
        metadata = {}
    fields = {"type": "human", "content": content, "name": name, "id": id, "metadata": metadata}
    result: HumanMessage = _new(HumanMessage)
    _set_dict(result, fields)
    _set_fields_set(result, given)
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
    given = {"content"}
    if role != "system":
        given.add("role")
    if name is not None:
        given.add("name")
    if id is not None:
        given.add("id")
    if metadata:
        given.add("metadata")
    else:
        metadata = {}
    fields: dict[str, Any] = {
        "type": "system", "content": content, "role": role, "name": name, "id": id,
        "metadata": metadata,
    }
    result: SystemMessage = _new(SystemMessage)
    _set_dict(result, fields)
    _set_fields_set(result, given)
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
        fields: dict[str, Any] = {
            "type": "tool", "content": content, "tool_call_id": tool_call_id, "name": name,
            "is_error": False, "id": None, "metadata": {},
        }
        plain: ToolMessage = _new(ToolMessage)
        _set_dict(plain, fields)
        _set_fields_set(
            plain,
            {"content", "tool_call_id"} if name is None else {"content", "tool_call_id", "name"},
        )
        _set_extra(plain, None)
        _set_private(plain, None)
        return plain
    given = {"content"}
    if tool_call_id is not None:
        given.add("tool_call_id")
    if name is not None:
        given.add("name")
    if is_error:
        given.add("is_error")
    if id is not None:
        given.add("id")
    if metadata:
        given.add("metadata")
    else:
        metadata = {}
    fields = {
        "type": "tool", "content": content, "tool_call_id": tool_call_id, "name": name,
        "is_error": is_error, "id": id, "metadata": metadata,
    }
    result: ToolMessage = _new(ToolMessage)
    _set_dict(result, fields)
    _set_fields_set(result, given)
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
        if tool_calls:
            plain_given = {"content", "tool_calls"} if name is None else {
                "content", "tool_calls", "name"}
        else:
            plain_given = {"content"} if name is None else {"content", "name"}
        fields: dict[str, Any] = {
            "type": "ai", "content": content, "tool_calls": tool_calls or [], "name": name,
            "citations": [], "audio": None, "id": None, "metadata": {},
        }
        plain: AIMessage = _new(AIMessage)
        _set_dict(plain, fields)
        _set_fields_set(plain, plain_given)
        _set_extra(plain, None)
        _set_private(plain, None)
        return plain
    given = {"content"}
    if tool_calls:
        given.add("tool_calls")
    else:
        tool_calls = []
    if name is not None:
        given.add("name")
    if id is not None:
        given.add("id")
    if metadata:
        given.add("metadata")
    else:
        metadata = {}
    fields = {
        "type": "ai", "content": content, "tool_calls": tool_calls, "name": name,
        "citations": [], "audio": None, "id": id, "metadata": metadata,
    }
    result: AIMessage = _new(AIMessage)
    _set_dict(result, fields)
    _set_fields_set(result, given)
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
    if id is not None and not metadata:
        fields: dict[str, Any] = {
            "name": name, "args": args, "id": id, "invalid_args": None, "kind": "function",
            "metadata": {},
        }
        plain: ToolCall = _new(ToolCall)
        _set_dict(plain, fields)
        _set_fields_set(plain, {"name", "args", "id"} if args else {"name", "id"})
        _set_extra(plain, None)
        _set_private(plain, None)
        return plain
    given = {"name"}
    if args:
        given.add("args")
    if id is not None:
        given.add("id")
    if metadata:
        given.add("metadata")
    else:
        metadata = {}
    fields = {
        "name": name, "args": args, "id": id, "invalid_args": None, "kind": "function",
        "metadata": metadata,
    }
    result: ToolCall = _new(ToolCall)
    _set_dict(result, fields)
    _set_fields_set(result, given)
    _set_extra(result, None)
    _set_private(result, None)
    return result
