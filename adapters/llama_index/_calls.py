"""Tool calls of an assistant-side ChatMessage: ``ToolCallBlock``s,
``additional_kwargs["tool_calls"]`` entries (reconciled with the blocks by id) and the legacy
``additional_kwargs["function_call"]``, and the way back.

An entry is OpenAI-shaped (``{"id", "type": "function", "function": {"name", "arguments"}}``,
or a custom call ``{"id", "type": "custom", "custom": {"name", "input"}}``; a dict or an openai
SDK object) or a LlamaIndex ``ToolSelection`` (``{"tool_id", "tool_name", "tool_kwargs"}``,
what ``MockFunctionCallingLLM`` reads there). A ``function_call`` (``{"name", "arguments"}``,
what ``from_openai_message_dict`` keeps of OpenAI's deprecated function calling) is one call
without an id, after all others; its result is a ``function`` message paired by position.

What the ToolCall does not hold is kept on it under ``metadata["llama_index"]``:
``kwargs_text`` (a block's ``tool_kwargs`` given as JSON text, exactly), ``entry`` and
``entry_index`` (the entry minus the id, name and input, and its position), ``in_blocks:
false`` (a call with no ``ToolCallBlock``), ``function_call`` (the legacy dict minus the name),
``tool_call_id: ""`` (a block's ``""``, which LlamaIndex takes for no id: the call has none).

A custom call has no ToolCallBlock (a block cannot say "custom"): it is written as a custom
entry, and a message with one writes all its calls as entries, so that they read back in order.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Sequence
from typing import Any

from tracebridge import AIMessage, ToolCall, TraceError
from tracebridge._json import MAX_DEPTH, is_plain_json, json_copy, same_json
from tracebridge.errors import short_repr

from ._blocks import NAME, fail, json_checked, no_unknown_fields, not_representable, optional_str
from ._kept import own


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):  # 1e400: JSON's syntax, but no number a call can hold
        raise ValueError(f"{token} is out of range")
    return value


# One decoder for every call (``json.loads`` with options builds a new one each time). It
# refuses what OpenAI Chat's reader refuses: NaN and Infinity, and a number that overflows
# to an infinity (the hook is called only for a number with a fraction or an exponent).
_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite)


def parse_text(raw: str) -> dict[str, Any] | None:
    """Argument text as the reader takes it: its JSON object, or None when the text is not
    one (the call keeps it as ``invalid_args``): not JSON, another JSON value, NaN or an
    infinity (``{"a": 1e400}``, which Python's ``json`` reads as inf), or nested deeper than
    a JSON value may be (``MAX_DEPTH``). The writer asks this too, so that text it writes
    unparsed reads back unparsed."""
    try:
        parsed = _DECODER.decode(raw)
    except (ValueError, RecursionError):
        return None
    if type(parsed) is not dict:
        return None
    if len(raw) > MAX_DEPTH and raw.count("[") + raw.count("{") > MAX_DEPTH and (
        not is_plain_json(parsed)
    ):
        return None
    return parsed


def parse_args(raw: Any, index: int, path: str) -> tuple[dict[str, Any], str | None]:
    """``(args, invalid_args)`` from tool arguments given as a dict or as JSON text."""
    if type(raw) is dict:
        json_checked(raw, index, path)
        return raw, None
    if type(raw) is str:
        parsed = parse_text(raw)
        return ({}, raw) if parsed is None else (parsed, None)
    raise fail(
        "malformed_event",
        f"tool arguments must be a dict or a JSON string, got {type(raw).__name__} "
        f"{short_repr(raw)}",
        index,
        path,
    )


def block_call(block: dict[str, Any], index: int, path: str) -> ToolCall:
    """The call a ``ToolCallBlock`` dict holds; a key its class has no field for is refused
    (LlamaIndex would drop it, so it would not be written back)."""
    no_unknown_fields(block, "tool_call", index, path)
    name = block.get("tool_name")
    if type(name) is not str:
        raise fail("malformed_event", f"a tool_call block needs 'tool_name' as a string, got "
                   f"{short_repr(name)}", index, f"{path}.tool_name")
    call_id = optional_str(block, "tool_call_id", index, path)
    raw = block.get("tool_kwargs", {})
    args, invalid = parse_args(raw, index, f"{path}.tool_kwargs")
    if type(raw) is dict:
        return ToolCall(name=name, args=args, id=call_id)
    if invalid is not None:
        return ToolCall(name=name, id=call_id, invalid_args=invalid)
    return ToolCall(name=name, args=args, id=call_id, metadata={NAME: {"kwargs_text": raw}})


def _entry_call(entry: Any, k: int, index: int, path: str) -> ToolCall:
    """One ``additional_kwargs["tool_calls"]`` entry: OpenAI-shaped or a ToolSelection."""
    if type(entry) is not dict and hasattr(entry, "model_dump"):
        entry = entry.model_dump(mode="json")
    if type(entry) is dict and "function" not in entry and "tool_name" in entry:
        return _selection_call(entry, k, index, path)
    if type(entry) is dict and "function" not in entry and entry.get("type") == "custom":
        return _custom_call(entry, k, index, path)
    function = entry.get("function") if type(entry) is dict else None
    if type(function) is not dict or type(function.get("name")) is not str:
        raise fail(
            "malformed_event",
            f"expected a tool call like {{'id': ..., 'type': 'function', 'function': "
            f"{{'name': ..., 'arguments': '<json>'}}}}, a custom call {{'id': ..., 'type': "
            f"'custom', 'custom': {{'name': ..., 'input': <text>}}}} or a ToolSelection "
            f"{{'tool_id': ..., 'tool_name': ..., 'tool_kwargs': {{...}}}}, got "
            f"{short_repr(entry)}",
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


def _custom_call(entry: dict[str, Any], k: int, index: int, path: str) -> ToolCall:
    json_checked(entry, index, path)
    custom = entry.get("custom")
    if type(custom) is not dict or type(custom.get("name")) is not str:
        raise fail("malformed_event", f"a custom call is {{'id': ..., 'type': 'custom', "
                   f"'custom': {{'name': ..., 'input': <text>}}}}, got {short_repr(entry)}",
                   index, f"{path}.custom")
    text = custom.get("input")
    if type(text) is not str:
        raise fail("malformed_event", f"a custom call's input is text, got {short_repr(text)}",
                   index, f"{path}.custom.input")
    call_id = _entry_id(entry, "id", index, path)
    rest = copy.deepcopy(entry)
    if call_id is not None:
        del rest["id"]
    rest["custom"] = {key: value for key, value in custom.items() if key not in ("name", "input")}
    return ToolCall(name=custom["name"], args={"input": text}, id=call_id, kind="custom",
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
    blocks: list[dict[str, Any]], block_calls: list[ToolCall], extra: dict[str, Any],
    index: int, where: str,
) -> list[ToolCall]:
    """Block calls in block order, merged by id with ``additional_kwargs["tool_calls"]``;
    entries without a block follow, in their order; a legacy ``function_call`` comes last.

    Calls placed exactly as ``from_messages`` places calls that have no metadata (``blocks``
    are the message's ``tool_call`` blocks) keep none.
    """
    entries, legacy = extra.get("tool_calls"), extra.get("function_call")
    calls = _empty_ids_as_none(_merged_with_entries(block_calls, extra, index, where),
                               len(block_calls))
    found = _function_call(extra, index, where)
    if found is not None:
        calls.append(found)
    if not any(call.metadata for call in calls):
        return calls  # nothing kept that the check below could leave out
    plain = [call.model_copy(update={"metadata": {}}) for call in calls]
    in_blocks, written, written_legacy = place_calls(plain, where)
    if (in_blocks, written, written_legacy) == (
        blocks, entries if type(entries) is list and entries else None,
        legacy if type(legacy) is dict else None,
    ):
        return plain
    return calls


def _merged_with_entries(
    block_calls: list[ToolCall], extra: dict[str, Any], index: int, where: str
) -> list[ToolCall]:
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
        if not same_json((block.name, block.args, block.invalid_args),
                         (found.name, found.args, found.invalid_args)):
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
        # The arguments agree, so a custom entry's block holds exactly {"input": <text>}.
        calls[pos] = block.model_copy(update={"metadata": {NAME: kept}, "kind": found.kind})
    return calls + only_in_kwargs


def _empty_ids_as_none(calls: list[ToolCall], count: int) -> list[ToolCall]:
    """The calls with the first ``count`` (those of ToolCallBlocks) whose block says
    ``tool_call_id=""`` as calls without an id, each keeping the ``""`` (``tool_call_id``) to
    write it back: LlamaIndex takes ``""`` for no id (``FunctionAgent`` names a call
    ``tool_call_id or ""``, and writes its result to memory as ``{"tool_call_id": ""}``). A
    block merged by that id with an entry of ``additional_kwargs["tool_calls"]`` keeps it."""
    if not any(call.id == "" for call in calls[:count]):
        return calls
    calls = list(calls)
    for k in range(count):
        call = calls[k]
        if call.id == "" and "entry" not in call.metadata.get(NAME, {}):
            kept = {**call.metadata.get(NAME, {}), "tool_call_id": ""}
            calls[k] = call.model_copy(update={"id": None,
                                               "metadata": {**call.metadata, NAME: kept}})
    return calls


def _function_call(extra: dict[str, Any], index: int, where: str) -> ToolCall | None:
    """OpenAI's deprecated ``function_call`` as kept by ``from_openai_message_dict``."""
    value = extra.get("function_call")
    if type(value) is not dict:
        return None  # absent or null: kept verbatim with the kwargs
    path = f"{where}.additional_kwargs.function_call"
    json_checked(value, index, path)
    name = value.get("name")
    if type(name) is not str:
        raise fail("malformed_event", f"a function_call is {{'name': ..., 'arguments': "
                   f"'<json>'}}, got {short_repr(value)}", index, f"{path}.name")
    if "arguments" not in value:
        raise fail("malformed_event", "the function_call has no 'arguments'", index,
                   f"{path}.arguments")
    args, invalid = parse_args(value["arguments"], index, f"{path}.arguments")
    del extra["function_call"]
    rest = {key: item for key, item in value.items() if key != "name"}
    return ToolCall(name=name, args=args, invalid_args=invalid,
                    metadata={NAME: {"function_call": rest}})


# --- the way back -------------------------------------------------------------------------

# Where one call is written: a ToolCallBlock, an additional_kwargs entry (with its position
# in that list), the legacy function_call; the first two may both hold the same call.
_Placed = tuple[dict[str, Any] | None, tuple[int, dict[str, Any]] | None, dict[str, Any] | None]


def blocks_with_calls(
    message: AIMessage, parts: list[dict[str, Any]], written: Sequence[dict[str, Any] | None],
    kept: dict[str, Any], extra: dict[str, Any], where: str,
) -> list[dict[str, Any]]:
    """The message's blocks with its calls placed as its metadata says (or as LlamaIndex
    writes them), in an order that reads back as ``message.tool_calls``.

    ``parts``: the content's blocks; ``written``: the same with None for a part ``drop``
    leaves out, which a kept ``layout`` (checked: a list of ``"part"`` and ``"call"``) orders
    with the calls. A layout whose counts are not the message's is ``not_representable``
    (``where``: the message's path): the calls would follow the parts, and the order be lost.
    """
    in_blocks, entries, legacy = place_calls(message.tool_calls, where)
    if entries is not None:
        extra["tool_calls"] = entries
    if legacy is not None:
        extra["function_call"] = legacy
    if "layout" not in kept:
        return parts + in_blocks
    layout = kept["layout"]
    if layout.count("part") != len(written) or layout.count("call") != len(in_blocks):
        raise not_representable(
            f"metadata['{NAME}']['layout'] {short_repr(layout)} does not count the message's "
            f"blocks: {len(written)} parts to write as blocks, {len(in_blocks)} calls as "
            f"ToolCallBlocks (it has {layout.count('part')} 'part', {layout.count('call')} "
            f"'call'); the calls would follow the parts, and the kept order would be lost",
            f"{where}.metadata.{NAME}.layout",
        )
    sources = {"part": iter(written), "call": iter(in_blocks)}
    return [block for token in layout if (block := next(sources[token])) is not None]


def place_calls(
    calls: list[ToolCall], where: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None, dict[str, Any] | None]:
    """The ToolCallBlocks, the ``tool_calls`` entries (None for none) and the legacy
    ``function_call`` (or None) that hold ``calls`` (``where``: their message's path)."""
    if not calls:
        return [], None, None
    kept = [_call_kept(call, where, k) for k, call in enumerate(calls)]
    placed = [_placement(call, call_kept, k, k == len(calls) - 1)
              for k, (call, call_kept) in enumerate(zip(calls, kept, strict=True))]
    in_order = all(entry is None and legacy is None for _, entry, legacy in placed)
    if not (in_order or _reads_back_in_order(placed, calls)):  # all blocks: in order
        _refuse_empty_ids(kept, where)
        placed = [(None, (k, _entry(call, call_kept.get("entry"))), None)
                  for k, (call, call_kept) in enumerate(zip(calls, kept, strict=True))]
    in_blocks = [block for block, _, _ in placed if block is not None]
    entries = sorted((entry for _, entry, _ in placed if entry is not None), key=lambda e: e[0])
    legacy = [call for _, _, call in placed if call is not None]
    return in_blocks, [entry for _, entry in entries] or None, legacy[0] if legacy else None


def _refuse_empty_ids(kept: list[dict[str, Any]], where: str) -> None:
    """Calls written as entries alone have no block to say a kept ``""`` call id in."""
    for k, call_kept in enumerate(kept):
        if call_kept.get("tool_call_id") == "":
            raise not_representable(
                f"metadata['{NAME}']['tool_call_id'] keeps the \"\" of the call's ToolCallBlock, "
                f"but the message's calls are written as additional_kwargs entries (so that "
                f"they read back in order), which have no block: it would be lost",
                f"{where}.tool_calls[{k}].metadata.{NAME}.tool_call_id")


def _call_kept(call: ToolCall, where: str, k: int) -> dict[str, Any]:
    """The namespace of call ``k`` of the message at ``where`` (``own``: a null or other
    non-dict one is refused)."""
    return own(call.metadata, f"{where}.tool_calls[{k}]") if call.metadata else {}


def _placement(call: ToolCall, call_kept: dict[str, Any], k: int, is_last: bool) -> _Placed:
    stored = call_kept.get("entry")
    legacy = call_kept.get("function_call")
    if type(legacy) is dict and is_last and call.id is None and call.kind == "function":
        return None, None, _legacy_function_call(call, legacy)
    if type(stored) is dict:
        position = call_kept.get("entry_index")
        entry = (position if type(position) is int else k, _entry(call, stored))
        block = _call_block(call, call_kept) if call_kept.get("in_blocks", True) else None
        return block, entry, None
    if call.kind == "custom":
        return None, (k, _entry(call, None)), None
    return _call_block(call, call_kept), None, None


def _reads_back_in_order(placed: list[_Placed], calls: list[ToolCall]) -> bool:
    """Whether the reader (blocks, then entries without a block, then function_call) and the
    id matching it does give the calls back in their order."""
    in_blocks = [k for k, (block, _, _) in enumerate(placed) if block is not None]
    only_entries = sorted((entry[0], k) for k, (block, entry, _) in enumerate(placed)
                          if block is None and entry is not None)
    legacy = [k for k, (_, _, call) in enumerate(placed) if call is not None]
    order = [*in_blocks, *(k for _, k in only_entries), *legacy]
    both_without_id = any(block is not None and entry is not None and calls[k].id is None
                          for k, (block, entry, _) in enumerate(placed))
    return order == list(range(len(calls))) and not both_without_id


def _same_args(raw: Any, call: ToolCall) -> bool:
    if type(raw) is not str and type(raw) is not dict:
        return False
    try:
        return same_json(parse_args(raw, 0, ""), (call.args, call.invalid_args))
    except TraceError:  # stored arguments that are not JSON any more are simply stale
        return False


def _call_block(call: ToolCall, call_kept: dict[str, Any]) -> dict[str, Any]:
    text = call_kept.get("kwargs_text")
    if call.invalid_args is not None:
        kwargs: Any = call.invalid_args
    elif type(text) is str and _same_args(text, call):
        kwargs = text
    else:
        kwargs = json_copy(call.args)  # LlamaIndex keeps the nested values it is given
    call_id = "" if call.id is None and call_kept.get("tool_call_id") == "" else call.id
    return {"block_type": "tool_call", "tool_call_id": call_id, "tool_name": call.name,
            "tool_kwargs": kwargs}


def _arguments(call: ToolCall, stored: Any) -> Any:
    """The stored argument text when it still says the call's arguments, else fresh text."""
    if _same_args(stored, call):
        return stored
    return call.invalid_args if call.invalid_args is not None else json.dumps(call.args)


def _legacy_function_call(call: ToolCall, stored: dict[str, Any]) -> dict[str, Any]:
    return {**json_copy(stored), "name": call.name,
            "arguments": _arguments(call, stored.get("arguments"))}


def _entry(call: ToolCall, stored: dict[str, Any] | None) -> dict[str, Any]:
    entry = json_copy(stored) if type(stored) is dict else {}
    if call.kind == "custom":
        custom = entry.get("custom") if entry.get("type") == "custom" else None
        if type(custom) is not dict:
            entry, custom = {"type": "custom"}, {}
        entry["custom"] = {**custom, "name": call.name, "input": call.args["input"]}
    elif "function" not in entry and "tool_kwargs" in entry:  # a ToolSelection
        entry["tool_name"] = call.name
        if not _same_args(entry["tool_kwargs"], call):
            entry["tool_kwargs"] = (
                call.invalid_args if call.invalid_args is not None else json_copy(call.args)
            )
        if call.id is not None:
            entry["tool_id"] = call.id
        return entry
    else:
        function = entry.get("function")
        if type(function) is not dict:
            entry, function = {"type": "function"}, {}
        entry["function"] = {**function, "name": call.name,
                             "arguments": _arguments(call, function.get("arguments"))}
    if call.id is not None:
        entry["id"] = call.id
    return entry
