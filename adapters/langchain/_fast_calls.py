"""The fast path's reading of the usual AIMessage with calls, as a ChatOpenAI agent leaves
it: ``additional_kwargs`` holding only the provider's raw calls, one per parsed call, each
``{"type", "id", "function": {"name", "arguments"}}`` naming the parsed call at its place.

Each raw call is checked against its parsed call (the id, the name, the arguments text read
as LangChain reads it and equal as JSON, types included) and copied; the arguments are
checked and copied in the same look. Any other shape or disagreement gives None, and the
general reader reads the message (and raises its own precise error).
"""

from __future__ import annotations

from typing import Any

from tracebridge import _build
from tracebridge._json import _INT_BOUND, _INT_FLOOR, NotPlainJson, json_copy_checked, same_json
from tracebridge.messages import AIMessage, ToolCall

from ._call_blocks import parse_arguments

__all__ = ["raw_calls_ai"]


def raw_calls_ai(
    fields: dict[str, Any],
    raw: list[Any],
    content: str,
    name: str | None,
    message_id: str | None,
    metadata_name: str,
) -> AIMessage | None:
    """The typed message of an ``AIMessage`` (its ``__dict__``: ``fields``) whose
    ``additional_kwargs`` is ``{"tool_calls": raw}`` alone, the rest checked by the caller;
    None when the general reader must read it."""
    calls = fields["tool_calls"]
    invalid = fields["invalid_tool_calls"]
    if type(calls) is not list or len(calls) != len(raw) or invalid or type(invalid) is not list:
        return None
    typed_calls: list[ToolCall] = []
    copies: list[dict[str, Any]] = []
    try:
        for call, entry in zip(calls, raw, strict=True):  # lengths equal: checked
            # A LangChain ToolCall has these four keys, a raw call three and its function
            # two: with the sizes checked, the lookups below find each key or raise KeyError.
            if (
                type(call) is not dict
                or type(entry) is not dict
                or len(call) != 4
                or len(entry) != 3
            ):
                return None
            function = entry["function"]
            if type(function) is not dict or len(function) != 2:
                return None
            call_name = call["name"]
            call_id = call["id"]
            args = call["args"]
            raw_id = entry["id"]
            raw_name = function["name"]
            text = function["arguments"]
            if (
                call["type"] != "tool_call"  # LangChain's constructor always sets it
                or type(call_name) is not str
                or type(args) is not dict
                or (call_id is not None and type(call_id) is not str)
                or type(raw_id) is not type(call_id)
                or raw_id != call_id
                or type(raw_name) is not str
                or raw_name != call_name
                or type(entry["type"]) is not str
                or type(text) is not str
            ):
                return None
            parsed = parse_arguments(text)
            if type(parsed) is not dict or parsed != args:
                return None
            copied = _args_copy(args, parsed)
            if copied is None:
                return None
            # the raw call's keys and values are strings (checked above): two dict copies
            # are what json_copy_checked makes of it
            copies.append({**entry, "function": {**function}})
            typed_calls.append(_build.call(call_name, copied, call_id))
    except KeyError:  # a key of those shapes missing: not the usual raw call
        return None
    metadata = {metadata_name: {"additional_kwargs": {"tool_calls": copies}}}
    return _build.ai(content, typed_calls, name, message_id, metadata)


def _args_copy(args: dict[str, Any], parsed: dict[str, Any]) -> dict[str, Any] | None:
    """``json_copy_checked(args)`` when ``same_json(parsed, args)``, for two dicts already
    equal in Python (so with the same keys); None when a value in ``args`` has another class
    than the value ``parsed`` holds under its key (``1`` for ``1.0`` or ``true``), or
    ``args`` is not plain JSON.

    Flat arguments (the usual ones) take one look at each value instead of one walk to
    compare and another to copy; the copy holds ``args``'s own values, as
    ``json_copy_checked`` does. Nested ones are compared and copied whole, as before (the
    copy counts depth from ``args``)."""
    copied: dict[str, Any] = {}
    try:
        for key, value in args.items():
            kind = type(value)
            if kind is dict or kind is list:
                break
            if kind is not type(parsed[key]) or type(key) is not str:
                return None
            if (
                kind is str
                or kind is bool
                or value is None
                or (kind is int and _INT_FLOOR < value < _INT_BOUND)  # json_copy_checked's bounds
            ):
                copied[key] = value
            else:  # a float, or an int too long (the other classes parsed JSON holds)
                copied[key] = json_copy_checked(value)
        else:
            return copied
        return json_copy_checked(args) if same_json(parsed, args) else None
    except NotPlainJson:
        return None
