"""LlamaIndex: ``ChatMessage`` lists (memory histories) and AgentWorkflow event streams.

``to_messages`` reads a list of ``ChatMessage`` objects or their ``model_dump(mode="json")``
dicts; ``from_messages`` gives ``ChatMessage`` objects back, so that

    [m.model_dump(mode="json") for m in from_messages(to_messages(history))]
    == [m.model_dump(mode="json") for m in history]

``events_to_messages`` rebuilds the conversation from the events an ``AgentWorkflow`` /
``FunctionAgent`` run streams (``handler.stream_events()``), objects or ``dump_events`` dicts.

>>> from llama_index.core.llms import ChatMessage
>>> to_messages([ChatMessage(role="user", content="hi")])
[HumanMessage(type='human', content='hi', name=None, id=None, metadata={})]

The full mapping is in ``docs/adapters/llama_index.md``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from tracebridge import AIMessage, Message, SystemMessage, ToolMessage, TraceError
from tracebridge._changed import FELL, refusal
from tracebridge._drop import check_drop
from tracebridge._gc import pause_gc, resume_gc
from tracebridge._shape import UNCHECKED, unchecked_field
from tracebridge.errors import short_repr
from tracebridge.messages import checked_messages
from tracebridge.options import AdapterOptions
from tracebridge.validation import validate

from ._blocks import NAME, llama_types, not_representable
from ._events import EVENT_TYPES, dump_events, events_to_messages
from ._fast import read_item, writer
from ._idless import check_gathered, taken_by_position
from ._kept import own
from ._messages import (
    chat_message_dump,
    dump_from_message,
    is_chat_message,
    legacy_image_documents,
    message_from_dump,
)
from ._parts import restore_mimetypes

__all__ = [
    "EVENT_TYPES",
    "DROPPABLE",
    "NAME",
    "detect",
    "dump_events",
    "events_to_messages",
    "from_messages",
    "options",
    "strip_event_extras",
    "to_messages",
]

options = AdapterOptions(NAME)
"""What ``to_messages`` and ``from_messages`` accept (``reader`` and ``writer``)."""

DROPPABLE = (
    "is_error", "refusals", "mime_types", "citations", "opaque_parts", "file_ids", "filenames",
    "event_extras",
)
"""What ``from_messages(drop=...)`` may leave out, each where a ChatMessage has no place for it:

* ``is_error``: a tool result's error flag;
* ``refusals``: a ``RefusalPart`` that is not the last part of an assistant message's content
  (LlamaIndex keeps one refusal, in ``additional_kwargs["refusal"]``);
* ``mime_types``: an audio part's mime type that names no audio format; an image by URL
  whose mime type is the one LlamaIndex derives from the URL (written, but read back as None);
  and an empty mime type (or kept audio format) that LlamaIndex would replace by its own
  guess (written as none);
* ``citations``: a citation with cited text (an OpenAI ``url_citation`` has no field for it);
* ``opaque_parts``: an ``OpaquePart`` that is not a LlamaIndex block;
* ``file_ids``: a ``FilePart`` named only by a provider file id (a block needs data, a URL or
  a path). A file id beside data or a URL is refused, not dropped;
* ``filenames``: a ``FilePart``'s filename that no block reads back as itself: ``""`` and
  ``"input_document"`` (the title LlamaIndex gives a document without one, also for ``""``,
  which reads as no filename), and any filename of a video (a VideoBlock has no title);
* ``event_extras``: ``metadata["llama_index"]["event"]``, what only an event stream says of a
  message (``return_direct``, ``raw_output``, ``raw_input``, ``tool_kwargs``,
  ``structured_response``, ``no_system_prompt``, ``run_ended``, ``human_input``; see
  ``events_to_messages``).
"""


def detect(trace: Any) -> bool:
    """True for a non-empty list of ChatMessage objects or dicts with ``role`` and ``blocks``."""
    return isinstance(trace, list) and bool(trace) and all(map(_looks_like_message, trace))


def _looks_like_message(item: Any) -> bool:
    return is_chat_message(item) or (isinstance(item, dict) and {"role", "blocks"} <= item.keys())


def _dump(item: Any, i: int) -> Any:
    return chat_message_dump(item, i, f"messages[{i}]") if is_chat_message(item) else item


def to_messages(trace: Any, *, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a ChatMessage list (objects, dicts, or both mixed).

    Every message maps one to one, so errors carry the list index. Roles: system and
    developer -> SystemMessage (``role`` says which), user -> HumanMessage, assistant,
    chatbot and model -> AIMessage, tool and function -> ToolMessage; any other role is
    ``unknown_role``.
    """
    if not isinstance(trace, list):
        raise TraceError(
            "malformed_event",
            f"expected a list of ChatMessage objects or dicts, got {type(trace).__name__} "
            f"{short_repr(trace)}",
            source=NAME,
        )
    paused = pause_gc()  # the rules too: they make no cycles either (see pause_gc)
    try:
        try:
            messages = [
                read_item(item) or message_from_dump(_dump(item, i), i, f"messages[{i}]")
                for i, item in enumerate(trace)
            ]
        except FELL:
            messages = _read_one_by_one(trace)  # to say which message, and what is wrong
        try:
            validate(messages, allow_pending=allow_pending, source=NAME)
        except TraceError as error:
            raise taken_by_position(messages, error) or error from None
        check_gathered(messages)
    finally:
        resume_gc(paused)
    return messages


def _read_one_by_one(trace: list[Any]) -> list[Message]:
    """``to_messages``' reading, for a trace on which it fell with an exception of its own: a
    ChatMessage object whose fields were changed after it was made is refused where LlamaIndex
    would refuse it; if LlamaIndex accepts the object, the fault is ours, shown as it is."""
    messages = []
    for i, item in enumerate(trace):
        try:
            messages.append(
                read_item(item) or message_from_dump(_dump(item, i), i, f"messages[{i}]")
            )
        except FELL as exc:
            refused = (refusal(item, f"messages[{i}]", "LlamaIndex", index=i, source=NAME)
                       if is_chat_message(item) else None)
            if refused is None:
                raise
            raise refused from exc
    return messages


def from_messages(messages: Sequence[Message], *, drop: Collection[str] = ()) -> list[Any]:
    """``ChatMessage`` objects for typed messages.

    The conversation rules are checked first, as ``to_messages`` checks them (a result that
    answers nothing, a repeated call id, a call left unanswered before the conversation goes
    on, no message at all raise the rule's code; calls still unanswered at the end are
    written). What a ChatMessage has no place for raises ``not_representable`` unless
    ``drop`` names it (``DROPPABLE``). Message ids are provenance (like other adapters'
    metadata) and are not written. Mimetypes are set exactly as the parts give them, except
    that an image by URL without one gets the type LlamaIndex derives from the URL (it reads
    back as None). A media block LlamaIndex would not hold as written (data that is not
    base64 text, an empty mimetype it replaces, a path that names no file here) is
    ``not_representable`` at the part's field. A part read from a block given by a base64
    ``data:`` URL (``data_url`` in its metadata) is written as that URL again; a part whose
    ``url`` is such a URL is ``not_representable`` (a block would read it back as inline
    data).
    """
    check_drop(drop, DROPPABLE)
    llama_types()  # (a missing llama-index-core is said before anything else)
    typed = checked_messages(messages, NAME)
    paused = pause_gc()  # ChatMessages make no cycles either (see pause_gc)
    try:
        # the conversation rules first, as the readers check them (a conversation may end on
        # calls still unanswered, which they take with allow_pending=True)
        validate(typed, allow_pending=True, source=NAME)
        return each_written(typed, frozenset(drop))
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        refused = unchecked_field(typed, NAME)
        if refused is None:
            raise
        raise refused from None
    finally:
        resume_gc(paused)


def each_written(typed: list[Message], losses: frozenset[str]) -> list[Any]:
    """``from_messages``' writing, message by message, after the conversation rules: the
    ChatMessage of each typed message (``losses``: what ``drop`` names)."""
    types = llama_types()
    fast = writer()
    built = []
    for k, message in enumerate(typed):
        made = None if fast is None else fast(message, losses)
        if made is not None:
            built.append(made)
            continue
        try:
            built.append(_chat_message(types, dump_from_message(message, k, losses), k))
        except TraceError as error:
            raise error.relocated(index=k) from None
    return built


def _chat_message(types: Any, dump: dict[str, Any], k: int) -> Any:
    extra = dump["additional_kwargs"]
    # Legacy images are attached after validation: validating them would append their
    # image blocks a second time (the blocks already hold them).
    images = extra.pop("images") if extra.get("images") else None
    try:
        chat_message = types.ChatMessage.model_validate(dump)
    except ValidationError as error:
        raise not_representable(
            f"LlamaIndex refuses the message: {error.errors()[0]['msg']} at "
            f"{'.'.join(map(str, error.errors()[0]['loc']))}",
            f"messages[{k}]",
        ) from None
    restore_mimetypes(chat_message, dump["blocks"])
    if images is not None:
        chat_message.additional_kwargs["images"] = legacy_image_documents(images)
    return chat_message


def strip_event_extras(messages: Iterable[Message]) -> list[Message]:
    """The messages without what only an event stream knows, to compare with a memory history.

    Drops SystemMessages with role ``system`` (the agents' system prompts are in the events,
    not in memory; an agent's prompt is never a developer message, so those stay), and clears
    ``AIMessage.name`` (the agent name), ``ToolMessage.name`` (the tool name) and
    ``ToolMessage.is_error`` of results with a call id (every ``ToolCallResult`` has one:
    ``""`` for a call without an id, which such a result keeps, as memory keeps it; an id-less
    ``function`` result comes from the history, name and all), and
    ``metadata["llama_index"]["event"]`` (``return_direct``, ``structured_response``, a tool
    output's ``raw_output`` and ``raw_input``, the ``tool_kwargs`` a call whose text did not
    parse ran with, ``no_system_prompt``, the ``run_ended`` events of a run that ended early,
    the ``human_input`` events of a tool that waited for a human).

    A ``metadata["llama_index"]`` that is not a dict (no reader keeps one) is refused as
    ``from_messages`` refuses it: ``not_representable`` at ``messages[i].metadata.llama_index``.
    """
    stripped: list[Message] = []
    for k, message in enumerate(messages):
        if isinstance(message, SystemMessage) and message.role == "system":
            continue  # system prompts are one of the extras this function exists to remove
        update: dict[str, Any] = {}
        kept = _own_kept(message, k)
        if "event" in kept:
            kept = dict(kept)
            del kept["event"]
            metadata = {key: value for key, value in message.metadata.items() if key != NAME}
            update["metadata"] = {**metadata, NAME: kept} if kept else metadata
        if isinstance(message, AIMessage):
            update["name"] = None
        if isinstance(message, ToolMessage) and (message.tool_call_id is not None
                                                 or _names_idless_call(kept)):
            update["name"] = None
            update["is_error"] = False
        stripped.append(message.model_copy(update=update))
    return stripped


def _names_idless_call(kept: dict[str, Any]) -> bool:
    """Whether a result without a call id keeps the ``""`` FunctionAgent gives the result of a
    call without one (a ``ToolCallResult``'s, or memory's copy of it)."""
    extra = kept.get("additional_kwargs")
    return type(extra) is dict and extra.get("tool_call_id") == ""


def _own_kept(message: Message, k: int) -> dict[str, Any]:
    if NAME not in message.metadata:
        return {}
    try:
        return own(message.metadata, f"messages[{k}]")
    except TraceError as error:
        raise error.relocated(index=k) from None
