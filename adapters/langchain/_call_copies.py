"""The provider's own copies of an AI message's calls, brought in line with the typed calls
on the way back (used by ``_write``).

The reader keeps three such copies with the message, verbatim: the raw
``additional_kwargs["tool_calls"]`` (``{"id", "type", "function": {"name", "arguments"}}``),
an aggregated ``AIMessageChunk``'s ``tool_call_chunks`` (from which LangChain rebuilds the
message's calls) and a legacy ``additional_kwargs["function_call"]`` (a call of its own when
the two lists are empty, else a copy of their last call, or of calls summed from a stream).
Typed calls are authoritative: a copy that still names its call is written as it was kept;
one that no longer does (the call was renamed, its arguments redacted, its id changed after
reading) is rewritten from the call, in the provider's spelling (arguments as ``json.dumps``
text, unparsed ones verbatim), or refused where LangChain cannot hold the call that way.
"Names its call" is asked of the reader's own functions, so what is written reads back as the
typed calls.

A copy that a call is marked as having stale (``metadata.langchain.stale``: LangChain edited
the call in ``tool_calls`` and left the copy behind) is written as it was kept, and so is a
kept raw call whose id names no call (a call LangChain took out of ``tool_calls``): raw calls
are matched to calls by id where the ids allow it, as the reader matches them.

A copy that names more or fewer calls than the message now has, and cannot be matched by id,
is refused: which kept raw call belongs to which typed call is then a guess.
"""

from __future__ import annotations

import json
from typing import Any

from tracebridge._json import same_json
from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import ToolCall

from ._call_lists import CallLists
from ._calls import (
    STALE_COPIES,
    PartialParser,
    chunk_args,
    copies_calls,
    function_call_spec,
    listed_spec,
    parse_arguments,
    raw_disagreement,
    raw_matches,
    source_name,
    stale_copies,
)

__all__ = ["bring_copies_in_line"]


def _not_representable(detail: str, path: str) -> TraceError:
    return TraceError("not_representable", detail, path=path)


def bring_copies_in_line(
    fields: dict[str, Any],
    lists: CallLists,
    calls: list[ToolCall],
    parse_partial: PartialParser | None,
    at: str,
) -> None:
    """Rewrite, in ``fields`` (a copy of what was kept), each kept copy of a call that no
    longer names its typed call; ``parse_partial`` is given for an ``AIMessageChunk``, whose
    calls LangChain rebuilds from its ``tool_call_chunks``."""
    kwargs = fields.get("additional_kwargs")
    if type(kwargs) is not dict:
        kwargs = {}  # LangChain refuses another value: the constructor says why
    raw = kwargs.get("tool_calls")
    if type(raw) is list:
        _raw_in_line(raw, lists, calls, at)
    else:
        _refuse_stale_without(_RAW_COPY, calls, at)
    _function_call_in_line(kwargs, lists, calls, at)
    chunks = fields.get("tool_call_chunks")
    if parse_partial is None:
        return
    if type(chunks) is list and chunks:
        _chunks_in_line(chunks, lists, parse_partial, at)
    elif not chunks and lists.kinds:
        # Given none, LangChain makes an AIMessageChunk's tool_call_chunks from its calls
        # (json.dumps of the args, an invalid call's text as it is): the message would read
        # back with chunks it does not keep, or (text its partial parser reads as an object)
        # as an un-summed stream piece.
        raise _not_representable(
            "this message is kept as an AIMessageChunk (metadata.langchain.class) that keeps "
            "no tool_call_chunks (metadata.langchain.tool_call_chunks), and it has tool calls: "
            "LangChain makes an AIMessageChunk's tool_call_chunks from its calls when it is "
            "given none, so it would read back with chunks it does not keep (keep the chunks "
            "that rebuild its calls, or write it as an AIMessage: remove "
            "metadata.langchain.class)",
            f"{at}.tool_calls",
        )


def _listed(lists: CallLists) -> list[tuple[bool, dict[str, Any], int]]:
    """The calls of the two lists in typed order: invalid or not, the entry, typed position."""
    seen = {False: 0, True: 0}
    out = []
    for invalid, k in zip(lists.kinds, lists.positions, strict=True):
        entry = (lists.invalid_tool_calls if invalid else lists.tool_calls)[seen[invalid]]
        seen[invalid] += 1
        out.append((invalid, entry, k))
    return out


def _count_refusal(copy: str, kept: int, now: int, at: str) -> TraceError:
    return _not_representable(
        f"metadata.langchain.{copy} keeps the provider's {kept} call(s) of this message as "
        f"it was read, and it now has {now} call(s) in tool_calls and invalid_tool_calls; "
        "which kept call goes with which is not known (remove that copy from the message's "
        "metadata to write the calls without it)",
        f"{at}.tool_calls",
    )


_RAW_COPY, _FUNCTION_CALL_COPY = STALE_COPIES[0], STALE_COPIES[2]


def _stale_at(copy: str, calls: list[ToolCall], positions: list[int]) -> list[int]:
    """The typed positions, among ``positions``, of calls marked as having ``copy`` stale."""
    return [k for k in positions if copy in stale_copies(calls[k])]


def _refuse_stale_without(copy: str, calls: list[ToolCall], at: str) -> None:
    """Refuse a call marked as having a stale ``copy`` that the message does not keep."""
    marked = _stale_at(copy, calls, list(range(len(calls))))
    if marked:
        raise _stale_refusal(
            copy, f"the message keeps no {copy} (metadata.langchain.{copy})", marked[0], at
        )


def _stale_refusal(copy: str, why: str, k: int, at: str) -> TraceError:
    return _not_representable(
        f"this call is marked as having a stale copy in {copy} (metadata.langchain.stale), "
        f"but {why}: it would read back without the mark (take {copy!r} out of the mark)",
        f"{at}.tool_calls[{k}].metadata.langchain.stale",
    )


# --- additional_kwargs["tool_calls"] -------------------------------------------------------


def _raw_in_line(raw: list[Any], lists: CallLists, calls: list[ToolCall], at: str) -> None:
    """Each raw call must name its call of the two lists (what the reader cross-checks):
    found by id where the ids allow it (``raw_matches``), else the call at its place. One that
    does not is rewritten from that call, unless the call is marked as having it stale; one
    whose id names no call is written as kept; one that is no function call is refused, as
    the reader refuses it."""
    _check_functions(raw, at)
    marked = _stale_at(_RAW_COPY, calls, list(range(len(calls))))
    for k in marked:
        if k not in lists.positions:
            why = "it is no call of tool_calls or invalid_tool_calls, which the raw calls copy"
            raise _stale_refusal(_RAW_COPY, why, k, at)
    if not marked and _names_in_order(raw, lists, at):
        return  # the usual case (every unedited message): nothing built
    listed = _listed(lists)
    specs = [
        listed_spec(entry, True, f"{at}.tool_calls[{k}]") if invalid else entry
        for invalid, entry, k in listed
    ]
    matched = raw_matches(raw, specs)
    if matched is None:
        if marked:
            why = "its raw call cannot be found by id (the call has another id than it had)"
            raise _stale_refusal(_RAW_COPY, why, marked[0], at)
        _raw_in_order(raw, lists, at)
        return
    for (invalid, entry, k), spec, j in zip(listed, specs, matched, strict=True):
        disagreement = raw_disagreement(raw[j], spec)
        if _RAW_COPY in stale_copies(calls[k]):
            if disagreement is None:
                why = f"its raw call additional_kwargs.tool_calls[{j}] names it as it is now"
                raise _stale_refusal(_RAW_COPY, why, k, at)
        elif disagreement is not None:
            raw[j] = _raw_call_for(raw[j], entry, spec, invalid, j, k, at)


def _check_functions(raw: list[Any], at: str) -> None:
    """Refuse a kept raw call that is no function call, as the reader refuses it."""
    for j, kept in enumerate(raw):
        if type(kept) is not dict or type(kept.get("function")) is not dict:
            raise _not_representable(
                f"metadata.langchain.additional_kwargs.tool_calls[{j}] keeps "
                f"{short_repr(kept)}, which has no 'function' object: LangChain's parsers "
                "leave it out of tool_calls and invalid_tool_calls, so it would read back as a "
                "call the lists do not have (write the call as a typed ToolCall instead)",
                f"{at}.metadata",
            )


def _names_in_order(raw: list[Any], lists: CallLists, at: str) -> bool:
    """Whether each raw call names the call of the two lists at its place, one for each."""
    if len(raw) != len(lists.kinds):
        return False
    valid, invalid = iter(lists.tool_calls), iter(lists.invalid_tool_calls)
    for kept, is_invalid, k in zip(raw, lists.kinds, lists.positions, strict=True):
        entry = next(invalid) if is_invalid else next(valid)
        spec = listed_spec(entry, True, f"{at}.tool_calls[{k}]") if is_invalid else entry
        if raw_disagreement(kept, spec) is not None:
            return False
    return True


def _raw_in_order(raw: list[Any], lists: CallLists, at: str) -> None:
    """Raw calls that cannot be matched by id: each, in order, names the call of the two
    lists at its place; one that does not is rewritten from that call."""
    kinds, valid, invalid = lists.kinds, iter(lists.tool_calls), iter(lists.invalid_tool_calls)
    functions = 0
    for j, kept in enumerate(raw):
        p = functions
        functions += 1
        if p >= len(kinds):
            continue  # more raw calls than calls: refused below
        is_invalid = kinds[p]
        entry = next(invalid) if is_invalid else next(valid)
        spec = (
            listed_spec(entry, True, f"{at}.tool_calls[{lists.positions[p]}]")
            if is_invalid
            else entry
        )
        if raw_disagreement(kept, spec) is not None:
            raw[j] = _raw_call_for(kept, entry, spec, is_invalid, j, lists.positions[p], at)
    if functions != len(kinds):
        raise _count_refusal("additional_kwargs.tool_calls", functions, len(kinds), at)


def _raw_call_for(
    kept: dict[str, Any],
    entry: dict[str, Any],
    spec: dict[str, Any],
    is_invalid: bool,
    j: int,
    k: int,
    at: str,
) -> dict[str, Any]:
    """The raw call ``kept`` with what no longer names its call rewritten from ``entry``, the
    call's entry in LangChain's lists (``spec``: what the reader makes of it)."""
    function = {**kept["function"]}
    fixed = {**kept, "function": function}
    if kept.get("id") != spec["id"]:
        fixed["id"] = spec["id"]
    if function.get("name") != entry["name"]:
        function["name"] = entry["name"]
    if is_invalid:
        function["arguments"] = entry["args"]  # the text that did not parse, verbatim
    elif not same_json(parse_arguments(function.get("arguments")), entry["args"]):
        function["arguments"] = json.dumps(entry["args"])  # as a provider sends arguments
    if raw_disagreement(fixed, spec) is not None:
        raise _not_representable(
            f"the provider's raw call additional_kwargs.tool_calls[{j}] cannot be made to "
            f"name tool call {entry['name']!r} ({short_repr(entry)})",
            f"{at}.tool_calls[{k}]",
        )
    return fixed


# --- an aggregated AIMessageChunk's tool_call_chunks ---------------------------------------


def _rebuilt(chunk: dict[str, Any], parse_partial: PartialParser) -> tuple[bool, dict[str, Any]]:
    """Invalid or not, and the entry LangChain's ``AIMessageChunk`` makes of one chunk."""
    args = chunk_args(chunk, parse_partial)
    if args is None:
        return True, {
            "name": chunk.get("name"),
            "args": chunk.get("args"),
            "id": chunk.get("id"),
            "error": None,
            "type": "invalid_tool_call",
        }
    return False, {
        "name": chunk.get("name") or "",
        "args": args,
        "id": chunk.get("id"),
        "type": "tool_call",
    }


def _chunks_in_line(
    chunks: list[Any], lists: CallLists, parse_partial: PartialParser, at: str
) -> None:
    """LangChain rebuilds an ``AIMessageChunk``'s two lists from its chunks (ignoring the
    lists it is given): each chunk, in order, must rebuild the call at its place exactly."""
    listed = _listed(lists)
    if len(chunks) != len(listed):
        raise _count_refusal("tool_call_chunks", len(chunks), len(listed), at)
    for p, (invalid, entry, k) in enumerate(listed):
        kept = chunks[p]
        if type(kept) is dict and same_json(_rebuilt(kept, parse_partial), (invalid, entry)):
            continue  # the usual case: the chunk rebuilds its call, written as it was kept
        fixed = {**kept} if type(kept) is dict else {"index": p, "type": "tool_call_chunk"}
        if (fixed.get("name") or "") != entry["name"] or invalid:
            fixed["name"] = entry["name"]
        if invalid:
            fixed["args"] = entry["args"]
        elif not same_json(chunk_args(fixed, parse_partial), entry["args"]):
            fixed["args"] = json.dumps(entry["args"])
        if fixed.get("id") != entry["id"]:
            fixed["id"] = entry["id"]
        if not same_json(_rebuilt(fixed, parse_partial), (invalid, entry)):
            raise _chunk_refusal(fixed, invalid, entry, parse_partial, f"{at}.tool_calls[{k}]")
        chunks[p] = fixed


def _chunk_refusal(
    chunk: dict[str, Any],
    invalid: bool,
    entry: dict[str, Any],
    parse_partial: PartialParser,
    where: str,
) -> TraceError:
    base = (
        "LangChain rebuilds an aggregated AIMessageChunk's calls from its tool_call_chunks "
        "(metadata.langchain.tool_call_chunks)"
    )
    args = chunk_args(chunk, parse_partial)
    if invalid and args is not None:
        reading = (
            "a chunk without argument text as a call without arguments"
            if not entry["args"]
            else f"that text with its partial JSON parser as the arguments {short_repr(args)}"
        )
        return _not_representable(
            f"tool call {entry['name']!r} has arguments that did not parse "
            f"(invalid_tool_calls args {short_repr(entry['args'])}), but {base}, and it reads "
            + reading,
            f"{where}.invalid_args",
        )
    if invalid:
        extra = {k: v for k, v in entry.items() if k not in ("name", "args", "id", "type")}
        return _not_representable(
            f"tool call {entry['name']!r} keeps {short_repr(extra)} from an invalid_tool_calls "
            f"entry (metadata.langchain.invalid_tool_call), but {base}, with error None",
            f"{where}.metadata",
        )
    return _not_representable(
        f"no tool_call_chunk rebuilds tool call {entry['name']!r} ({short_repr(entry)}): {base}",
        where,
    )


# --- the legacy additional_kwargs["function_call"] -----------------------------------------


def _function_call_in_line(
    kwargs: dict[str, Any], lists: CallLists, calls: list[ToolCall], at: str
) -> None:
    """The one call marked as from ``function_call`` and the kept ``function_call`` go
    together; the kept one is rewritten from the call when it no longer reads back as it.
    Beside calls of the two lists it is a copy (``_copy_in_line``)."""
    marked = lists.from_function_call
    kept = kwargs.get("function_call")
    if lists.kinds:
        if marked:
            raise _not_representable(
                "this call is marked as from additional_kwargs.function_call "
                "(metadata.langchain.from), and the message has calls in tool_calls or "
                "invalid_tool_calls: beside them a function_call is read as a copy of one of "
                "them, so this call would read back as none (remove the mark to write it to "
                "tool_calls)",
                f"{at}.tool_calls[{marked[0]}]",
            )
        if kept is not None:
            _copy_in_line(kwargs, kept, lists, calls, at)
        else:
            _refuse_stale_without(_FUNCTION_CALL_COPY, calls, at)
        return
    _refuse_stale_without(_FUNCTION_CALL_COPY, calls, at)  # no calls for it to copy
    if not marked:
        if kept is not None:
            raise _not_representable(
                "metadata.langchain.additional_kwargs.function_call keeps a legacy call, and "
                "no call of this message is marked as from it (metadata.langchain.from): it "
                "would read back as one more call",
                f"{at}.tool_calls",
            )
        return
    if len(marked) > 1:
        raise _not_representable(
            "additional_kwargs holds one legacy function_call, and this call is a second one "
            "marked as from it (metadata.langchain.from)",
            f"{at}.tool_calls[{marked[1]}]",
        )
    if kept is None:
        raise _not_representable(
            "a call marked as from additional_kwargs.function_call, but the message keeps no "
            "additional_kwargs.function_call",
            f"{at}.tool_calls",
        )
    k = marked[0]
    call, where = calls[k], f"{at}.tool_calls[{k}]"
    if type(kept) is not dict:
        # the reader would refuse it as malformed: the call cannot be written there
        raise _not_representable(
            f"the call is marked as from additional_kwargs.function_call, which is kept as "
            f"{short_repr(kept)}, no function_call dict",
            f"{at}.metadata.langchain.additional_kwargs.function_call",
        )
    if call.id is not None:
        raise _not_representable(
            f"a legacy function_call (additional_kwargs.function_call) has no id; this call has "
            f"id {call.id!r}",
            f"{where}.id",
        )
    if call.kind != "function":
        raise _not_representable(
            "a legacy function_call (additional_kwargs.function_call) is a function call; "
            f"this call is {call.kind}",
            f"{where}.kind",
        )
    if _reads_back(kept, call):
        return
    fixed = {**kept, "name": call.name}
    if call.invalid_args is not None:
        fixed["arguments"] = call.invalid_args
    elif not same_json(parse_arguments(kept.get("arguments")), call.args):
        fixed["arguments"] = json.dumps(call.args)
    if not _reads_back(fixed, call):
        raise _not_representable(
            f"tool call {call.name!r} has arguments that did not parse "
            f"(invalid_args={call.invalid_args!r}), but a function_call's arguments with that "
            f"text read back as {short_repr(parse_arguments(call.invalid_args))}",
            f"{where}.invalid_args",
        )
    kwargs["function_call"] = fixed


def _copy_in_line(
    kwargs: dict[str, Any], kept: Any, lists: CallLists, calls: list[ToolCall], at: str
) -> None:
    """A kept ``function_call`` beside the two lists must copy their calls, as the reader
    checks; one that no longer does (its call was edited) is rewritten from the last call,
    which is where Gemini and GigaChat copy a reply's calls from, unless that call is marked
    as having it stale (LangChain edited the call and left the copy): then it is written as
    kept, and must still name the last call, as the reader checks."""
    listed = _listed(lists)
    specs = [listed_spec(entry, invalid, f"{at}.tool_calls[{k}]") for invalid, entry, k in listed]
    invalid, entry, k = listed[-1]
    marked = _stale_at(_FUNCTION_CALL_COPY, calls, list(range(len(calls))))
    if marked and marked != [k]:
        why = "only the last call of tool_calls has its copy there"
        raise _stale_refusal(_FUNCTION_CALL_COPY, why, marked[0], at)
    copies = _copies(kept, specs)
    if marked:
        if copies:
            why = "the function_call kept with the message copies the calls as they are now"
            raise _stale_refusal(_FUNCTION_CALL_COPY, why, k, at)
        if not _names_last_call(kept, specs[-1]):
            why = "the function_call kept with the message no longer names the call"
            raise _stale_refusal(_FUNCTION_CALL_COPY, why, k, at)
        return
    if copies:
        return
    fixed = {**kept} if type(kept) is dict else {}
    fixed["name"] = entry["name"]
    fixed["arguments"] = entry["args"] if invalid else json.dumps(entry["args"])
    if not _copies(fixed, specs):
        raise _not_representable(
            "the legacy function_call kept beside the calls "
            "(metadata.langchain.additional_kwargs.function_call) copies the last call, and "
            f"it cannot be made to name tool call {short_repr(entry['name'])} "
            f"({short_repr(entry)}): it needs a name and arguments text",
            f"{at}.tool_calls[{k}]",
        )
    kwargs["function_call"] = fixed


def _copies(function_call: Any, specs: list[dict[str, Any]]) -> bool:
    return (
        type(function_call) is dict
        and type(function_call.get("name")) is str
        and type(function_call.get("arguments")) is str
        and copies_calls(function_call, specs)
    )


def _names_last_call(function_call: Any, spec: dict[str, Any]) -> bool:
    """Whether the reader takes ``function_call`` for a stale copy of the last call
    (``spec``, a parsed call): a name and an arguments string, and the call's name."""
    return (
        "invalid_args" not in spec
        and type(function_call) is dict
        and type(function_call.get("arguments")) is str
        and function_call.get("name") == source_name(spec)
    )


def _reads_back(function_call: dict[str, Any], call: ToolCall) -> bool:
    """Whether the reader makes ``call`` (name, arguments) of ``function_call``."""
    name, arguments = function_call.get("name"), function_call.get("arguments")
    if type(name) is not str or type(arguments) is not str:
        return False
    spec = function_call_spec(function_call, "")
    return (
        spec["name"] == call.name
        and spec.get("invalid_args") == call.invalid_args
        and same_json(spec.get("args", {}), call.args)
    )
