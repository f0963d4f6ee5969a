"""Where a conversation rule's error points in a LangChain trace (``validate``'s ``paths``).

The rules are checked on the typed messages, and most fields they name sit at the same path
in the source message (``messages[i].tool_calls[k]``, ``messages[i].tool_call_id``). The
calls and results LangChain keeps elsewhere do not: an Anthropic ``tool_result`` block in a
human message (its ``tool_use_id``), a call only a content block names (``tool_calls`` is
empty: the block, and its id under the block type's id key), a legacy
``additional_kwargs.function_call``, and a legacy ``FunctionMessage``, which has no
``tool_call_id`` (the message). What the reader keeps on each says where it was. A call of
LangChain's two lists is at its place in its own list (``invalid_tool_calls[m]``, or
``tool_calls[m]`` after invalid calls the provider's order puts first), not at its typed
position.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracebridge.messages import AIMessage, Message, ToolMessage
from tracebridge.validation import SourcePaths

from ._call_blocks import CALL_BLOCKS
from ._classes import NAME
from ._results import RESULT

__all__ = ["source_paths"]


def source_paths(messages: Sequence[Message], origin: Sequence[int] | None) -> SourcePaths:
    """``paths`` for ``validate`` over ``messages`` as the reader made them (``origin[i]``:
    the source message typed message ``i`` came from; None when each gave one)."""

    def path(i: int, field: str) -> str | None:
        at = f"messages[{origin[i] if origin is not None else i}]"
        message = messages[i]
        if isinstance(message, ToolMessage) and field == ".tool_call_id":
            if message.tool_call_id is None:
                return at  # a FunctionMessage: it has no tool_call_id
            link = _kept(message.metadata).get(RESULT)
            if type(link) is dict and type(link.get("at")) is int:
                return f"{at}.content[{link['at']}].tool_use_id"
        elif isinstance(message, AIMessage):
            return _call_paths(message, at).get(field)
        return None

    return path


def _call_paths(message: AIMessage, at: str) -> dict[str, str]:
    """The source path of each field of the message's calls: a call of the two lists at its
    place in its own list (its typed position counts the calls of the other list too)."""
    paths: dict[str, str] = {}
    listed = {False: 0, True: 0}  # the calls of tool_calls and invalid_tool_calls so far
    for k, call in enumerate(message.tool_calls):
        kept = _kept(call.metadata)
        if kept.get("from") == "function_call":
            paths[f".tool_calls[{k}]"] = f"{at}.additional_kwargs.function_call"
            continue
        link = kept.get("content_block")
        if kept.get("in_content") is not True or type(link) is not dict:
            invalid = call.invalid_args is not None or "invalid_tool_call" in kept
            place = f"{at}.{'invalid_tool_calls' if invalid else 'tool_calls'}[{listed[invalid]}]"
            listed[invalid] += 1
            paths[f".tool_calls[{k}]"] = place
            paths[f".tool_calls[{k}].id"] = f"{place}.id"
            continue
        block = link.get("block")
        tag = block.get("type") if type(block) is dict else None
        kind = CALL_BLOCKS.get(tag) if type(tag) is str else None
        if type(link.get("at")) is not int or kind is None:
            continue
        paths[f".tool_calls[{k}]"] = f"{at}.content[{link['at']}]"
        paths[f".tool_calls[{k}].id"] = f"{at}.content[{link['at']}].{kind.id_key}"
    return paths


def _kept(metadata: dict[str, Any]) -> dict[str, Any]:
    kept = metadata.get(NAME)
    return kept if type(kept) is dict else {}
