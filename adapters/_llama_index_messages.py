"""One LlamaIndex ``ChatMessage`` (its ``model_dump(mode="json")`` dict) <-> one typed message.

Shared by ``to_messages`` (chat histories) and ``events_to_messages`` (agent event streams),
so the same ChatMessage becomes the same typed message on both roads.

What a typed message cannot hold is kept under ``metadata["llama_index"]``:

* ``role``: the source role when it is not the kind's default (developer, function, chatbot,
  model);
* ``additional_kwargs``: what is left of ``additional_kwargs`` after ``name``, ``tool_calls``
  and ``tool_call_id`` / ``call_id`` were lifted into typed fields;
* ``tool_call_id_key``: ``"call_id"`` when a tool result named its call with that key;
* ``layout``: the order of content blocks and tool-call blocks, when the calls do not all
  come after the content.

and on each ``ToolCall``: ``kwargs_text`` (a ``ToolCallBlock.tool_kwargs`` given as a JSON
string, exactly), ``entry`` and ``entry_index`` (the call's entry in
``additional_kwargs["tool_calls"]``, minus the id and name the ToolCall holds), and
``in_blocks: false`` for a call that has no ``ToolCallBlock``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tracebridge import (
    AIMessage,
    HumanMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.errors import short_repr

from ._llama_index_blocks import (
    NAME,
    block_to_part,
    fail,
    json_checked,
    optional_str,
    part_to_block,
)

ROLE_KIND = {
    "system": "system",
    "developer": "system",
    "user": "human",
    "assistant": "ai",
    "chatbot": "ai",
    "model": "ai",
    "tool": "tool",
    "function": "tool",
}
"""All eight ``MessageRole`` values and the typed message each becomes."""

DEFAULT_ROLE = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}
"""The role ``from_messages`` writes for each kind unless the metadata names another."""

_CHAT_MESSAGE_KEYS = frozenset({"role", "additional_kwargs", "blocks"})


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


def message_from_dump(dump: Any, index: int, where: str) -> Message:
    """The typed message for one ChatMessage dict; errors point at ``where`` / ``index``."""
    if type(dump) is not dict:
        raise fail(
            "malformed_event",
            f"expected a ChatMessage or its model_dump(mode='json') dict, "
            f"got {type(dump).__name__} {short_repr(dump)}",
            index,
            where,
        )
    for key in ("role", "blocks"):
        if key not in dump:
            raise fail("malformed_event", f"a ChatMessage dict needs {key!r}; found keys "
                       f"{sorted(dump)}", index, f"{where}.{key}")
    unknown = sorted(set(dump) - _CHAT_MESSAGE_KEYS)
    if unknown:
        raise fail("malformed_event", f"unknown ChatMessage fields {unknown}; a ChatMessage "
                   f"has {sorted(_CHAT_MESSAGE_KEYS)}", index, f"{where}.{unknown[0]}")
    role = dump["role"]
    kind = ROLE_KIND.get(role) if type(role) is str else None
    if kind is None:
        raise fail(
            "unknown_role",
            f"unknown role {short_repr(role)}; LlamaIndex roles are {', '.join(ROLE_KIND)}",
            index,
            f"{where}.role",
        )
    blocks = dump["blocks"]
    if type(blocks) is not list:
        raise fail("malformed_event", f"'blocks' must be a list, got {type(blocks).__name__}",
                   index, f"{where}.blocks")
    extra = dict(json_checked(dump.get("additional_kwargs", {}), index,
                              f"{where}.additional_kwargs", is_object=True))
    kept: dict[str, Any] = {}
    if role != DEFAULT_ROLE[kind]:
        kept["role"] = role
    name = extra.pop("name") if type(extra.get("name")) is str else None
    parts, block_calls, layout = _split_blocks(blocks, kind == "ai", index, where)
    content: Any = parts[0].text if _is_plain_text(parts) else parts
    message: Message
    if kind == "ai":
        calls = _reconcile_calls(block_calls, extra, index, where)
        if layout != sorted(layout, key=lambda token: token == "call"):
            kept["layout"] = layout
        message = AIMessage(content=content, tool_calls=calls, name=name)
    elif kind == "tool":
        call_id = _lift_result_id(extra, kept, index, where)
        message = ToolMessage(content=content, tool_call_id=call_id, name=name)
    elif kind == "human":
        message = HumanMessage(content=content, name=name)
    else:
        message = SystemMessage(content=content, name=name)
    if extra:
        kept["additional_kwargs"] = extra
    return message.model_copy(update={"metadata": {NAME: kept}}) if kept else message


def _is_plain_text(parts: list[Any]) -> bool:
    return len(parts) == 1 and parts[0].type == "text" and not parts[0].metadata


def _split_blocks(
    blocks: list[Any], is_ai: bool, index: int, where: str
) -> tuple[list[Any], list[ToolCall], list[str]]:
    parts: list[Any] = []
    calls: list[ToolCall] = []
    layout: list[str] = []
    for j, block in enumerate(blocks):
        path = f"{where}.blocks[{j}]"
        if type(block) is not dict or type(block.get("block_type")) is not str:
            raise fail("malformed_event", f"a block must be a dict with a 'block_type', got "
                       f"{short_repr(block)}", index, path)
        if is_ai and block["block_type"] == "tool_call":
            calls.append(_block_call(block, index, path))
            layout.append("call")
        else:
            parts.append(block_to_part(block, index, path))
            layout.append("part")
    return parts, calls, layout


def _block_call(block: dict[str, Any], index: int, path: str) -> ToolCall:
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
    """One ``additional_kwargs["tool_calls"]`` entry (OpenAI shape, dict or SDK object)."""
    if type(entry) is not dict and hasattr(entry, "model_dump"):
        entry = entry.model_dump(mode="json")
    function = entry.get("function") if type(entry) is dict else None
    if type(function) is not dict or type(function.get("name")) is not str:
        raise fail(
            "malformed_event",
            f"expected a tool call like {{'id': ..., 'type': 'function', 'function': "
            f"{{'name': ..., 'arguments': '<json>'}}}}, got {short_repr(entry)}",
            index,
            path,
        )
    json_checked(entry, index, path)
    call_id = entry.get("id")
    if call_id is not None and type(call_id) is not str:
        raise fail("malformed_event", f"'id' must be a string, got {short_repr(call_id)}",
                   index, f"{path}.id")
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


def _reconcile_calls(
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


def _lift_result_id(extra: dict[str, Any], kept: dict[str, Any], index: int, where: str) -> Any:
    found = {key: extra[key] for key in ("tool_call_id", "call_id") if key in extra}
    for key, value in found.items():
        if type(value) is not str:
            raise fail("malformed_event", f"{key!r} must be a string, got {short_repr(value)}",
                       index, f"{where}.additional_kwargs.{key}")
    if len(set(found.values())) > 1:
        raise fail("conflicting_fields", f"'tool_call_id' {found['tool_call_id']!r} and "
                   f"'call_id' {found['call_id']!r} name different calls", index,
                   f"{where}.additional_kwargs.call_id")
    if "tool_call_id" in found:
        return extra.pop("tool_call_id")
    if "call_id" in found:
        kept["tool_call_id_key"] = "call_id"
        return extra.pop("call_id")
    return None


# --- the way back -------------------------------------------------------------------------


def _not_representable(detail: str, where: str) -> TraceError:
    return TraceError("not_representable", detail, path=where, source=NAME)


def dump_from_message(message: Message, k: int, accept_loss: frozenset[str]) -> dict[str, Any]:
    """The ChatMessage dict for one typed message (read from its own namespace only)."""
    where = f"messages[{k}]"
    kept: dict[str, Any] = message.metadata.get(NAME, {})
    if message.id is not None and "id" not in accept_loss:
        raise _not_representable(f"a ChatMessage has no message id (got {message.id!r}); "
                                 f"accept_loss={{'id'}} drops it", f"{where}.id")
    role = kept.get("role")
    if ROLE_KIND.get(role) != message.type:  # type: ignore[arg-type]
        role = DEFAULT_ROLE[message.type]
    extra: dict[str, Any] = copy.deepcopy(kept.get("additional_kwargs", {}))
    if message.name is not None:
        extra["name"] = message.name
    content = message.content
    parts = [{"block_type": "text", "text": content}] if isinstance(content, str) else [
        part_to_block(part, f"{where}.content[{j}]") for j, part in enumerate(content)
    ]
    blocks = parts
    if isinstance(message, AIMessage):
        blocks = _blocks_with_calls(message, parts, kept, extra)
    elif isinstance(message, ToolMessage):
        if message.is_error and "is_error" not in accept_loss:
            raise _not_representable("a ChatMessage cannot say a tool failed (is_error=True); "
                                     "accept_loss={'is_error'} drops the flag",
                                     f"{where}.is_error")
        if message.tool_call_id is not None:
            extra[kept.get("tool_call_id_key", "tool_call_id")] = message.tool_call_id
    return {"role": role, "additional_kwargs": extra, "blocks": blocks}


def _blocks_with_calls(
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
