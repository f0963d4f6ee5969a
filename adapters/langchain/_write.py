"""Typed messages -> LangChain ``BaseMessage`` objects (the ``langchain`` adapter's way back).

Reads only ``metadata["langchain"]``: the class tag, the kept fields and extras go back
verbatim; tool calls are split into LangChain's two lists; parts become content blocks.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import ValidationError

from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import AIMessage, Content, Message, ToolMessage

from ._blocks import block_of
from ._calls import interleave, lists_of, source_kinds
from ._classes import CHAT_ROLES, CLASSES, NAME, PLAIN_CLASS, partial_parser

__all__ = ["native"]


def native(message: Message, i: int, lc: Any) -> Any:
    """The LangChain message for typed ``message`` (``lc`` is ``langchain_core.messages``)."""
    at = f"messages[{i}]"
    kept: dict[str, Any] = copy.deepcopy(message.metadata.get(NAME, {}))
    tag = kept.pop("class", _plain_class(message))
    kept.pop("artifact_dropped", None)
    extra = kept.pop("extra", {})
    if tag not in CLASSES:
        raise TraceError(
            "not_representable",
            f"metadata.langchain.class {short_repr(tag)} is no LangChain message class; "
            f"known: {', '.join(CLASSES)}",
            path=f"{at}.metadata",
        )
    cls_name, kind = CLASSES[tag]
    if (kind or CHAT_ROLES.get(kept.get("role", ""))) != message.type:
        raise TraceError(
            "not_representable",
            f"metadata.langchain.class {tag!r} is not a {message.type} message class",
            path=f"{at}.metadata",
        )
    fields: dict[str, Any] = {"name": message.name, "id": message.id, **kept, **extra}
    fields["content"] = _content_back(message.content, at)
    if isinstance(message, AIMessage):
        _ai_fields(message, fields, cls_name, at)
    elif isinstance(message, ToolMessage):
        _tool_fields(message, fields, tag, at)
    try:
        return getattr(lc, cls_name)(**fields)
    except (ValidationError, TypeError, ValueError) as exc:
        raise TraceError(
            "not_representable",
            f"LangChain's {cls_name} does not accept these fields: {exc}".replace("\n", " "),
            path=at,
        ) from None


def _content_back(content: Content, at: str) -> Any:
    if isinstance(content, str):
        return content
    return [block_of(part, f"{at}.content[{j}]") for j, part in enumerate(content)]


def _ai_fields(message: AIMessage, fields: dict[str, Any], cls_name: str, at: str) -> None:
    lists = lists_of(message.tool_calls)
    if cls_name.startswith("ChatMessage"):
        if lists.kinds:
            raise TraceError(
                "not_representable",
                "a ChatMessage has no tool_calls field; this assistant message has tool calls",
                path=f"{at}.tool_calls",
            )
        return
    fields["tool_calls"] = lists.tool_calls
    fields["invalid_tool_calls"] = lists.invalid_tool_calls
    order = interleave(
        source_kinds(fields, partial_parser()),
        len(lists.tool_calls),
        len(lists.invalid_tool_calls),
    )
    if [invalid for invalid, _ in order] != lists.kinds:
        raise TraceError(
            "not_representable",
            "LangChain keeps invalid tool calls in their own list after the valid ones; this "
            "message has an invalid call before a valid one and no raw provider calls "
            "(additional_kwargs.tool_calls) that record the order",
            path=f"{at}.tool_calls",
        )
    has_function_call = any(
        call.metadata.get(NAME, {}).get("from") == "function_call" for call in message.tool_calls
    )
    if has_function_call and "function_call" not in fields.get("additional_kwargs", {}):
        raise TraceError(
            "not_representable",
            "a call marked as from additional_kwargs.function_call, but the message keeps no "
            "additional_kwargs.function_call",
            path=f"{at}.tool_calls",
        )
    if lists.blocks:
        if isinstance(fields["content"], str):
            raise TraceError(
                "not_representable",
                "a call keeps a content block (metadata.langchain.content_block) but the "
                "message content is a string, which holds no blocks",
                path=f"{at}.content",
            )
        for position, block in sorted(lists.blocks, key=lambda pair: pair[0]):
            fields["content"].insert(position, block)


def _plain_class(message: Message) -> str:
    """The class for a message that records none: an id-less tool result with a name (a
    legacy function result) can only be a ``FunctionMessage``."""
    if isinstance(message, ToolMessage) and message.tool_call_id is None and message.name:
        return "function"
    return PLAIN_CLASS[message.type]


def _tool_fields(message: ToolMessage, fields: dict[str, Any], tag: str, at: str) -> None:
    if CLASSES[tag][0].startswith("Function"):
        if message.is_error:
            raise TraceError(
                "not_representable",
                "a FunctionMessage (a tool result without tool_call_id) has no status to "
                "say it is an error",
                path=f"{at}.is_error",
            )
        return  # a FunctionMessage has neither tool_call_id nor status
    if message.tool_call_id is None:
        raise TraceError(
            "not_representable",
            "a LangChain ToolMessage needs a tool_call_id, and a FunctionMessage (the legacy "
            "id-less result) a name; this tool result has neither",
            path=f"{at}.tool_call_id",
        )
    fields["tool_call_id"] = message.tool_call_id
    fields["status"] = "error" if message.is_error else "success"
