"""An Agents SDK run as a flat list of Responses input items, each with the agent that made it.

A run comes as a ``RunResult`` / ``RunResultStreaming`` (or an exception's ``run_data``), as a
list of ``RunItem``s (objects, or the dicts ``RunState.to_json()`` stores them as) with the
run's input, or as plain input items (``to_input_list()``, a session's ``get_items()``). Each
becomes ``Entry``s: the input item the SDK would send back to the model, the producing agent's
name, and the rest of the ``RunItem`` wrapper (kept verbatim as metadata).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from pydantic import BaseModel

from tracebridge._changed import FELL
from tracebridge._json import json_copy_at
from tracebridge._optional import require
from tracebridge.errors import TraceError, short_repr, with_article

from ._bridge import read
from ._identities import identity_keys
from ._raw_items import check_raw_item

NAME = "openai_agents"

RUN_ITEM_TYPES = (
    "input_item",
    "message_output_item",
    "tool_search_call_item",
    "tool_search_output_item",
    "handoff_call_item",
    "handoff_output_item",
    "tool_call_item",
    "tool_call_output_item",
    "reasoning_item",
    "mcp_list_tools_item",
    "mcp_approval_request_item",
    "mcp_approval_response_item",
    "compaction_item",
    "tool_approval_item",
)
"""The ``type`` of every ``RunItem`` class of openai-agents 0.24 and 0.25
(``agents.items.RunItem``)."""

RESULT_CLASSES = ("RunResult", "RunResultStreaming", "RunErrorDetails")
"""Objects that hold a whole run: its ``input`` and its ``new_items``."""

HANDOFF_OUTPUT = "handoff_output_item"
"""A handoff's output: its ``source_agent`` and ``target_agent`` are what ``handoffs()`` names."""

ADMITTED = "input_item"
"""An item the application admitted into the run (``RunState.add_input``): no model made it."""

APPROVAL = "tool_approval_item"
"""A call waiting for approval: its call is also a ``tool_call_item``; it is no input item."""

_TOOL_ITEMS = frozenset({"tool_call_item", "tool_call_output_item", APPROVAL})
"""The RunItem types with a ``tool_origin`` (and ``custom_data``, ``tool_lookup_key``)."""


@dataclass(frozen=True)
class Entry:
    """One element of the run, in order."""

    item: Any
    """The Responses input item (a dict, or an SDK object as given); for an approval, None."""
    agent: str | None
    """The agent that produced it (None for the run's input and plain input items)."""
    record: dict[str, Any] | None
    """The RunItem wrapper without its raw item (``type``, ``agent``, the class's fields)."""
    index: int | None
    """Position in the source trace (None for the ``input`` the items were given with; for an
    item of ``to_input_list()``, its position there)."""
    path: str
    """Where it is in the source trace (``new_items[3]``, ``input[0]``, ``items[2]``)."""
    approval: bool = False
    """A ``tool_approval_item``: a call waiting for approval, no input item of its own."""

    @property
    def item_path(self) -> str:
        """Where the item's own fields are: a RunItem's raw item (``new_items[3].raw_item``),
        or the entry itself for an input item."""
        return self.path if self.record is None else f"{self.path}.raw_item"


def module_of(value: Any) -> str:
    """The module of ``value``'s class; "" when the class names none (a class may set its
    ``__module__`` to None, or to anything else)."""
    module = getattr(type(value), "__module__", None)
    return module if isinstance(module, str) else ""


def is_sdk_object(value: Any) -> bool:
    """True for an object of a class of the Agents SDK (``agents.*``)."""
    return module_of(value).startswith("agents.")


def is_result(trace: Any) -> bool:
    """True for an Agents SDK object that holds a whole run."""
    return type(trace).__name__ in RESULT_CLASSES and is_sdk_object(trace)


def is_run_item(item: Any) -> bool:
    """True for a ``RunItem`` object or its ``RunState.to_json()`` dict."""
    if isinstance(item, dict):  # isinstance first: no == on a value of another class
        # (its raw_item may be missing: then it is a RunItem refused for it, not an input item)
        return isinstance(kind := item.get("type"), str) and kind in RUN_ITEM_TYPES
    return is_sdk_object(item) and isinstance(kind := getattr(item, "type", None), str) and (
        kind in RUN_ITEM_TYPES
    )


def entries(trace: Any, given_input: Any) -> list[Entry]:
    """The run in ``trace`` (and the input it was given with) as entries, in order."""
    if is_result(trace):
        if given_input is not None:
            raise TraceError(
                "malformed_event",
                f"{with_article(type(trace).__name__)} holds its own input; do not pass input= "
                "with it",
                source=NAME,
            )
        if type(trace).__name__ == "RunResultStreaming" and not trace.is_complete:
            raise TraceError(
                "streaming_chunk",
                "this RunResultStreaming is still running: consume result.stream_events() to "
                "the end, then read it (an unfinished run has not produced all its items)",
                source=NAME,
            )
        given = _input_entries(_held(trace, "input"))
        new_items = _held(trace, "new_items")
        found = [*given, *_listed(new_items, "new_items", True,
                                  identity_keys(trace, _objects(new_items)))]
        if not hasattr(trace, "to_input_list"):
            return found  # an exception's run_data: input and items are all there is
        try:
            replay = trace.to_input_list()
        except FELL:
            # The SDK's own listing fell on an item changed after it was made (a raw item's
            # type that is no string): the reading of the items says where. When it finds
            # nothing wrong, the fault is ours, and the fall shows as it is.
            _read_or_fail(found)
            raise
        return _as_replayed(found, replay)
    if isinstance(trace, str) or not isinstance(trace, list):
        raise TraceError(
            "malformed_event",
            f"expected a RunResult, a list of RunItems or a list of Responses input items, "
            f"got {type(trace).__name__}",
            source=NAME,
        )
    found = [] if given_input is None else _input_entries(given_input)
    return [*found, *_listed(trace, "items", identities=identity_keys(None, _objects(trace)))]


def _objects(items: Any) -> list[Any]:
    """The SDK's objects in a list of items (its RunItem objects, when it reads)."""
    return [item for item in items if is_sdk_object(item)] if isinstance(items, list) else []


def _held(result: Any, field: str) -> Any:
    """A field of a run result (refused when it was deleted from the object)."""
    try:
        return getattr(result, field)
    except AttributeError:
        raise TraceError(
            "malformed_event",
            f"this {type(result).__name__} has no {field} (was it deleted after the run?)",
            path=field,
            source=NAME,
        ) from None


def _as_replayed(found: list[Entry], replay: list[Any]) -> list[Entry]:
    """The run as ``to_input_list()`` gives it, each item still with its agent where known.

    Usually that list is the input followed by the new items (a reasoning item perhaps without
    its id: see ``_replayed``). When the SDK rewrote the history
    (``RunConfig(nest_handoff_history=True)`` moves earlier turns into the next agent's input
    as summary messages), the new items it moved are in the rewritten input, and those it did
    not move are replayed after it (openai-agents 0.25 replays them all, an item before a moved
    one too). The list is then read as the SDK gives it: the new items are matched from its
    end, past the moved ones (read in the rewritten input, as input), and each one replayed
    after the rewritten input keeps its agent and wrapper.
    """
    items = [entry for entry in found if not entry.approval]
    if len(items) == len(replay):
        replayed = [_replayed(entry, item) for entry, item in zip(items, replay, strict=True)]
        same = [entry for entry in replayed if entry is not None]
        if len(same) == len(items):
            given = iter(same)
            return [entry if entry.approval else next(given) for entry in found]
        _refuse_listed_objects(items, replay)
    runs = [entry for entry in found if entry.record is not None]
    moved = [entry.item for entry in found if entry.record is None]
    kept: list[Entry] = []
    end = len(replay)
    for entry in reversed(runs):
        if entry.approval:
            kept.append(entry)
            continue
        as_replayed = _replayed(entry, replay[end - 1]) if end > 0 else None
        if as_replayed is None:
            if any(entry.item == item for item in moved):
                continue  # moved into the rewritten input, and read there, as input
            break
        kept.append(as_replayed)
        end -= 1
    while kept and kept[-1].approval:
        kept.pop()  # its call is in the rewritten input: it stays with the items it waits on
    head = [
        Entry(item, None, None, i, f"to_input_list()[{i}]")
        for i, item in enumerate(replay[:end])
    ]
    return [*head, *reversed(kept)]


def _refuse_listed_objects(items: list[Entry], replay: list[Any]) -> None:
    """Refuse a run whose input holds an OpenAI SDK object (an item, or a part inside an item
    dict) that ``to_input_list()`` lists as [field, value] pairs, naming it and the other
    route; ``items`` and ``replay`` are of one length."""
    for i, (entry, item) in enumerate(zip(items, replay, strict=True)):
        found = None if entry.record is not None else _listed_object(entry.item, item)
        if found is None:
            continue
        where, model, listed = found
        raise TraceError(
            "malformed_event",
            f"the run's {entry.path}{where} is an OpenAI SDK object "
            f"({type(model).__name__}), which the Agents SDK lists in "
            f"to_input_list() (and sent to the model) as a list of [field, value] "
            f"pairs: {short_repr(listed)}. The run as the model received it is no "
            "Responses item list; to read the object as given, pass "
            "to_messages(result.new_items, input=result.input)",
            index=i,
            path=f"to_input_list()[{i}]{where}",
            source=NAME,
        )


def _listed_object(given: Any, replayed: Any) -> tuple[str, BaseModel, list[Any]] | None:
    """The first pydantic object in the input item ``given`` (the item itself, or one inside
    it: a part of a message's content) that the SDK replays as a list (``replayed`` is the
    item as ``to_input_list()`` gives it): its path under the item, the object, the list."""
    pending: list[tuple[Any, Any, str]] = [(given, replayed, "")]
    while pending:  # the replay is finite and acyclic: the walk follows it
        value, listed, where = pending.pop()
        if isinstance(value, BaseModel):
            if isinstance(listed, list):
                return where, value, listed
        elif isinstance(value, Mapping) and isinstance(listed, dict):
            keys = [key for key in value if isinstance(key, str) and key in listed]
            pending.extend((value[key], listed[key], f"{where}.{key}") for key in reversed(keys))
        elif isinstance(value, list) and isinstance(listed, list) and (  # (not a tuple:
            # tuple content is refused by the input reader, so no route would read it)
            len(value) == len(listed)
        ):
            pending.extend(
                (value[k], listed[k], f"{where}[{k}]") for k in reversed(range(len(value)))
            )
    return None


def _replayed(entry: Entry, item: Any) -> Entry | None:
    """``entry`` as ``to_input_list()`` replays it as ``item``; None when ``item`` is another.

    With ``RunConfig(reasoning_item_id_policy="omit")`` the SDK replays a ``reasoning_item``
    without its raw item's ``id``: the entry then holds the item as replayed, and the id is
    kept under its wrapper's ``stripped``, as the other fields the SDK strips are."""
    if entry.item == item:
        return entry
    raw, record = entry.item, entry.record
    if not (
        record is not None
        and record.get("type") == "reasoning_item"
        and isinstance(raw, dict)
        and "id" in raw
        and isinstance(item, dict)
        and "id" not in item
        and {key: value for key, value in raw.items() if key != "id"} == item
    ):
        return None
    stripped = {**record.get("stripped", {}), "id": raw["id"]}
    return replace(entry, item=item, record={**record, "stripped": stripped})


def _input_entries(given: Any) -> list[Entry]:
    """The run's input: a string (one user message, as the SDK sends it) or input items."""
    if isinstance(given, str):
        return [Entry({"content": given, "role": "user"}, None, None, None, "input")]
    if not isinstance(given, list):
        raise TraceError(
            "malformed_event",
            f"input: expected a string or a list of input items, got {type(given).__name__}",
            path="input",
            source=NAME,
        )
    return [
        Entry(_readable(item), None, None, None, f"input[{i}]")
        for i, item in enumerate(given)
    ]


def _readable(item: Any) -> Any:
    """``item`` as the Responses reader can take it.

    The reader tells the OpenAI SDK's objects by their class's module, and falls on a class
    whose ``__module__`` is no string (a class may set it to None). Such a mapping is given
    as the plain dict the reader reads any mapping as; any other such object, which the reader
    refuses as no item, as a stand-in of the same class name and repr, so that it is refused
    at its place in the run, after what comes before it, in the reader's words."""
    if isinstance(getattr(type(item), "__module__", None), str):
        return item
    if isinstance(item, Mapping):
        return dict(item)
    return type(type(item).__name__, (), {"__module__": "", "__repr__": lambda _: repr(item)})()


def _read_or_fail(found: list[Entry]) -> None:
    """Read the entries as ``to_messages`` would, for the ``TraceError`` that says what is
    wrong with them."""
    read([entry for entry in found if not entry.approval], allow_pending=True)


def _listed(
    items: Any, where: str, objects_only: bool = False, identities: Any = None
) -> list[Entry]:
    """The entries of a list of items; ``objects_only``: a result's ``new_items``, which
    hold RunItem objects only; ``identities``: the SDK's keys of same-name agents."""
    if not isinstance(items, list):
        raise TraceError(
            "malformed_event",
            f"{where}: expected a list, got {type(items).__name__}",
            path=where,
            source=NAME,
        )
    found = []
    for i, item in enumerate(items):
        path = f"{where}[{i}]"
        if objects_only and not is_sdk_object(item):
            raise TraceError(
                "malformed_event",
                f"{where} of a run result holds RunItem objects, not "
                f"{type(item).__name__} {short_repr(item)} (was it changed after the run?)",
                index=i,
                path=path,
                source=NAME,
            )
        if isinstance(item, dict) and ("raw_item" in item or is_run_item(item)):
            found.append(_stored_run_item(item, i, path))
        elif is_sdk_object(item):
            # A RunItem by its class (an object's type may have been changed after it was made)
            if _declared_type(type(item)) not in RUN_ITEM_TYPES:
                raise TraceError(
                    "unknown_role",
                    f"{type(item).__name__} is not a RunItem this adapter knows "
                    f"(RunItem types: {', '.join(RUN_ITEM_TYPES)})",
                    index=i,
                    path=path,
                    source=NAME,
                )
            found.append(_run_item(item, i, path, identities))
        else:
            found.append(Entry(_readable(item), None, None, i, path))
    return found


def _stored_run_item(item: dict[str, Any], index: int, path: str) -> Entry:
    """A RunItem as ``RunState.to_json()`` stores it: ``type``, ``raw_item``, ``agent``, ..."""
    kind = item.get("type")
    if kind not in RUN_ITEM_TYPES:
        raise TraceError(
            "unknown_role",
            f"a RunItem of type {kind!r}; known types: {', '.join(RUN_ITEM_TYPES)}",
            index=index,
            path=f"{path}.type",
            source=NAME,
        )
    producer = agent_name(item, "agent", index, path, "the agent that produced the item")
    target = None
    if kind == HANDOFF_OUTPUT:  # the agents handoffs() names
        agent_name(item, "source_agent", index, path, "an agent of the handoff")
        target = agent_name(item, "target_agent", index, path, "an agent of the handoff")
    if "raw_item" not in item:
        raise TraceError(
            "malformed_event",
            f"a {kind} RunItem needs its 'raw_item' (the Responses item it wraps)",
            index=index,
            path=f"{path}.raw_item",
            source=NAME,
        )
    record = {key: value for key, value in item.items() if key != "raw_item"}
    raw = item["raw_item"]
    if kind == APPROVAL:
        record["raw_item"] = raw  # no input item of its own: the whole wrapper is kept
        return Entry(None, producer, _kept(record, index, path), index, path,
                     approval=True)
    if not isinstance(raw, (dict, BaseModel)):  # refused here, as the object's raw item is
        raise TraceError(
            "malformed_event",
            f"expected the raw Responses item (a dict), got {type(raw).__name__} "
            f"{short_repr(raw)}",
            index=index,
            path=f"{path}.raw_item",
            source=NAME,
        )
    check_raw_item(kind, raw, target, index, path)
    if isinstance(raw, dict):
        raw = _as_input(raw, kind, record)
    return Entry(raw, producer, _kept(record, index, path), index, path)


_SHELL_OUTPUT_ONLY = ("status", "shell_output", "provider_data")
"""What a ``shell_call_output`` carries for the SDK's book-keeping and does not replay."""


def _as_input(raw: dict[str, Any], kind: str, record: dict[str, Any]) -> dict[str, Any]:
    """The input form the SDK replays (``run_item_to_input_item``); what it strips is kept.

    It drops ``created_by`` (output-only) and a null ``status``; of a ``shell_call_output``
    also its status, ``shell_output`` and ``provider_data``, and each output chunk's
    ``created_by`` (the original ``output`` is then kept whole)."""
    if kind == "compaction_item":
        return raw
    stripped = {key: raw[key] for key in ("created_by",) if key in raw}
    if "status" in raw and raw["status"] is None:
        stripped["status"] = None
    replayed: dict[str, Any] = {}
    if kind == "tool_call_output_item" and raw.get("type") == "shell_call_output":
        stripped.update({key: raw[key] for key in _SHELL_OUTPUT_ONLY if key in raw})
        chunks = raw.get("output")
        if type(chunks) is list and any(
            type(chunk) is dict and "created_by" in chunk for chunk in chunks
        ):
            stripped["output"] = chunks
            replayed["output"] = [
                {key: value for key, value in chunk.items() if key != "created_by"}
                if type(chunk) is dict else chunk
                for chunk in chunks
            ]
    if stripped:
        record["stripped"] = stripped
    return {
        key: replayed.get(key, value)
        for key, value in raw.items()
        if key not in stripped or key in replayed
    }


def _run_item(item: Any, index: int, path: str, identities: Any) -> Entry:
    """A RunItem object: its input form, its agent, and the wrapper as the SDK stores it."""
    state = require("agents.run_state", adapter=NAME, extra="agents", package="openai-agents")
    # RunState's own serializer, with the keys to_json() gives it, so that an object and its
    # stored dict read alike. It uses nothing of the state, only the item and the keys.
    try:
        record: dict[str, Any] = state.RunState._serialize_item(
            None, item, agent_identity_keys_by_id=identities
        )
    except FELL:
        refused = _serializer_fault(state, item, index, path)
        if refused is None:
            raise  # the SDK writes each field alone: the fault is ours, shown as it is
        raise refused from None
    # The SDK's dataclasses do not check assignments: a field changed after the item was made
    # holds anything. What the serializer wrote says most of it.
    kind = record["type"]
    if kind != _declared_type(type(item)):
        raise _changed(item, "type", f"{short_repr(kind)}, not {_declared_type(type(item))!r}",
                       index, path)
    agent = record["agent"]["name"]
    if type(agent) is not str:
        raise _changed(item, "agent.name", f"{short_repr(agent)}, not a string", index, path)
    for key in ("source_agent", "target_agent") if kind == HANDOFF_OUTPUT else ():
        if key not in record:  # written only when the object has the field
            raise _changed(item, key, "missing (deleted from the object)", index, path)
        named = record[key]["name"]
        if type(named) is not str:
            raise _changed(item, f"{key}.name", f"{short_repr(named)}, not a string", index,
                           path)
    if kind in _TOOL_ITEMS:
        dropped = _dropped(item, kind, record, state)
        if dropped is not None:
            raise _changed(item, *dropped, index, path)
    raw = record.pop("raw_item")
    if kind == APPROVAL:
        record["raw_item"] = raw
        return Entry(None, agent, _kept(record, index, path), index, path, approval=True)
    if not isinstance(raw, dict):
        raise TraceError(
            "malformed_event",
            f"the raw item of {with_article(type(item).__name__)} serialized to "
            f"{type(raw).__name__}, not a dict",
            index=index,
            path=f"{path}.raw_item",
            source=NAME,
        )
    target = record["target_agent"]["name"] if kind == HANDOFF_OUTPUT else None
    check_raw_item(kind, raw, target, index, path)
    raw = _as_input(raw, kind, record)
    return Entry(raw, agent, _kept(record, index, path), index, path)


_DECLARED: dict[type, Any] = {}


def _declared_type(cls: type) -> Any:
    """The ``type`` a RunItem class makes (None for a class that declares none)."""
    try:
        return _DECLARED[cls]
    except KeyError:
        declared = getattr(cls, "__dataclass_fields__", {}).get("type")
        found = _DECLARED[cls] = None if declared is None else declared.default
        return found


def _kept(record: dict[str, Any], index: int, path: str) -> dict[str, Any]:
    """A copy of ``record``, the wrapper kept as metadata, so that changing the source after
    it was read (a stored item's ``target_agent``, an approval's raw item, a dict raw item's
    nested values, which the SDK's serializer copies only one level deep) changes nothing
    read; ``unserializable_value`` where it holds what is no JSON (a field changed after the
    item was made, a tool's NaN output)."""
    try:
        copied: dict[str, Any] = json_copy_at(record, path)
    except TraceError as error:
        raise TraceError(error.code, error.detail, index=index, path=error.path,
                         source=NAME) from None
    return copied


_LOOKUP_KEYS = {"bare": 2, "namespaced": 3, "deferred_top_level": 2}
"""The kinds of a ``FunctionToolLookupKey`` tuple, with its length."""


def _dropped(item: Any, kind: str, record: dict[str, Any], state: Any) -> tuple[str, str] | None:
    """A field of a tool item that RunState's serializer left out of ``record`` or turned into
    another value, because it holds what the SDK does not make: its name and what it holds;
    None when there is none. (The serializer writes the other fields as they are: whatever
    they hold is kept, and ``_kept`` checks it.)"""
    if "tool_origin" not in record:  # written when it is a ToolOrigin
        origin = item.tool_origin
        if origin is not None:
            return "tool_origin", f"{type(origin).__name__} {short_repr(origin)}, not a ToolOrigin"
    if kind == "tool_call_output_item" and "custom_data" not in record:  # written when a dict
        data = item.custom_data
        if data is not None and not isinstance(data, dict):
            return "custom_data", f"{type(data).__name__} {short_repr(data)}, not a dict"
    if kind == APPROVAL:
        key = item.tool_lookup_key
        if key is not None and not (
            type(key) is tuple and key and _LOOKUP_KEYS.get(key[0]) == len(key)
            and all(type(part) is str for part in key)
        ):
            return "tool_lookup_key", f"{short_repr(key)}, not a FunctionToolLookupKey"
    return None


def _changed(item: Any, field: str, got: str, index: int, path: str) -> TraceError:
    return TraceError(
        "malformed_event",
        f"this {type(item).__name__} holds what the Agents SDK does not make (was a field "
        f"changed after it was made?): {field} is {got}",
        index=index,
        path=f"{path}.{field}",
        source=NAME,
    )


def _serializer_fault(state: Any, item: Any, index: int, path: str) -> TraceError | None:
    """Why ``RunState``'s serializer fell on ``item``: a field deleted from it, or else the
    first field that falls when the SDK's own code writes it alone. None when there is none.

    (A raw item's model is dumped in Python mode, which does not fall on a changed field: the
    Responses reader refuses what it then holds at the field,
    ``new_items[2].raw_item.arguments``.)"""

    def origin(value: Any) -> Any:
        return value.to_json_dict() if isinstance(value, state.ToolOrigin) else None

    writers = (
        ("raw_item", state._serialize_raw_item_value),
        ("agent", state._serialize_agent_reference),
        ("source_agent", state._serialize_agent_reference),
        ("target_agent", state._serialize_agent_reference),
        ("tool_origin", origin),
        ("tool_lookup_key", state.serialize_function_tool_lookup_key),
    )
    for field in type(item).__dataclass_fields__:
        if not field.startswith("_") and not hasattr(item, field):
            return _changed(item, field, "missing (deleted from the object)", index, path)
    for field, write in writers:
        if not hasattr(item, field):
            continue
        value = getattr(item, field)
        if value is None and _released(item, field):
            return TraceError(
                "malformed_event",
                f"this {type(item).__name__} no longer holds its {field}: the agent was "
                "released (result.release_agents()) and has since been garbage-collected, so "
                "its name is gone; read the result before release_agents()",
                index=index,
                path=f"{path}.{field}",
                source=NAME,
            )
        try:
            write(value)
        except FELL as exc:
            return _changed(item, field, f"{with_article(type(value).__name__)} the SDK's "
                                         f"serializer falls on ({type(exc).__name__}: {exc})",
                            index, path)
    return None


def _released(item: Any, field: str) -> bool:
    """True when ``item``'s agent ``field`` was released (``RunItem.release_agent()``, which
    ``result.release_agents()`` calls: it keeps only a weak reference, ``_<field>_ref``) and
    that agent has been garbage-collected since."""
    held = getattr(item, "__dict__", {})
    ref = held.get(f"_{field}_ref")
    return field in held and held[field] is None and isinstance(ref, weakref.ref) and (
        ref() is None
    )


def agent_name(record: Mapping[str, Any], key: str, index: int, path: str, what: str) -> str:
    """The name of the agent ``record[key]`` (``{"name": <str>}``, as RunState stores one);
    ``malformed_event`` at ``path.key`` otherwise. ``what``: the agent's part, for the error."""
    agent = record.get(key)
    if not isinstance(agent, Mapping) or not isinstance(agent.get("name"), str):
        raise TraceError(
            "malformed_event",
            f"expected {key} {{'name': <str>}} ({what}), got {short_repr(agent)}",
            index=index,
            path=f"{path}.{key}",
            source=NAME,
        )
    name: str = agent["name"]
    return name
