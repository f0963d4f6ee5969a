"""Writing a reply of several assistant message items, as the reader kept them.

A reasoning model on the Responses API may write a short message before each of its calls
(``[reasoning, message, function_call, message, function_call]``). The reader gathers them
into one ``AIMessage`` and keeps, in ``metadata[<adapter>]["messages"]``, one entry per
message item: where its parts stand in the content (``at``, ``parts``), its ``id``, a string
content (``content: "string"``), a missing ``type`` (``type: "absent"``) and its other keys
(``fields``). A citation goes on the text part its span falls in, whichever message item holds
it, unless it names where it was read from (``message: k``, left out for the first, and
``part``). A reply whose entries no longer fit its content is refused where they say otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tracebridge.errors import short_repr
from tracebridge.messages import AIMessage, Part, TextPart

from ._read import is_item_part

if TYPE_CHECKING:
    from ._reply_writer import ReplyWriter

__all__ = ["listed_items"]

_ENTRY_KEYS = ("at", "parts", "id", "content", "type", "fields")
"""What an entry of ``messages`` holds (as ``to_messages`` writes it)."""

_ONE_MESSAGE_KEYS = ("fields", "id", "type", "content", "message")
"""The keys of a reply's namespace that describe its one message item."""


def listed_items(
    writer: ReplyWriter, message: AIMessage, namespace: dict[str, Any], listed: Any
) -> list[tuple[str, dict[str, Any] | None, str]]:
    """The reply's content items in order (as ``ReplyWriter.content_items``), its message
    items placed and written as the ``listed`` entries say."""
    where = f".metadata.{writer.source}.messages"
    for key in _ONE_MESSAGE_KEYS:
        if key in namespace:
            writer.refuse(
                f"a reply of several message items keeps each item's keys in its entry of "
                f"metadata.{writer.source}.messages; {key!r} beside them would be lost",
                f".metadata.{writer.source}.{key}",
            )
    if message.id is not None:
        writer.refuse(
            f"a reply of several message items has no id of its own: each item's id is in its "
            f"entry of metadata.{writer.source}.messages (found {message.id!r})",
            ".id",
        )
    parts = [] if isinstance(message.content, str) else list(message.content)
    spans = _spans(writer, listed, parts, where)
    texts = [(j, part.text) for j, part in enumerate(parts) if isinstance(part, TextPart)]
    writer.place_citations(message.citations, texts, spans)
    covered = {j for start, end in spans for j in range(start, end)}
    items: list[tuple[str, dict[str, Any] | None, str]] = []
    k = 0
    for j, part in enumerate([*parts, None]):
        while k < len(spans) and spans[k][0] == j:
            start, end = spans[k]
            item = _message_item(writer, listed[k], f"{where}[{k}]", parts[start:end], start)
            items.append(("message", item, f".content[{start}]" if end > start else ""))
            k += 1
        if part is not None and j not in covered:
            writer.add_own_item(items, parts, j)
    return items


def _spans(
    writer: ReplyWriter, listed: Any, parts: list[Part], where: str
) -> list[tuple[int, int]]:
    """For each entry, the content parts of its message item (from, to); entries that do not
    fit the content (a part of no item, an item over reasoning) are ``malformed_event``."""
    if not isinstance(listed, list) or len(listed) < 2:
        writer.malformed(
            f"metadata.{writer.source}.messages lists the reply's message items (two or more), "
            f"as to_messages writes it; got {short_repr(listed)}",
            where,
        )
    spans: list[tuple[int, int]] = []
    end = 0
    for k, entry in enumerate(listed):
        path = f"{where}[{k}]"
        if not isinstance(entry, dict):
            writer.malformed(f"an entry of metadata.{writer.source}.messages is an object "
                             f"({', '.join(_ENTRY_KEYS)}); got {short_repr(entry)}", path)
        _check_entry(writer, entry, path)
        at, count = entry.get("at"), entry.get("parts")
        if type(at) is not int or not end <= at <= len(parts):
            writer.malformed(
                f"'at' is where the message item's parts start in the content, after the item "
                f"before it: from {end} to {len(parts)}; got {short_repr(at)}",
                f"{path}.at",
            )
        if type(count) is not int or not 0 <= count <= len(parts) - at:
            writer.malformed(
                f"'parts' is how many content parts from content[{at}] on are the message "
                f"item's: 0 to {len(parts) - at}; got {short_repr(count)}",
                f"{path}.parts",
            )
        for j in range(end, at + count):
            own = is_item_part(parts[j], writer.source)
            if own == (j >= at):  # an item's part in the message, or a message's part outside
                what = "an item of its own (reasoning, a kept item)" if own else (
                    "a part of no message item"
                )
                writer.malformed(
                    f"content[{j}] is {what}: the message item's 'at' and 'parts' no longer "
                    "fit the content",
                    f"{path}.parts" if own else f"{path}.at",
                )
        spans.append((at, at + count))
        end = at + count
    for j in range(end, len(parts)):
        if not is_item_part(parts[j], writer.source):
            writer.malformed(
                f"content[{j}] is a part of no message item: the entries no longer fit the "
                "content",
                where,
            )
    return spans


def _check_entry(writer: ReplyWriter, entry: dict[str, Any], path: str) -> None:
    """Refuse an entry's key the reader does not write so."""
    for key, value in entry.items():
        if key not in _ENTRY_KEYS:
            writer.malformed(f"an entry of metadata.{writer.source}.messages holds "
                             f"{', '.join(_ENTRY_KEYS)}; got {key!r}", f"{path}.{key}")
        fits = {
            "id": type(value) is str,
            "content": value == "string",
            "type": value == "absent" and entry.get("content") != "string",
            "fields": isinstance(value, dict),
        }.get(key, True)
        if not fits:
            writer.malformed(
                f"an entry's {key!r} is, as to_messages writes it: id a string, content "
                "'string', type 'absent' (a message with parts and no type key), fields an "
                f"object; got {short_repr(value)}",
                f"{path}.{key}",
            )


def _message_item(
    writer: ReplyWriter,
    entry: dict[str, Any],
    path: str,
    spoken: list[Part],
    first: int,
) -> dict[str, Any]:
    """One message item: ``spoken`` are its parts, from ``content[first]`` on (the
    annotations of their citations placed by ``place_citations``)."""
    out: dict[str, Any] = {"role": "assistant"}
    if entry.get("content") == "string":
        cited = [k for j in range(first, first + len(spoken))
                 for k, _ in writer.annotations.get(j, [])]
        if cited:
            writer.refuse(
                f"the citation annotates a message item whose content is a string ({path[1:]}"
                ".content), which has no annotations",
                f".citations[{cited[0]}]",
            )
        text = ""
        if spoken:
            part = spoken[0]
            if not (
                len(spoken) == 1
                and type(part) is TextPart
                and part.text
                and not writer.namespace(part.metadata)
            ):
                writer.refuse(
                    "a message item's string content reads as one text part (none when "
                    f"empty), with nothing kept; these {len(spoken)} parts would read back "
                    "otherwise",
                    f"{path}.content",
                )
            text = part.text
        out["content"] = text
    else:
        out["content"] = writer.written_parts(spoken, first)
        if entry.get("type") != "absent":
            out["type"] = "message"
    if "id" in entry:
        out["id"] = entry["id"]
    fields = entry.get("fields")
    if fields:
        parts_given = isinstance(out["content"], list)
        # the reader takes a string id, and a type "message" of a message with parts
        writer.check_kept(fields, out, f"{path}.fields", lambda key, value: value is not None and (
            key == "id" or (key == "type" and (value != "message" or parts_given))
        ))
        out.update(fields)
    return out
