"""Agents SDK runs whose objects were changed after they were made.

A ``RunItem`` is a plain dataclass and its raw item a pydantic model of the OpenAI SDK: neither
checks assignments, so a run can hold what the SDK never makes (an agent that is a string, a
``tool_origin`` that is no ``ToolOrigin``, a title that is no JSON). Reading one gives the
conversation or a ``TraceError`` at the field, never another exception; and a RunItem object
reads as the dict ``RunState`` stores it as, except where the SDK's serializer would leave a
field out (the object is refused, the stored dict has already lost it).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from agents.run_state import RunState
from changed_objects import VALUES, Field, change, outcome, places
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from test_openai_agents import GENERATOR, other_run_items

from tracebridge import TraceError
from tracebridge._changed import FELL
from tracebridge.adapters import openai_agents


def run(name: str) -> Any:
    return asyncio.run(GENERATOR.CASES[name].run()).result


# tool_calling: new_items [ReasoningItem, ToolCallItem, ToolCallOutputItem, MessageOutputItem];
# approval_pending: [MessageOutputItem, ToolCallItem, ToolApprovalItem];
# handoff: [MessageOutputItem, HandoffCallItem, HandoffOutputItem, ToolCallItem, ...].
_CHANGED = "holds what the Agents SDK does not make (was a field changed after it was made?)"


def _frozen(holder: Any, key: str, value: Any) -> None:
    object.__setattr__(holder, key, value)  # a frozen dataclass (ToolOrigin) changed by force


@pytest.mark.parametrize(
    ("case", "change_it", "code", "index", "path", "said"),
    [
        ("tool_calling", lambda r: setattr(r.new_items[1], "agent", "Weather Bot"),
         "malformed_event", 1, "new_items[1].agent",
         f"this ToolCallItem {_CHANGED}: agent is a str the SDK's serializer falls on "
         "(AttributeError: 'str' object has no attribute 'name')"),
        # one Agent object made every item: the first item is refused
        ("tool_calling", lambda r: setattr(r.new_items[1].agent, "name", 5),
         "malformed_event", 0, "new_items[0].agent.name",
         f"this ReasoningItem {_CHANGED}: agent.name is 5, not a string"),
        ("tool_calling", lambda r: setattr(r.new_items[1], "type", "message_output_item"),
         "malformed_event", 1, "new_items[1].type",
         f"this ToolCallItem {_CHANGED}: type is 'message_output_item', not 'tool_call_item'"),
        ("tool_calling", lambda r: setattr(r.new_items[1], "tool_origin", "function"),
         "malformed_event", 1, "new_items[1].tool_origin",
         f"this ToolCallItem {_CHANGED}: tool_origin is str 'function', not a ToolOrigin"),
        ("tool_calling", lambda r: _frozen(r.new_items[1].tool_origin, "type", "function"),
         "malformed_event", 1, "new_items[1].tool_origin",
         "tool_origin is a ToolOrigin the SDK's serializer falls on (AttributeError: "),
        ("tool_calling", lambda r: setattr(r.new_items[2], "custom_data", [1]),
         "malformed_event", 2, "new_items[2].custom_data",
         f"this ToolCallOutputItem {_CHANGED}: custom_data is list [1], not a dict"),
        ("approval_pending", lambda r: setattr(r.new_items[2], "tool_lookup_key", "get"),
         "malformed_event", 2, "new_items[2].tool_lookup_key",
         f"this ToolApprovalItem {_CHANGED}: tool_lookup_key is 'get', not a "
         "FunctionToolLookupKey"),
        ("approval_pending", lambda r: setattr(r.new_items[2], "tool_lookup_key", ("bare",)),
         "malformed_event", 2, "new_items[2].tool_lookup_key",
         "tool_lookup_key is a tuple the SDK's serializer falls on (IndexError: "),
        ("handoff", lambda r: setattr(r.new_items[2], "target_agent", "Billing Agent"),
         "malformed_event", 2, "new_items[2].target_agent",
         f"this HandoffOutputItem {_CHANGED}: target_agent is a str the SDK's serializer"),
        ("tool_calling", lambda r: r.new_items[1].__dict__.pop("raw_item"),
         "malformed_event", 1, "new_items[1].raw_item",
         f"this ToolCallItem {_CHANGED}: raw_item is missing (deleted from the object)"),
        ("tool_calling", lambda r: setattr(r.new_items[1], "raw_item", None),
         "malformed_event", 1, "new_items[1].raw_item",
         "the raw item of a ToolCallItem serialized to NoneType, not a dict"),
        # what the wrapper keeps as metadata must be JSON
        ("tool_calling", lambda r: setattr(r.new_items[1], "description", object()),
         "unserializable_value", 1, "new_items[1].description",
         "expected a JSON value (dict, list, str, int, float, bool, None), got object"),
        ("tool_calling", lambda r: setattr(r.new_items[2], "output", math.nan),
         "unserializable_value", 2, "new_items[2].output", "nan is not a finite number"),
        ("approval_pending", lambda r: setattr(r.new_items[2].raw_item, "arguments", object()),
         "unserializable_value", 2, "new_items[2].raw_item.arguments", "got object"),
        # a raw item's fields: the Responses reader refuses what the SDK's dump holds
        ("tool_calling", lambda r: setattr(r.new_items[1].raw_item, "arguments", 5),
         "malformed_event", 1, "new_items[1].raw_item.arguments",
         "expected a JSON string, got int 5"),
        # the SDK's to_input_list() falls on it (TypeError): the reading says where
        ("tool_calling", lambda r: setattr(r.new_items[0].raw_item, "type", {}),
         "malformed_event", 0, "new_items[0].raw_item.type",
         "an item needs a string 'type' (message, function_call, ...), got dict {}"),
        # the result itself
        ("tool_calling", lambda r: r.new_items.__setitem__(1, {"a": 1}),
         "malformed_event", 1, "new_items[1]",
         "new_items of a run result holds RunItem objects, not dict {'a': 1}"),
        ("tool_calling", lambda r: r.__dict__.pop("new_items"),
         "malformed_event", None, "new_items",
         "this RunResult has no new_items (was it deleted after the run?)"),
    ],
)
@pytest.mark.filterwarnings("ignore")  # pydantic warns when dumping a changed field
def test_a_changed_run_is_refused_where_it_is(
    case: str, change_it: Callable[[Any], None], code: str, index: int | None, path: str,
    said: str,
) -> None:
    result = run(case)
    change_it(result)
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(result, allow_pending=True)
    assert (caught.value.code, caught.value.index, caught.value.path) == (code, index, path)
    assert said in caught.value.detail


def test_a_deleted_field_of_a_run_item_in_a_list_is_refused() -> None:
    _, items = other_run_items()
    del items[0].__dict__["input_id"]
    assert outcome(openai_agents.to_messages, items) == (
        "malformed_event", 0, "items[0].input_id"
    )


@pytest.mark.parametrize(
    ("index", "key", "value", "expected"),
    [
        (1, "raw_item", None, ("malformed_event", 1, "items[1].raw_item")),
        (2, "output", math.nan, ("unserializable_value", 2, "items[2].output")),
        (1, "title", ("t",), ("unserializable_value", 1, "items[1].title")),
        (2, "stripped", {"created_by": object()}, (
            "unserializable_value", 2, "items[2].stripped.created_by")),
    ],
)
def test_a_stored_run_item_keeps_only_json_and_a_dict_raw_item(
    index: int, key: str, value: Any, expected: tuple[str, int, str]
) -> None:
    result = run("tool_calling")
    stored = [RunState._serialize_item(None, item) for item in result.new_items]
    stored[index][key] = value
    assert outcome(lambda t: openai_agents.to_messages(t, input=result.input), stored) == expected


def test_a_field_the_serializer_writes_as_it_is_is_kept_as_it_is() -> None:
    # RunState writes a description as it finds it; what is JSON is kept verbatim.
    result = run("tool_calling")
    result.new_items[1].description = 5
    messages = openai_agents.to_messages(result)
    assert messages[1].metadata["openai_agents"]["run_items"][1] == {
        "type": "tool_call_item", "agent": {"name": "Weather Bot"}, "tool_name": "get_weather",
        "description": 5, "tool_origin": {"type": "function"},
    }


# --- any change ---------------------------------------------------------------------------------

_RESULT_FIELDS = ("input", "new_items")


def run_places(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place inside a run: a result's input and items, a RunItem's fields (an agent's
    name), and inside its raw item (``places``)."""
    if isinstance(value, list):
        for position, item in enumerate(value):
            yield (*prefix, position)
            yield from run_places(item, (*prefix, position))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = type(value).__name__
        names = (_RESULT_FIELDS if kind.startswith("RunResult") else ("name",)
                 if kind == "Agent" else [f.name for f in dataclasses.fields(value)])
        for name in names:
            if not name.startswith("_") and name in value.__dict__:
                yield (*prefix, Field(name))
                yield from run_places(value.__dict__[name], (*prefix, Field(name)))
    elif isinstance(value, (BaseModel, dict)):
        yield from places(value, prefix)


def put(root: Any, place: tuple[Any, ...], value: Any, remove: bool) -> None:
    """``change``, and on a dataclass (frozen ones too) a field set or deleted."""
    holder = root
    for step in place[:-1]:
        holder = holder.__dict__[step] if type(step) is Field else holder[step]
    last = place[-1]
    if type(last) is Field and not isinstance(holder, BaseModel):
        if remove:
            del holder.__dict__[last]
        else:
            object.__setattr__(holder, last, value)
    else:
        change(holder, (last,), value, remove=remove)


def valid(messages: Any) -> Any:
    """What ``outcome`` gave, after checking that each message is what its class accepts."""
    if isinstance(messages, list):
        for message in messages:
            type(message).model_validate(message.model_dump())
    return messages


_LEFT_OUT = (".tool_origin", ".custom_data", ".tool_lookup_key")


@settings(max_examples=150)
@given(st.data(), VALUES, st.booleans())
@pytest.mark.filterwarnings("ignore")  # pydantic warns when dumping a changed field
def test_any_changed_run_reads_or_is_refused_and_reads_as_its_stored_dicts(
    data: st.DataObject, value: Any, remove: bool
) -> None:
    name = data.draw(st.sampled_from([*sorted(GENERATOR.CASES), "mcp"]))
    root: Any = other_run_items()[1] if name == "mcp" else run(name)
    place = data.draw(st.sampled_from(list(run_places(root))))
    put(root, place, copy.deepcopy(value), remove)  # drawn values are shared
    items, given = (root, None) if name == "mcp" else (
        root.__dict__.get("new_items"), root.__dict__.get("input"))
    # any exception but a TraceError fails here
    if name != "mcp":
        valid(outcome(lambda r: openai_agents.to_messages(r, allow_pending=True), root))
    read = valid(outcome(
        lambda t: openai_agents.to_messages(t, input=given, allow_pending=True), items))
    outcome(openai_agents.handoffs, root)
    openai_agents.detect(root)
    if not isinstance(items, list):
        return
    try:  # the dicts RunState stores the items as, when the SDK can write them
        stored = copy.deepcopy([
            RunState._serialize_item(None, item) if type(item).__module__.startswith("agents.")
            else item for item in items
        ])
    except FELL:  # the SDK cannot store it: nothing to compare
        return
    relabelled = type(place[-1]) is Field and place[-1] == "type" and len(place) == (
        2 if name == "mcp" else 3)
    if relabelled or (isinstance(read, tuple) and str(read[2]).endswith(_LEFT_OUT)):
        return  # refused on the object; the stored dict already says otherwise, or lost it
    again = outcome(lambda t: openai_agents.to_messages(t, input=given, allow_pending=True),
                    stored)
    if isinstance(read, tuple) and isinstance(again, tuple):
        assert read[:2] == again[:2]  # one error, at one item (its path may be spelled apart)
    else:
        assert read == again
