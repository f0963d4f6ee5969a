"""Reading one Responses item: a message, reasoning, a call, a hosted call, an output.

``ItemReader`` reads the item at one index into typed pieces (a message, parts, a call, a
call and its result, an output); ``_read`` gathers them into the conversation. Every error it
raises points at that item (``items[j]``).

A citation's indexes count characters of the reply's text (its text parts joined by a newline,
as ``.text`` joins them), where an annotation counts them in its own ``output_text`` part: the
reader adds the length of the reply's text before the part. Message ids are provenance: an id
the writer would not write by itself (an output message item's id without the API's ``msg_``
prefix, an output item's id) is marked as read from this format (``id: "item"``) when nothing
else is kept.
"""

from __future__ import annotations

import json
from typing import Any

from tracebridge.errors import with_article
from tracebridge.messages import (
    Citation,
    Content,
    HumanMessage,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)

from ..openai_chat._parts import described
from ..openai_chat._read import read_arguments, spelled_as_dumps
from ._items import CALL_OUTPUTS, RESULT_KEYS, call_name
from ._parts import ItemPartReader

__all__ = ["MESSAGE_ID_PREFIX", "ItemReader", "spelled_json"]

MESSAGE_ID_PREFIX = "msg_"
"""The prefix of the ids the API gives message items (it refuses a message item id without
one): an ``AIMessage.id`` from another format is written only when it has it."""

_CITATION_KEYS = (("url", str), ("title", str), ("start_index", int), ("end_index", int))


class ItemReader(ItemPartReader):
    """Reads the item at one index; every error it raises points there."""

    def __init__(self, source: str, index: int) -> None:
        super().__init__(source, index)
        self.citations: list[Citation] = []
        self.offset = 0
        self.first_text: int | None = None
        self.nth_message = 0
        """Which of its reply's message items this one is (its citations say when not 0)."""
        self.text_before = 0
        """How long the reply's text is before this item's parts: the text parts of its
        content so far and the string contents of its earlier message items (placed when the
        reply ends), each with the newline that joins it."""
        self.cited: list[tuple[int, int]] = []
        """For each citation of this message item: its position in ``citations`` and the
        index of the part it annotates."""

    def whole(self, data: dict[str, Any]) -> OpaquePart:
        kept = self.kept(data, self.root)
        return OpaquePart(kind=data["type"], value=kept, metadata={self.source: {"item": True}})

    # -- messages --

    def input_message(self, data: dict[str, Any], role: str) -> Message:
        content = self.message_content(data, role)
        message_id = self.optional(data, "id", str, self.root)
        namespace: dict[str, Any] = {"fields": self.kept(data, self.root)} if data else {}
        if message_id is not None and not namespace:
            namespace["id"] = "item"  # written back on an input message item, which has no id key
        metadata = {self.source: namespace} if namespace else {}
        if role == "user":
            return HumanMessage(content=content, id=message_id, metadata=metadata)
        return SystemMessage(content=content, role=role, id=message_id, metadata=metadata)

    def message_content(self, data: dict[str, Any], role: str) -> Content:
        if "content" not in data:
            self.fail("malformed_event", f"{self.root}.content", "a message item needs 'content'")
        return self.parts(data.pop("content"), f"{self.root}.content", role)

    def assistant_message(self, data: dict[str, Any], before: list[Part]) -> dict[str, Any]:
        """Adds the message's parts to ``before``; returns what the reply keeps of it."""
        content = self.message_content(data, "assistant")
        namespace: dict[str, Any] = {}
        if isinstance(content, list):
            if data.get("type") == "message":
                del data["type"]
            else:
                namespace["type"] = "absent"
            self.in_reply_text(content)
            before.extend(content)
        message_id = self.optional(data, "id", str, self.root)
        if data:
            namespace["fields"] = self.kept(data, self.root)
        if (
            isinstance(content, list)
            and message_id is not None
            and not message_id.startswith(MESSAGE_ID_PREFIX)
            and not namespace
        ):
            namespace["id"] = "item"  # read from this format: written back whatever its spelling
        return {
            "id": message_id,
            "namespace": namespace,
            "string": content if isinstance(content, str) else None,
            "at": self.offset,
        }

    def output_text(self, data: dict[str, Any], path: str, namespace: dict[str, Any]) -> None:
        part = int(path.rsplit("[", 1)[1].rstrip("]"))
        if self.first_text is None:
            self.first_text = part
        if "annotations" not in data:
            namespace["annotations"] = "absent"
            return
        listed = data.pop("annotations")
        if not isinstance(listed, list):
            self.fail(
                "malformed_event",
                f"{path}.annotations",
                f"expected a list, got {described(listed)}",
            )
        layout: list[Any] = []
        for k, annotation in enumerate(listed):
            cited = self.citation(annotation, f"{path}.annotations[{k}]")
            if cited is None:
                layout.append(self.kept(annotation, f"{path}.annotations[{k}]"))
            else:
                self.cited.append((len(self.citations), part))
                self.citations.append(cited)
                layout.append(None)
        if any(entry is not None for entry in layout):
            namespace["annotations"] = layout

    def citation(self, item: Any, path: str) -> Citation | None:
        """A ``url_citation`` annotation as a citation, its indexes counted in its own part
        (``in_reply_text`` counts them in the reply's text); None for another annotation."""
        data = self.mapping(item, path, "an annotation")
        if data.get("type") != "url_citation":
            return None
        del data["type"]
        absent = [key for key, _ in _CITATION_KEYS if key not in data]
        fields = {key: self.optional(data, key, kind, path) for key, kind in _CITATION_KEYS}
        namespace: dict[str, Any] = {}
        if absent:  # written back without them (the writer asks for all four otherwise)
            namespace["absent"] = absent
        if data:
            namespace["fields"] = self.kept(data, path)
        return Citation(**fields, metadata={self.source: namespace} if namespace else {})

    def in_reply_text(self, content: list[Part]) -> None:
        """This message item's citations with their indexes counted in the reply's text
        (``content``: the item's parts)."""
        at = self.text_before
        starts: dict[int, int] = {}
        for j, part in enumerate(content):
            if isinstance(part, TextPart):
                starts[j] = at
                at += len(part.text) + 1
        for k, j in self.cited:
            part = content[j]
            assert isinstance(part, TextPart)  # (an output_text part: its annotations)
            first = self.text_before == 0 and j == self.first_text
            self.citations[k] = self.placed(self.citations[k], j, starts[j], len(part.text), first)

    def placed(
        self, citation: Citation, part: int, start: int, length: int, first: bool
    ) -> Citation:
        """``citation`` of the part ``part`` (whose text starts at ``start`` of the reply's and
        is ``length`` long; ``first``: the reply's first text part) with its indexes counted
        in the reply's text. The writer puts a citation back on the text part its span falls
        in (an index missing: on the reply's first): where that is not the part it was read
        from, the part's index in its message item is kept (``part``), and the item's
        position among the reply's message items (``message``) when not the first."""
        indexes = {
            key: None if value is None else start + value
            for key, value in (("start_index", citation.start_index),
                               ("end_index", citation.end_index))
        }
        begin, end = indexes["start_index"], indexes["end_index"]
        if begin is not None and end is not None:
            found = start <= begin <= end <= start + length
        else:
            found = first
        namespace = dict(citation.metadata.get(self.source, {}))
        if not found:
            if part != self.first_text or not self.nth_message:
                namespace["part"] = part
            if self.nth_message:
                namespace["message"] = self.nth_message
        return Citation(
            url=citation.url,
            title=citation.title,
            **indexes,
            cited_text=citation.cited_text,
            metadata={self.source: namespace} if namespace else {},
        )

    # -- the reply's other items --

    def reasoning(self, data: dict[str, Any]) -> list[ReasoningPart]:
        """A reasoning item's parts: its summary's text, and its raw reasoning text
        (``content``), marked ``from: "content"``. An item with an empty summary is the one
        part of its content; an item with both is two parts, the summary's (with the item's
        id and kept keys) and then the content's (its mark alone: it continues that item).
        The item's id is the part's ``id`` only when the part alone gives the item back (one
        plain ``summary_text`` entry, nothing else); otherwise it stays in the namespace
        (``id``) beside what does, so that another format, which has no place for the rest,
        refuses the part instead of writing a changed item."""
        del data["type"]
        # The Agents SDK replays reasoning without its id (RunConfig(reasoning_item_id_policy=
        # "omit")): {"id": None} marks one read so, for the writer, and tells it from a
        # reasoning part without an id from another format. A present id is a string (null
        # is not), and the part's own.
        item_id = self.string(data, "id", self.root) if "id" in data else None
        namespace: dict[str, Any] = {} if item_id is not None else {"id": None}
        path = f"{self.root}.summary"
        listed = data.pop("summary", None)
        if not isinstance(listed, list):
            self.fail(
                "malformed_event", path, f"a reasoning item needs a 'summary' list, got "
                f"{described(listed)}"
            )
        texts = self.entry_texts(listed, path, "summary_text", "a summary part")
        raw = self.raw_reasoning(data)
        if raw is not None and not listed:  # the raw text is the item's one part
            text, mark = raw
            namespace.update(mark)
        else:
            text = "\n\n".join(texts)
            if not _plain(listed):
                namespace["summary"] = self.kept(listed, path)
        if data:
            namespace["fields"] = self.kept(data, self.root)
        if item_id is not None and (raw is not None or namespace):
            # the part alone (its text and id) would not give this item back: the id stays
            # with what does, so that no other format writes the item without it
            namespace = {"id": item_id, **namespace}
            item_id = None
        kept = {self.source: namespace} if namespace else {}
        parts = [ReasoningPart(text=text, id=item_id, metadata=kept)]
        if raw is not None and listed:  # the raw text after the summary's, of the same item
            text, mark = raw
            parts.append(ReasoningPart(text=text, metadata={self.source: mark}))
        return parts

    def raw_reasoning(self, data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The raw reasoning text of a reasoning item (its ``content``: a list of
        ``reasoning_text`` parts, joined as the summary's are) and the mark of its part
        (``from: "content"``, and the list as ``content`` when it is not one plain entry).
        None for an item without any (no ``content``, ``null`` or ``[]``: kept in
        ``fields``)."""
        listed = data.get("content")
        if listed is None or (isinstance(listed, list) and not listed):
            return None
        path = f"{self.root}.content"
        if not isinstance(listed, list):
            self.fail(
                "malformed_event", path, f"a reasoning item's 'content' is a list of "
                f"reasoning_text parts, got {described(listed)}"
            )
        del data["content"]
        texts = self.entry_texts(listed, path, "reasoning_text", "a reasoning content part")
        mark: dict[str, Any] = {"from": "content"}
        if not _plain(listed):
            mark["content"] = self.kept(listed, path)
        return "\n\n".join(texts), mark

    def entry_texts(self, listed: list[Any], path: str, kind: str, what: str) -> list[str]:
        """The texts of a reasoning item's ``summary`` or ``content`` list: each entry is
        ``{"type": kind, "text": <string>}`` (other keys kept with the list), or
        ``malformed_event`` at it."""
        texts = []
        for k, entry in enumerate(listed):
            checked = self.mapping(entry, f"{path}[{k}]", what)
            if checked.get("type") != kind or type(checked.get("text")) is not str:
                self.fail(
                    "malformed_event",
                    f"{path}[{k}]",
                    f"expected {{'type': {kind!r}, 'text': <string>}}, got {described(entry)}",
                )
            texts.append(checked["text"])
        return texts

    def call(self, data: dict[str, Any], kind: str) -> ToolCall:
        """A call the application runs: function, custom, or another kind (computer, shell)."""
        del data["type"]
        call_id = self.string(data, "call_id", self.root)
        namespace: dict[str, Any] = {}
        if "id" in data:
            namespace["id"] = self.kept(data.pop("id"), f"{self.root}.id")
        made: ToolCall
        if kind == "function_call":
            made = self.function(data, call_id, namespace)
        elif kind == "custom_tool_call":
            name = self.string(data, "name", self.root)
            text = self.string(data, "input", self.root)
            made = ToolCall(name=name, args={"input": text}, id=call_id, kind="custom")
        else:
            namespace["item"] = kind
            if "status" in data:
                namespace["status"] = self.kept(data.pop("status"), f"{self.root}.status")
            made = ToolCall(name=call_name(kind), args=self.kept(data, self.root), id=call_id)
            data = {}
        if data:
            namespace["fields"] = self.kept(data, self.root)
        if not namespace:
            return made
        return made.model_copy(update={"metadata": {self.source: namespace}})

    def function(self, data: dict[str, Any], call_id: str, namespace: dict[str, Any]) -> ToolCall:
        name = self.string(data, "name", self.root)
        if "arguments" in data and type(data["arguments"]) is not str:
            self.fail(
                "malformed_event",
                f"{self.root}.arguments",
                f"expected a JSON string, got {described(data['arguments'])}",
            )
        raw = self.string(data, "arguments", self.root)
        args = read_arguments(raw)
        if args is None:
            return ToolCall(name=name, id=call_id, invalid_args=raw)
        if not spelled_as_dumps(args, raw):
            namespace["arguments"] = raw  # the exact spelling comes back out
        return ToolCall(name=name, args=args, id=call_id)

    def hosted(self, data: dict[str, Any], kind: str) -> tuple[ToolCall, ToolMessage]:
        """A call the API ran: the call (its input) and its result, from one item."""
        del data["type"]
        item_id = self.string(data, "id", self.root)
        result = {key: data.pop(key) for key in list(data) if key in RESULT_KEYS}
        args = self.kept(data, self.root)
        result = self.kept(result, self.root)
        name = call_name(kind)
        call = ToolCall(name=name, args=args, id=item_id, metadata={self.source: {"item": kind}})
        text = self.json_text(result, self.root)
        return call, ToolMessage(content=text, tool_call_id=item_id, name=name)

    # -- outputs --

    def output(self, data: dict[str, Any], kind: str, expected: dict[str, str]) -> ToolMessage:
        del data["type"]
        namespace: dict[str, Any] = {}
        if kind == "local_shell_call_output" and "call_id" not in data:
            call_id = self.string(data, "id", self.root)  # the API's own spelling: the call's id
        else:
            call_id = self.string(data, "call_id", self.root)
            if kind == "local_shell_call_output":
                namespace["paired_by"] = "call_id"
        if expected.get(call_id, CALL_OUTPUTS["function_call"]) != kind:
            namespace["item"] = kind
        content: Content
        if "output" not in data:
            if kind != "apply_patch_call_output":  # the one output item whose output is optional
                self.fail(
                    "malformed_event",
                    f"{self.root}.output",
                    f"{with_article(kind)} item needs 'output'",
                )
            content = ""
            namespace["output"] = "absent"
        else:
            content = self.output_content(data.pop("output"), kind, namespace)
        name = None
        if kind == "function_call_output":
            name = self.optional(data, "name", str, self.root)
        message_id = self.optional(data, "id", str, self.root)
        if data:
            namespace["fields"] = self.kept(data, self.root)
        if message_id is not None and not namespace:
            namespace["id"] = "item"  # read from this format: written back with its id
        return ToolMessage(
            content=content,
            tool_call_id=call_id,
            name=name,
            id=message_id,
            metadata={self.source: namespace} if namespace else {},
        )

    def output_content(self, output: Any, kind: str, namespace: dict[str, Any]) -> Content:
        if kind in ("function_call_output", "custom_tool_call_output"):
            return self.parts(output, f"{self.root}.output", "output")
        if type(output) is str:
            return output
        namespace["output"] = "json"
        path = f"{self.root}.output"
        return self.json_text(self.kept(output, path), path)

    def json_text(self, value: Any, path: str) -> str:
        """``value`` (plain JSON) as the text a ``ToolMessage`` holds it in (``spelled_json``)."""
        try:
            return spelled_json(value)
        except RecursionError:  # plain JSON, nested deeper than Python's json writes
            self.fail("unserializable_value", path, "a value nested past Python's depth: it "
                      "has no JSON text here")


def _plain(listed: list[Any]) -> bool:
    """Whether a reasoning item's ``summary`` or ``content`` list is the one the writer
    writes for a part's text by itself: one entry of ``type`` and ``text`` alone."""
    return len(listed) == 1 and len(listed[0]) == 2


def spelled_json(value: Any) -> str:
    """The one text of a JSON value (the reader's and the writer's): its keys sorted at every
    level and an integral number spelled as an integer, so that one item reads to one text
    (and one transcript hash) whichever form it came in. The server's JSON and the SDK's
    objects order keys otherwise, and the SDK holds a JSON ``1`` in a float field (a file
    search ``score``) as ``1.0``."""
    return json.dumps(_integral(value), ensure_ascii=False, sort_keys=True)


def _integral(value: Any) -> Any:
    """``value`` with every float that is a whole number as an int (JSON does not tell them
    apart; Python's writer does)."""
    kind = type(value)
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict:
        return {key: _integral(item) for key, item in value.items()}
    if kind is list:
        return [_integral(item) for item in value]
    return value
