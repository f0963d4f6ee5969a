"""OpenAI Responses API items <-> tracebridge messages.

A trace is a list of Responses items: what ``client.responses.create(input=...)`` takes and
``response.output`` holds, as plain dicts (the ``*Param`` TypedDicts) mixed with the SDK's
``openai.types.responses`` objects (read as the keys they were given). ``from_messages`` gives
back plain item dicts, equal to the source.

=====================================  ===================================================
item                                   typed
=====================================  ===================================================
``message`` user / system / developer  ``HumanMessage`` / ``SystemMessage(role=...)``
``message`` assistant                  the text and refusal parts of an ``AIMessage``
``reasoning``                          a ``ReasoningPart`` of the ``AIMessage`` per text: the
                                       summary's, the raw ``content``'s (marked)
``function_call``                      a ``ToolCall`` (``id`` = ``call_id``)
``custom_tool_call``                   a ``ToolCall(kind="custom", args={"input": text})``
``computer_call``, ``local_shell_call``,
``shell_call``, ``apply_patch_call``   a ``ToolCall`` named for the type (input in ``args``)
``*_output`` of those                  a ``ToolMessage`` (``tool_call_id`` = ``call_id``)
hosted ``web_search_call``, ...        a ``ToolCall`` (its input) + a ``ToolMessage`` (its
                                       result as JSON text), written back as one item
``mcp_list_tools``,
``mcp_approval_request``               an ``OpaquePart`` of the ``AIMessage``, kept whole
``mcp_approval_response``              a ``HumanMessage`` holding it as an ``OpaquePart``
=====================================  ===================================================

The items of one reply (reasoning, the assistant message, calls) make one ``AIMessage``; the
full table, and what ``metadata["openai_responses"]`` keeps, is in
``docs/adapters/openai_responses.md``. Any other item type is ``unknown_role``.

``read_items`` / ``write_items`` take the metadata namespace as ``source``, for adapters that
build on this one (``openai_agents``).

>>> from tracebridge.adapters import openai_responses
>>> items = [{"role": "user", "content": "hi"},
...          {"type": "function_call", "call_id": "c1", "name": "now", "arguments": "{}"},
...          {"type": "function_call_output", "call_id": "c1", "output": "noon"}]
>>> openai_responses.from_messages(openai_responses.to_messages(items)) == items
True
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from tracebridge.messages import Message
from tracebridge.options import AdapterOptions

from ._items import (
    CALL_OUTPUTS,
    HOSTED_CALLS,
    ITEM_TYPES,
    MESSAGE_ROLES,
    NAME,
    is_sdk_item,
    is_sdk_model,
)
from ._parts import PLACES
from ._read import item_dict, read_items
from ._write import DROPPABLE, write_items

__all__ = [
    "CALL_OUTPUTS",
    "DROPPABLE",
    "HOSTED_CALLS",
    "ITEM_TYPES",
    "NAME",
    "detect",
    "from_messages",
    "options",
    "item_dict",
    "read_items",
    "to_messages",
    "write_items",
]

options = AdapterOptions(NAME)
"""What ``to_messages`` and ``from_messages`` accept (``reader`` and ``writer``)."""


def to_messages(trace: Any, *, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a list of Responses items (dicts and SDK objects, mixed)."""
    return read_items(trace, source=NAME, allow_pending=allow_pending)


def from_messages(
    messages: Any, *, drop: Collection[str] = (), drop_names: bool = False
) -> list[dict[str, Any]]:
    """Responses item dicts, ready to send as ``input``.

    ``drop`` accepts losses the format cannot avoid, by name (see ``DROPPABLE``): ``is_error``
    (output items have no error flag), ``reasoning`` (a reasoning part without the id of its
    item, or outside a reply), ``mime_types`` (an image by URL or a file by id or URL has no
    mime type field), ``refusals`` (a refusal outside a reply), ``citations`` (a citation
    without url, title and both indexes, or with cited text), ``audio_replies`` (a reply has
    no audio), ``audio_parts`` (a message takes no audio part, one read from a Responses
    trace aside; a tool output or a reply none at all), ``unanswered_calls`` (a call no result
    answers), ``opaque_parts`` (a block from another format). Without it they raise
    ``not_representable``. Message items have no name (of a person, an agent, or a tool on an
    output other than a function's): ``drop_names=True`` leaves them out (it is True or False:
    any other value is a ``ValueError``). Calls without ids have no place at all.
    """
    return write_items(messages, source=NAME, drop=drop, drop_names=drop_names)


_KEYS = frozenset(("type", "role", "content", "id", "status", "phase"))


def detect(trace: Any) -> bool:
    """True for a non-empty list of Responses items with at least one Responses marker.

    Each element is an SDK Responses item object or an item dict of a known ``type``, or a
    type-less message (``role`` and ``content``); at least one has a ``type``, a ``phase``
    (``commentary``, ``final_answer``) or a content part of a Responses type (``input_text``,
    ``output_text``...). A plain list of ``{"role", "content"}`` dicts is left to the chat
    formats (it reads the same here).
    """
    if not isinstance(trace, list) or not trace:
        return False
    marked = False
    for item in trace:
        if is_sdk_item(item):
            # an item class (not a Response, an event or a part): a known type, or a message
            kind = getattr(item, "type", None)
            if kind is None:
                kind = "message" if getattr(item, "role", None) in MESSAGE_ROLES else None
            if type(kind) is not str or kind not in ITEM_TYPES:
                return False
            marked = True
            continue
        if not isinstance(item, dict):
            return False
        kind = item.get("type")
        # isinstance first: no == on a value of another class (a numpy array's has no truth)
        if kind is not None and not (isinstance(kind, str) and kind == "message"):
            if type(kind) is not str or kind not in ITEM_TYPES:
                return False
            marked = True
            continue
        role = item.get("role")
        if not isinstance(role, str) or role not in MESSAGE_ROLES or not item.keys() <= _KEYS:
            return False
        content = item.get("content")
        if isinstance(content, list):
            if not all(_is_part(part, item["role"]) for part in content):
                return False
            marked = marked or bool(content)
        elif type(content) is not str:
            return False
        marked = marked or kind == "message" or "phase" in item  # no chat message has one
    return marked


def _is_part(part: Any, role: str) -> bool:
    """A content part of a message of ``role``: a dict, or the SDK's part object (an item
    dict holding ``response.output[0].content`` is read as its dump)."""
    if isinstance(part, dict):
        return part.get("type") in PLACES[role]
    return is_sdk_model(part) and getattr(part, "type", None) in PLACES[role]
