"""OpenAI Chat Completions messages <-> tracebridge messages.

A trace is the ``messages`` list an application sends to ``chat.completions.create``: plain
dicts (the ``*Param`` TypedDicts) mixed with ``ChatCompletionMessage`` objects taken from
responses. ``from_messages`` gives back plain dicts ready for the API, equal to the source
(null-valued keys and which optional keys were present included).

What the typed fields do not hold is kept under ``metadata["openai_chat"]``:

* ``role``: ``"developer"`` on a SystemMessage that came from a developer message;
* ``content``: ``"null"`` or ``"absent"`` when an empty content was ``None`` or missing;
* ``fields``: every other source key, verbatim (``refusal``, ``audio``, ``annotations``,
  null-valued ``tool_calls``/``function_call``/``name``, unknown keys);
* on a ToolCall: ``type: "custom"``, ``arguments`` (the exact argument text when
  ``json.dumps(args)`` would spell it differently), ``fields``/``inner`` (unknown keys of the
  call and of its ``function``/``custom`` object);
* on a part: ``fields``/``inner`` (unknown keys of the part and of its inner object).

The Swarm adapter reuses this module with another ``Dialect`` (other name keys, its own
metadata namespace).

>>> from tracebridge.adapters import openai_chat
>>> trace = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None}]
>>> openai_chat.from_messages(openai_chat.to_messages(trace)) == trace
True
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from tracebridge.messages import Message

from ._read import _MESSAGE_CLASSES, ROLES, Dialect, parse_arguments, read_trace
from ._write import DROPPABLE, write_trace

__all__ = [
    "DROPPABLE",
    "NAME",
    "ROLES",
    "Dialect",
    "detect",
    "from_messages",
    "parse_arguments",
    "to_messages",
]

NAME = "openai_chat"

OPENAI = Dialect(NAME, {role: "name" for role in ROLES})


# --- public surface ------------------------------------------------------------------------


def to_messages(trace: Any, *, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a list of Chat Completions message dicts and SDK message objects."""
    return read_trace(trace, OPENAI, allow_pending=allow_pending)


def from_messages(messages: Any, *, drop: Collection[str] = ()) -> list[dict[str, Any]]:
    """Plain Chat Completions message dicts, ready to send to the API.

    ``drop`` accepts losses the format cannot avoid, by name (see ``DROPPABLE``):
    ``is_error`` (tool results have no error flag), ``reasoning`` (there is no reasoning
    part), ``mime_types`` (an image by URL or a file by id has no mime type field).
    Without it they raise ``not_representable``. Message ids are provenance, not content
    (other adapters' metadata is not carried either): they are not written.
    """
    return write_trace(messages, OPENAI, drop=drop)


def detect(trace: Any) -> bool:
    """True for a non-empty list of role-keyed message dicts / ``ChatCompletionMessage``s.

    Lists with Swarm's ``sender`` or ``tool_name`` keys belong to the swarm adapter.
    """
    if not isinstance(trace, list) or not trace:
        return False
    for item in trace:
        if type(item).__name__ in _MESSAGE_CLASSES and type(item).__module__.startswith("openai."):
            continue
        if not isinstance(item, dict) or item.get("role") not in ROLES:
            return False
        if "sender" in item or "tool_name" in item:
            return False
        if "content" not in item and not ("tool_calls" in item or "function_call" in item):
            return False
    return True


