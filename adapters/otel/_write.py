"""Typed messages as one synthetic model-call span in OTLP/JSON (GenAI convention).

The last ``AIMessage`` (when the conversation ends with it, or with the tool results that
answer it) is the call's output, everything before it the input. Tool results after it, and
results whose ``is_error`` is set, become ``execute_tool`` spans (``gen_ai.tool.call.id``,
``gen_ai.tool.call.result``, status ERROR for a failed one): that is where the reader finds
them, since GenAI message parts have no error flag.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from typing_extensions import assert_never

from tracebridge._json import same_json
from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    AudioPart,
    Content,
    FilePart,
    HumanMessage,
    ImagePart,
    OpaquePart,
    Part,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    messages_of,
)
from tracebridge.validation import validate

from ..openai_chat._parts import PartWriter
from ..openai_chat._read import dumps, parse_arguments, read_arguments
from ._calls import REDACTED, TOOL_MESSAGE_OWN, is_tool_message, json_or_text
from ._genai import INPUT, KNOWN_PART_TYPES, OUTPUT, SYSTEM, reads_as_parts
from ._spans import SOURCE

DROPPABLE = ("is_error", "citations", "audio_replies", "custom_calls")
"""What ``from_messages(drop=...)`` may leave out: the GenAI convention has no place for them."""

TRACE_ID = "0" * 31 + "1"
SCOPE = "tracebridge"


def write_document(messages: Any, *, drop: Collection[str] = ()) -> dict[str, Any]:
    unknown = sorted(set(drop) - set(DROPPABLE))
    if unknown:
        raise ValueError(f"drop={unknown} names nothing droppable; choose from {DROPPABLE}")
    typed = messages_of(messages, SOURCE)
    validate(typed, allow_pending=True, source=SOURCE)
    split = _output_position(typed)
    attributes: list[dict[str, Any]] = [_attr("gen_ai.operation.name", "chat")]
    first = 0
    if typed and isinstance(typed[0], SystemMessage) and _marked(typed[0], "system_instructions"):
        writer = _Writer(0, drop)
        parts = writer.parts(typed[0].content, "")
        attributes.append(_attr(SYSTEM, json.dumps(parts)))
        first = 1
    end = split if split is not None else len(typed)
    given = [_Writer(i, drop).message(typed[i]) for i in range(first, end)]
    attributes.append(_attr(INPUT, json.dumps([m for ms in given for m in ms])))
    if split is not None:
        answered = _Writer(split, drop).message(typed[split])
        attributes.append(_attr(OUTPUT, json.dumps(answered)))
    spans = [_span(1, "chat", attributes, error=False)]
    spans += _tool_spans(typed, split, drop, start=len(spans) + 1)
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [{"scope": {"name": SCOPE}, "spans": spans}],
            }
        ]
    }


def _output_position(typed: list[AnyMessage]) -> int | None:
    """The last AIMessage when only its tool results follow it; else None (no output)."""
    for i in range(len(typed) - 1, -1, -1):
        message = typed[i]
        if isinstance(message, AIMessage):
            return i
        if not isinstance(message, ToolMessage):
            return None
    return None


def _tool_spans(
    typed: list[AnyMessage], split: int | None, drop: Collection[str], start: int
) -> list[dict[str, Any]]:
    spans = []
    number = start
    for i, message in enumerate(typed):
        if not isinstance(message, ToolMessage):
            continue
        trailing = split is not None and i > split
        if not (trailing or message.is_error):
            continue
        writer = _Writer(i, drop)
        if message.tool_call_id is None:
            if trailing:
                writer.refuse(
                    "a tool result after the last model call needs its tool_call_id: the "
                    "reader finds it in a tool span by id",
                    ".tool_call_id",
                )
            writer.lose("an error flag on a result without tool_call_id", ".is_error", "is_error")
            continue
        attributes = [
            _attr("gen_ai.operation.name", "execute_tool"),
            _attr("gen_ai.tool.call.id", message.tool_call_id),
        ]
        if message.name is not None:
            attributes.append(_attr("gen_ai.tool.name", message.name))
        if trailing:
            attributes.append(_attr("gen_ai.tool.call.result", writer.tool_result(message)))
        spans.append(_span(number, "execute_tool", attributes, error=message.is_error))
        number += 1
    return spans


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _span(number: int, name: str, attributes: list[dict[str, Any]], error: bool) -> dict[str, Any]:
    return {
        "traceId": TRACE_ID,
        "spanId": f"{number:016x}",
        "name": name,
        "kind": "SPAN_KIND_CLIENT" if name == "chat" else "SPAN_KIND_INTERNAL",
        "startTimeUnixNano": str(2 * number - 1),
        "endTimeUnixNano": str(2 * number),
        "attributes": attributes,
        "status": {"code": "STATUS_CODE_ERROR"} if error else {},
    }


def _marked(message: AnyMessage, key: str) -> bool:
    own = message.metadata.get(SOURCE)
    return isinstance(own, dict) and own.get(key) is True


class _Writer(PartWriter):
    """Writes the typed message at one index as GenAI message dicts."""

    def __init__(self, index: int, drop: Collection[str]) -> None:
        super().__init__(SOURCE, index, drop)

    def message(self, message: AnyMessage) -> list[dict[str, Any]]:
        namespace = self.namespace(message.metadata)
        out: dict[str, Any]
        if isinstance(message, SystemMessage):
            out = {"role": message.role, "parts": self.parts(message.content, "")}
        elif isinstance(message, HumanMessage):
            out = {"role": "user", "parts": self.parts(message.content, "")}
        elif isinstance(message, AIMessage):
            out = {"role": "assistant", "parts": self.reply(message)}
        elif isinstance(message, ToolMessage):
            out = {"role": "tool", "parts": [self.result(message, namespace)]}
        else:
            assert_never(message)
        if message.name is not None:
            out["name"] = message.name
        for key, value in namespace.get("fields", {}).items():
            out.setdefault(key, value)
        return [out]

    def reply(self, message: AIMessage) -> list[dict[str, Any]]:
        if message.citations:
            self.lose("GenAI messages have no place for citations", ".citations", "citations")
        if message.audio is not None:
            self.lose("GenAI messages have no place for an audio reply", ".audio", "audio_replies")
        calls = [self.call(call, k) for k, call in enumerate(message.tool_calls)]
        if message.content == "" and calls:
            return calls
        return [*self.parts(message.content, ""), *calls]

    def parts(self, content: Content, path: str) -> list[dict[str, Any]]:
        if isinstance(content, str):
            return [{"type": "text", "content": self.text(content, f"{path}.content")}]
        if not content:
            self.refuse("a message with an empty part list (GenAI messages need parts)", ".content")
        return [self.part(part, f"{path}.content[{j}]") for j, part in enumerate(content)]

    def part(  # no role: GenAI messages take every part in every role
        self, part: Part, path: str, role: str = ""
    ) -> dict[str, Any]:
        fields = self.namespace(part.metadata).get("fields", {})
        out: dict[str, Any]
        if isinstance(part, TextPart):
            out = {"type": "text", "content": self.text(part.text, path)}
        elif isinstance(part, ReasoningPart):
            out = {"type": "reasoning", "content": self.text(part.text, path)}
        elif isinstance(part, RefusalPart):
            out = {"type": "refusal", "content": self.text(part.text, path)}
        elif isinstance(part, (ImagePart, AudioPart, FilePart)):
            out = self.media(part, path)
        elif isinstance(part, OpaquePart):
            value = part.value
            if (
                isinstance(value, dict)
                and value.get("type") == part.kind
                and part.kind not in KNOWN_PART_TYPES
            ):
                return dict(value)
            return {"type": "opaque", "kind": part.kind, "value": value}
        else:
            assert_never(part)
        for key, value in fields.items():
            out.setdefault(key, value)
        return out

    def text(self, text: str, path: str) -> str:
        if text == REDACTED:
            self.refuse(
                f"the text {REDACTED!r} is how instrumentations mark masked content: the "
                "reader would refuse it as content not captured",
                path,
            )
        return text

    def media(self, part: ImagePart | AudioPart | FilePart, path: str) -> dict[str, Any]:
        file_id = part.file_id if isinstance(part, FilePart) else None
        given = [name for name, value in (("file_id", file_id), ("url", part.url),
                                          ("data", part.data)) if value is not None]
        if len(given) > 1:
            # a GenAI part is a file id, a URI or a blob: one source, never two
            self.refuse(
                f"a GenAI media part holds one of a file id, a URI or inline data; this "
                f"{part.type} part has {' and '.join(given)}",
                path,
            )
        if isinstance(part, ImagePart):
            modality = "image"
        elif isinstance(part, AudioPart):
            modality = "audio"
        else:
            modality = str(self.namespace(part.metadata).get("modality", "file"))
        out: dict[str, Any]
        if isinstance(part, FilePart) and part.file_id is not None:
            out = {"type": "file", "modality": modality, "file_id": part.file_id}
        elif part.url is not None:
            out = {"type": "uri", "modality": modality, "uri": part.url}
        else:
            out = {"type": "blob", "modality": modality, "content": part.data}
        if part.mime_type is not None:
            out["mime_type"] = part.mime_type
        if isinstance(part, ImagePart) and part.detail is not None:
            out["detail"] = part.detail
        if isinstance(part, FilePart) and part.filename is not None:
            out["filename"] = part.filename
        return out

    def call(self, call: ToolCall, k: int) -> dict[str, Any]:
        namespace = self.namespace(call.metadata)
        if call.kind == "custom":
            self.lose(
                "GenAI tool calls have no custom (free-text) kind; it would be written as a "
                "function call with args {'input': text}",
                f".tool_calls[{k}]",
                "custom_calls",
            )
        out: dict[str, Any] = {"type": "tool_call"}
        if call.id is not None:
            out["id"] = call.id
        out["name"] = call.name
        arguments = _arguments(call, namespace.get("arguments"))
        if call.invalid_args is not None:
            # What the reader makes of them: an object is the arguments, text is parsed.
            read_back = arguments if isinstance(arguments, dict) else (
                read_arguments(arguments) if isinstance(arguments, str) else None
            )
            if read_back is not None:
                self.refuse_read_back(call, read_back, f".tool_calls[{k}].invalid_args")
        out["arguments"] = arguments
        for key, value in namespace.get("fields", {}).items():
            out.setdefault(key, value)
        return out

    def tool_result(self, message: ToolMessage) -> str:
        """A tool span's result: the text, or LangChain's ``ToolMessage`` JSON when the
        reader kept fields of one (``metadata["otel"]["tool_message"]``), read content blocks
        (``"response": "json"``), or would take the text for such JSON."""
        content = message.content
        if not isinstance(content, str):
            self.refuse("a tool span's result is text; this result has content parts", ".content")
        content = self.text(content, ".content")
        namespace = self.namespace(message.metadata)
        kept = namespace.get("tool_message", {})
        where = f".metadata.{SOURCE}.tool_message"
        if not isinstance(kept, dict):
            self.malformed(f"{where[1:]} must be an object, as to_messages writes it", where)
        blocks = json_or_text(content) if namespace.get("response") == "json" else None
        if not (kept or isinstance(blocks, list) or is_tool_message(json_or_text(content))):
            return content
        for key in TOOL_MESSAGE_OWN:
            if key in kept and key != "name":
                self.malformed(f"{where[1:]}.{key} is a field the tool message itself holds",
                               f"{where}.{key}")
        if "name" in kept and message.name is None:
            self.refuse(
                "the ToolMessage JSON's own name is kept, and the message has none: the "
                "reader would take the kept name for the message's",
                ".name",
            )
        data: dict[str, Any] = {
            "content": blocks if isinstance(blocks, list) else content,
            "type": "tool",
            "tool_call_id": message.tool_call_id,
            "status": "error" if message.is_error else "success",
        }
        if message.name is not None:
            data["name"] = message.name
        data.update(kept)
        return json.dumps({"type": "tool", "data": data})

    def result(self, message: ToolMessage, namespace: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "tool_call_response"}
        if message.tool_call_id is not None:
            out["id"] = message.tool_call_id
        if "tool_message" in namespace:
            self.refuse(
                "the kept fields of LangChain's ToolMessage are written in a tool span's "
                "result, which is read only for a result after the last model call; remove "
                f"metadata.{SOURCE}.tool_message to write the result without them",
                f".metadata.{SOURCE}.tool_message",
            )
        content = message.content
        if isinstance(content, str):
            response: Any = self.text(content, ".content")
            if namespace.get("response") == "json":
                try:
                    response = json.loads(content)
                except ValueError:
                    response = content
                if reads_as_parts(response):
                    self.refuse(
                        "this JSON output is a list of what GenAI reads as content parts: "
                        "in a message list it would read back as parts, not as its text (a "
                        "tool span's result keeps it only after the last model call)",
                        ".content",
                    )
        else:
            # a list with a part type the reader does not know reads as a tool's JSON output:
            # an opaque part that would be written as its own value is wrapped instead
            response = [
                {"type": "opaque", "kind": part.kind, "value": part.value}
                if isinstance(part, OpaquePart) and written.get("type") not in KNOWN_PART_TYPES
                else written
                for part, written in zip(content, self.parts(content, ""), strict=True)
            ]
        out["response"] = response
        for key, value in namespace.get("part_fields", {}).items():
            out.setdefault(key, value)
        return out


def _arguments(call: ToolCall, spelled: Any) -> Any:
    """The arguments as the span holds them: an object, or the text that was recorded."""
    if call.invalid_args is not None:
        recorded = spelled is not None and not isinstance(spelled, str)
        if recorded and dumps(spelled) == call.invalid_args:
            return spelled
        return call.invalid_args
    if spelled == "text":
        return dumps(call.args)
    if isinstance(spelled, str) and same_json(parse_arguments(spelled), call.args):
        return spelled
    return call.args
