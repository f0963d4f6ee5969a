"""An Agents SDK run as a flat list of Responses input items, each with the agent that made it.

A run comes as a ``RunResult`` / ``RunResultStreaming`` (or an exception's ``run_data``), as a
list of ``RunItem``s (objects, or the dicts ``RunState.to_json()`` stores them as) with the
run's input, or as plain input items (``to_input_list()``, a session's ``get_items()``). Each
becomes ``Entry``s: the input item the SDK would send back to the model, the producing agent's
name, and the rest of the ``RunItem`` wrapper (kept verbatim as metadata).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tracebridge._optional import require
from tracebridge.errors import TraceError

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
"""The ``type`` of every ``RunItem`` class of openai-agents 0.24 (``agents.items.RunItem``)."""

RESULT_CLASSES = ("RunResult", "RunResultStreaming", "RunErrorDetails")
"""Objects that hold a whole run: its ``input`` and its ``new_items``."""

APPROVAL = "tool_approval_item"
"""A call waiting for approval: its call is also a ``tool_call_item``; it is no input item."""


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
    """Position in the source trace (None for the ``input`` the items were given with)."""
    path: str
    """Where it is in the source trace (``new_items[3]``, ``input[0]``, ``items[2]``)."""
    approval: bool = False
    """A ``tool_approval_item``: a call waiting for approval, no input item of its own."""


def is_result(trace: Any) -> bool:
    """True for an Agents SDK object that holds a whole run."""
    kind = type(trace)
    return kind.__name__ in RESULT_CLASSES and kind.__module__.startswith("agents.")


def is_run_item(item: Any) -> bool:
    """True for a ``RunItem`` object or its ``RunState.to_json()`` dict."""
    if isinstance(item, dict):
        return item.get("type") in RUN_ITEM_TYPES and "raw_item" in item
    kind = type(item)
    return kind.__module__.startswith("agents.") and getattr(item, "type", None) in RUN_ITEM_TYPES


def entries(trace: Any, given_input: Any) -> list[Entry]:
    """The run in ``trace`` (and the input it was given with) as entries, in order."""
    if is_result(trace):
        if given_input is not None:
            raise TraceError(
                "malformed_event",
                f"a {type(trace).__name__} holds its own input; do not pass input= with it",
                source=NAME,
            )
        if type(trace).__name__ == "RunResultStreaming" and not trace.is_complete:
            raise TraceError(
                "streaming_chunk",
                "this RunResultStreaming is still running: consume result.stream_events() to "
                "the end, then read it (an unfinished run has not produced all its items)",
                source=NAME,
            )
        found = [*_input_entries(trace.input), *_listed(trace.new_items, "new_items")]
        if not hasattr(trace, "to_input_list"):
            return found  # an exception's run_data: input and items are all there is
        return _as_replayed(found, trace.to_input_list())
    if isinstance(trace, str) or not isinstance(trace, list):
        raise TraceError(
            "malformed_event",
            f"expected a RunResult, a list of RunItems or a list of Responses input items, "
            f"got {type(trace).__name__}",
            source=NAME,
        )
    found = [] if given_input is None else _input_entries(given_input)
    return [*found, *_listed(trace, "items")]


def _as_replayed(found: list[Entry], replay: list[Any]) -> list[Entry]:
    """The run as ``to_input_list()`` gives it, each item still with its agent where known.

    Usually that list is the input followed by the new items. When the SDK rewrote the history
    (``RunConfig(nest_handoff_history=True)`` moves earlier turns into the next agent's input
    as summary messages), the new items it moved are in the rewritten input, not after it: the
    list is then read as the SDK gives it, and only the new items that end it keep their agent.
    """
    if [entry.item for entry in found if not entry.approval] == replay:
        return found
    runs = [entry for entry in found if entry.record is not None]
    kept: list[Entry] = []
    end = len(replay)
    for entry in reversed(runs):
        if entry.approval:
            kept.append(entry)
        elif end > 0 and replay[end - 1] == entry.item:
            kept.append(entry)
            end -= 1
        else:
            break
    while kept and kept[-1].approval:
        kept.pop()  # its call is in the rewritten input: it stays with the items it waits on
    head = [
        Entry(item, None, None, None, f"to_input_list()[{i}]")
        for i, item in enumerate(replay[:end])
    ]
    return [*head, *reversed(kept)]


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
    return [Entry(item, None, None, None, f"input[{i}]") for i, item in enumerate(given)]


def _listed(items: Any, where: str) -> list[Entry]:
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
        if isinstance(item, dict) and "raw_item" in item:
            found.append(_stored_run_item(item, i, path))
        elif is_run_item(item):
            found.append(_run_item(item, i, path))
        elif type(item).__module__.startswith("agents."):
            raise TraceError(
                "unknown_role",
                f"{type(item).__name__} is not a RunItem this adapter knows "
                f"(openai-agents 0.24 RunItem types: {', '.join(RUN_ITEM_TYPES)})",
                index=i,
                path=path,
                source=NAME,
            )
        else:
            found.append(Entry(item, None, None, i, path))
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
    agent = item.get("agent")
    if not isinstance(agent, Mapping) or not isinstance(agent.get("name"), str):
        raise TraceError(
            "malformed_event",
            f"expected agent {{'name': <str>}} (the agent that produced the item), "
            f"got {agent!r}",
            index=index,
            path=f"{path}.agent",
            source=NAME,
        )
    record = {key: value for key, value in item.items() if key != "raw_item"}
    raw = item["raw_item"]
    if kind == APPROVAL:
        record["raw_item"] = raw  # no input item of its own: the whole wrapper is kept
        return Entry(None, agent["name"], record, index, path, approval=True)
    if isinstance(raw, dict):
        raw = _as_input(raw, kind, record)
    return Entry(raw, agent["name"], record, index, path)


def _as_input(raw: dict[str, Any], kind: str, record: dict[str, Any]) -> dict[str, Any]:
    """The input form the SDK replays (``run_item_to_input_item``); what it strips is kept."""
    if kind == "compaction_item":
        return raw
    stripped = {key: raw[key] for key in ("created_by",) if key in raw}
    if "status" in raw and raw["status"] is None:
        stripped["status"] = None
    if stripped:
        record["stripped"] = stripped
    return {key: value for key, value in raw.items() if key not in stripped}


def _run_item(item: Any, index: int, path: str) -> Entry:
    """A RunItem object: its input form, its agent, and the wrapper as the SDK stores it."""
    state = require("agents.run_state", adapter=NAME, extra="agents", package="openai-agents")
    # RunState's own serializer, so that an object and its stored dict read alike. It uses
    # nothing of the state, only the item.
    record: dict[str, Any] = state.RunState._serialize_item(None, item)
    agent = record["agent"]["name"]
    raw = record.pop("raw_item")
    if item.type == APPROVAL:
        record["raw_item"] = raw
        return Entry(None, agent, record, index, path, approval=True)
    if not isinstance(raw, dict):
        raise TraceError(
            "malformed_event",
            f"the raw item of a {type(item).__name__} serialized to {type(raw).__name__}, "
            "not a dict",
            index=index,
            path=f"{path}.raw_item",
            source=NAME,
        )
    return Entry(_as_input(raw, item.type, record), agent, record, index, path)
