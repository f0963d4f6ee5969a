"""LangChain tool calls -> tracebridge ``ToolCall``s (used by the ``langchain`` adapter).

LangChain keeps an ``AIMessage``'s calls in two lists: ``tool_calls`` (parsed, authoritative)
and ``invalid_tool_calls`` (arguments that did not parse). tracebridge keeps one list in the
order the model produced the calls. That order is read from the provider's raw form when
the message has one (``additional_kwargs["tool_calls"]``, or an aggregated chunk's
``tool_call_chunks``), classifying each raw entry the way LangChain itself does; otherwise
valid calls come first. Each typed call knows which list it came from (an invalid call has
``invalid_args``, or a marker when even that is missing), so both lists are rebuilt exactly.

Empty argument text (``""``, what several OpenAI-compatible servers send for a tool without
parameters) is ``args={}``, as langchain-core's ``parse_tool_call`` reads it; where LangChain
filed such a call as invalid (its fallback ``default_tool_parser`` does), the call is still
``args={}`` and remembers the list it came from.

Two other places name the same calls and are cross-checked, never trusted over
``tool_calls``: the raw ``additional_kwargs["tool_calls"]`` (kept verbatim with the message;
the way back rewrites an entry whose call was edited, asking ``raw_disagreement`` as the
cross-check does) and call blocks in the content (``_call_blocks``). A legacy
``additional_kwargs["function_call"]`` becomes one more call at the end when the two lists
are empty (OpenAI's functions API); beside parsed calls it is a copy of one of them (Gemini
and GigaChat write the last call there too; a summed stream, the calls of its chunks end to
end), kept verbatim and cross-checked like the raw calls.

LangChain's own edits of a reply's calls leave those copies behind: ``filter_messages(
exclude_tool_calls=...)`` takes calls out of ``tool_calls`` only, and a human-in-the-loop
edit (LangGraph's ``update_state``, ``HumanInTheLoopMiddleware``) changes a call's name or
args in ``tool_calls`` only. LangChain matches a copy to its call by id and reads the call
from ``tool_calls``; so does the reader. A raw call whose id names a call of the lists but
says another name or other arguments, and a raw call whose id names none of them (a call
taken out), are *stale*: the call is read from the lists, the copy is kept as it is, and the
call is marked (``metadata.langchain.stale`` lists its stale copies: ``STALE_COPIES``) so that
the way back writes the copy as kept instead of bringing it in line. The id-less
``function_call`` copy is stale when it still names the last call (the one Gemini copies),
a parsed one.
Copies that cannot be matched stay ``conflicting_fields``: raw calls without string ids, a
call of the lists that no raw call names, a ``function_call`` naming another call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from tracebridge._json import check_json, same_json
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import ToolCall

from ._call_blocks import BLOCK_COPY, STALE_KEY, link_content_blocks, parse_arguments
from ._classes import NAME

__all__ = [
    "STALE_COPIES",
    "STALE_KEY",
    "calls_of",
    "chunk_args",
    "copies_calls",
    "function_call_spec",
    "interleave",
    "listed_spec",
    "parse_arguments",
    "raw_disagreement",
    "raw_matches",
    "read_invalid_args",
    "source_kinds",
    "source_name",
    "stale_copies",
]

_INVALID_DEFAULT = {"type": "invalid_tool_call", "error": None}
_VALID_KEYS = frozenset({"name", "args", "id", "type"})
_REQUIRED_KEYS = frozenset({"name", "args", "id"})

PartialParser = Callable[[str], Any]

RAW_COPY = "additional_kwargs.tool_calls"
FUNCTION_CALL_COPY = "additional_kwargs.function_call"
STALE_COPIES = (RAW_COPY, BLOCK_COPY, FUNCTION_CALL_COPY)
"""The copies a call's stale mark may name, in the order the reader finds them: its raw
call, its content block, the legacy ``function_call``."""


def mark_stale(spec: dict[str, Any], copy: str) -> None:
    """Mark the call ``spec`` as having a stale ``copy`` (one of ``STALE_COPIES``)."""
    kept = spec.setdefault("metadata", {}).setdefault(NAME, {})
    kept.setdefault(STALE_KEY, []).append(copy)


def stale_copies(call: ToolCall) -> list[Any]:
    """The copies a typed call is marked as having stale (``[]`` when it has no mark)."""
    marks = call.metadata.get(NAME, {}).get(STALE_KEY, [])
    return marks if type(marks) is list else []


def chunk_args(chunk: dict[str, Any], parse_partial: PartialParser) -> dict[str, Any] | None:
    """The args LangChain gives the call it rebuilds from one ``tool_call_chunk``
    (``AIMessageChunk.init_tool_calls``), or None when it files the chunk as an invalid call."""
    text = chunk.get("args")
    if not text:
        return {}
    try:
        args = parse_partial(text)
    except (ValueError, RecursionError):  # LangChain catches any exception here
        return None
    return args if type(args) is dict else None


def _chunk_is_invalid(chunk: dict[str, Any], parse_partial: PartialParser) -> bool:
    """LangChain's own test for one ``tool_call_chunk`` (``AIMessageChunk.init_tool_calls``)."""
    return chunk_args(chunk, parse_partial) is None


def source_kinds(
    data: dict[str, Any], parse_partial: PartialParser | None, n_valid: int, n_invalid: int
) -> list[bool] | None:
    """``True`` (invalid) / ``False`` (valid) for each call, in the provider's order, if known.

    Empty argument text is valid to ``parse_tool_call`` and invalid to ``default_tool_parser``;
    whichever reading matches the message's two lists is the one LangChain used.
    """
    chunks = data.get("tool_call_chunks")
    if chunks and parse_partial is not None:
        return [_chunk_is_invalid(chunk, parse_partial) for chunk in chunks]
    raw = data.get("additional_kwargs", {}).get("tool_calls")
    if type(raw) is not list:
        return None
    arguments = [entry["function"].get("arguments") for entry in _functions(raw)]
    for empty_is_valid in (True, False):
        kinds = [
            parse_arguments(text) is None or (text == "" and not empty_is_valid)
            for text in arguments
        ]
        if (kinds.count(False), kinds.count(True)) == (n_valid, n_invalid):
            return kinds
    return None


def _functions(raw: list[Any]) -> list[dict[str, Any]]:
    return [e for e in raw if type(e) is dict and type(e.get("function")) is dict]


def interleave(kinds: list[bool] | None, n_valid: int, n_invalid: int) -> list[tuple[bool, int]]:
    """The calls as ``(is_invalid, position in its list)``, in the order ``kinds`` gives."""
    if kinds is None or (kinds.count(False), kinds.count(True)) != (n_valid, n_invalid):
        kinds = [False] * n_valid + [True] * n_invalid
    seen = {False: 0, True: 0}
    order = []
    for invalid in kinds:
        order.append((invalid, seen[invalid]))
        seen[invalid] += 1
    return order


def calls_of(
    data: dict[str, Any], at: str, parse_partial: PartialParser | None
) -> tuple[list[ToolCall], dict[int, dict[str, Any]]]:
    """The typed calls of one AI message's ``model_dump()``, and its call blocks by position.

    The second value maps content positions of call blocks to the blocks; the caller leaves
    those out of the typed content (they live on the calls).
    """
    valid = data.get("tool_calls", [])
    invalid = data.get("invalid_tool_calls", [])
    kinds = source_kinds(data, parse_partial, len(valid), len(invalid))
    specs = [
        _invalid_spec(invalid[k], f"{at}.invalid_tool_calls[{k}]")
        if is_invalid
        else _valid_spec(valid[k], f"{at}.tool_calls[{k}]")
        for is_invalid, k in interleave(kinds, len(valid), len(invalid))
    ]
    _cross_check_raw(specs, data.get("additional_kwargs", {}).get("tool_calls"), at)
    blocks = link_content_blocks(specs, data["content"], at, calls_in_content=not valid)
    function_call = data.get("additional_kwargs", {}).get("function_call")
    if function_call is not None:
        where = f"{at}.additional_kwargs.function_call"
        if valid or invalid:
            _check_function_call_copy(function_call, specs, where)
        else:
            specs.append(_function_call_spec(function_call, where))
    return [ToolCall(**spec) for spec in specs], blocks


def _valid_spec(call: dict[str, Any], at: str) -> dict[str, Any]:
    if (
        type(call) is not dict
        or not _REQUIRED_KEYS <= call.keys() <= _VALID_KEYS
        or call.get("type", "tool_call") != "tool_call"
    ):
        raise TraceError(
            "malformed_event",
            f"a tool call has name, args, id and type 'tool_call'; got {short_repr(call)}",
            path=at,
        )
    name, args, call_id = call["name"], call["args"], call["id"]
    # a message changed after LangChain validated it may hold anything here
    for key, value, wanted in (
        ("name", name, isinstance(name, str)),
        ("args", args, isinstance(args, dict)),
        ("id", call_id, call_id is None or isinstance(call_id, str)),
    ):
        if not wanted:
            raise TraceError(
                "malformed_event",
                f"a tool call's {key} must be "
                f"{'an object' if key == 'args' else 'a string'}, got {short_repr(value)}",
                path=f"{at}.{key}",
            )
    check_json(args, f"{at}.args")
    return {"name": name, "args": args, "id": call_id}


def read_invalid_args(args: Any) -> str | None:
    """The ``invalid_args`` of a call read from an ``invalid_tool_calls`` entry whose ``args``
    are ``args``: the text, ``""`` for a value that is not text (kept in the metadata), or
    None for empty text, which is a call without arguments (``args={}``): filed as invalid by
    ``default_tool_parser``, ``parse_tool_call`` reads it as no arguments. The writer asks it
    too, so that an entry it writes reads back as the call it was written for."""
    if args == "":
        return None
    return args if type(args) is str else ""


def _invalid_spec(call: dict[str, Any], at: str) -> dict[str, Any]:
    name, args = call.get("name"), call.get("args")
    spec: dict[str, Any] = {"name": name if type(name) is str else "", "id": call.get("id")}
    rest = {k: v for k, v in call.items() if k not in ("id", "name", "args")}
    rest.update({k: v for k, v in (("name", name), ("args", args)) if type(v) is not str})
    invalid_args = read_invalid_args(args)
    if invalid_args is None:
        spec["args"] = {}
        rest["args"] = ""
    else:
        spec["invalid_args"] = invalid_args
    if rest != _INVALID_DEFAULT:
        check_json(rest, at)
        spec["metadata"] = {NAME: {"invalid_tool_call": rest}}
    return spec


def _check_function_call_shape(function_call: Any, at: str) -> None:
    if (
        type(function_call) is not dict
        or type(function_call.get("name")) is not str
        or type(function_call.get("arguments")) is not str
    ):
        raise TraceError(
            "malformed_event",
            f"a function_call needs a 'name' string and an 'arguments' string; "
            f"got {short_repr(function_call)}",
            path=at,
        )


def _function_call_spec(function_call: Any, at: str) -> dict[str, Any]:
    """The legacy OpenAI ``function_call`` as one more call (no id; pairs by position)."""
    _check_function_call_shape(function_call, at)
    arguments = function_call["arguments"]
    spec: dict[str, Any] = {
        "name": function_call["name"],
        "metadata": {NAME: {"from": "function_call"}},
    }
    parsed = parse_arguments(arguments)
    if parsed is None:
        spec["invalid_args"] = arguments
    else:
        spec["args"] = parsed
    return spec


def _check_function_call_copy(function_call: Any, specs: list[dict[str, Any]], at: str) -> None:
    """Beside parsed calls, a legacy ``function_call`` must copy them (``copies_calls``)."""
    _check_function_call_shape(function_call, at)
    if copies_calls(function_call, specs):
        return
    if "invalid_args" not in specs[-1] and function_call["name"] == source_name(specs[-1]):
        # the copy of the last call, whose args were edited in tool_calls since
        mark_stale(specs[-1], FUNCTION_CALL_COPY)
    else:
        raise _conflict(
            f"function_call {function_call['name']!r} with arguments "
            f"{short_repr(function_call['arguments'])} names none of the message's parsed "
            "calls; beside tool_calls it is a copy of one of them (the last one, as Gemini "
            "and GigaChat write it), not another call",
            at,
        )


def copies_calls(function_call: dict[str, Any], specs: list[dict[str, Any]]) -> bool:
    """Whether a legacy ``function_call`` (a name and an arguments string) copies calls of a
    message's lists (``specs``, as ``calls_of`` or ``listed_spec`` makes them): it names one
    of them, as a raw provider call does, or, summed from a stream (LangChain joins the
    strings of its chunks), the names and argument texts of some of them, in order, end to
    end."""
    name, arguments = function_call["name"], function_call["arguments"]
    parsed: list[Any] = []  # the arguments parsed once, when a call of the name asks

    def parse() -> Any:
        if not parsed:
            parsed.append(parse_arguments(arguments))
        return parsed[0]

    if any(_disagreement(name, arguments, parse, spec) is None for spec in specs):
        return True
    values = _json_values(arguments)
    return values is not None and _spells_calls(function_call["name"], values, specs)


def _json_values(text: str) -> list[Any] | None:
    """The JSON values of ``text`` written end to end (whitespace between), or None."""
    values: list[Any] = []
    end = 0
    while True:
        end = _BLANK.match(text, end).end()  # type: ignore[union-attr]
        if end == len(text):
            return values or None
        try:
            value, end = _DECODER.raw_decode(text, end)
        except (ValueError, RecursionError):
            return None
        values.append(value)


_DECODER = json.JSONDecoder(strict=False)
_BLANK = re.compile(r"[ \t\n\r]*")
"""JSON's whitespace."""


def _spells_calls(name: str, values: list[Any], specs: list[dict[str, Any]]) -> bool:
    """Whether ``name`` and ``values`` are the names and args of ``len(values)`` valid calls
    of ``specs``, in order, each used once."""
    valid = [spec for spec in specs if "invalid_args" not in spec]
    reached = {(0, 0)}  # (values matched, characters of name matched)
    for k, spec in enumerate(valid):
        own = source_name(spec)
        reached |= {
            (v + 1, c + len(own))
            for v, c in reached
            if v < len(values) and name.startswith(own, c) and same_json(values[v], spec["args"])
        }
        # a state whose values cannot all be matched by the calls left is dropped (so a copy
        # of every call keeps one state: linear)
        left = len(valid) - k - 1
        reached = {(v, c) for v, c in reached if v + left >= len(values)}
    return (len(values), len(name)) in reached


def _conflict(detail: str, path: str) -> TraceError:
    return TraceError("conflicting_fields", detail, path=path)


def _cross_check_raw(specs: list[dict[str, Any]], raw: Any, at: str) -> None:
    """``additional_kwargs["tool_calls"]`` must name the calls of the parsed lists: matched
    by id where the ids allow it (a raw call that disagrees, or names no call, is a stale
    copy), else in order, each naming the call at its place."""
    if type(raw) is not list:
        return
    for k, entry in enumerate(raw):
        if type(entry) is not dict or type(entry.get("function")) is not dict:
            raise _conflict(_unparsed_raw(entry), f"{at}.additional_kwargs.tool_calls[{k}]")
    matched = raw_matches(raw, specs)
    if matched is None:
        _cross_check_in_order(specs, raw, at)
        return
    for k, entry in enumerate(raw):
        _check_arguments_text(
            entry["function"], f"{at}.additional_kwargs.tool_calls[{k}].function.arguments"
        )
    for spec, k in zip(specs, matched, strict=True):
        if raw_disagreement(raw[k], spec) is not None:
            mark_stale(spec, RAW_COPY)


def raw_matches(raw: list[Any], specs: list[dict[str, Any]]) -> list[int] | None:
    """The position in ``raw`` (provider calls, each a dict with a ``function`` dict) of the
    raw call of each call of ``specs`` (as ``calls_of`` or ``listed_spec`` makes them), found
    by id as LangChain links copies to calls; None when the ids cannot say: a call or a raw
    call without a string id, two calls with one id, a call no raw call names, or names
    twice, or no calls at all (LangChain then sends the raw calls)."""
    positions: dict[str, int] = {}
    for j, entry in enumerate(raw):
        raw_id = entry.get("id")
        if type(raw_id) is not str:
            return None
        positions[raw_id] = -1 if raw_id in positions else j
    ids = [spec["id"] for spec in specs]
    if not ids or len(set(ids)) != len(ids):
        return None
    matched = [positions.get(call_id, -1) if type(call_id) is str else -1 for call_id in ids]
    return None if -1 in matched else matched


def _cross_check_in_order(specs: list[dict[str, Any]], raw: list[Any], at: str) -> None:
    """Raw calls that cannot be matched by id: each names the call at its place."""
    entries = list(enumerate(raw))
    if len(entries) != len(specs):
        raise _conflict(
            f"additional_kwargs.tool_calls has {len(entries)} call(s) but tool_calls and "
            f"invalid_tool_calls have {len(specs)} together",
            f"{at}.additional_kwargs.tool_calls",
        )
    for spec, (k, entry) in zip(specs, entries, strict=True):
        where = f"{at}.additional_kwargs.tool_calls[{k}]"
        function = entry["function"]
        _check_arguments_text(function, f"{where}.function.arguments")
        disagreement = raw_disagreement(entry, spec)
        if disagreement == "id":
            raise _conflict(
                f"id {entry.get('id')!r} but the parsed call has id {spec['id']!r}", f"{where}.id"
            )
        if disagreement == "function.name":
            raise _conflict(
                f"name {function.get('name')!r} but the parsed call {spec['id']!r} is named "
                f"{source_name(spec)!r}",
                f"{where}.function.name",
            )
        if disagreement == "function.arguments":
            raise _conflict(
                f"arguments {short_repr(function.get('arguments'))} disagree with the parsed call "
                f"{spec['id']!r} ({short_repr(spec.get('args', spec.get('invalid_args')))})",
                f"{where}.function.arguments",
            )


def _check_arguments_text(function: dict[str, Any], at: str) -> None:
    """A raw call's arguments are JSON text, as LangChain's parsers read them (``None`` is no
    arguments to ``parse_tool_call``, and is cross-checked as such)."""
    arguments = function.get("arguments")
    if arguments is not None and type(arguments) is not str:
        raise TraceError(
            "malformed_event",
            f"arguments must be JSON text, got {type(arguments).__name__} "
            f"{short_repr(arguments)}",
            path=at,
        )


def _unparsed_raw(entry: Any) -> str:
    """Why a raw entry without a ``function`` object names no call of the two lists."""
    kind = entry.get("type") if type(entry) is dict else None
    what = f"a {kind!r} call" if type(kind) is str else short_repr(entry)
    return (
        f"{what} without a 'function' object, which LangChain's tool-call parsers leave out "
        "of tool_calls and invalid_tool_calls: no parsed call names it (a call the "
        "conversation goes on without)"
    )


def raw_disagreement(entry: dict[str, Any], spec: dict[str, Any]) -> str | None:
    """Where one raw provider call (a dict with a ``function`` dict) disagrees with the call
    LangChain's lists give (``spec``, as ``calls_of`` builds it, or ``listed_spec``): ``"id"``,
    ``"function.name"`` or ``"function.arguments"``; None when it names that call. The reader's
    cross-check and the writer (which brings a kept raw call in line with an edited call) both
    ask it, so the two cannot disagree."""
    function = entry["function"]
    if entry.get("id") != spec["id"]:
        return "id"
    arguments = function.get("arguments")
    return _disagreement(function.get("name"), arguments, lambda: parse_arguments(arguments), spec)


def _disagreement(
    name: Any, arguments: Any, parsed: Callable[[], Any], spec: dict[str, Any]
) -> str | None:
    """``raw_disagreement`` past the id: ``"function.name"``, ``"function.arguments"`` or
    None; the arguments are parsed (``parsed``) only for a call of the name."""
    if name != (spec["name"] if "metadata" not in spec else source_name(spec)):
        return "function.name"
    if "invalid_args" in spec:
        agrees = arguments == _source_invalid_args(spec)
    else:
        agrees = same_json(parsed(), spec["args"])
    return None if agrees else "function.arguments"


def listed_spec(entry: dict[str, Any], invalid: bool, at: str) -> dict[str, Any]:
    """What ``calls_of`` makes of an entry the writer puts in ``tool_calls`` (it has the keys
    of a spec already) or, ``invalid``, in ``invalid_tool_calls``."""
    return _invalid_spec(entry, at) if invalid else entry


def function_call_spec(function_call: Any, at: str) -> dict[str, Any]:
    """The call the reader makes of a legacy ``additional_kwargs["function_call"]`` (the
    writer checks that the one it writes reads back as its typed call)."""
    return _function_call_spec(function_call, at)


def source_name(spec: dict[str, Any]) -> Any:
    """The name a call's source entry gave it (an ``invalid_tool_calls`` entry may hold
    one that is not text; the call's is then ``""``)."""
    if "metadata" not in spec:
        return spec["name"]  # the usual parsed call: nothing kept
    kept = spec["metadata"].get(NAME, {}).get("invalid_tool_call", {})
    return kept["name"] if "name" in kept else spec["name"]


def _source_invalid_args(spec: dict[str, Any]) -> Any:
    kept = spec.get("metadata", {}).get(NAME, {}).get("invalid_tool_call", {})
    return kept["args"] if "args" in kept else spec["invalid_args"]
