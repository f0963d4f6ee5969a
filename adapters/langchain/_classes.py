"""What the ``langchain`` adapter knows about LangChain's message classes, in one place."""

from __future__ import annotations

import functools
from typing import Any, Literal

from tracebridge._optional import require

__all__ = [
    "CHAT_ROLES",
    "CLASSES",
    "MAPPED",
    "NAME",
    "PLAIN_CLASS",
    "Kind",
    "langchain_core_messages",
    "partial_parser",
    "plain_class",
]

NAME = "langchain"

Kind = Literal["human", "ai", "tool", "system"]

CLASSES: dict[str, tuple[str, Kind | None]] = {
    "human": ("HumanMessage", "human"),
    "HumanMessageChunk": ("HumanMessageChunk", "human"),
    "ai": ("AIMessage", "ai"),
    "AIMessageChunk": ("AIMessageChunk", "ai"),
    "system": ("SystemMessage", "system"),
    "SystemMessageChunk": ("SystemMessageChunk", "system"),
    "tool": ("ToolMessage", "tool"),
    "ToolMessageChunk": ("ToolMessageChunk", "tool"),
    "function": ("FunctionMessage", "tool"),
    "FunctionMessageChunk": ("FunctionMessageChunk", "tool"),
    "chat": ("ChatMessage", None),
    "ChatMessageChunk": ("ChatMessageChunk", None),
}
"""``messages_to_dict`` type tag -> (class in ``langchain_core.messages``, typed kind).
A ``ChatMessage``'s kind comes from its role."""

CHAT_ROLES: dict[str, Kind] = {
    "user": "human",
    "human": "human",
    "assistant": "ai",
    "ai": "ai",
    "system": "system",
    "developer": "system",
}
"""The ``ChatMessage`` roles that name a typed kind; any other role is ``unknown_role``."""

MAPPED = frozenset(
    {"content", "type", "name", "id", "tool_calls", "invalid_tool_calls", "tool_call_id", "status"}
)
"""``model_dump()`` keys that become typed fields when the message's class declares them;
every other key is kept as metadata (so a kept field never has one of these names: the way
back writes them from the typed fields). An extra attribute of one of these names (a
``HumanMessage``'s ``tool_call_id``) is kept under ``extra``, as every extra attribute is."""

PLAIN_CLASS: dict[str, str] = {"human": "human", "ai": "ai", "tool": "tool", "system": "system"}
"""The class tag written for a typed message of each kind that records none (but see
``plain_class``)."""


def plain_class(kind: str, tool_call_id: Any, name: Any) -> str:
    """The class tag the way back writes for a typed message that records none: an id-less
    tool result with a name (a legacy function result) can only be a ``FunctionMessage``.
    The reader keeps a class only when it is not this one."""
    if kind == "tool" and tool_call_id is None and name is not None:
        return "function"
    return PLAIN_CLASS[kind]


@functools.cache
def partial_parser() -> Any:
    """LangChain's lenient JSON parser, which it uses on streamed tool-call arguments."""
    module = require(
        "langchain_core.utils.json", adapter=NAME, extra="langchain", package="langchain-core"
    )
    return module.parse_partial_json


@functools.cache
def langchain_core_messages() -> Any:
    """``langchain_core.messages``, imported on first use."""
    return require(
        "langchain_core.messages", adapter=NAME, extra="langchain", package="langchain-core"
    )
