"""Typed calls -> LangChain's ``tool_calls``, ``invalid_tool_calls`` and call blocks (the way back).

A call keeps, under ``metadata["langchain"]``, which list it came from (``invalid_tool_call``),
the content block that named it (``content_block``), that only the content named it
(``in_content``), that it is the legacy ``function_call`` (``from``) or which of the
provider's copies of it are stale (``stale``: LangChain edited the call and left them). A
typed call with no such metadata goes to ``tool_calls`` (or ``invalid_tool_calls`` when its
arguments did not parse); a custom call also gets the ``custom_tool_call`` block
langchain-openai writes for it, after the rest of the content.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from tracebridge._json import json_copy
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import ToolCall

from ._call_blocks import CALL_BLOCKS, CUSTOM_ARG, block_reads_back, call_block
from ._calls import STALE_COPIES, STALE_KEY, read_invalid_args
from ._classes import NAME
from ._kept_places import CALL_KEYS, check_types, refuse_unknown

__all__ = ["CallLists", "lists_of"]


@dataclass
class CallLists:
    """The LangChain fields rebuilt from typed calls."""

    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    invalid_tool_calls: list[dict[str, Any]] = field(default_factory=list)
    kinds: list[bool] = field(default_factory=list)
    """Invalid (True) or valid (False), for each call of the two lists, in typed order."""
    positions: list[int] = field(default_factory=list)
    """The typed position of each call of the two lists, in typed order."""
    blocks: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)
    """Call blocks with the content position they came from and their call's typed position."""
    tail: list[dict[str, Any]] = field(default_factory=list)
    """Blocks of custom calls from elsewhere, written after the rest of the content."""
    without_block: list[int] = field(default_factory=list)
    """The typed positions of function calls of the two lists that keep no content block
    (LangChain's calls in ``tool_calls`` only, new calls, calls edited to lose theirs): none
    of them fills a place among the kept blocks."""
    from_function_call: list[int] = field(default_factory=list)
    """The typed positions of calls marked as the legacy ``additional_kwargs.function_call``."""


def _not_representable(detail: str, path: str) -> TraceError:
    return TraceError("not_representable", detail, path=path)


def _check_call_keys(kept: dict[str, Any], where: str) -> None:
    """A call's kept keys are the ones the reader keeps on a call, of the types it keeps
    there (else ``malformed_event``), with the values it gives the marks (``in_content:
    true``, ``from: "function_call"``): another value is read as no mark, and the call would
    read back without it."""
    if not _KNOWN_CALL_KEYS.issuperset(kept):
        refuse_unknown(kept, _KNOWN_CALL_KEYS, "a tool call", f"{where}.metadata.{NAME}")
    check_types(kept, "call", f"{where}.metadata.{NAME}")
    if STALE_KEY in kept:
        _check_stale_mark(kept, f"{where}.metadata.{NAME}.{STALE_KEY}")
    for key, mark in _CALL_MARKS.items():
        if key in kept and not (type(kept[key]) is type(mark) and kept[key] == mark):
            raise _not_representable(
                f"metadata.langchain.{key} is kept as {short_repr(kept[key])}; the reader "
                f"keeps it only as {mark!r}, and the way back reads any other value as no "
                f"mark: the call would read back without it",
                f"{where}.metadata.{NAME}.{key}",
            )


_CALL_MARKS: dict[str, Any] = {"in_content": True, "from": "function_call"}

_KNOWN_CALL_KEYS = CALL_KEYS | {STALE_KEY}


def _check_stale_mark(kept: dict[str, Any], where: str) -> None:
    """A stale mark is what the reader writes: a list naming, in ``STALE_COPIES`` order and
    once each, copies of the call the message keeps (a content block only with the call's
    kept block)."""
    marks = kept[STALE_KEY]
    if type(marks) is not list:
        raise TraceError(
            "malformed_event",
            f"metadata.{NAME}.{STALE_KEY} is {short_repr(marks)}, not a list, as to_messages "
            "writes it",
            path=where,
            source=NAME,
        )
    ordered = [copy for copy in STALE_COPIES if copy in marks]
    if not marks or marks != ordered:
        raise _not_representable(
            f"metadata.langchain.{STALE_KEY} is kept as {short_repr(marks)}; the reader "
            f"lists there, once each and in this order, the stale copies of the call among "
            f"{', '.join(STALE_COPIES)}",
            where,
        )
    if STALE_COPIES[1] in marks and "content_block" not in kept:
        raise _not_representable(
            "this call is marked as having a stale content block (metadata.langchain.stale "
            "names 'content'), and it keeps no block (metadata.langchain.content_block): "
            "it would read back without the mark",
            where,
        )


def lists_of(
    calls: list[ToolCall], at: str, drop: Collection[str], *, custom_blocks: bool = True
) -> CallLists:
    """``tool_calls``, ``invalid_tool_calls`` and call content blocks for typed calls.

    ``custom_blocks=False``: the content has no room for a new custom call's block (an empty
    list, which with a block in it would read back as ``""``).
    """
    out = CallLists()
    rank = 0
    last_in_content: int | None = None  # the block position of the last content-only call
    for k, call in enumerate(calls):
        where = f"{at}.tool_calls[{k}]"
        kept = call.metadata.get(NAME, {})
        if kept and type(kept) is dict:
            _check_call_keys(kept, where)
        # A reader puts calls of the two lists first, then those only the content names,
        # then the legacy function_call: an order it would not give back cannot be written.
        place = 2 if kept.get("from") == "function_call" else 1 if kept.get("in_content") else 0
        if place < rank:
            raise _not_representable(
                "LangChain keeps the calls of tool_calls first, then calls named only by "
                "content blocks, then additional_kwargs.function_call; this call comes after "
                "one of a later kind",
                where,
            )
        rank = place
        if place == 2:
            out.from_function_call.append(k)  # in additional_kwargs["function_call"]
            continue
        link = kept.get("content_block")
        listed_invalid = place == 0 and (
            call.invalid_args is not None or "invalid_tool_call" in kept
        )
        entry: dict[str, Any] | None = None
        if place == 1 and link is None:
            raise _not_representable(
                "this call is marked as named only by a content block "
                "(metadata.langchain.in_content), but it keeps no block "
                "(metadata.langchain.content_block): it would be written nowhere (remove the "
                "marker to write it to tool_calls)",
                where,
            )
        if link is None:
            if call.kind != "custom":  # a custom call's block is written after the content
                out.without_block.append(k)
        else:
            block = call_block(call, link, where, in_content=place == 1)
            if place == 0 and block.get(CALL_BLOCKS[block["type"]].id_key) is None:
                raise _not_representable(
                    f"the {block['type']} content block this call is kept with "
                    "(metadata.langchain.content_block) repeats a call of tool_calls, which "
                    "LangChain's lists link by id; this call has none, so the block would name "
                    "no call",
                    f"{where}.id",
                )
            if listed_invalid:
                # the entry before the block that repeats it: a kept marker the edited call
                # no longer fits is told where it is, not as a block that disagrees
                entry = _checked_invalid_entry(call, kept, where)
            if call.invalid_args is not None and not block_reads_back(
                call, block, in_content=place == 1
            ):
                raise _not_representable(
                    f"tool call {call.name!r} has arguments that did not parse "
                    f"(invalid_args={call.invalid_args!r}), but the {block['type']} content "
                    "block it is kept with (metadata.langchain.content_block) does not read "
                    "back as them",
                    f"{where}.invalid_args",
                )
            out.blocks.append((link.get("at"), k, block))
        if place == 1:
            if out.tool_calls:
                # the reader takes call blocks for calls only when tool_calls is empty
                raise _not_representable(
                    "this call is named only by a content block (metadata.langchain."
                    "in_content), which the reader takes for a call only when tool_calls is "
                    "empty; this message has calls in tool_calls before it",
                    where,
                )
            position = link["at"]  # an int: call_block checked it
            if last_in_content is not None and position <= last_in_content:
                # the reader makes these calls in block order: they would change places
                raise _not_representable(
                    f"this call's content block belongs at content position {position} "
                    f"(metadata.langchain.content_block.at), not after the block of the call "
                    f"before it (at {last_in_content}): the call would read back before it",
                    f"{where}.metadata",
                )
            last_in_content = position
            continue
        if listed_invalid:
            out.invalid_tool_calls.append(entry or _checked_invalid_entry(call, kept, where))
            out.kinds.append(True)
            out.positions.append(k)
            continue
        args = json_copy(call.args)
        if call.kind == "custom":
            args = _custom_args(call, link, out, where, drop, custom_blocks)
        out.tool_calls.append({"name": call.name, "args": args, "id": call.id, "type": "tool_call"})
        out.kinds.append(False)
        out.positions.append(k)
    return out


def _checked_invalid_entry(call: ToolCall, kept: dict[str, Any], where: str) -> dict[str, Any]:
    """The call's ``invalid_tool_calls`` entry, refused where it would read back as another call."""
    entry = _invalid_entry(call, kept)
    _check_reads_back(call, entry, where)
    return entry


def _invalid_entry(call: ToolCall, kept: dict[str, Any]) -> dict[str, Any]:
    entry = {
        "type": "invalid_tool_call",
        "id": call.id,
        "name": call.name,
        "args": call.invalid_args,
        "error": None,
    }
    entry.update(json_copy(kept.get("invalid_tool_call", {})))
    return entry


def _check_reads_back(call: ToolCall, entry: dict[str, Any], where: str) -> None:
    """Refuse an ``invalid_tool_calls`` entry that reads back as another call: its kept
    marker (``metadata.langchain.invalid_tool_call``) may hold a ``name`` or ``args`` that
    no longer fit a call edited after reading."""
    read = read_invalid_args(entry["args"])
    if call.invalid_args is None and read is None:
        if call.args:
            raise _not_representable(
                f"tool call {call.name!r} is kept as an invalid_tool_calls entry with empty "
                f"argument text (metadata.langchain.invalid_tool_call), which reads back as no "
                f"arguments; the call has args {short_repr(call.args)} (without that marker it "
                "goes to tool_calls)",
                f"{where}.args",
            )
    elif read != call.invalid_args:
        back = (
            "a call with args {} (empty text is no arguments to parse_tool_call)"
            if read is None
            else f"invalid_args={read!r}"
        )
        raise _not_representable(
            f"tool call {call.name!r} has arguments that did not parse "
            f"(invalid_args={call.invalid_args!r}), but its invalid_tool_calls entry, with args "
            f"{short_repr(entry['args'])}, reads back as {back}"
            if call.invalid_args is not None
            else f"tool call {call.name!r} has parsed arguments, but it is kept as an "
            f"invalid_tool_calls entry (metadata.langchain.invalid_tool_call) with args "
            f"{short_repr(entry['args'])}, which reads back as {back}",
            f"{where}.invalid_args",
        )
    name = entry["name"]
    if (name if type(name) is str else "") != call.name:
        raise _not_representable(
            f"tool call {call.name!r} is kept as an invalid_tool_calls entry named "
            f"{short_repr(name)} (metadata.langchain.invalid_tool_call.name), which reads back "
            "as a call named ''",
            f"{where}.name",
        )
    if entry["id"] != call.id:
        raise _not_representable(
            f"tool call {call.name!r} has id {call.id!r}, but its invalid_tool_calls entry "
            f"keeps id {short_repr(entry['id'])} (metadata.langchain.invalid_tool_call.id)",
            f"{where}.id",
        )


def _custom_args(
    call: ToolCall,
    link: Any,
    out: CallLists,
    where: str,
    drop: Collection[str],
    custom_blocks: bool,
) -> dict[str, Any]:
    """langchain-openai's form of a free-text call: ``args={"__arg1": text}`` in
    ``tool_calls`` and a ``custom_tool_call`` block (matched by ``call_id``) in the content."""
    text = call.args["input"]
    if link is None:
        if call.id is None or not custom_blocks:
            if "custom_calls" in drop:
                return {"input": text}
            why = "this call has no id" if call.id is None else "the content is an empty list"
            raise _not_representable(
                "a custom (free-text) call goes into LangChain as a custom_tool_call block "
                "in the content, matched to its tool call by id, and " + why + "; "
                "drop=['custom_calls'] writes it as a function call with args {'input': text}",
                where,
            )
        out.tail.append(
            {"type": "custom_tool_call", "call_id": call.id, "name": call.name, "input": text}
        )
    return {CUSTOM_ARG: text}
