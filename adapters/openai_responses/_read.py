"""Reading Responses items (dicts and SDK objects, mixed) into typed messages.

One pass over the items. A user, system or developer ``message`` is one typed message; an
output item is one ``ToolMessage``. The items of one reply (``reasoning``, an assistant
``message``, calls, hosted calls, items kept whole) gather into one ``AIMessage``: its content
items first (reasoning and kept items as parts, the message's parts or string), then its calls.
A content item after a call, or a second assistant message, starts the next reply, unless a
call of the reply still waits for its output item: then the model is still speaking (reasoning
between two calls, a message before each call), and the item joins the reply (``calls_at``
keeps where each call stood among its content items; ``messages``, where each of several
message items stood). A hosted call's result follows the ``AIMessage`` as a ``ToolMessage``.
The conversation rules run last; their errors point at the item (``items[j]``) that breaks
them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tracebridge.errors import TraceError
from tracebridge.messages import (
    AIMessage,
    Citation,
    Content,
    HumanMessage,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
)
from tracebridge.validation import validate

from ..openai_chat._parts import described
from ._item_reader import ItemReader
from ._items import (
    CALL_OUTPUTS,
    HOSTED_CALLS,
    ITEM_TYPES,
    MESSAGE_ROLES,
    OPAQUE_INPUT_ITEMS,
    OPAQUE_REPLY_ITEMS,
    is_sdk_model,
    sdk_dict,
    with_sdk_dicts,
)

__all__ = ["is_item_part", "item_dict", "read_items", "read_placed", "would_write_message"]

def read_items(items: Any, *, source: str, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a list of Responses items; ``source`` names the metadata namespace
    and ``TraceError.source``."""
    return read_placed(items, source=source, allow_pending=allow_pending)[0]


def read_placed(
    items: Any, *, source: str, allow_pending: bool = False
) -> tuple[list[Message], list[int]]:
    """``read_items``, and for each item the index of the message it was first read into: of
    an item of a reply (reasoning, the assistant message, a call, a hosted call, whose result
    follows), the reply's ``AIMessage``; of any other item, its own message."""
    if not isinstance(items, list):
        raise TraceError(
            "malformed_event",
            f"expected a list of Responses items, got {type(items).__name__} (for a Response, "
            "pass response.output; for a request, its input list)",
            source=source,
        )
    built = _Conversation(source)
    places: list[int] = []
    for j, item in enumerate(items):
        built.item(j, item)
        places.append(built.place())
    built.flush()
    built.check(allow_pending)
    return built.messages, places


def item_dict(item: Any, source: str, index: int) -> dict[str, Any]:
    """The item as a plain dict: an object of the openai SDK as ``sdk_dict`` gives it; a dict
    item with the SDK objects among its parts as such dicts too (``with_sdk_dicts``; one
    deeper in it is read where its value is kept: ``ItemPartReader.kept``)."""
    if is_sdk_model(item):
        return sdk_dict(item, f"items[{index}]", index, source)
    if not isinstance(item, Mapping):
        raise TraceError(
            "malformed_event",
            f"expected a Responses item (an object with 'type'), got {described(item)}",
            index=index,
            path=f"items[{index}]",
            source=source,
        )
    return with_sdk_dicts(item, index, source)


@dataclass
class _Reply:
    """The items of one reply read so far."""

    first: int
    content: list[Part] = field(default_factory=list)
    message: dict[str, Any] | None = None
    """The assistant message's id, string content and namespace, once one is read."""
    more: list[dict[str, Any]] = field(default_factory=list)
    """Further assistant messages, read while a call waited for its output item."""
    calls: list[ToolCall] = field(default_factory=list)
    call_items: list[tuple[int, str]] = field(default_factory=list)
    """For each call: its item index and the key its id is under."""
    items_read: int = 0
    """The content items (reasoning, kept items, the message) read so far."""
    calls_at: list[int] = field(default_factory=list)
    """For each call: how many content items came before it."""
    waiting: bool = False
    """A call answered by an output item of its own (no hosted call) is in the reply: the
    output items come after it, so the model is still speaking."""
    hosted: list[tuple[int, ToolMessage]] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    text_length: int = 0
    """How long the reply's text read so far is: its text parts and the string contents of
    its message items, each with the newline that joins it (citations count in it)."""


class _Conversation:
    def __init__(self, source: str) -> None:
        self.source = source
        self.messages: list[Message] = []
        self.origins: list[int] = []
        self.call_items: dict[int, list[tuple[int, str]]] = {}
        self.reply: _Reply | None = None
        self.expected_outputs: dict[str, str] = {}
        """call id -> the output item type its kind of call is answered by."""

    # -- the conversation --

    def add(self, message: Message, origin: int) -> None:
        self.messages.append(message)
        self.origins.append(origin)

    def place(self) -> int:
        """The index of the message being read: the reply read so far, which every later
        message follows (each other item ends it first), or else the last one added."""
        return len(self.messages) if self.reply is not None else len(self.messages) - 1

    def flush(self) -> None:
        reply, self.reply = self.reply, None
        if reply is None:
            return
        namespace: dict[str, Any] = {}
        content: Content = reply.content
        if reply.message is None and not reply.content:
            content = ""  # calls alone: no text
        message_id = None
        if reply.more:  # several message items: each keeps its id, place and keys
            content, namespace["messages"] = listed_messages(reply.message, reply.more,
                                                             reply.content)
        elif reply.message is not None:
            message_id = reply.message["id"]
            namespace = reply.message["namespace"]
            text = reply.message["string"]
            at = reply.message["at"]
            if text is not None:
                if not reply.content:
                    content = text
                else:
                    namespace["content"] = "string"
                    if text:  # where the message stood among the reply's other items
                        content = [*reply.content[:at], TextPart(text=text), *reply.content[at:]]
            parts = content if isinstance(content, list) else []
            # The writer places the message item at its first text part, else at the end:
            # elsewhere (no text, items after it), or not written at all, its place is kept.
            placed = any(not is_item_part(part, self.source) for part in parts)
            if not would_write_message(content, reply.citations, reply.calls, self.source) or (
                not placed and at != len(parts)
            ):
                namespace["message"] = at
            if message_id is not None and text is not None and not namespace:
                namespace["id"] = "item"  # written back on a message item that has no id key
        if any(at != reply.items_read for at in reply.calls_at):
            namespace["calls_at"] = reply.calls_at  # content items after a call: their order
        self.call_items[reply.first] = reply.call_items
        self.add(
            AIMessage(
                content=content,
                tool_calls=reply.calls,
                citations=reply.citations,
                id=message_id,
                metadata={self.source: namespace} if namespace else {},
            ),
            reply.first,
        )
        for j, result in reply.hosted:
            self.add(result, j)

    def open_reply(self, j: int, content_item: bool) -> _Reply:
        reply = self.reply
        if reply is not None and content_item and reply.calls and not reply.waiting:
            self.flush()  # the model speaks again after calling: the next reply
            reply = None
        if reply is None:
            reply = self.reply = _Reply(j)
        if content_item:
            reply.items_read += 1
        return reply

    def add_call(self, j: int, call: ToolCall, key: str) -> _Reply:
        reply = self.open_reply(j, False)
        reply.calls.append(call)
        reply.call_items.append((j, key))
        reply.calls_at.append(reply.items_read)
        return reply

    def check(self, allow_pending: bool) -> None:
        try:
            validate(
                self.messages, allow_pending=allow_pending, source=self.source, origin=self.origins
            )
        except TraceError as error:
            moved = self.relocated(error)
            raise TraceError(
                moved.code,
                moved.detail.replace("messages[", "items["),
                index=moved.index,
                path=moved.path,
                source=moved.source,
            ) from None

    def relocated(self, error: TraceError) -> TraceError:
        """The rule error pointed at the item that breaks the rule (a call's own item)."""
        path = error.path or ""
        found = re.fullmatch(r"messages\[(\d+)\]\.tool_calls\[(\d+)\](\.id)?(.*)", path)
        if found:
            j, key = self.call_items[int(found[1])][int(found[2])]
            suffix = f".{key}" if found[3] else ""
            return error.relocated(index=j, path=f"items[{j}]{suffix}{found[4]}")
        found = re.fullmatch(r"messages\[(\d+)\]\.tool_call_id", path)
        if found:
            return error.relocated(path=f"items[{found[1]}].call_id")
        if error.path is None:  # an error about the whole conversation (none at all)
            return error
        return error.relocated(path=re.sub(r"^messages\[", "items[", path))

    # -- items --

    def item(self, j: int, item: Any) -> None:
        data = item_dict(item, self.source, j)
        reader = ItemReader(self.source, j)
        kind = data.get("type")
        if kind is None and "role" in data:
            kind = "message"  # an EasyInputMessage: role and content alone
        elif kind is None and "id" in data and data.keys() <= {"id", "type"}:
            reader.fail(  # the SDK's ItemReference: its type may be left out
                "unknown_role",
                reader.root,
                "an item with an 'id' alone is an item reference (item_reference), which "
                "names an item stored by the API instead of holding it; pass the item itself",
            )
        elif data.get("object") == "response":
            reader.fail(
                "malformed_event",
                reader.root,
                "a Response is not an item: pass its items (response.output) instead",
            )
        elif type(kind) is not str:
            reader.fail(
                "malformed_event",
                f"{reader.root}.type",
                f"an item needs a string 'type' (message, function_call, ...), got "
                f"{described(kind) if 'type' in data else 'none'}",
            )
        elif kind.startswith("response."):
            reader.fail(
                "streaming_chunk",
                reader.root,
                f"a streaming event {kind!r}: take the items of the finished response "
                "(response.output) instead",
            )
        elif kind not in ITEM_TYPES:
            reader.fail(
                "unknown_role",
                f"{reader.root}.type",
                f"unknown item type {kind!r}; accepted types: {', '.join(sorted(ITEM_TYPES))}",
            )
        if kind == "message":
            self.message(reader, data)
        elif kind == "reasoning":
            if self.reply is not None and self.reply.message is not None and (
                not self.reply.waiting
            ):
                self.flush()  # reasoning comes before the message it leads to: the next reply
            self.open_reply(j, True).content.extend(reader.reasoning(data))
        elif kind in OPAQUE_REPLY_ITEMS:
            self.open_reply(j, True).content.append(reader.whole(data))
        elif kind in OPAQUE_INPUT_ITEMS:
            self.flush()
            self.add(HumanMessage(content=[reader.whole(data)]), j)
        elif kind in CALL_OUTPUTS:
            call = reader.call(data, kind)
            assert call.id is not None
            self.expected_outputs[call.id] = CALL_OUTPUTS[kind]
            self.add_call(j, call, "call_id").waiting = True
        elif kind in HOSTED_CALLS:
            call, result = reader.hosted(data, kind)
            self.add_call(j, call, "id").hosted.append((j, result))
        else:
            self.flush()
            self.add(reader.output(data, kind, self.expected_outputs), j)

    def message(self, reader: ItemReader, data: dict[str, Any]) -> None:
        given = "role" in data
        role = data.pop("role", None)
        if not isinstance(role, str) or role not in MESSAGE_ROLES:  # no == on another class
            reader.fail(
                "unknown_role" if given else "malformed_event",
                f"{reader.root}.role",
                f"a message item needs a role ({', '.join(MESSAGE_ROLES)}), got "
                f"{described(role)}",
            )
        if role != "assistant":
            self.flush()
            self.add(reader.input_message(data, role), reader.index)
            return
        reply = self.reply
        if reply is not None and reply.message is not None and not reply.waiting:
            self.flush()
        reply = self.open_reply(reader.index, True)
        reader.citations = reply.citations
        reader.offset = len(reply.content)
        reader.text_before = reply.text_length
        if reply.message is not None:  # a further message while a call waits for its output
            reader.nth_message = 1 + len(reply.more)
        read = reader.assistant_message(data, reply.content)
        read["parts"] = len(reply.content) - reader.offset
        reply.text_length += _text_length(reply.content[reader.offset:], read["string"])
        if reply.message is None:
            reply.message = read
        else:
            reply.more.append(read)


def _text_length(parts: list[Part], string: str | None) -> int:
    """How much a message item's text ``parts``, or its ``string`` content, add to the
    reply's text (each with its newline; an empty string content adds nothing)."""
    if string:
        return len(string) + 1
    return sum(len(part.text) + 1 for part in parts if isinstance(part, TextPart))


def listed_messages(
    first: dict[str, Any] | None, more: list[dict[str, Any]], read: list[Part]
) -> tuple[list[Part], list[dict[str, Any]]]:
    """The content of a reply of several message items (a string content as a text part),
    and what each item keeps: its ``id``, where its parts stand (``at``, ``parts``), its
    ``content: "string"`` and its own kept keys (``fields``, ``type``)."""
    assert first is not None  # (more follow a first)
    content = list(read)
    listed: list[dict[str, Any]] = []
    for message in (first, *more):
        at = message["at"] + len(content) - len(read)  # after the texts of string contents
        entry: dict[str, Any] = {"at": at, "parts": message["parts"], **message["namespace"]}
        if message["id"] is not None:
            entry["id"] = message["id"]
        text = message["string"]
        if text is not None:
            entry["content"] = "string"
            if text:
                content.insert(at, TextPart(text=text))
                entry["parts"] = 1
        listed.append(entry)
    return content, listed


def would_write_message(
    content: Content, citations: list[Citation], calls: list[ToolCall], source: str
) -> bool:
    """Whether the writer writes a message item for a reply of this content (see ``_write``).
    An id alone makes none: ids are provenance, written only on an item there is anyway."""
    if citations:
        return True
    if isinstance(content, str):
        return content != "" or not calls
    spoken = [part for part in content if not is_item_part(part, source)]
    return bool(spoken) or not content


def is_item_part(part: Part, source: str) -> bool:
    """Whether a reply's part stands for an item of its own (reasoning, or a kept item)."""
    if isinstance(part, ReasoningPart):
        return True
    kept = part.metadata.get(source)
    return isinstance(part, OpaquePart) and isinstance(kept, dict) and kept.get("item") is True
