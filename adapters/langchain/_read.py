"""LangChain messages -> typed messages (the ``langchain`` adapter's reading side).

Each source message gives one typed message, except a human message holding Anthropic
``tool_result`` blocks, which gives its tool results and then (if anything else is left)
a human message; errors point at the source position either way.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticUndefined
from typing_extensions import assert_never

from tracebridge._changed import FELL, drifted, located, refusal, unmade
from tracebridge._gc import gc_paused
from tracebridge._json import is_plain_json
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import (
    AIMessage,
    Citation,
    Content,
    HumanMessage,
    Message,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolMessage,
)
from tracebridge.validation import validate

from ._blocks import AnyPart, part_of
from ._calls import calls_of
from ._chunks import ChunkRun, reject_continued_chunk, reject_partial_chunk
from ._classes import (
    CHAT_ROLES,
    CLASSES,
    MAPPED,
    NAME,
    Kind,
    langchain_core_messages,
    partial_parser,
    plain_class,
)
from ._fast import Reader, plans
from ._homes import (
    CITING_LISTS,
    ITEM_KEY,
    REASONING_KEY,
    audio_of,
    citations_of,
    in_reply_text,
    is_developer,
    reasoning_item_of,
    reasoning_of,
    refusal_of,
)
from ._kept_values import held_fields, kept_copy
from ._raw_reasoning import split_block_part, split_item
from ._results import has_tool_results, read_tool_results
from ._rule_paths import source_paths
from ._shapes import REASONING_ITEM
from ._tool_outputs import tool_outputs_of

__all__ = ["is_named_tuple", "is_state_snapshot", "read_trace"]

_MAPPED = MAPPED
"""``model_dump()`` keys that become typed fields (where the class declares them); every other
key is kept as metadata."""


@gc_paused
def read_trace(trace: Any, *, allow_pending: bool, drop_artifacts: bool) -> list[Message]:
    items = _items_of(trace)
    lc = langchain_core_messages()
    fast = _fast_plans(lc)
    messages: list[Message] = []
    append = messages.append
    get = fast.get
    # The leading items the fast path reads, each to one message, in a loop that does only
    # that; from the first one it does not read on, the loop below reads every item.
    for item in items:
        read = get(type(item))
        if read is None:
            break
        try:
            one = read(item)
        except KeyError:
            # a field absent from the object (made with model_construct() without it): the
            # general reader says which
            break
        if one is None:
            break
        append(one)
    origin = None
    if len(messages) < len(items):
        origin = _read_rest(items, messages, lc, fast, drop_artifacts)
    validate(
        messages,
        allow_pending=allow_pending,
        source=NAME,
        origin=origin,
        paths=source_paths(messages, origin),
    )
    return messages


def _read_rest(
    items: list[Any],
    messages: list[Message],
    lc: Any,
    fast: dict[type, Reader],
    drop_artifacts: bool,
) -> list[int] | None:
    """Read ``items`` from ``len(messages)`` on into ``messages`` (each item before gave one
    message); return where each message came from, or None when each item gave one."""
    append = messages.append
    # origin[k]: the item message k came from; made at the first item that gives other than
    # one message (until then, k itself)
    origin: list[int] | None = None
    chunk_run = ChunkRun()  # the AIMessageChunks just read, by id
    for i in range(len(messages), len(items)):
        item = items[i]
        read = fast.get(type(item))
        try:
            one = None if read is None else read(item)
        except KeyError:
            # a field absent from the object (made with model_construct() without it): the
            # general reader says which
            one = None
        if one is not None:
            append(one)
            if origin is not None:
                origin.append(i)
            continue
        typed = _read_item(item, i, lc, fast, drop_artifacts, chunk_run)
        if origin is None and len(typed) != 1:
            origin = list(range(len(messages)))
        if origin is not None:
            origin.extend([i] * len(typed))
        messages.extend(typed)
    return origin


def _read_item(
    item: Any,
    i: int,
    lc: Any,
    fast: dict[type, Reader],
    drop_artifacts: bool,
    chunk_run: ChunkRun,
) -> list[Message]:
    """The typed messages of an item the fast path did not read: a dict (loaded first, then
    offered to the fast path), or a message the general reader reads (``chunk_run``: the
    ``AIMessageChunk``s read just before)."""
    try:
        given = item
        if type(item) not in fast:
            item = _loaded(item, i, lc)
            read = fast.get(type(item))
            one = None if read is None else read(item)
            if one is not None:
                return [one]
        if drifted(item):  # a type its class does not allow: it would read as another kind
            refused = refusal(item, f"messages[{i}]", "LangChain")
            if refused is not None:
                raise refused
        try:
            typed = _typed(item, i, partial_parser(), drop_artifacts, chunk_run)
        except FELL as exc:
            # LangChain does not check a field set after the object was made: such a
            # message is refused as LangChain would refuse it when built with those values
            refused = refusal(item, f"messages[{i}]", "LangChain")
            if refused is None:
                raise  # LangChain accepts the message: the fault is ours, shown as it is
            raise refused from exc
        if item is given:
            # An object as the caller made it (a dict was just loaded, so checked) that this
            # reader took as it stands, which does not make it one LangChain makes (a status
            # of None, content that is a dict): refused as LangChain would refuse it, or
            # store it as another value.
            refused = unmade(item, f"messages[{i}]", "LangChain")
            if refused is not None:
                raise refused
        return typed
    except TraceError as error:
        raise error.relocated(index=i, source=NAME) from None


def _status(status: Any, at: str) -> str | None:
    """A tool result's status: None for a class without one (FunctionMessage)."""
    if status is not None and status != "success" and status != "error":
        raise TraceError(
            "malformed_event",
            f"a ToolMessage's status is 'success' or 'error', got {short_repr(status)}",
            path=f"{at}.status",
        )
    return None if status is None else str(status)


@functools.cache
def _fast_plans(lc: Any) -> dict[type, Reader]:
    return plans(lc, _field_defaults, _MAPPED, _REQUIRED, NAME)


def _items_of(trace: Any) -> list[Any]:
    if isinstance(trace, dict):
        if set(trace) != {"messages"}:
            raise TraceError(
                "malformed_event",
                f"a LangGraph state is read for its 'messages' only; this one also has "
                f"{sorted(k for k in trace if k != 'messages')} (pass state['messages'] to "
                f"convert the conversation alone)"
                if "messages" in trace
                else f"expected a state {{'messages': [...]}}, got keys {sorted(trace)}",
                source=NAME,
            )
        trace = trace["messages"]
    if is_state_snapshot(trace):
        raise _snapshot_refusal(trace)
    if not isinstance(trace, (list, tuple)):
        raise TraceError(
            "malformed_event",
            f"expected a list of BaseMessage objects, messages_to_dict dicts or model_dump() "
            f"dicts, or a state {{'messages': [...]}}; got {type(trace).__name__}",
            source=NAME,
        )
    return list(trace)


def is_named_tuple(trace: Any) -> bool:
    """Whether ``trace`` is a named tuple: a record whose fields are not messages (such as
    LangGraph's ``StateSnapshot``), which the reader does not take as a tuple of messages."""
    return isinstance(trace, tuple) and hasattr(trace, "_fields")


def is_state_snapshot(trace: Any) -> bool:
    """Whether ``trace`` is LangGraph's ``StateSnapshot`` (what ``graph.get_state`` and
    ``get_state_history`` give), told by its name and its ``values`` field: the reader does
    not import LangGraph."""
    return (
        is_named_tuple(trace)
        and type(trace).__name__ == "StateSnapshot"
        and "values" in trace._fields
    )


def _snapshot_refusal(trace: Any) -> TraceError:
    fields = ", ".join(map(str, trace._fields))
    values = trace.values
    hint = (
        "pass snapshot.values['messages'] (or snapshot.values, when 'messages' is its only key)"
        if isinstance(values, dict) and "messages" in values
        else "pass snapshot.values" if isinstance(values, (list, tuple))
        else "pass the messages its values hold"
    )
    return TraceError(
        "malformed_event",
        f"expected a list of messages or a state {{'messages': [...]}}, got "
        f"{with_article(type(trace).__name__)} (a named tuple of {fields}): {hint}",
        source=NAME,
    )


def _loaded(item: Any, i: int, lc: Any) -> Any:
    """A ``BaseMessage`` for one trace item (a dict is loaded the way LangChain loads it)."""
    if isinstance(item, lc.BaseMessage):
        return item
    if not isinstance(item, dict) or "type" not in item:
        raise TraceError(
            "malformed_event",
            f"expected a BaseMessage, a messages_to_dict dict {{'type': ..., 'data': {{...}}}} "
            f"or a model_dump() dict {{'type': ..., 'content': ..., ...}}, got "
            f"{type(item).__name__} {short_repr(item)}",
            path=f"messages[{i}]",
        )
    if is_serialized(item):
        raise _serialized_refusal(item, i)
    if set(item) == {"type", "data"}:
        data, where = item["data"], f"messages[{i}].data"
        if not isinstance(data, dict):
            raise TraceError(
                "malformed_event", f"'data' must be a dict, got {short_repr(data)}", path=where
            )
    else:
        data, where = item, f"messages[{i}]"  # the flat message.model_dump() form
    name = _class_name(item["type"], i)
    _check_validator_inputs(data, name, where)
    cls = getattr(lc, name)
    try:
        return cls(**data)
    except (ValidationError, KeyError, TypeError, ValueError) as exc:
        raise TraceError(
            "malformed_event",
            f"LangChain cannot load this {cls.__name__}: {exc}".replace("\n", " "),
            path=_field_path(exc, data, where),
        ) from None


def _field_path(exc: Exception, data: dict[str, Any], where: str) -> str:
    """The field LangChain's validation refused (its first error), as the object form names
    it; ``where``, the message, for another failure."""
    if not isinstance(exc, ValidationError):
        return where
    return located(where, data, exc.errors()[0]["loc"])


def is_serialized(item: dict[Any, Any]) -> bool:
    """Whether ``item`` is ``langchain_core.load``'s serialized form of an object
    (``dumpd`` / ``dumps``: ``{"lc": 1, "type": "constructor", "id": [...], "kwargs": {...}}``)."""
    return item.get("lc") == 1 and type(item.get("id")) is list and "type" in item


def _serialized_refusal(item: dict[str, Any], i: int) -> TraceError:
    path = item["id"]
    named = path[-1] if path and type(path[-1]) is str else short_repr(path)
    return TraceError(
        "malformed_event",
        f"this is langchain_core.load's serialized form of {with_article(named)} (dumpd / "
        f"dumps: {{'lc': 1, 'type': {short_repr(item['type'])}, 'id': [...], 'kwargs': "
        "{...}}), which to_messages does not read: load it first with "
        "langchain_core.load.load(obj, allowed_objects='messages') (for dumps() text, "
        "langchain_core.load.loads) and pass the messages it gives",
        path=f"messages[{i}]",
    )


_DICTS = ("additional_kwargs", "response_metadata")
"""Every message's dict fields; ``AIMessage``'s before-validator calls ``.get`` on the first."""

_CALL_LISTS: dict[str, tuple[str, ...]] = {
    "AIMessage": ("tool_calls", "invalid_tool_calls"),
    "AIMessageChunk": ("tool_calls", "invalid_tool_calls", "tool_call_chunks"),
}
"""The call lists each AI class declares; its before-validator walks them item by item as
dicts (on an ``AIMessage`` also an undeclared ``tool_call_chunks``, when not empty)."""


def _check_validator_inputs(data: dict[str, Any], name: str, where: str) -> None:
    """The fields LangChain's before-validators read before pydantic checks their type (a
    value of another type there raises AttributeError, not a ValidationError), and the keys
    they build each ``tool_calls`` entry from (a missing one raises TypeError), checked here
    so that it is ``malformed_event`` at the field's own path."""
    for key in _DICTS:
        if key in data and not _is_mapping(data[key]):
            raise _wrong_type(key, "a dict", data[key], where)
    declared = _CALL_LISTS.get(name)
    if declared is None:
        return
    for key in ("tool_calls", "invalid_tool_calls", "tool_call_chunks"):
        calls = data.get(key)
        if not calls and (key not in declared or key not in data):
            continue  # absent, or an empty extra the validator skips
        if not isinstance(calls, (list, tuple)):
            raise _wrong_type(key, "a list of dicts", calls, where)
        for k, call in enumerate(calls):
            if not _is_mapping(call):
                raise _wrong_type(f"{key}[{k}]", "a dict", call, where)
            _check_call_keys_taken(call, key, f"{where}.{key}[{k}]")
            if key == "tool_calls":
                _check_call_complete(call, f"{where}.tool_calls[{k}]", "")


_TAKEN_KEYS = {
    "tool_calls": ("tool_call", frozenset({"name", "args", "id", "type", "extras"})),
    "invalid_tool_calls": ("invalid_tool_call", frozenset({"name", "args", "id", "error",
                                                           "type"})),
    "tool_call_chunks": ("tool_call_chunk", frozenset({"name", "args", "id", "index",
                                                       "type"})),
}
"""The keys LangChain's validator passes on to the function that builds each entry of a
call list (``type``, and ``extras`` of a call, it leaves out), and that function's name: any
other key raises a TypeError that names no field."""


def _check_call_keys_taken(call: Mapping[Any, Any], key: str, at: str) -> None:
    """``malformed_event`` at the first key of the ``key`` entry ``call`` (at ``at``) that
    LangChain's builder of such an entry does not take."""
    builder, taken = _TAKEN_KEYS[key]
    for name in call:
        if name not in taken:
            raise TraceError(
                "malformed_event",
                f"LangChain's {builder}() takes {', '.join(sorted(taken - {'type', 'extras'}))}"
                f"; this entry has {name!r} too: {short_repr(call)}",
                path=f"{at}.{name}",
            )


_CALL_ARGUMENTS = ("name", "args", "id")
"""The keyword arguments ``langchain_core.messages.tool.tool_call`` requires, in its order.
``AIMessage``'s before-validator builds each ``tool_calls`` entry with it, so a missing one
raises a TypeError that names no field, not a ValidationError."""


def _check_call_complete(call: Mapping[Any, Any], at: str, hint: str) -> None:
    """``malformed_event`` at the first of ``name``, ``args`` and ``id`` the ``tool_calls``
    entry ``call`` (at ``at``) lacks; ``hint`` says how it may have come to lack it."""
    for key in _CALL_ARGUMENTS:
        if key not in call:
            raise TraceError(
                "malformed_event",
                f"LangChain's tool_call() requires name, args and id (an id may be None); "
                f"this tool call has no '{key}'{hint}: {short_repr(call)}",
                path=f"{at}.{key}",
            )


def _check_calls_complete(data: dict[str, Any], at: str) -> None:
    """Every ``tool_calls`` entry of an AI message's ``model_dump()`` has the keys LangChain's
    constructor requires (an object whose entry lost one after it was made: ``del``)."""
    calls = data.get("tool_calls")
    if type(calls) is not list:
        return  # not a list: the calls' reader names it
    for k, call in enumerate(calls):
        if type(call) is dict:
            hint = " (taken out after the message was made?)"
            _check_call_complete(call, f"{at}.tool_calls[{k}]", hint)


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _wrong_type(key: str, expected: str, value: Any, where: str) -> TraceError:
    return TraceError(
        "malformed_event",
        f"'{key}' must be {expected}, got {type(value).__name__} {short_repr(value)}",
        path=f"{where}.{key}",
    )


def _class_name(tag: Any, i: int) -> str:
    """The ``langchain_core.messages`` class for a type tag; ``unknown_role`` otherwise."""
    if isinstance(tag, str) and tag in CLASSES:
        return CLASSES[tag][0]
    if isinstance(tag, str) and tag == "remove":  # no == on a value of another class
        detail = (
            "RemoveMessage is a LangGraph instruction to delete a message from the state, not a "
            "message of the conversation; apply it (add_messages) before converting"
        )
    else:
        detail = f"unknown message type {short_repr(tag)}; known types: {', '.join(CLASSES)}"
    raise TraceError("unknown_role", detail, path=f"messages[{i}].type")


def _typed(
    message: Any, i: int, parse_partial: Any, drop_artifacts: bool, chunk_run: ChunkRun
) -> list[Message]:
    at = f"messages[{i}]"
    dumped = message.model_dump()
    _check_present(dumped, type(message), at)
    # RemoveMessage and classes from elsewhere stop here
    cls = getattr(langchain_core_messages(), _class_name(dumped["type"], i))
    # A subclass of LangChain's class (same type tag) is read as LangChain's own dicts keep
    # it, as that class: the fields it adds are extra attributes, kept under extra
    data = _declared_only(dumped, cls)
    tag = data["type"]
    kind = _kind_of(tag, data, at)
    if kind == "ai":
        _check_calls_complete(data, at)
    is_chunk = tag == "AIMessageChunk"
    if is_chunk:
        reject_partial_chunk(data, at, parse_partial)
        reject_continued_chunk(data["id"], i, at, chunk_run)
    kept = _kept_fields(cls, dumped, held_fields(message), at, drop_artifacts)
    if tag != plain_class(kind, data.get("tool_call_id"), data["name"]):
        kept["class"] = tag
    kwargs: dict[str, Any] = kept.get("additional_kwargs", {})
    common = {"name": data["name"], "id": data["id"]}
    if kind == "ai":
        calls, call_blocks = calls_of(data, at, parse_partial if is_chunk else None)
        content, citations = _ai_content(data["content"], at, call_blocks, kwargs)
        audio = audio_of(kwargs, at)
        citations += citations_of(kwargs, at)
        return [
            AIMessage(
                content=content,
                tool_calls=calls,
                citations=citations,
                audio=audio,
                **common,
                metadata=_metadata(kept),
            )
        ]
    if kind == "human" and has_tool_results(data["content"]):
        return read_tool_results(data, _without_empty_kwargs(kept), at, part_of)
    content = _content(data["content"], at)
    if kind == "tool":
        return [
            ToolMessage(
                content=content,
                tool_call_id=data.get("tool_call_id"),
                is_error=_status(data.get("status"), at) == "error",
                **common,
                metadata=_metadata(kept),
            )
        ]
    if kind == "human":
        return [HumanMessage(content=content, **common, metadata=_metadata(kept))]
    if kind == "system":
        # a ChatMessage says its role itself; ChatOpenAI's developer marker is a
        # SystemMessage's (it sends a ChatMessage as its role, marker or not)
        developer = kept["role"] == "developer" if "role" in kept else is_developer(kwargs)
        return [
            SystemMessage(
                content=content,
                role="developer" if developer else "system",
                **common,
                metadata=_metadata(kept),
            )
        ]
    assert_never(kind)


def _without_empty_kwargs(kept: dict[str, Any]) -> dict[str, Any]:
    """``kept`` without an ``additional_kwargs`` that reading has emptied (``{}`` is the
    default the way back writes anyway)."""
    if kept.get("additional_kwargs") == {}:
        del kept["additional_kwargs"]
    return kept


def _metadata(kept: dict[str, Any]) -> dict[str, Any]:
    kept = _without_empty_kwargs(kept)
    return {NAME: kept} if kept else {}


def _kind_of(tag: str, data: dict[str, Any], at: str) -> Kind:
    kind = CLASSES[tag][1]
    if kind is not None:
        return kind
    role = data["role"]
    if role not in CHAT_ROLES:
        raise TraceError(
            "unknown_role",
            f"ChatMessage role {short_repr(role)} is not one tracebridge maps; known roles: "
            f"{', '.join(CHAT_ROLES)}",
            path=f"{at}.role",
        )
    return CHAT_ROLES[role]


def _kept_fields(
    cls: Any, data: dict[str, Any], held: dict[str, Any], at: str, drop_artifacts: bool
) -> dict[str, Any]:
    """Every ``model_dump()`` key without a typed home whose value is not the default, with
    the value the message holds (``held``: a model or a dataclass in it is not JSON, where
    the dump has made it a dict), copied."""
    kept: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    defaults = _field_defaults(cls)
    for key in data:
        if key in _MAPPED and key in defaults:
            continue  # a typed field; read by _typed
        # a computed field, or a key a serializer adds, is only in the dump: a value the
        # dump made, with no object form it could have lost
        value = held[key] if key in held else data[key]
        where = f"{at}.{key}"
        if key not in defaults:
            extra[key] = kept_copy(value, key, where)
            continue
        default = defaults[key]
        if default is not _REQUIRED and value == default and type(value) is type(default):
            continue  # the way back writes the default itself
        if key == "artifact" and drop_artifacts and not is_plain_json(value):
            kept["artifact_dropped"] = type(value).__name__
            continue
        kept[key] = kept_copy(value, key, where)
    if extra:
        kept["extra"] = extra
    return kept


_REQUIRED = object()


def _check_present(data: dict[str, Any], cls: Any, at: str) -> None:
    """Every field ``cls`` declares is there: only ``model_construct()`` makes an object
    without one (whose validators may fill it with ``"None"`` instead of refusing it)."""
    for key in _field_defaults(cls):
        if key not in data:
            raise TraceError(
                "malformed_event",
                f"this {cls.__name__} has no {key} (made with model_construct() without "
                f"it?); LangChain's constructor requires one",
                path=f"{at}.{key}",
            )


def _declared_only(data: dict[str, Any], cls: Any) -> dict[str, Any]:
    """``data`` for reading typed fields: without the extra attributes named like a field
    another class maps (a ``HumanMessage``'s ``tool_call_id``, a ``FunctionMessage``'s
    ``status``, a ``ChatMessage``'s ``tool_calls``), which LangChain keeps as attributes it
    never reads; ``_kept_fields`` keeps them under ``extra``."""
    undeclared = _undeclared_mapped(cls)
    if undeclared.isdisjoint(data):
        return data
    return {key: value for key, value in data.items() if key not in undeclared}


@functools.cache
def _undeclared_mapped(cls: Any) -> frozenset[str]:
    """The keys read as typed fields that ``cls`` does not declare."""
    return _MAPPED.difference(_field_defaults(cls))


@functools.cache
def _field_defaults(cls: Any) -> dict[str, Any]:
    """Each declared field's default value (``_REQUIRED`` when it has none), per class."""
    defaults = {}
    for key, declared in cls.model_fields.items():
        has_default = declared.default is not PydanticUndefined or declared.default_factory
        defaults[key] = (
            declared.get_default(call_default_factory=True) if has_default else _REQUIRED
        )
    return defaults


def _content(content: Any, at: str) -> Content:
    if isinstance(content, str):
        return content
    return [part_of(item, f"{at}.content[{j}]") for j, item in enumerate(content)]


def _ai_content(
    content: Any, at: str, call_blocks: dict[int, Any], kwargs: dict[str, Any]
) -> tuple[Content, list[Citation]]:
    """An AI message's typed content and the citations its text blocks hold.

    Reasoning text in ``additional_kwargs["reasoning_content"]`` becomes the first part (the
    model reasoned before it answered; langchain-core's ``content_blocks`` puts it first
    too), then a Responses reasoning item in ``additional_kwargs["reasoning"]``; each is
    marked ``metadata.langchain.from`` so that it goes back there (the item with the rest of
    it as ``block``), the first with ``content: "string"`` when the rest of the content
    reads as a string, which then goes back as that string. A refusal in
    ``additional_kwargs`` becomes the last part but for the hosted-tool items of
    ``additional_kwargs["tool_outputs"]``, an opaque part each, marked so that they go back
    there, placed as langchain-core places them (``_tool_outputs``: a
    ``code_interpreter_call``, ``mcp_call`` or ``image_generation_call`` right after the
    reasoning, the others last; the first with ``content: "string"`` when the content
    between them reads as a string). A list holding only call blocks reads as ``""`` (the
    blocks live on the calls); the way back writes ``""`` with call blocks as exactly that
    list.
    """
    reasoning = reasoning_of(kwargs)
    item = reasoning_item_of(kwargs)
    typed, citations = _ai_parts(content, at, call_blocks, kwargs)
    early, late = tool_outputs_of(kwargs)
    if early or late:
        if isinstance(typed, str):
            (early or late)[0].metadata[NAME]["content"] = "string"
            typed = [TextPart(text=typed)] if typed else []
        typed = [*early, *typed, *late]
    if reasoning is None and item is None:
        return typed, citations
    marks: list[tuple[str, dict[str, Any], str | None]] = []
    if reasoning is not None:
        marks.append((reasoning, {"from": REASONING_KEY}, None))
    if item is not None:
        marks.extend(_item_marks(*item))
    if isinstance(typed, str):
        marks[0][1]["content"] = "string"
        typed = [TextPart(text=typed)] if typed else []
    lead = [
        ReasoningPart(text=text, id=item_id, metadata={NAME: mark})
        for text, mark, item_id in marks
    ]
    return [*lead, *typed], citations


def _item_marks(
    values: dict[str, str], block: dict[str, Any], shape: str
) -> list[tuple[str, dict[str, Any], str | None]]:
    """The texts, marks and item ids of reasoning read from ``additional_kwargs
    ["reasoning"]``: the item's text with the rest of the item (and its layout when that
    text is the item's raw reasoning) and its typed id (None when the id stays in the item,
    beside what the part would not give back), then the raw text of an item that has a
    summary too, marked (it continues that item: no id of its own)."""
    item_id = values.get("id")
    if shape != REASONING_ITEM.name:
        return [(values["text"], {"from": ITEM_KEY, "shape": shape, "block": block}, item_id)]
    (text, rest), raw = split_item(values["text"], block)
    first = (text, {"from": ITEM_KEY, "block": rest}, item_id)
    return [first] if raw is None else [first, (*raw, None)]


def _ai_parts(
    content: Any, at: str, call_blocks: dict[int, Any], kwargs: dict[str, Any]
) -> tuple[Content, list[Citation]]:
    """``_ai_content`` without the reasoning in ``additional_kwargs``."""
    refusal = refusal_of(kwargs)
    if isinstance(content, str):
        if refusal is None:
            return content, []
        text = [TextPart(text=content)] if content else []
        marker = {NAME: {"content": "string"}} if content else {}
        return [*text, RefusalPart(text=refusal, metadata=marker)], []
    parts: list[AnyPart] = []
    citations: list[Citation] = []
    start = 0  # where the next text part's text starts in the reply's text
    for j, item in enumerate(content):
        if j in call_blocks:
            continue  # it lives on its call
        part = _with_citations_taken(part_of(item, f"{at}.content[{j}]"), j, at, citations, start)
        if isinstance(part, TextPart):
            start += len(part.text) + 1  # the text parts are joined by newlines
        if isinstance(part, ReasoningPart):  # an item with raw text beside its summary: two
            parts.extend(split_block_part(part))
        else:
            parts.append(part)
    if refusal is not None:
        marker = {NAME: {"content": "list"}} if not parts and not call_blocks else {}
        return [*parts, RefusalPart(text=refusal, metadata=marker)], citations
    if parts and isinstance(parts[-1], RefusalPart) and not parts[-1].metadata:
        # A refusal block in the content, last: without this mark the way back would
        # take it for a refusal that belongs in additional_kwargs.
        parts[-1] = parts[-1].model_copy(
            update={"metadata": {NAME: {"shape": "refusal", "block": {"type": "refusal"}}}}
        )
    if not parts and call_blocks:
        return "", citations
    return list(parts), citations


def _with_citations_taken(
    part: AnyPart, j: int, at: str, citations: list[Citation], start: int
) -> AnyPart:
    """A text block's citations (its citation annotations, then the entries of its own
    ``citations`` list that langchain-core reads as citations) become citations of the
    message, their indexes counted in the reply's text (where the block's text starts at
    ``start``); the others stay in the block."""
    kept = part.metadata.get(NAME)
    if not isinstance(part, TextPart) or type(kept) is not dict:
        return part
    block = kept.get("block")
    if type(block) is not dict:
        return part
    rest = dict(block)
    taken = len(citations)
    for key, read in CITING_LISTS:
        entries = block.get(key)
        if type(entries) is not list:
            continue
        left = []
        for k, entry in enumerate(entries):
            cited = read(entry, f"{at}.content[{j}].{key}[{k}]", in_block=j, at=k)
            if cited is None:
                left.append(entry)
            else:
                citations.append(in_reply_text(cited, start, len(part.text)))
        rest[key] = left
    if len(citations) == taken:
        return part
    return part.model_copy(update={"metadata": {NAME: {**kept, "block": rest}}})
