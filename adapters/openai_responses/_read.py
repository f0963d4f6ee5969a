"""Reading Responses items (dicts and SDK objects, mixed) into typed messages.

One pass over the items. A user, system or developer ``message`` is one typed message; an
output item is one ``ToolMessage``. The items of one reply (``reasoning``, an assistant
``message``, calls, hosted calls, items kept whole) gather into one ``AIMessage``: its content
items first (reasoning and kept items as parts, the message's parts or string), then its calls.
A content item after a call, or a second assistant message, starts the next reply. A hosted
call's result follows the ``AIMessage`` as a ``ToolMessage``. The conversation rules run last;
their errors point at the item (``items[j]``) that breaks them.
"""

from __future__ import annotations

import json
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
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)
from tracebridge.validation import validate

from ..openai_chat import parse_arguments
from ..openai_chat._parts import described
from ._items import (
    CALL_OUTPUTS,
    HOSTED_CALLS,
    ITEM_TYPES,
    MESSAGE_ROLES,
    OPAQUE_INPUT_ITEMS,
    OPAQUE_REPLY_ITEMS,
    RESULT_KEYS,
    call_name,
    is_sdk_item,
)
from ._parts import ItemPartReader

__all__ = ["is_item_part", "item_dict", "read_items", "would_write_message"]

_CITATION_KEYS = (("url", str), ("title", str), ("start_index", int), ("end_index", int))


def read_items(items: Any, *, source: str, allow_pending: bool = False) -> list[Message]:
    """Typed messages from a list of Responses items; ``source`` names the metadata namespace
    and ``TraceError.source``."""
    if not isinstance(items, list):
        raise TraceError(
            "malformed_event",
            f"expected a list of Responses items, got {type(items).__name__} (for a Response, "
            "pass response.output; for a request, its input list)",
            source=source,
        )
    built = _Conversation(source)
    for j, item in enumerate(items):
        built.item(j, item)
    built.flush()
    built.check(allow_pending)
    return built.messages


def item_dict(item: Any, source: str, index: int) -> dict[str, Any]:
    """The item as a plain dict: an SDK object as the keys it was given (``exclude_unset``)."""
    if is_sdk_item(item):
        dumped: dict[str, Any] = item.model_dump(mode="json", exclude_unset=True)
        return dumped
    if not isinstance(item, Mapping):
        raise TraceError(
            "malformed_event",
            f"expected a Responses item (an object with 'type'), got {described(item)}",
            index=index,
            path=f"items[{index}]",
            source=source,
        )
    return dict(item)


@dataclass
class _Reply:
    """The items of one reply read so far."""

    first: int
    content: list[Part] = field(default_factory=list)
    message: dict[str, Any] | None = None
    """The assistant message's id, string content and namespace, once one is read."""
    calls: list[ToolCall] = field(default_factory=list)
    call_items: list[tuple[int, str]] = field(default_factory=list)
    """For each call: its item index and the key its id is under."""
    hosted: list[tuple[int, ToolMessage]] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)


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

    def flush(self) -> None:
        reply, self.reply = self.reply, None
        if reply is None:
            return
        namespace: dict[str, Any] = {}
        content: Content = reply.content
        if reply.message is None and not reply.content:
            content = ""  # calls alone: no text
        message_id = None
        if reply.message is not None:
            message_id = reply.message["id"]
            namespace = reply.message["namespace"]
            text = reply.message["string"]
            if text is not None:
                if not reply.content:
                    content = text
                else:
                    namespace["content"] = "string"
                    if text:
                        content = [*reply.content, TextPart(text=text)]
            if not would_write_message(
                content, message_id, reply.citations, reply.calls, self.source
            ):
                namespace["message"] = reply.message["at"]
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
        if reply is not None and content_item and reply.calls:
            self.flush()  # the model speaks again after calling: the next reply
            reply = None
        if reply is None:
            reply = self.reply = _Reply(j)
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
        return error.relocated(path=re.sub(r"^messages\[", "items[", path))

    # -- items --

    def item(self, j: int, item: Any) -> None:
        data = item_dict(item, self.source, j)
        reader = _ItemReader(self.source, j)
        kind = data.get("type")
        if kind is None and "role" in data:
            kind = "message"  # an EasyInputMessage: role and content alone
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
            if self.reply is not None and self.reply.message is not None:
                self.flush()  # reasoning comes before the message it leads to: the next reply
            self.open_reply(j, True).content.append(reader.reasoning(data))
        elif kind in OPAQUE_REPLY_ITEMS:
            self.open_reply(j, True).content.append(reader.whole(data))
        elif kind in OPAQUE_INPUT_ITEMS:
            self.flush()
            self.add(HumanMessage(content=[reader.whole(data)]), j)
        elif kind in CALL_OUTPUTS:
            call = reader.call(data, kind)
            assert call.id is not None
            self.expected_outputs[call.id] = CALL_OUTPUTS[kind]
            reply = self.open_reply(j, False)
            reply.calls.append(call)
            reply.call_items.append((j, "call_id"))
        elif kind in HOSTED_CALLS:
            call, result = reader.hosted(data, kind)
            reply = self.open_reply(j, False)
            reply.calls.append(call)
            reply.call_items.append((j, "id"))
            reply.hosted.append((j, result))
        else:
            self.flush()
            self.add(reader.output(data, kind, self.expected_outputs), j)

    def message(self, reader: _ItemReader, data: dict[str, Any]) -> None:
        given = "role" in data
        role = data.pop("role", None)
        if role not in MESSAGE_ROLES:
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
        if reply is not None and reply.message is not None:
            self.flush()
        reply = self.open_reply(reader.index, True)
        reader.citations = reply.citations
        reader.offset = len(reply.content)
        reply.message = reader.assistant_message(data, reply.content)


def would_write_message(
    content: Content,
    message_id: str | None,
    citations: list[Citation],
    calls: list[ToolCall],
    source: str,
) -> bool:
    """Whether the writer writes a message item for a reply of this content (see ``_write``)."""
    if message_id is not None or citations:
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


class _ItemReader(ItemPartReader):
    """Reads the item at one index; every error it raises points there."""

    def __init__(self, source: str, index: int) -> None:
        super().__init__(source, index)
        self.citations: list[Citation] = []
        self.offset = 0
        self.first_text: int | None = None

    def whole(self, data: dict[str, Any]) -> OpaquePart:
        kept = self.kept(data, self.root)
        return OpaquePart(kind=data["type"], value=kept, metadata={self.source: {"item": True}})

    # -- messages --

    def input_message(self, data: dict[str, Any], role: str) -> Message:
        content = self.message_content(data, role)
        message_id = self.optional(data, "id", str, self.root)
        metadata = {self.source: {"fields": self.kept(data, self.root)}} if data else {}
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
            before.extend(content)
        message_id = self.optional(data, "id", str, self.root)
        if data:
            namespace["fields"] = self.kept(data, self.root)
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
            cited = self.citation(annotation, f"{path}.annotations[{k}]", part)
            if cited is None:
                layout.append(self.kept(annotation, f"{path}.annotations[{k}]"))
            else:
                self.citations.append(cited)
                layout.append(None)
        if any(entry is not None for entry in layout):
            namespace["annotations"] = layout

    def citation(self, item: Any, path: str, part: int) -> Citation | None:
        data = self.mapping(item, path, "an annotation")
        if data.get("type") != "url_citation":
            return None
        del data["type"]
        fields = {key: self.optional(data, key, kind, path) for key, kind in _CITATION_KEYS}
        namespace: dict[str, Any] = {}
        if data:
            namespace["fields"] = self.kept(data, path)
        if part != self.first_text:
            namespace["part"] = part
        return Citation(**fields, metadata={self.source: namespace} if namespace else {})

    # -- the reply's other items --

    def reasoning(self, data: dict[str, Any]) -> ReasoningPart:
        del data["type"]
        namespace: dict[str, Any] = {"id": self.string(data, "id", self.root)}
        path = f"{self.root}.summary"
        listed = data.pop("summary", None)
        if not isinstance(listed, list):
            self.fail(
                "malformed_event", path, f"a reasoning item needs a 'summary' list, got "
                f"{described(listed)}"
            )
        texts = []
        for k, entry in enumerate(listed):
            summary = self.mapping(entry, f"{path}[{k}]", "a summary part")
            if summary.get("type") != "summary_text" or type(summary.get("text")) is not str:
                self.fail(
                    "malformed_event",
                    f"{path}[{k}]",
                    f"expected {{'type': 'summary_text', 'text': <string>}}, got "
                    f"{described(entry)}",
                )
            texts.append(summary["text"])
        if len(listed) != 1 or len(listed[0]) != 2:
            namespace["summary"] = self.kept(listed, path)
        if data:
            namespace["fields"] = self.kept(data, self.root)
        return ReasoningPart(text="\n\n".join(texts), metadata={self.source: namespace})

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
        args = {} if raw == "" else parse_arguments(raw)
        if args is None:
            return ToolCall(name=name, id=call_id, invalid_args=raw)
        if json.dumps(args) != raw:
            namespace["arguments"] = raw  # the exact spelling comes back out
        return ToolCall(name=name, args=args, id=call_id)

    def hosted(self, data: dict[str, Any], kind: str) -> tuple[ToolCall, ToolMessage]:
        """A call the API ran: the call (its input) and its result, from one item."""
        del data["type"]
        item_id = self.string(data, "id", self.root)
        result = {key: data.pop(key) for key in list(data) if key in RESULT_KEYS}
        self.kept(data, self.root)
        self.kept(result, self.root)
        name = call_name(kind)
        call = ToolCall(name=name, args=data, id=item_id, metadata={self.source: {"item": kind}})
        text = json.dumps(result, ensure_ascii=False)
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
                    "malformed_event", f"{self.root}.output", f"a {kind} item needs 'output'"
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
        return json.dumps(self.kept(output, f"{self.root}.output"), ensure_ascii=False)

