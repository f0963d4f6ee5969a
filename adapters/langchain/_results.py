"""Anthropic ``tool_result`` blocks inside a LangChain human message <-> typed tool results.

``convert_to_messages`` keeps an Anthropic history as it was sent: the results of the
assistant's ``tool_use`` calls are ``tool_result`` blocks in the next user message. They are
tool results, so they read as ``ToolMessage``s (``tool_use_id`` -> ``tool_call_id``,
``is_error`` -> ``is_error``, the block's ``content`` -> ``content``), in block order; what
else the message holds follows them as a ``HumanMessage``. Results first keeps the
conversation rules (a tool result follows the call's message) and is the order the Anthropic
API requires anyway (results open the user turn).

The way back puts them together again: the first result of a message carries
``metadata.langchain.from_human`` (the message's own fields, or ``"rest"`` when the
``HumanMessage`` after the results holds them and the rest of the content; that one is marked
``with_tool_results``), every result its block's position and its other keys.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from tracebridge._json import check_json
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import HumanMessage, Message, ToolMessage

from ._blocks import AnyPart, block_of
from ._classes import NAME

__all__ = ["has_tool_results", "read_tool_results", "write_tool_results"]

RESULT = "tool_result"


def has_tool_results(content: Any) -> bool:
    return type(content) is list and any(
        type(item) is dict and item.get("type") == RESULT for item in content
    )


def read_tool_results(
    data: dict[str, Any],
    kept: dict[str, Any],
    at: str,
    part_of: Callable[[Any, str], AnyPart],
) -> list[Message]:
    """The typed messages for one human message whose content has ``tool_result`` blocks."""
    content: list[Any] = data["content"]
    results: list[dict[str, Any]] = []
    rest: list[AnyPart] = []
    for j, item in enumerate(content):
        where = f"{at}.content[{j}]"
        if type(item) is dict and item.get("type") == RESULT:
            results.append(_result_of(item, j, where, part_of))
        else:
            rest.append(part_of(item, where))
    own = {"name": data["name"], "id": data["id"]}
    opener = results[0]["metadata"][NAME]
    if rest:
        opener["from_human"] = "rest"
    else:
        opener["from_human"] = {**{k: v for k, v in own.items() if v is not None}, **kept}
    typed: list[Message] = [ToolMessage(**fields) for fields in results]
    if rest:
        human_kept = {**kept, "with_tool_results": True}
        typed.append(HumanMessage(content=rest, **own, metadata={NAME: human_kept}))
    return typed


def _result_of(
    block: dict[str, Any], j: int, where: str, part_of: Callable[[Any, str], AnyPart]
) -> dict[str, Any]:
    """The fields of the typed tool result for one ``tool_result`` block."""
    call_id = block.get("tool_use_id")
    if type(call_id) is not str:
        raise TraceError(
            "malformed_event",
            f"a tool_result block needs a 'tool_use_id' string, got {short_repr(call_id)}",
            path=f"{where}.tool_use_id",
        )
    template = {k: v for k, v in block.items() if k not in ("tool_use_id", "content")}
    link: dict[str, Any] = {"at": j, "block": template}
    body = block.get("content")
    if "content" not in block:
        link["without_content"] = True
        body = ""
    elif type(body) is list:
        body = [part_of(item, f"{where}.content[{k}]") for k, item in enumerate(body)]
    elif type(body) is not str:
        raise TraceError(
            "malformed_event",
            f"a tool_result block's content is a string or a list of blocks, got "
            f"{short_repr(body)}",
            path=f"{where}.content",
        )
    is_error = block.get("is_error")
    if is_error is not None and type(is_error) is not bool:
        # langchain-core's converters read it by truthiness ("false" is an error there):
        # read either way, it would say something the block may not
        raise TraceError(
            "malformed_event",
            f"a tool_result block's is_error is true or false (or null: not set), got "
            f"{short_repr(is_error)}",
            path=f"{where}.is_error",
        )
    check_json(template, where)
    return {
        "content": body,
        "tool_call_id": call_id,
        "is_error": is_error is True,
        "metadata": {NAME: {RESULT: link}},
    }


def _not_representable(detail: str, path: str) -> TraceError:
    return TraceError("not_representable", detail, path=path)


def write_tool_results(
    messages: Sequence[Message], start: int, native: Callable[..., Any]
) -> tuple[Any, int]:
    """The LangChain human message for the results that start at ``messages[start]`` (and the
    ``HumanMessage`` after them, if it was part of the same message); and the next position.

    ``native(message, content, kept_at)`` builds the LangChain message of a typed human
    message with ``content`` as its content (``kept_at``: the typed message holding the
    fields kept for it, and their path).
    """
    first = messages[start]
    marker = first.metadata[NAME]["from_human"]
    if not _is_result(first, first_of_group=True):
        # nothing to write back into the human message: a marker no reading leaves there
        raise TraceError(
            "not_representable",
            "metadata.langchain.from_human marks the first of the tool results read from a "
            "human message's tool_result blocks (a ToolMessage keeping metadata.langchain."
            f"{RESULT}); this {type(first).__name__} is none, so it would go back into no "
            "message (take the marker out to write it as it is)",
            index=start,
            path=f"messages[{start}].metadata.{NAME}.from_human",
        )
    blocks: list[tuple[int, dict[str, Any]]] = []
    end = start
    while end < len(messages) and _is_result(messages[end], first_of_group=end == start):
        try:
            block = _block_of(messages[end], f"messages[{end}]")  # type: ignore[arg-type]
        except TraceError as error:
            # (the group is written at start; this error is about the result at end)
            raise (error if error.index is not None else error.relocated(index=end)) from None
        if blocks and block[0] <= blocks[-1][0]:
            # the reader gives the results in block order: these would change places
            raise TraceError(
                "not_representable",
                f"this tool result's block belongs at content position {block[0]} "
                f"(metadata.langchain.tool_result.at), not after the block of the result "
                f"before it (at {blocks[-1][0]}): it would read back before that result",
                index=end,
                path=f"messages[{end}].metadata",
            )
        blocks.append(block)
        end += 1
    if marker == "rest":
        human = messages[end] if end < len(messages) else None
        mark = human.metadata.get(NAME, {}).get("with_tool_results") if human else None
        if isinstance(human, HumanMessage) and mark is not None and mark is not True:
            raise TraceError(
                "not_representable",
                f"metadata.langchain.with_tool_results is kept as {short_repr(mark)}; the "
                f"reader keeps it only as true (this message holds the rest of a human message "
                f"with tool_result blocks), and the way back writes no other value",
                index=end,
                path=f"messages[{end}].metadata.{NAME}.with_tool_results",
            )
        if not isinstance(human, HumanMessage) or not mark:
            raise _not_representable(
                "these tool results came from a human message whose other content is the "
                "HumanMessage marked with_tool_results right after them; none follows",
                f"messages[{start}].metadata",
            )
        stray = _GROUP_KEYS.intersection(human.metadata[NAME])
        if stray:
            key = min(stray)
            raise TraceError(
                "not_representable",
                f"this human message holds the rest of a human message with tool_result "
                f"blocks (metadata.langchain.with_tool_results); metadata.langchain.{key} "
                f"marks a tool result, which it is not: nothing would write it",
                index=end,
                path=f"messages[{end}].metadata.{NAME}.{key}",
            )
        if human.content == []:
            # nothing of it would be left beside the results: it would read back as no message
            raise TraceError(
                "not_representable",
                "this human message holds the rest of a human message whose tool_result "
                "blocks are the tool results before it (metadata.langchain.with_tool_results), "
                "and its content is an empty list: written back into that message, it would "
                "leave nothing beside the results and read back as no message",
                index=end,
                path=f"messages[{end}].content",
            )
        try:
            rest: list[Any] = (
                [
                    block_of(part, f"messages[{end}].content[{k}]")
                    for k, part in enumerate(human.content)
                ]
                if isinstance(human.content, list)
                else [human.content]  # a bare string is a content element too
            )
        except TraceError as error:
            # (the group is written at start; this error is about the message at end)
            raise (error if error.index is not None else error.relocated(index=end)) from None
        kept_at = (end, f"messages[{end}].metadata.{NAME}")
        return native(human, _placed(blocks, rest, start), kept_at), end + 1
    if type(marker) is not dict:
        raise _not_representable(
            f"metadata.langchain.from_human must be 'rest' or the human message's fields; got "
            f"{short_repr(marker)}",
            f"messages[{start}].metadata",
        )
    stray = _MARKERS.intersection(marker)
    if stray:
        key = min(stray)
        raise _not_representable(
            f"metadata.langchain.from_human holds the fields of the human message these "
            f"tool results came from; {key!r} marks a message of such a group, not one of "
            f"its fields: nothing would write it",
            f"messages[{start}].metadata.{NAME}.from_human.{key}",
        )
    fields = copy.deepcopy(marker)
    name, message_id = fields.pop("name", None), fields.pop("id", None)
    host = HumanMessage(content=[], name=name, id=message_id, metadata={NAME: fields})
    kept_at = (start, f"messages[{start}].metadata.{NAME}.from_human")
    return native(host, _placed(blocks, [], start), kept_at), end


def _is_result(message: Message, *, first_of_group: bool) -> bool:
    kept = message.metadata.get(NAME, {})
    if not isinstance(message, ToolMessage) or RESULT not in kept:
        return False
    return first_of_group or "from_human" not in kept


_GROUP_KEYS = frozenset((RESULT, "from_human"))
"""What a tool result read from a ``tool_result`` block keeps: its block, and on the first
result of a message that message's fields."""

_MARKERS = _GROUP_KEYS | {"with_tool_results"}
"""Every key marking a message of a human message's tool-result group."""


def _block_of(message: ToolMessage, at: str) -> tuple[int, dict[str, Any]]:
    kept = message.metadata[NAME]
    if not _GROUP_KEYS.issuperset(kept):
        # the block has a place for its own keys (kept in the link) only: a ToolMessage
        # field kept beside it (artifact, response_metadata, ...) would be lost
        key = next(key for key in kept if key not in _GROUP_KEYS)
        raise _not_representable(
            f"this tool result goes back as a tool_result block of a human message "
            f"(metadata.langchain.{RESULT}), which has no place for metadata.langchain.{key}: "
            f"it would be lost (a result kept as a ToolMessage, without the {RESULT} and "
            f"from_human markers, has one for a ToolMessage field)",
            f"{at}.metadata.{NAME}.{key}",
        )
    link = kept[RESULT]
    if (
        type(link) is not dict
        or type(link.get("at")) is not int
        or type(link.get("block")) is not dict
        or link["block"].get("type") != RESULT
    ):
        raise _not_representable(
            f"metadata.langchain.tool_result needs 'at' (a position) and a 'block' dict of "
            f"type {RESULT!r} (another type would not read back as a tool result); got "
            f"{short_repr(link)}",
            f"{at}.metadata",
        )
    if message.tool_call_id is None or message.name is not None:
        raise _not_representable(
            "a tool_result block holds a tool_use_id and no tool name; this result has "
            + ("no tool_call_id" if message.tool_call_id is None else f"name {message.name!r}"),
            at,
        )
    block = copy.deepcopy(link["block"])
    block["tool_use_id"] = message.tool_call_id
    if not link.get("without_content"):
        content = message.content
        block["content"] = (
            content
            if isinstance(content, str)
            else [block_of(part, f"{at}.content[{k}]") for k, part in enumerate(content)]
        )
    elif message.content != "":
        raise _not_representable(
            "this tool_result block had no content, but the result now has some", f"{at}.content"
        )
    elif "content" in block:
        raise _not_representable(
            f"this tool_result block had no content (metadata.langchain.tool_result."
            f"without_content), but its kept block holds one ({short_repr(block['content'])}), "
            f"which would read back as the result's content",
            f"{at}.metadata",
        )
    kept_flag = block.get("is_error")
    if kept_flag is not None and type(kept_flag) is not bool:
        # the reader refuses it (langchain-core reads it by truthiness): written, it would
        # say what the typed result may not
        raise _not_representable(
            f"the kept tool_result block's is_error is true or false (or null: not set), got "
            f"{short_repr(kept_flag)}",
            f"{at}.metadata",
        )
    if type(kept_flag) is bool or message.is_error:
        block["is_error"] = message.is_error
    return link["at"], block


def _placed(blocks: list[tuple[int, dict[str, Any]]], rest: list[Any], start: int) -> list[Any]:
    """The content list: result blocks at their positions, the rest in order around them."""
    content = list(rest)
    for position, block in sorted(blocks, key=lambda pair: pair[0]):
        if position > len(content):
            raise _not_representable(
                f"a tool_result block belongs at content position {position}, past the end of "
                f"the message's {len(content)} other elements",
                f"messages[{start}].metadata",
            )
        content.insert(position, block)
    return content
