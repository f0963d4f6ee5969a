"""LangChain / LangGraph messages <-> tracebridge messages.

``to_messages`` reads a list of ``BaseMessage`` objects, their ``messages_to_dict`` form
(``{"type": ..., "data": {...}}``), or a LangGraph state ``{"messages": [...]}`` of either;
``from_messages`` gives ``BaseMessage`` objects back (or the dict / state form on request).

Each message maps to one typed message. ``AIMessage.tool_calls`` is authoritative;
``invalid_tool_calls`` become calls with ``invalid_args``; ``ToolMessage.status == "error"``
is ``is_error``. Every field that has no typed home (``additional_kwargs``,
``response_metadata``, ``usage_metadata``, ``artifact``, a ``ChatMessage``'s ``role``, a
chunk's ``tool_call_chunks``, pydantic extra attributes, the class when it is not the plain
one) is kept verbatim under ``metadata["langchain"]`` when it differs from the field's
default, so ``messages_to_dict(from_messages(to_messages(t))) == messages_to_dict(t)``.
See ``docs/adapters/langchain.md`` for the full mapping table.

>>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
>>> trace = [HumanMessage("2+2?"), AIMessage("", tool_calls=[{"name": "add", "args": {"a": 2},
...          "id": "c1"}]), ToolMessage("4", tool_call_id="c1")]
>>> [m.type for m in to_messages(trace)]
['human', 'ai', 'tool']
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import ValidationError
from pydantic_core import PydanticUndefined
from typing_extensions import assert_never

from tracebridge._json import check_json
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import (
    AIMessage,
    Content,
    HumanMessage,
    Message,
    SystemMessage,
    ToolMessage,
)
from tracebridge.validation import validate

from ._blocks import part_of
from ._calls import calls_of
from ._classes import (
    CHAT_ROLES,
    CLASSES,
    NAME,
    PLAIN_CLASS,
    Kind,
    langchain_core_messages,
    partial_parser,
)
from ._write import native

__all__ = ["NAME", "detect", "from_messages", "to_json", "to_messages"]

_MAPPED = frozenset(
    {"content", "type", "name", "id", "tool_calls", "invalid_tool_calls", "tool_call_id", "status"}
)
"""``model_dump()`` keys that become typed fields; every other key is kept as metadata."""

_Form = Literal["messages", "dicts", "state"]


# --- detection -----------------------------------------------------------------------------


def _looks_like_message(item: Any) -> bool:
    if isinstance(item, dict):
        return set(item) == {"type", "data"} and isinstance(item["data"], dict)
    module = type(item).__module__
    return module.startswith(("langchain_core.", "langchain.")) and isinstance(
        getattr(item, "type", None), str
    )


def detect(trace: Any) -> bool:
    """True for LangChain messages (objects or dicts), or a state ``{"messages": [...]}``."""
    if isinstance(trace, dict):
        trace = trace.get("messages")
    return isinstance(trace, list) and bool(trace) and all(map(_looks_like_message, trace))


# --- to_messages ---------------------------------------------------------------------------


def to_messages(
    trace: Any, *, allow_pending: bool = False, drop_artifacts: bool = False
) -> list[Message]:
    """Typed messages for a LangChain trace; see the module docstring for accepted forms.

    ``drop_artifacts=True`` accepts a ``ToolMessage.artifact`` that is not JSON by dropping it
    (recorded as ``metadata["langchain"]["artifact_dropped"]``, the artifact's type name);
    without it such an artifact raises ``unserializable_value``.
    """
    items = _items_of(trace)
    lc = langchain_core_messages()
    parse_partial = partial_parser()
    messages: list[Message] = []
    for i, item in enumerate(items):
        try:
            messages.append(_typed(_loaded(item, i, lc), i, parse_partial, drop_artifacts))
        except TraceError as error:
            raise error.relocated(index=i, source=NAME) from None
    validate(messages, allow_pending=allow_pending, source=NAME)
    return messages


def _items_of(trace: Any) -> list[Any]:
    if isinstance(trace, dict):
        if set(trace) != {"messages"}:
            raise TraceError(
                "malformed_event",
                f"a LangGraph state is read for its 'messages' only; this one also has "
                f"{sorted(k for k in trace if k != 'messages')} (pass state['messages'] to "
                f"convert the conversation alone)"
                if "messages" in trace
                else f"expected a state {{'messages': [...]}}, got keys {sorted(trace)}",
                source=NAME,
            )
        trace = trace["messages"]
    if not isinstance(trace, (list, tuple)):
        raise TraceError(
            "malformed_event",
            f"expected a list of BaseMessage objects or messages_to_dict dicts, or a state "
            f"{{'messages': [...]}}; got {type(trace).__name__}",
            source=NAME,
        )
    return list(trace)


def _loaded(item: Any, i: int, lc: Any) -> Any:
    """A ``BaseMessage`` for one trace item (a dict is loaded the way LangChain loads it)."""
    if isinstance(item, lc.BaseMessage):
        return item
    if not isinstance(item, dict) or set(item) != {"type", "data"}:
        raise TraceError(
            "malformed_event",
            f"expected a BaseMessage or a messages_to_dict dict {{'type': ..., 'data': {{...}}}}, "
            f"got {type(item).__name__} {short_repr(item)}",
            path=f"messages[{i}]",
        )
    tag, data = item["type"], item["data"]
    cls = getattr(lc, _class_name(tag, i))
    if not isinstance(data, dict):
        raise TraceError(
            "malformed_event",
            f"'data' must be a dict, got {short_repr(data)}",
            path=f"messages[{i}].data",
        )
    try:
        return cls(**data)
    except (ValidationError, KeyError, TypeError, ValueError) as exc:
        raise TraceError(
            "malformed_event",
            f"LangChain cannot load this {cls.__name__}: {exc}".replace("\n", " "),
            path=f"messages[{i}].data",
        ) from None


def _class_name(tag: Any, i: int) -> str:
    """The ``langchain_core.messages`` class for a type tag; ``unknown_role`` otherwise."""
    if isinstance(tag, str) and tag in CLASSES:
        return CLASSES[tag][0]
    if tag == "remove":
        detail = (
            "RemoveMessage is a LangGraph instruction to delete a message from the state, not a "
            "message of the conversation; apply it (add_messages) before converting"
        )
    else:
        detail = f"unknown message type {short_repr(tag)}; known types: {', '.join(CLASSES)}"
    raise TraceError("unknown_role", detail, path=f"messages[{i}].type")


def _typed(message: Any, i: int, parse_partial: Any, drop_artifacts: bool) -> Message:
    at = f"messages[{i}]"
    data = message.model_dump()
    tag = data["type"]
    _class_name(tag, i)  # RemoveMessage and classes from elsewhere stop here
    kind = _kind_of(tag, data, at)
    is_chunk = tag == "AIMessageChunk"
    if is_chunk:
        _reject_partial_chunk(data, at, parse_partial)
    kept = _kept_fields(type(message), data, at, drop_artifacts)
    if tag != PLAIN_CLASS[kind]:
        kept["class"] = tag
    metadata = {NAME: kept} if kept else {}
    if kind == "ai":
        calls, call_blocks = calls_of(data, at, parse_partial if is_chunk else None)
        content = _content(data["content"], at, skip=call_blocks)
        return AIMessage(
            content=content, tool_calls=calls, name=data["name"], id=data["id"], metadata=metadata
        )
    content = _content(data["content"], at)
    if kind == "tool":
        return ToolMessage(
            content=content,
            tool_call_id=data.get("tool_call_id"),
            name=data["name"],
            is_error=data.get("status") == "error",
            id=data["id"],
            metadata=metadata,
        )
    if kind == "human":
        return HumanMessage(content=content, name=data["name"], id=data["id"], metadata=metadata)
    if kind == "system":
        return SystemMessage(content=content, name=data["name"], id=data["id"], metadata=metadata)
    assert_never(kind)


def _kind_of(tag: str, data: dict[str, Any], at: str) -> Kind:
    kind = CLASSES[tag][1]
    if kind is not None:
        return kind
    role = data["role"]
    if role not in CHAT_ROLES:
        raise TraceError(
            "unknown_role",
            f"ChatMessage role {short_repr(role)} is not one tracebridge maps; known roles: "
            f"{', '.join(CHAT_ROLES)}",
            path=f"{at}.role",
        )
    return CHAT_ROLES[role]


def _reject_partial_chunk(data: dict[str, Any], at: str, parse_partial: Any) -> None:
    """An ``AIMessageChunk`` still in pieces (not summed into one message) is refused."""
    if data.get("chunk_position") == "last":
        return  # the stream's final, aggregated chunk: LangChain has parsed its calls
    chunks = data.get("tool_call_chunks") or []
    for k, chunk in enumerate(chunks):
        where = f"{at}.tool_call_chunks[{k}]"
        if chunk.get("name") is None:
            raise TraceError(
                "streaming_chunk",
                f"tool call chunk {short_repr(chunk)} has no name: it continues a call started in "
                f"an earlier chunk; sum the chunks (chunk + chunk) before converting",
                path=where,
            )
        args = chunk.get("args")
        if args and not _strict_json(args) and type(_partial(parse_partial, args)) is dict:
            raise TraceError(
                "streaming_chunk",
                f"tool call chunk arguments {short_repr(args)} are cut off mid-JSON; sum the "
                f"chunks (chunk + chunk) before converting",
                path=f"{where}.args",
            )
    if chunks and not data.get("tool_calls") and not data.get("invalid_tool_calls"):
        raise TraceError(
            "streaming_chunk",
            "the chunk has tool_call_chunks but no parsed tool_calls; aggregate the stream first",
            path=f"{at}.tool_call_chunks",
        )


def _strict_json(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _partial(parse_partial: Any, text: str) -> Any:
    try:
        return parse_partial(text)
    except json.JSONDecodeError:
        return None


def _kept_fields(cls: Any, data: dict[str, Any], at: str, drop_artifacts: bool) -> dict[str, Any]:
    """Every ``model_dump()`` key without a typed home whose value is not the default."""
    kept: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        if key in _MAPPED:
            continue  # a typed field; read by _typed
        where = f"{at}.{key}"
        defaults = _field_defaults(cls)
        if key not in defaults:
            check_json(value, where)
            extra[key] = value
            continue
        default = defaults[key]
        if default is not _REQUIRED and value == default and type(value) is type(default):
            continue  # the way back writes the default itself
        if key == "artifact" and drop_artifacts and not _is_json(value, where):
            kept["artifact_dropped"] = type(value).__name__
            continue
        check_json(value, where)
        kept[key] = value
    if extra:
        kept["extra"] = extra
    return kept


_REQUIRED = object()


@functools.cache
def _field_defaults(cls: Any) -> dict[str, Any]:
    """Each declared field's default value (``_REQUIRED`` when it has none), per class."""
    defaults = {}
    for key, declared in cls.model_fields.items():
        has_default = declared.default is not PydanticUndefined or declared.default_factory
        defaults[key] = (
            declared.get_default(call_default_factory=True) if has_default else _REQUIRED
        )
    return defaults


def _is_json(value: Any, where: str) -> bool:
    try:
        check_json(value, where)
    except TraceError:
        return False
    return True


def _content(content: Any, at: str, skip: dict[int, Any] | None = None) -> Content:
    if isinstance(content, str):
        return content
    return [
        part_of(item, f"{at}.content[{j}]")
        for j, item in enumerate(content)
        if not skip or j not in skip
    ]


# --- from_messages -------------------------------------------------------------------------


def from_messages(messages: Sequence[Message], *, form: _Form = "messages") -> Any:
    """LangChain messages for typed ones: ``BaseMessage`` objects (``form="messages"``),
    ``messages_to_dict`` dicts (``form="dicts"``) or a LangGraph state
    ``{"messages": [BaseMessage, ...]}`` (``form="state"``).

    Reads only ``metadata["langchain"]``. A tool result without ``tool_call_id`` but with a
    name becomes a ``FunctionMessage``. Raises ``not_representable`` for what LangChain
    cannot hold: a tool result with neither, an invalid call placed before a valid one when
    nothing records that order, an opaque part that is not a block dict.
    """
    lc = langchain_core_messages()
    out = []
    for i, message in enumerate(messages):
        try:
            out.append(native(message, i, lc))
        except TraceError as error:
            raise error.relocated(index=i, source=NAME) from None
    if form == "messages":
        return out
    if form == "dicts":
        return lc.messages_to_dict(out)
    if form == "state":
        return {"messages": out}
    raise ValueError(f"form must be 'messages', 'dicts' or 'state', not {form!r}")


def to_json(trace: Any) -> Any:
    """The JSON form of what ``from_messages`` returned: ``messages_to_dict`` dicts (inside
    ``{"messages": ...}`` for a state), which ``to_messages`` reads back."""
    if isinstance(trace, dict) and set(trace) == {"messages"}:
        return {"messages": to_json(trace["messages"])}
    if all(isinstance(item, dict) for item in trace):
        return trace
    return langchain_core_messages().messages_to_dict(trace)
