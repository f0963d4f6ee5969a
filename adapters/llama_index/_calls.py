"""Tool calls of an assistant-side ChatMessage: ``ToolCallBlock``s and
``additional_kwargs["tool_calls"]`` entries, reconciled by id, and written back.

An entry is OpenAI-shaped (``{"id", "type": "function", "function": {"name", "arguments"}}``,
a dict or an openai SDK object) or a LlamaIndex ``ToolSelection``
(``{"tool_id", "tool_name", "tool_kwargs"}``, what ``MockFunctionCallingLLM`` reads there).
What the ToolCall does not hold is kept on it under ``metadata["llama_index"]``:
``kwargs_text`` (a block's ``tool_kwargs`` given as JSON text, exactly), ``entry`` and
``entry_index`` (the entry minus the id and name, and its position), ``in_blocks: false``
(a call with no ``ToolCallBlock``).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tracebridge import AIMessage, ToolCall, TraceError
from tracebridge.errors import short_repr

from ._blocks import NAME, fail, json_checked, optional_str


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_args(raw: Any, index: int, path: str) -> tuple[dict[str, Any], str | None]:
    """``(args, invalid_args)`` from tool arguments given as a dict or as JSON text."""
    if type(raw) is dict:
        json_checked(raw, index, path)
        return raw, None
    if type(raw) is str:
        try:
            parsed = json.loads(raw, parse_constant=_reject_constant)
        except ValueError:
            return {}, raw
        return (parsed, None) if type(parsed) is dict else ({}, raw)
    raise fail(
        "malformed_event",
        f"tool arguments must be a dict or a JSON string, got {type(raw).__name__} "
        f"{short_repr(raw)}",
        index,
        path,
    )


def block_call(block: dict[str, Any], index: int, path: str) -> ToolCall:
    name = block.get("tool_name")
    if type(name) is not str:
        raise fail("malformed_event", f"a tool_call block needs 'tool_name' as a string, got "
                   f"{short_repr(name)}", index, f"{path}.tool_name")
    call_id = optional_str(block, "tool_call_id", index, path)
    raw = block.get("tool_kwargs", {})
    args, invalid = parse_args(raw, index, f"{path}.tool_kwargs")
    kept = {"kwargs_text": raw} if type(raw) is str and invalid is None else {}
    return ToolCall(name=name, args=args, id=call_id, invalid_args=invalid,
                    metadata={NAME: kept} if kept else {})


def _entry_call(entry: Any, k: int, index: int, path: str) -> ToolCall:
    """One ``additional_kwargs["tool_calls"]`` entry: OpenAI-shaped or a ToolSelection."""
    if type(entry) is not dict and hasattr(entry, "model_dump"):
        entry = entry.model_dump(mode="json")
    if type(entry) is dict and "function" not in entry and "tool_name" in entry:
        return _selection_call(entry, k, index, path)
    function = entry.get("function") if type(entry) is dict else None
    if type(function) is not dict or type(function.get("name")) is not str:
        raise fail(
            "malformed_event",
            f"expected a tool call like {{'id': ..., 'type': 'function', 'function': "
            f"{{'name': ..., 'arguments': '<json>'}}}} or a ToolSelection {{'tool_id': ..., "
            f"'tool_name': ..., 'tool_kwargs': {{...}}}}, got {short_repr(entry)}",
            index,
            path,
        )
    json_checked(entry, index, path)
    call_id = _entry_id(entry, "id", index, path)
    if "arguments" not in function:
        raise fail("malformed_event", "the function has no 'arguments'", index,
                   f"{path}.function.arguments")
    args, invalid = parse_args(function["arguments"], index, f"{path}.function.arguments")
    rest = copy.deepcopy(entry)
    if call_id is not None:
        del rest["id"]
    rest["function"] = {key: value for key, value in function.items() if key != "name"}
    return ToolCall(name=function["name"], args=args, id=call_id, invalid_args=invalid,
                    metadata={NAME: {"entry": rest, "entry_index": k}})


def _selection_call(entry: dict[str, Any], k: int, index: int, path: str) -> ToolCall:
    json_checked(entry, index, path)
    name = entry["tool_name"]
    if type(name) is not str:
        raise fail("malformed_event", f"'tool_name' must be a string, got {short_repr(name)}",
                   index, f"{path}.tool_name")
    call_id = _entry_id(entry, "tool_id", index, path)
    if "tool_kwargs" not in entry:
        raise fail("malformed_event", "a ToolSelection needs 'tool_kwargs'", index,
                   f"{path}.tool_kwargs")
    args, invalid = parse_args(entry["tool_kwargs"], index, f"{path}.tool_kwargs")
    rest = {key: value for key, value in entry.items() if key != "tool_name"}
    if call_id is not None:
        del rest["tool_id"]
    return ToolCall(name=name, args=args, id=call_id, invalid_args=invalid,
                    metadata={NAME: {"entry": rest, "entry_index": k}})


def _entry_id(entry: dict[str, Any], key: str, index: int, path: str) -> str | None:
    call_id = entry.get(key)
    if call_id is not None and type(call_id) is not str:
        raise fail("malformed_event", f"{key!r} must be a string, got {short_repr(call_id)}",
                   index, f"{path}.{key}")
    return call_id


def reconcile_calls(
    block_calls: list[ToolCall], extra: dict[str, Any], index: int, where: str
) -> list[ToolCall]:
    """Block calls in block order, merged by id with ``additional_kwargs["tool_calls"]``;
    entries without a block follow, in their order."""
    entries = extra.get("tool_calls")
    if type(entries) is not list or not entries:
        return block_calls  # absent, or not a call list: kept verbatim with the kwargs
    del extra["tool_calls"]
    calls = list(block_calls)
    by_id = {call.id: pos for pos, call in enumerate(calls) if call.id is not None}
    merged: set[int] = set()
    only_in_kwargs: list[ToolCall] = []
    for k, entry in enumerate(entries):
        path = f"{where}.additional_kwargs.tool_calls[{k}]"
        found = _entry_call(entry, k, index, path)
        pos = by_id.get(found.id) if found.id is not None else None
        if pos is None:
            kept = {**found.metadata[NAME], "in_blocks": False}
            only_in_kwargs.append(found.model_copy(update={"metadata": {NAME: kept}}))
            continue
        block = calls[pos]
        if pos in merged:
            raise fail("duplicate_tool_call_id", f"two entries name the call id {found.id!r}",
                       index, f"{path}.id")
        if (block.name, block.args, block.invalid_args) != (
            found.name, found.args, found.invalid_args
        ):
            raise fail(
                "conflicting_fields",
                f"call {found.id!r} is {found.name}({found.invalid_args or found.args}) here "
                f"but {block.name}({block.invalid_args or block.args}) in its ToolCallBlock "
                f"(the message's call {pos}); both places must agree",
                index,
                path,
            )
        merged.add(pos)
        kept = {**block.metadata.get(NAME, {}), **found.metadata[NAME]}
        calls[pos] = block.model_copy(update={"metadata": {NAME: kept}})
    return calls + only_in_kwargs


def blocks_with_calls(
    message: AIMessage, parts: list[dict[str, Any]], kept: dict[str, Any], extra: dict[str, Any]
) -> list[dict[str, Any]]:
    in_blocks: list[dict[str, Any]] = []
    entries: list[tuple[int, dict[str, Any]]] = []
    for call in message.tool_calls:
        call_kept = call.metadata.get(NAME, {})
        entry = call_kept.get("entry")
        if type(entry) is dict:
            entries.append((call_kept.get("entry_index", len(entries)), _entry(call, entry)))
        if call_kept.get("in_blocks", True) or type(entry) is not dict:
            in_blocks.append(_call_block(call, call_kept))
    if entries:
        extra["tool_calls"] = [entry for _, entry in sorted(entries, key=lambda e: e[0])]
    layout = kept.get("layout")
    if (
        type(layout) is not list
        or layout.count("part") != len(parts)
        or layout.count("call") != len(in_blocks)
    ):
        return parts + in_blocks
    sources = {"part": iter(parts), "call": iter(in_blocks)}
    return [next(sources[token]) for token in layout]


def _same_args(raw: Any, call: ToolCall) -> bool:
    if type(raw) is not str and type(raw) is not dict:
        return False
    try:
        return parse_args(raw, 0, "") == (call.args, call.invalid_args)
    except TraceError:  # stored arguments that are not JSON any more are simply stale
        return False


def _call_block(call: ToolCall, call_kept: dict[str, Any]) -> dict[str, Any]:
    text = call_kept.get("kwargs_text")
    if call.invalid_args is not None:
        kwargs: Any = call.invalid_args
    elif type(text) is str and _same_args(text, call):
        kwargs = text
    else:
        kwargs = call.args
    return {"block_type": "tool_call", "tool_call_id": call.id, "tool_name": call.name,
            "tool_kwargs": kwargs}


def _entry(call: ToolCall, stored: dict[str, Any]) -> dict[str, Any]:
    entry = copy.deepcopy(stored)
    written_args = call.invalid_args if call.invalid_args is not None else call.args
    if "function" not in entry and "tool_kwargs" in entry:  # a ToolSelection
        entry["tool_name"] = call.name
        if not _same_args(entry["tool_kwargs"], call):
            entry["tool_kwargs"] = written_args
        if call.id is not None:
            entry["tool_id"] = call.id
        return entry
    function = dict(entry.get("function", {}))
    function["name"] = call.name
    if not _same_args(function.get("arguments"), call):
        function["arguments"] = (
            call.invalid_args if call.invalid_args is not None else json.dumps(call.args)
        )
    entry["function"] = function
    if call.id is not None:
        entry["id"] = call.id
    return entry
