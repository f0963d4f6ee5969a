"""Writing one typed reply as the items the API produced, and the call items in it.

``ReplyWriter`` writes an ``AIMessage``: reasoning and kept items where its content has them,
one assistant ``message`` item (text, refusals, citations as ``url_citation`` annotations),
then one item per call (a hosted call with the ``ToolMessage`` that holds its result, as the
one item it was read from); a kept ``calls_at`` places calls among the content items, as they
were read, and a kept ``messages`` writes several message items (``_message_items``).
``_write`` adds the other messages and the order rules.

A citation goes on the ``output_text`` part its span falls in (its indexes count characters
of the reply's text, the text parts joined by a newline; an annotation counts them in its own
part), or where it was read from (its kept ``part`` and ``message``). A reply everything of
which ``drop`` leaves out is still written, as an empty message item.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Sequence
from typing import Any

from tracebridge._json import check_json
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import (
    AIMessage,
    Citation,
    OpaquePart,
    Part,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
)

from ..openai_chat._read import read_arguments
from ..openai_chat._write import _arguments, custom_input
from ._item_reader import MESSAGE_ID_PREFIX, spelled_json
from ._items import CALL_OUTPUTS, HOSTED_CALLS, OPAQUE_REPLY_ITEMS, RESULT_KEYS, call_name
from ._message_items import listed_items
from ._parts import ItemPartWriter, taken, taken_always
from ._read import is_item_part, would_write_message

__all__ = ["ReplyWriter", "item_of"]

_CITATION_FIELDS = ("url", "title", "start_index", "end_index")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is no JSON value")


_STRICT_JSON = json.JSONDecoder(parse_constant=_no_constant)
"""JSON text as JSON spells it: ``NaN``, ``Infinity`` and ``-Infinity`` (which Python's json
reads and writes) are refused, as the item would hold no JSON value."""


def item_of(call: ToolCall, source: str) -> str | None:
    """The item type a call was read from, when not a function or custom call."""
    kept = call.metadata.get(source)
    item = kept.get("item") if isinstance(kept, dict) else None
    return item if isinstance(item, str) else None


class _TextParts:
    """A reply's text parts in order, and where each starts in the reply's text (the parts
    joined by a newline, as ``.text`` joins them); a part is found by bisection."""

    def __init__(self, texts: list[tuple[int, str]]) -> None:
        self.indexes = [j for j, _ in texts]
        """The content index of each text part, rising."""
        self.starts: list[int] = []
        """Where each part's text starts in the reply's text, rising."""
        self.lengths = [len(text) for _, text in texts]
        at = 0
        for length in self.lengths:
            self.starts.append(at)
            at += length + 1
        self.start_of = dict(zip(self.indexes, self.starts, strict=True))
        """Content index -> where that part's text starts."""

    def holding(self, start: int, end: int) -> int | None:
        """The content index of the part the span ``start`` to ``end`` falls in, or None."""
        k = bisect_right(self.starts, start) - 1
        if k >= 0 and start <= end <= self.starts[k] + self.lengths[k]:
            return self.indexes[k]
        return None

    def first_in(self, first: int, end: int) -> int | None:
        """The content index of the first text part from ``content[first]`` to before
        ``content[end]``, or None."""
        k = bisect_left(self.indexes, first)
        if k < len(self.indexes) and self.indexes[k] < end:
            return self.indexes[k]
        return None


class ReplyWriter(ItemPartWriter):
    """Writes the typed reply at one index (and what every message writer needs)."""

    def __init__(
        self,
        source: str,
        index: int,
        drop: Collection[str],
        unanswered: Collection[int],
        drop_names: bool,
    ) -> None:
        super().__init__(source, index, drop)
        self.unanswered = unanswered
        self.drop_names = drop_names
        self.annotations: dict[int, list[tuple[int, dict[str, Any]]]] = {}
        """For each text part (by content index): its citations' annotations, each with the
        citation's index."""
        self.part_at = 0
        """The content index of the part being written."""
        self.reasoning_ids: set[str] = set()
        """The ids of the reasoning items this message's writer wrote."""
        self.part_path = ""

    def unnamed(self, what: str) -> None:
        """Refuse a name the item has no place for, unless ``drop_names`` leaves it out."""
        if not self.drop_names:
            self.refuse(f"{what}; pass drop_names=True to leave names out", ".name")

    def written_parts(self, parts: list[Part], first: int) -> list[dict[str, Any]]:
        """A message item's parts as written, ``first`` the content index of the first."""
        written = []
        for j, part in enumerate(parts):
            self.part_at, self.part_path = first + j, f".content[{first + j}]"
            item = self.item_part(part, self.part_path, "assistant")
            if item is not None:
                written.append(item)
        return written

    def text(self, content: Any, path: str, what: str) -> str:
        if not isinstance(content, str):
            self.refuse(f"{with_article(what)} holds its output as text, not parts", path)
        return content

    def json_text(self, content: Any, path: str) -> Any:
        """The JSON value a text read from one stands for. It must be spelled as the reader
        spells it, and not be a string (the reader takes a string item value as text)."""
        text = self.text(content, path, "JSON output")
        try:
            value = _STRICT_JSON.decode(text)
            spelled = spelled_json(value)
        except ValueError:  # NaN and Infinity too: Python's json takes them, JSON has none
            self.refuse(f"the output was read as JSON and is no longer JSON: {text[:60]!r}", path)
        except RecursionError:  # JSON nested deeper than Python's json reads
            raise TraceError(
                "unserializable_value",
                f"the output was read as JSON and is now nested past Python's depth: it has "
                f"no JSON value here ({text[:60]!r})",
                index=self.index,
                path=f"messages[{self.index}]{path}",
                source=self.source,
            ) from None
        if isinstance(value, str):
            self.refuse(f"the output was read as JSON and is now a JSON string ({text[:60]!r}), "
                        "which reads back as its text", path)
        if spelled != text:
            self.refuse(f"the output was read as JSON and is now spelled otherwise "
                        f"({text[:60]!r}): it reads back as the reader spells it", path)
        return value

    # -- replies --

    def reply(
        self,
        message: AIMessage,
        namespace: dict[str, Any],
        results: dict[str | None, tuple[int, ToolMessage]],
    ) -> list[dict[str, Any]]:
        if message.name is not None:
            self.unnamed(f"a Responses reply has no agent name ({message.name!r})")
        if message.audio is not None:
            self.lose("a Responses reply has no audio reply", ".audio", "audio_replies")
        content = self.content_items(message, namespace)
        places = self.calls_at(namespace, len(message.tool_calls), len(content))
        items: list[dict[str, Any]] = []
        called = waiting = spoke = False  # a call, a call waiting for its output, the message
        k = 0
        for n, (kind, item, path) in enumerate([*content, ("end", None, "")]):
            while k < len(message.tool_calls) and places[k] == n:
                call = message.tool_calls[k]
                if k in self.unanswered:
                    self.lose(
                        f"tool call {call.name!r} has no result: the API rejects a call item "
                        "without its output",
                        f".tool_calls[{k}]",
                        "unanswered_calls",
                    )
                else:
                    items.append(self.call(call, f".tool_calls[{k}]", results.get(call.id)))
                    called = True
                    waiting = waiting or item_of(call, self.source) not in HOSTED_CALLS
                k += 1
            if item is None:
                continue  # the end, or reasoning dropped
            # the reader starts the next reply at a content item after a call, or at reasoning
            # or a message after the message, unless a call before it waits for its output item
            if not waiting and (called or (spoke and kind in ("reasoning", "message"))):
                if called:
                    self.refuse(
                        f"{with_article(kind)} item after the reply's calls reads back as the "
                        "next reply unless a call before it waits for its output item (a hosted "
                        "call holds its result)",
                        f".metadata.{self.source}.calls_at",
                    )
                if kind == "message":
                    self.refuse(
                        "a second message item reads back as the next reply unless a call "
                        "before it waits for its output item (calls_at places none there)",
                        f".metadata.{self.source}.messages",
                    )
                self.refuse(
                    "a Responses reply's reasoning items come before its message item: "
                    "reasoning after the reply's text reads back as the next reply",
                    path,
                )
            spoke = spoke or kind == "message"
            items.append(item)
        if not items:
            # everything the reply holds was left out (drop=): the turn stays, as an empty
            # message item (a reply with nothing to say)
            items.append(self.reply_message(message, namespace, [], 0))
        return items

    def calls_at(self, namespace: dict[str, Any], calls: int, content: int) -> list[int]:
        """For each call, how many of the reply's content items are written before it (kept
        as ``calls_at`` when the reader read content items after a call)."""
        places = namespace.get("calls_at")
        if places is None:
            return [content] * calls
        if not (
            isinstance(places, list)
            and len(places) == calls
            and all(type(at) is int and 0 <= at <= content for at in places)
            and places == sorted(places)
        ):
            self.malformed(
                f"metadata.{self.source}.calls_at lists, for each of the reply's {calls} "
                f"calls, how many of its {content} content items come before it (rising), as "
                f"to_messages writes it; got {short_repr(places)}",
                f".metadata.{self.source}.calls_at",
            )
        return places

    def content_items(
        self, message: AIMessage, namespace: dict[str, Any]
    ) -> list[tuple[str, dict[str, Any] | None, str]]:
        """The reply's content items in order: their kind (``message``, ``reasoning``,
        ``kept``), the item (None for reasoning left out by ``drop``) and its path."""
        listed = namespace.get("messages")
        if listed is not None:
            return listed_items(self, message, namespace, listed)
        for k, citation in enumerate(message.citations):
            nth = self.namespace(citation.metadata).get("message")
            if nth is not None:  # only a reply of several message items names one
                self.malformed(
                    f"metadata.{self.source}.message names the message item a citation "
                    f"annotates in a reply of several (metadata.{self.source}.messages); this "
                    f"reply has one, got {short_repr(nth)}",
                    f".citations[{k}].metadata.{self.source}.message",
                )
        content = message.content
        parts = [] if isinstance(content, str) else list(content)
        spoken = [j for j, part in enumerate(parts) if not is_item_part(part, self.source)]
        if spoken and spoken != list(range(spoken[0], spoken[-1] + 1)):
            self.refuse(
                "a Responses reply holds its text in one message item: reasoning or a kept item "
                "between its parts cannot be placed",
                f".content[{spoken[0]}]",
            )
        at = namespace.get("message")
        writes = would_write_message(content, message.citations, message.tool_calls, self.source)
        if spoken:
            at = spoken[0]
        elif not isinstance(at, int) or not 0 <= at <= len(parts):
            at = len(parts) if writes else None
        said = set(spoken)
        items: list[tuple[str, dict[str, Any] | None, str]] = []
        for j, part in enumerate([*parts, None]):
            if j == at:
                items.append(("message", self.reply_message(
                    message, namespace, [parts[k] for k in spoken], spoken[0] if spoken else 0
                ), f".content[{j}]" if j in said else ""))
            if part is None or j in said:
                continue
            self.add_own_item(items, parts, j)
        return items

    def add_own_item(
        self, items: list[tuple[str, dict[str, Any] | None, str]], parts: list[Part], j: int
    ) -> None:
        """Adds the item the reply's part ``content[j]`` stands for to ``items``; a part
        that continues the reasoning item before it (its raw text) is written in that item."""
        if self.continues(parts[j], j):
            self.check_continued(items, parts, j)
            return
        raw = None
        if j + 1 < len(parts) and self.continues(parts[j + 1], j + 1):
            raw = parts[j + 1]
        items.append(self.own_item(parts[j], j, raw))

    def own_item(
        self, part: Part, j: int, raw: Part | None = None
    ) -> tuple[str, dict[str, Any] | None, str]:
        """The item the reply's part ``content[j]`` stands for: reasoning (``raw``: the part
        after it that holds the item's raw reasoning text), or a kept item."""
        path = f".content[{j}]"
        if isinstance(part, ReasoningPart):
            assert raw is None or isinstance(raw, ReasoningPart)  # (continues)
            return "reasoning", self.reasoning(part, j, raw), path
        assert isinstance(part, OpaquePart)  # is_item_part: an item kept whole
        return "kept", self.kept_item(part, path, OPAQUE_REPLY_ITEMS), path

    def from_content(self, part: Part, j: int) -> bool:
        """Whether ``part`` is a reasoning part read from a reasoning item's raw reasoning
        text (its ``content``), marked ``from: "content"``."""
        if not isinstance(part, ReasoningPart):
            return False
        mark = self.namespace(part.metadata).get("from")
        if mark not in (None, "content"):
            self.malformed(
                f"metadata.{self.source}.from marks a reasoning part read from a reasoning "
                f"item's content ('content'), as to_messages writes it; got {short_repr(mark)}",
                f".content[{j}].metadata.{self.source}.from",
            )
        return mark == "content"

    def continues(self, part: Part, j: int) -> bool:
        """Whether ``part`` holds the raw reasoning text of the reasoning item of the part
        before it (read from an item with a summary and content): marked, without an id."""
        return self.from_content(part, j) and not self.names_item(part)

    def names_item(self, part: Part) -> bool:
        """Whether ``part`` is a reasoning part with an item's id, or read from an item
        without one (``{"id": None}``, the Agents SDK's "omit" policy)."""
        return isinstance(part, ReasoningPart) and (
            part.id is not None or "id" in self.namespace(part.metadata)
        )

    def check_continued(
        self, items: list[tuple[str, dict[str, Any] | None, str]], parts: list[Part], j: int
    ) -> None:
        """Refuse a part marked as continuing a reasoning item (``content[j]``) that does
        not come right after the summary's part of one, or that keeps more than its mark."""
        where = f".content[{j}].metadata.{self.source}"
        previous = parts[j - 1] if j else None
        opens = (
            isinstance(previous, ReasoningPart)
            and self.names_item(previous)
            and not self.from_content(previous, j - 1)
        )
        if not (opens and items and items[-1][0] == "reasoning"
                and items[-1][2] == f".content[{j - 1}]"):
            self.malformed(
                "a reasoning part marked from: 'content' without an id holds the raw reasoning "
                "text of the reasoning item whose summary the part right before it holds, as "
                "to_messages reads an item with both; there is none before it",
                where,
            )
        other = sorted(set(self.namespace(parts[j].metadata)) - {"from", "content"})
        if other:
            self.malformed(
                f"a reasoning part that continues the item before it keeps its mark (from) and "
                f"its content list alone; the item's keys are on the summary's part, got "
                f"{other[0]!r}",
                f"{where}.{other[0]}",
            )

    def kept_item(self, part: OpaquePart, path: str, kinds: Sequence[str]) -> dict[str, Any]:
        """An item kept whole (an opaque part marked ``item``), written back as it is: one
        of the ``kinds`` the reader keeps so in this place. Any other item would read back
        as other typed data (a call, a message) or elsewhere."""
        if part.kind not in kinds:
            self.refuse(
                f"an opaque {part.kind!r} part marked as an item kept whole: this format keeps "
                f"only {', '.join(kinds)} items so here, and {with_article(part.kind)} item would "
                "read back as other typed data",
                path,
            )
        return self.whole(part, path, "item")

    def reply_message(
        self, message: AIMessage, namespace: dict[str, Any], spoken: list[Part], first: int
    ) -> dict[str, Any]:
        """The reply's message item; ``spoken`` are its parts, from ``content[first]`` on."""
        content = message.content
        out: dict[str, Any] = {"role": "assistant"}
        text = None
        if isinstance(content, str):
            text = content
        elif namespace.get("content") == "string" and (
            not spoken or (len(spoken) == 1 and type(spoken[0]) is TextPart)
        ):
            if len(spoken) == len(content):
                # the reader keeps the flag only beside reasoning or kept items: alone, a
                # string content reads back as the string
                self.refuse(
                    "content: 'string' marks a message content read as a string beside the "
                    "reply's reasoning or kept items; this reply has none, so written as a "
                    "string it would read back as a string content, not as these parts",
                    f".metadata.{self.source}.content",
                )
            text = spoken[0].text if spoken else ""  # type: ignore[union-attr]
        if text is not None and not message.citations:
            if spoken:  # a string has no place for the part's kept keys
                kept = self.namespace(spoken[0].metadata)
                if kept:
                    key = next(iter(kept))
                    self.refuse(
                        f"the message content is written as a string (content: 'string'), "
                        f"which has no place for its text part's {key} "
                        f"({short_repr(kept[key])})",
                        f".content[{first}].metadata.{self.source}.{key}",
                    )
            out["content"] = text
        else:
            parts: list[Part] = spoken if spoken or text is None else [TextPart(text=text)]
            texts = [(first + j, part.text) for j, part in enumerate(parts)
                     if isinstance(part, TextPart)]
            self.place_citations(message.citations, texts, [(first, first + len(parts))])
            out["content"] = self.written_parts(parts, first)
            if namespace.get("type") != "absent":
                out["type"] = "message"
        if message.id is not None and (namespace or (
            isinstance(out["content"], list) and message.id.startswith(MESSAGE_ID_PREFIX)
        )):
            # ids are provenance: one read from this format is written back as it was read;
            # another only on an output message item (parts), with the API's prefix for one
            out["id"] = message.id
        parts_given = isinstance(out["content"], list)
        return self.with_fields(
            out,
            namespace,
            "",
            # the reader takes a string id, and a type "message" of a message with parts
            lambda key, value: value is not None and (
                key == "id" or (key == "type" and (value != "message" or parts_given))
            ),
        )

    def place_citations(
        self,
        citations: Sequence[Citation],
        texts: list[tuple[int, str]],
        items: list[tuple[int, int]],
    ) -> None:
        """Each citation as an annotation of the text part it cites, its indexes counted in
        that part's text. ``texts`` are the reply's text parts (content index, text) in order,
        ``items`` the content ranges of its message items."""
        placed = _TextParts(texts)
        last = -1
        for k, citation in enumerate(citations):
            path = f".citations[{k}]"
            annotation = self.annotation(citation, path)
            if annotation is None:
                continue
            cited = self.cited_part(citation, path, placed, items)
            if cited is None:
                continue
            if cited < last:
                self.lose(
                    "the citations of each output_text part read back in part order: this one "
                    "cites an earlier part than the citation before it",
                    path,
                    "citations",
                )
                continue
            last = cited
            for key in ("start_index", "end_index"):
                if annotation.get(key) is not None:
                    annotation[key] -= placed.start_of[cited]
            self.annotations.setdefault(cited, []).append((k, annotation))

    def cited_part(
        self,
        citation: Citation,
        path: str,
        texts: _TextParts,
        items: list[tuple[int, int]],
    ) -> int | None:
        """The content index of the text part a citation annotates: where it was read (its
        kept ``part`` and ``message``), else the one its span falls in, else (an index left
        out) the reply's first; None when there is none and ``drop`` leaves it out."""
        kept = self.namespace(citation.metadata)
        if "part" in kept or "message" in kept:
            return self.kept_part(kept, path, texts, items)
        if not texts.indexes:
            self.lose("a citation needs an output_text part to annotate", path, "citations")
            return None
        start, end = citation.start_index, citation.end_index
        if start is None or end is None:
            return texts.indexes[0]
        holding = texts.holding(start, end)
        if holding is not None:
            return holding
        self.lose(
            f"the cited span ({start} to {end} of the reply's text) falls inside no one "
            "output_text part, and an annotation counts characters of its own part",
            path,
            "citations",
        )
        return None

    def kept_part(
        self,
        kept: dict[str, Any],
        path: str,
        texts: _TextParts,
        items: list[tuple[int, int]],
    ) -> int | None:
        """The content index of the text part a citation was read from: its kept ``part``
        (its index in its message item's parts; the item's first text part when left out)
        of the message item its kept ``message`` names (the first when left out)."""
        where = f"{path}.metadata.{self.source}"
        nth = kept.get("message", 0)
        if "message" in kept and not (type(nth) is int and 0 < nth < len(items)):
            self.malformed(
                f"metadata.{self.source}.message names the message item (1 to {len(items) - 1}; "
                f"the first when left out) a citation annotates; got {short_repr(nth)}",
                f"{where}.message",
            )
        item: tuple[int, int] = items[nth]
        first, end = item
        if "part" not in kept:
            found = texts.first_in(first, end)
            if found is None:
                self.lose("a citation needs an output_text part to annotate", path, "citations")
            return found
        part = kept["part"]
        if type(part) is int and 0 <= part < end - first and first + part in texts.start_of:
            return first + part
        self.malformed(
            f"metadata.{self.source}.part is the index of the output_text part a citation "
            f"annotates among its message item's {end - first} parts, as to_messages writes "
            f"it; got {short_repr(part)}",
            f"{where}.part",
        )

    def annotation(self, citation: Citation, path: str) -> dict[str, Any] | None:
        fields = {key: getattr(citation, key) for key in _CITATION_FIELDS}
        missing = [key for key, value in fields.items() if value is None]
        namespace = self.namespace(citation.metadata)
        kept = namespace.get("fields", {})
        absent = namespace.get("absent", [])
        if not isinstance(absent, list) or any(
            type(key) is not str or key not in fields for key in absent
        ):
            self.malformed(
                f"metadata.{self.source}.absent lists the citation fields left out "
                f"({', '.join(fields)}), as to_messages writes it; got {short_repr(absent)}",
                f"{path}.metadata.{self.source}.absent",
            )
        if missing and set(missing) <= {*absent, *(key for key in kept if kept[key] is None)}:
            # read so from this format (absent, or null and kept): written back as it was
            for key in missing:
                del fields[key]
            missing = []
        if missing or citation.cited_text is not None:
            what = (
                f"a url_citation annotation needs {', '.join(missing)}"
                if missing
                else f"a url_citation annotation has no place for the cited text "
                f"({citation.cited_text!r})"
            )
            self.lose(what, path, "citations")
            if missing:
                return None
        out: dict[str, Any] = {"type": "url_citation", **fields}
        return self.with_fields(out, namespace, path, taken(_CITATION_FIELDS))

    def output_text(self, part: TextPart, namespace: dict[str, Any], out: dict[str, Any]) -> None:
        cited = [annotation for _, annotation in self.annotations.get(self.part_at, [])]
        layout = namespace.get("annotations")
        if layout == "absent" and not cited:
            return
        if not isinstance(layout, list):
            out["annotations"] = cited
            return
        self.check_layout(layout, f"{self.part_path}.metadata.{self.source}.annotations")
        kept = [entry for entry in layout if entry is not None]
        if len(kept) + len(cited) != len(layout):
            out["annotations"] = cited + kept  # edited: the citations first
            return
        given = iter(cited)
        out["annotations"] = [next(given) if entry is None else entry for entry in layout]

    def check_layout(self, layout: list[Any], path: str) -> None:
        """Refuse a kept annotation layout the reader would not give back: it keeps the
        annotations that are no citation (objects), and null where a citation goes."""
        for k, entry in enumerate(layout):
            if entry is None:
                continue
            if not isinstance(entry, dict):
                self.malformed(f"a kept annotation layout holds annotation objects, and null "
                               f"where a citation goes, as to_messages writes it; got "
                               f"{short_repr(entry)}", f"{path}[{k}]")
            if entry.get("type") == "url_citation":
                self.refuse("a url_citation annotation kept in the part's layout would read "
                            "back as a typed citation (the reader keeps only other annotations "
                            "there; a citation is one of AIMessage.citations)", f"{path}[{k}]")

    def reasoning(
        self, part: ReasoningPart, j: int, raw: ReasoningPart | None = None
    ) -> dict[str, Any] | None:
        """The reasoning item the part ``content[j]`` stands for: its text the summary, or
        the raw reasoning text (``content``) of a part marked ``from: "content"``; ``raw``,
        the part after it that holds the item's raw text."""
        path = f".content[{j}]"
        namespace = self.namespace(part.metadata)
        omitted = self.omitted_id(part, path)
        item_id = part.id if omitted else self.item_id(part, path, raw)
        if item_id is None and not omitted:
            self.lose(
                "a reasoning item needs the id the API gave it (this reasoning part has none)",
                path,
                "reasoning",
            )
            return None
        if item_id is not None and not self.first_use(item_id, path):
            return None
        out: dict[str, Any] = {"type": "reasoning", "id": item_id}
        if self.from_content(part, j):
            if "summary" in namespace:
                self.malformed(
                    "a reasoning part read from a reasoning item's content (from: 'content', "
                    "with its id) stands for an item whose summary is empty: a kept summary "
                    "beside it would be lost",
                    f"{path}.metadata.{self.source}.summary",
                )
            out["summary"] = []
            out["content"] = self.entries(part, path, "content", "reasoning_text")
        else:
            out["summary"] = self.entries(part, path, "summary", "summary_text")
            if raw is not None and not out["summary"]:
                # the reader reads summary [] beside content as the one part of the content
                self.malformed(
                    "a reasoning part marked from: 'content' without an id holds the raw "
                    "reasoning text of an item whose summary the part before it holds, but that "
                    "part stands for an item with an empty summary (read from summary []): the "
                    "two would be read back as one part",
                    f".content[{j + 1}].metadata.{self.source}",
                )
            if raw is not None:
                out["content"] = self.entries(raw, f".content[{j + 1}]", "content",
                                              "reasoning_text")
        if omitted:
            del out["id"]  # written as it was read: without one
        # the reader takes any id (a string, or refuses it), and a content list with entries
        return self.with_fields(out, namespace, path, lambda key, value: key == "id" or (
            key == "content" and value not in (None, [])
        ))

    def omitted_id(self, part: ReasoningPart, path: str) -> bool:
        """Whether ``part`` was read from a reasoning item without an id (the Agents SDK's
        "omit" policy), marked ``{"id": None}``; the mark beside the part's own id is
        ``malformed_event`` (the item's id is the part's ``id``)."""
        namespace = self.namespace(part.metadata)
        if "id" not in namespace or namespace["id"] is not None:
            return False
        if part.id is not None:
            self.malformed(
                f"metadata.{self.source}.id is null alone, marking reasoning read from an item "
                f"without an id; the item's id is the part's id field, and the part has the "
                f"id {part.id!r}",
                f"{path}.metadata.{self.source}.id",
            )
        return True

    def item_id(
        self, part: ReasoningPart, path: str, raw: ReasoningPart | None
    ) -> str | None:
        """The id of the reasoning item ``part`` stands for: the part's ``id``, or the id
        kept in the namespace of a part that alone does not give its item back (a kept
        summary or ``fields``, raw reasoning: ``from``, or ``raw`` after it), where the
        reader leaves it. A kept id anywhere else is ``malformed_event`` at it."""
        namespace = self.namespace(part.metadata)
        if "id" not in namespace:
            return part.id
        kept = namespace["id"]
        at = f"{path}.metadata.{self.source}.id"
        if type(kept) is not str:
            self.malformed(f"metadata.{self.source}.id keeps a reasoning item's id (a string), "
                           f"or is null (read without one); got {short_repr(kept)}", at)
        if part.id is not None:
            self.malformed(f"metadata.{self.source}.id keeps the item's id {kept!r} of a part "
                           f"without one; the part has the id {part.id!r}", at)
        if raw is None and not {"summary", "fields", "from"} & set(namespace):
            self.malformed(
                f"metadata.{self.source}.id keeps the id of a reasoning item that its part "
                "alone does not give back (beside a kept summary or fields, or raw reasoning "
                f"text); this part's item is its text alone, whose id is the part's id field; "
                f"got {kept!r}",
                at,
            )
        return kept

    def first_use(self, item_id: str, path: str) -> bool:
        """Whether no reasoning item of this message was written with ``item_id`` yet (then
        it is taken); a second item with one id in one message is refused (reasoning split
        into parts that share an id, one per summary entry, as langchain-core's v1 blocks
        split an item, is no item the API gave): ``not_representable``, or dropped with
        ``drop=["reasoning"]``. An item repeated in another turn is written as read."""
        if item_id not in self.reasoning_ids:
            self.reasoning_ids.add(item_id)
            return True
        self.lose(
            f"a reasoning item with the id {item_id!r} is written already in this message "
            "(parts that share an id are pieces of one item, which the API gave whole)",
            path,
            "reasoning",
        )
        return False

    def entries(
        self, part: ReasoningPart, path: str, key: str, kind: str
    ) -> list[dict[str, Any]]:
        """A reasoning item's ``summary`` or ``content`` list (``key``; entries of ``kind``)
        for ``part``'s text: the kept list, unless the text was changed since (or none is
        kept: the one plain entry)."""
        listed = self.namespace(part.metadata).get(key)
        if listed is not None:
            self.check_entries(listed, f"{path}.metadata.{self.source}.{key}", key, kind)
        if listed is None or "\n\n".join(entry["text"] for entry in listed) != part.text:
            # none kept, or the text was changed since: the one entry is the text
            listed = [{"type": kind, "text": part.text}]
        return listed

    def check_entries(self, listed: Any, path: str, key: str, kind: str) -> None:
        """Refuse a kept reasoning ``summary`` or ``content`` list the reader would refuse:
        it keeps a list of ``kind`` objects, each with a string ``text``."""
        if not isinstance(listed, list):
            self.malformed(f"a kept reasoning {key} is a list of {kind} objects, as "
                           f"to_messages writes it; got {short_repr(listed)}", path)
        for k, entry in enumerate(listed):
            if not (
                isinstance(entry, dict)
                and entry.get("type") == kind
                and type(entry.get("text")) is str
            ):
                self.malformed(f"a kept reasoning {key} entry is {{'type': {kind!r}, "
                               f"'text': <string>}}, as to_messages writes it; got "
                               f"{short_repr(entry)}", f"{path}[{k}]")

    # -- calls --

    def call(
        self, call: ToolCall, path: str, result: tuple[int, ToolMessage] | None
    ) -> dict[str, Any]:
        if call.id is None:
            self.refuse("a Responses call item needs a call id", f"{path}.id")
        namespace = self.namespace(call.metadata)
        kind = item_of(call, self.source)
        if kind is not None and call.name != call_name(kind):
            # the item type names the tool: another name would read back as this one
            self.refuse(
                f"{with_article(kind)} item names its tool by its type ({call_name(kind)!r}); "
                f"this call is named {call.name!r}",
                f"{path}.name",
            )
        if call.invalid_args is not None:
            self.unparsed(call, call.invalid_args, kind, f"{path}.invalid_args")
        if kind is not None and call.kind == "custom":  # a hosted item too: checked first
            self.refuse(f"{with_article(kind)} item holds a call with input fields, not a custom "
                        "(free-text) call", f"{path}.kind")
        out: dict[str, Any]
        if kind in HOSTED_CALLS:
            return self.hosted(call, kind, path, result)
        if kind is not None and kind in CALL_OUTPUTS:
            self.own_keys(call.args, ("type", "call_id", "id", "status"), kind, f"{path}.args")
            out = {"type": kind, "call_id": call.id, **self.input_fields(call, path)}
            if "status" in namespace:
                out["status"] = namespace["status"]
        elif call.kind == "custom":
            out = {
                "type": "custom_tool_call",
                "call_id": call.id,
                "name": call.name,
                "input": custom_input(self, call, path),
            }
        else:
            out = {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": _arguments(call, namespace.get("arguments")),
            }
        if "id" in namespace:
            out["id"] = namespace["id"]
        # the reader takes an id of any value; a call kept as an item of input fields has
        # no kept keys (they are its input)
        mapped = taken_always(("id",)) if kind is None else taken_always(None)
        return self.with_fields(out, namespace, path, mapped)

    def unparsed(self, call: ToolCall, text: str, kind: str | None, path: str) -> None:
        """Refuse a call whose unparsed argument ``text`` the reader would give back as
        arguments."""
        if kind in HOSTED_CALLS or kind in CALL_OUTPUTS:
            self.refuse(
                f"{with_article(kind)} item holds its input as fields, with no place for "
                f"arguments that did not parse (invalid_args={text!r})",
                path,
            )
        read_back = read_arguments(text)  # what the reader makes of the text
        if read_back is not None:
            self.refuse_read_back(call, read_back, path)

    def hosted(
        self, call: ToolCall, kind: str, path: str, result: tuple[int, ToolMessage] | None
    ) -> dict[str, Any]:
        """The one item a hosted call and its result (the ``ToolMessage`` at its index) were
        read from; a fault in the result is refused at the result."""
        if result is None:
            self.refuse(f"{with_article(kind)} item holds its result, and none follows the call",
                        path)
        if set(self.namespace(call.metadata)) != {"item"}:
            self.refuse(f"{with_article(kind)} item keeps its call as it is: there is no place "
                        f"for other {self.source} metadata on it", path)
        self.own_keys(call.args, ("type", "id", *RESULT_KEYS), kind, f"{path}.args")
        at, message = result
        fields = ReplyWriter(self.source, at, self.drop, (), self.drop_names).hosted_result(
            message, call, kind
        )
        return {"type": kind, "id": call.id, **self.input_fields(call, path), **fields}

    def input_fields(self, call: ToolCall, path: str) -> dict[str, Any]:
        """The args of a call kept as an item of input fields (``computer_call``, a hosted
        call), which the item holds as they are: ``unserializable_value`` at the first value
        that is no JSON (NaN, a set), which a dict changed in place after the call was made
        may hold (``ToolCall`` checks its args only when it is made)."""
        try:
            check_json(call.args, f"messages[{self.index}]{path}.args")
        except TraceError as error:
            raise error.relocated(index=self.index, source=self.source) from None
        return call.args

    def hosted_result(self, result: ToolMessage, call: ToolCall, kind: str) -> dict[str, Any]:
        """The result keys of a hosted ``call``'s item, from the ``ToolMessage`` this writer
        writes (its JSON text)."""
        if result.is_error:
            self.lose(f"{with_article(kind)} item has no error flag (is_error=True)", ".is_error",
                      "is_error")
        if result.name != call.name:  # the item names its result for its call, always
            self.refuse(
                f"the result of {with_article(kind)} item is named for its call ({call.name!r}), "
                f"not {result.name!r}",
                ".name",
            )
        if self.namespace(result.metadata):
            self.refuse(f"{with_article(kind)} item keeps its result as it is: there is no place "
                        f"for {self.source} metadata on it", f".metadata.{self.source}")
        fields = self.json_text(result.content, ".content")
        if not isinstance(fields, dict):
            self.refuse(f"the result of {with_article(kind)} item must be a JSON object",
                        ".content")
        if not set(fields) <= set(RESULT_KEYS):
            other = sorted(set(fields) - set(RESULT_KEYS))[0]
            self.refuse(f"the result of {with_article(kind)} item holds its "
                        f"{', '.join(RESULT_KEYS)}; {other!r} would read back as the call's input",
                        ".content")
        return fields

    def own_keys(self, args: dict[str, Any], own: Sequence[str], kind: str, path: str) -> None:
        """Refuse call input holding a key the item keeps elsewhere (it would read back
        there, or overwrite it)."""
        for key in own:
            if key in args:
                self.refuse(f"{with_article(kind)} item keeps {key!r} beside the call's input, "
                            "which holds one too", f"{path}.{key}")
