"""Messages in OpenTelemetry's GenAI convention: ``gen_ai.input.messages``,
``gen_ai.output.messages`` and ``gen_ai.system_instructions``, each a JSON list.

A message is ``{"role", "parts", "name"?, "finish_reason"?}``; parts are ``text``,
``reasoning``, ``tool_call`` (``id``, ``name``, ``arguments``), ``tool_call_response``
(``id``, ``response``; Pydantic AI spells it ``result``), ``blob`` (``modality``,
``mime_type``, ``content`` in base64), ``uri``
(``modality``, ``mime_type``, ``uri``), ``file`` (``modality``, ``mime_type``, ``file_id``),
and any other ``type`` (kept whole). The writer also uses ``refusal`` (``content``) and
``opaque`` (``kind``, ``value``) for typed parts the convention has no type for.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, NoReturn, TypeGuard

from pydantic import ValidationError

from tracebridge._json import RepeatedKey, non_finite_at, unique_keys
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import (
    AIMessage,
    AudioPart,
    Content,
    FilePart,
    HumanMessage,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
)

from ..openai_chat._read import dumps, read_arguments
from ._origins import Origin
from ._spans import SOURCE, Span

INPUT = "gen_ai.input.messages"
OUTPUT = "gen_ai.output.messages"
SYSTEM = "gen_ai.system_instructions"

KNOWN_PART_TYPES = frozenset(
    ("text", "reasoning", "refusal", "tool_call", "tool_call_response", "blob", "uri", "file",
     "opaque")
)
_PART_KEYS = {
    "text": {"type", "content"},
    "reasoning": {"type", "content"},
    "refusal": {"type", "content"},
    "blob": {"type", "modality", "mime_type", "content", "detail", "filename"},
    "uri": {"type", "modality", "mime_type", "uri", "detail", "filename"},
    "file": {"type", "modality", "mime_type", "file_id", "detail", "filename"},
}

_PAYLOAD_KEYS = {"blob": "content", "uri": "uri", "file": "file_id"}
"""The key that holds a media part's media, by part type."""

_PAYLOAD_MEANING = {"blob": "the media's base64 data", "uri": "the media's URL",
                    "file": "the id of an uploaded file"}


def json_attribute(span: Span, key: str) -> list[Any] | None:
    """The parsed JSON list of attribute ``key``, or None when absent."""
    if key not in span.attributes:
        return None
    value = span.attributes[key]
    if isinstance(value, str):
        try:
            value = _DECODER.decode(value)
        except _NotJson as error:
            span.fail("unserializable_value", f"{key} holds {error}", key)
        except RepeatedKey as error:
            span.fail("malformed_event", f"{key}: {error}", key)
        except json.JSONDecodeError as error:
            if _cut(error):
                span.fail(
                    "truncated_trace",
                    f"{key} ends before its JSON does ({error}): the SDK cut the value at "
                    "its length limit (OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT or "
                    "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT; unset, values are not cut)",
                    key,
                )
            span.fail("malformed_event", f"{key} is not JSON ({error})", key)
        except ValueError as error:
            span.fail("malformed_event", f"{key} is not JSON ({error})", key)
        except RecursionError:
            span.fail("malformed_event", f"{key} is JSON nested too deeply to read", key)
    if not isinstance(value, list):
        span.fail("malformed_event", f"{key} must be a JSON list, got {type(value).__name__}", key)
    return value


def _cut(error: json.JSONDecodeError) -> bool:
    """Whether the text ended inside its JSON value (a string left open, or more expected at
    the end), as a value cut at a length limit does."""
    return bool(error.doc.strip()) and (
        error.msg.startswith("Unterminated string") or error.pos >= len(error.doc)
    )


class _NotJson(ValueError):
    """A token Python's ``json`` reads that JSON has no value for (``NaN``, ``Infinity``)."""


def _not_json(token: str) -> NoReturn:
    raise _NotJson(f"{token}, which is no JSON value (JSON has no NaN or infinity)")


_DECODER = json.JSONDecoder(object_pairs_hook=unique_keys, parse_constant=_not_json)
"""The message lists' reader: a key given twice (``RepeatedKey``: which value was meant is not
known) and ``NaN`` / ``Infinity`` are refused, where ``json.loads`` keeps the last value and
reads the tokens as floats."""


def refuse_loose_list(span: Span, key: str, text: str) -> None:
    """JSON text read as a list of parts elsewhere (Traceloop's ``content``), held to the
    message lists' rules (``_DECODER``): a key given twice is ``malformed_event`` at ``key``,
    ``NaN`` / ``Infinity`` ``unserializable_value`` there."""
    try:
        _DECODER.decode(text)
    except _NotJson as error:
        span.fail("unserializable_value", f"{key} holds {error}", key)
    except RepeatedKey as error:
        span.fail("malformed_event", f"{key}: {error}", key)


def system_instructions(span: Span) -> tuple[list[Message], list[Origin]] | None:
    """The system message ``gen_ai.system_instructions`` records, with where (``_origins``)."""
    parts = json_attribute(span, SYSTEM)
    if parts is None:
        return None
    reader = _MessageReader(span, SYSTEM)
    read = reader.message({"role": "system", "parts": parts}, SYSTEM, listed=SYSTEM)
    marked = {SOURCE: {"system_instructions": True}}
    return [message.model_copy(update={"metadata": marked}) for message in read], reader.origins


def genai_messages(span: Span, key: str) -> list[Message] | None:
    read = genai_read(span, key)
    return None if read is None else read[0]


def genai_read(span: Span, key: str) -> tuple[list[Message], list[Origin]] | None:
    """The messages of list ``key``, and where each was recorded (``_origins``)."""
    listed = json_attribute(span, key)
    if listed is None:
        return None
    reader = _MessageReader(span, key)
    messages: list[Message] = []
    for i, item in enumerate(listed):
        messages.extend(reader.message(item, f"{key}[{i}]"))
    return messages, reader.origins


class _MessageReader:
    def __init__(self, span: Span, key: str) -> None:
        self.span = span
        self.key = key
        self.origins: list[Origin] = []
        """Where each message read so far was recorded."""

    def fail(self, code: Any, detail: str, where: str) -> Any:
        self.span.fail(code, detail, where)

    def message(self, item: Any, where: str, listed: str | None = None) -> list[Message]:
        """The messages ``item`` is read as; ``listed``: where its parts are, when not at
        its ``parts`` (system instructions are the list of parts itself)."""
        try:
            with _SourceTerms(self.span, where, _MESSAGE_TERMS, at_least_here=True):
                return self._message(item, where, listed or f"{where}.parts")
        except ValidationError as error:  # a value of the wrong type for a typed field
            first = error.errors()[0]
            self.fail(
                "malformed_event",
                f"{first['msg']} (at {'.'.join(map(str, first['loc']))})",
                where,
            )
            raise AssertionError from None

    def _message(self, item: Any, where: str, listed: str) -> list[Message]:
        if not isinstance(item, dict):
            self.fail("malformed_event", f"expected a message object, got {short_repr(item)}",
                      where)
        data = dict(item)
        role = data.pop("role", None)
        parts = data.pop("parts", None)
        if not isinstance(parts, list):
            self.fail("malformed_event", "a message needs a 'parts' list", where)
        if not parts:
            self.fail(
                "truncated_trace",
                f"{with_article(role)} message with no parts: the instrumentation left its "
                "content out (Traceloop does so for an input holding a base64 image)",
                listed,
            )
        name = data.pop("name", None)
        if name is not None and not isinstance(name, str):
            self.fail("malformed_event", "'name' must be a string", f"{where}.name")
        namespace: dict[str, Any] = {}
        if data:
            namespace["fields"] = data  # finish_reason and any other key, verbatim
        metadata = {SOURCE: namespace} if namespace else {}
        if role in ("system", "developer"):
            content = self.content(parts, listed)
            self.origins.append(Origin(where))
            return [SystemMessage(content=content, role=role, name=name, metadata=metadata)]
        if role == "user":
            return self.user(parts, where, name, metadata)
        if role == "assistant":
            calls = [
                self.call(part, f"{where}.parts[{k}]")
                for k, part in enumerate(parts)
                if isinstance(part, dict) and part.get("type") == "tool_call"
            ]
            rest = [(k, part) for k, part in enumerate(parts)
                    if not (isinstance(part, dict) and part.get("type") == "tool_call")]
            said: Content = self.numbered_content(rest, f"{where}.parts") if rest else ""
            self.origins.append(Origin(where, tuple(
                f"{where}.parts[{k}]" for k, part in enumerate(parts)
                if isinstance(part, dict) and part.get("type") == "tool_call"
            )))
            return [AIMessage(content=said, tool_calls=calls, name=name, metadata=metadata)]
        if role == "tool":
            results: list[Message] = []
            for k, part in enumerate(parts):
                at = f"{where}.parts[{k}]"
                if not isinstance(part, dict) or part.get("type") != "tool_call_response":
                    self.fail(
                        "malformed_event",
                        "a tool message holds tool_call_response parts only",
                        at,
                    )
                results.append(self.result(part, at, name, metadata if k == 0 else {}))
                self.origins.append(Origin(at, result_id=f"{at}.id"))
            return results
        self.fail(
            "unknown_role",
            f"unknown role {role!r}; accepted roles: system, developer, user, assistant, tool",
            f"{where}.role",
        )
        raise AssertionError

    def user(
        self, parts: list[Any], where: str, name: str | None, metadata: dict[str, Any]
    ) -> list[Message]:
        """A user message; Pydantic AI sends tool results to the model in one too (its
        ``ModelRequest`` holds them with any user prompt): each ``tool_call_response`` part
        is a ToolMessage marked ``metadata["otel"]["role"] = "user"``, and each run of other
        parts around them a HumanMessage, in order; the message's own keys go on the first."""
        if not any(_is_result(part) for part in parts):
            self.origins.append(Origin(where))
            return [HumanMessage(content=self.content(parts, f"{where}.parts"), name=name,
                                 metadata=metadata)]
        read: list[Message] = []
        pending: list[tuple[int, Any]] = []

        def flush() -> None:
            if pending:
                content = self.numbered_content(pending, f"{where}.parts")
                read.append(HumanMessage(content=content, name=name,
                                         metadata={} if read else metadata))
                self.origins.append(Origin(where))
                pending.clear()

        for k, part in enumerate(parts):
            if not _is_result(part):
                pending.append((k, part))
                continue
            flush()
            given = metadata.get(SOURCE, {}) if not read else {}
            marked = {SOURCE: {**given, "role": "user"}}
            read.append(self.result(part, f"{where}.parts[{k}]", name, marked))
            self.origins.append(Origin(f"{where}.parts[{k}]", result_id=f"{where}.parts[{k}].id"))
        flush()
        return read

    def content(self, parts: list[Any], listed: str) -> Content:
        """The content of the part list at ``listed``."""
        return self.numbered_content(list(enumerate(parts)), listed)

    def numbered_content(self, numbered: list[tuple[int, Any]], listed: str) -> Content:
        """The content of some parts of the list at ``listed``, each with its position there;
        one plain text part is its text."""
        typed = [self.part(part, f"{listed}[{k}]") for k, part in numbered]
        if len(typed) == 1 and isinstance(typed[0], TextPart) and not typed[0].metadata:
            return typed[0].text
        return typed

    def part(self, part: Any, where: str) -> Part:
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            self.fail("malformed_event",
                      f"expected a part with a 'type', got {short_repr(part)}", where)
        kind = part["type"]
        if kind == "opaque" and set(part) == {"type", "kind", "value"}:
            with _SourceTerms(self.span, where, (("value", "value"),)):
                return OpaquePart(kind=part["kind"], value=part["value"])
        known = _PART_KEYS.get(kind)
        if known is None:
            with _SourceTerms(self.span, where, (("value", ""),)):  # the part kept whole
                return OpaquePart(kind=kind, value=part)
        with _SourceTerms(self.span, where, _PART_TERMS):
            try:
                return self.known_part(part, kind, known, where)
            except ValidationError as error:  # a source field of the wrong type
                self.refuse_typed(error, where)

    def refuse_typed(self, error: ValidationError, where: str) -> NoReturn:
        """A typed part's refusal of a field (``data``, a number, say) at the part's source
        key (``content``); one of no field the part spells is left to the message."""
        first = error.errors()[0]
        typed = str(first["loc"][0]) if first["loc"] else ""
        key = _SOURCE_KEYS.get(typed)
        if key is None:
            raise error
        self.fail("malformed_event", f"{first['msg']}, got {short_repr(first['input'])}",
                  f"{where}.{key}")
        raise AssertionError

    def known_part(self, part: dict[str, Any], kind: str, known: set[str], where: str) -> Part:
        """A part of a type the convention names (``_PART_KEYS``); its other keys are kept."""
        extra = {key: value for key, value in part.items() if key not in known}
        metadata = {SOURCE: {"fields": extra}} if extra else {}
        if kind in ("text", "reasoning", "refusal"):
            text = part.get("content")
            if not isinstance(text, str):
                self.fail("malformed_event", f"{with_article(kind)} part needs 'content' text",
                          where)
            if kind == "text":
                return TextPart(text=text, metadata=metadata)
            if kind == "reasoning":
                return ReasoningPart(text=text, metadata=metadata)
            return RefusalPart(text=text, metadata=metadata)
        self.refuse_no_payload(part, kind, where)
        modality = part.get("modality")
        if "modality" in part and not isinstance(modality, str):
            self.fail("malformed_event", f"a part's 'modality' is text (image, audio, video, "
                      f"...), got {short_repr(modality)}", f"{where}.modality")
        source: dict[str, Any] = {"mime_type": part.get("mime_type")}
        if kind == "blob":
            source["data"] = part.get("content")
        elif kind == "uri":
            source["url"] = part.get("uri")
        else:
            source["file_id"] = part.get("file_id")
        if modality == "image" and "file_id" not in source and "filename" not in part:
            return ImagePart(**source, detail=part.get("detail"), metadata=metadata)
        if modality == "audio" and "file_id" not in source and "filename" not in part:
            if "detail" in part:  # an audio part has no detail of its own: kept beside it
                metadata = {SOURCE: {"fields": {**extra, "detail": part["detail"]}}}
            return AudioPart(**source, metadata=metadata)
        if "detail" in part:
            metadata = {SOURCE: {"fields": {**extra, "detail": part["detail"]}}}
        if modality is not None and modality != "file":
            metadata = {SOURCE: {**metadata.get(SOURCE, {}), "modality": modality}}
        return FilePart(**source, filename=part.get("filename"), metadata=metadata)

    def refuse_no_payload(self, part: dict[str, Any], kind: str, where: str) -> None:
        """A media part whose payload key (``_PAYLOAD_KEYS``) is missing or null: it records
        no media, and the typed part needs some. Refused at that key, in source terms."""
        key = _PAYLOAD_KEYS[kind]
        if part.get(key) is None:
            held = "it is null" if key in part else "it has none"
            self.fail("malformed_event", f"{with_article(kind)} part needs {key!r} "
                      f"({_PAYLOAD_MEANING[kind]}); {held}", f"{where}.{key}")

    def call(self, part: dict[str, Any], where: str) -> ToolCall:
        with _SourceTerms(self.span, where, _CALL_TERMS):
            return self.typed_call(part, where)

    def typed_call(self, part: dict[str, Any], where: str) -> ToolCall:
        name = part.get("name")
        if not isinstance(name, str):
            self.fail("malformed_event", "a tool_call part needs a 'name'", f"{where}.name")
        call_id = part.get("id")
        if call_id is not None and not isinstance(call_id, str):
            self.fail("malformed_event", "a tool call 'id' must be a string", f"{where}.id")
        extra = {k: v for k, v in part.items() if k not in ("type", "name", "id", "arguments")}
        namespace: dict[str, Any] = {"fields": extra} if extra else {}
        arguments = part.get("arguments", {})
        if isinstance(arguments, dict):
            return ToolCall(name=name, args=arguments, id=call_id, metadata=_ns(namespace))
        if isinstance(arguments, str):
            parsed = read_arguments(arguments)
            if parsed is None:
                return ToolCall(
                    name=name, id=call_id, invalid_args=arguments, metadata=_ns(namespace)
                )
            if dumps(parsed) != arguments:
                namespace["arguments"] = arguments
            else:
                namespace["arguments"] = "text"
            return ToolCall(name=name, args=parsed, id=call_id, metadata=_ns(namespace))
        namespace["arguments"] = arguments
        text = dumps(arguments)
        return ToolCall(name=name, id=call_id, invalid_args=text, metadata=_ns(namespace))

    def result(
        self, part: dict[str, Any], where: str, name: str | None, metadata: dict[str, Any]
    ) -> ToolMessage:
        call_id = part.get("id")
        if call_id is not None and not isinstance(call_id, str):
            self.fail("malformed_event", "a tool call 'id' must be a string", f"{where}.id")
        key = response_key(part)
        if key is None:
            self.span.fail(
                "malformed_event",
                "a tool_call_response part needs its 'response' (the convention's key; "
                "Pydantic AI's 'result' is read too)",
                where,
            )
        response = part[key]
        namespace = dict(metadata.get(SOURCE, {}))
        if key != "response":
            namespace["response_key"] = key
        extra = {k: v for k, v in part.items() if k not in ("type", "id", key)}
        if extra:
            namespace["part_fields"] = extra
        content: Content
        if isinstance(response, str):
            content = response
        elif reads_as_parts(response):
            content = self.content(response, f"{where}.{key}")
            if isinstance(content, str):
                content = [TextPart(text=content)]
        else:
            self.refuse_non_finite(response, f"{where}.{key}")
            content = dumps(response)
            namespace["response"] = "json"
        with _SourceTerms(self.span, where, (("metadata.otel.part_fields", ""),)):
            return ToolMessage(
                content=content, tool_call_id=call_id, name=name, metadata=_ns(namespace)
            )


    def refuse_non_finite(self, value: Any, where: str) -> None:
        """A value kept as its JSON text must hold no NaN or infinity (a number past the
        largest double, ``1e999``, reads as one): its dump would spell no JSON number."""
        found = non_finite_at(value, where)
        if found is not None:
            self.fail("unserializable_value", "a number that no JSON number holds (past the "
                      "largest double, or not a number)", found)


_MESSAGE_TERMS = (("metadata.otel.fields", ""),)
"""A message's typed paths and the message's keys they came from (``_SourceTerms``): its
other keys (``finish_reason``, say) are kept under ``fields``."""

_PART_TERMS = (("metadata.otel.fields", ""), ("metadata.otel.modality", "modality"))
"""The same for a part of a known type: its other keys, and its ``modality``."""

_SOURCE_KEYS = {"data": "content", "url": "uri", "file_id": "file_id",
                "mime_type": "mime_type", "detail": "detail", "filename": "filename"}
"""A media part's typed fields and the part's keys they are read from."""

_CALL_TERMS = (
    ("args", "arguments"), ("metadata.otel.arguments", "arguments"), ("metadata.otel.fields", "")
)
"""The same for a ``tool_call`` part: its ``arguments`` (as read, or kept as given when
neither an object nor text) and its other keys."""


class _SourceTerms:
    """A typed model's own refusal of a value (one nested too deep, an infinity: it has no
    span) raised at the span, its path in the source's terms: the typed path under a prefix
    of ``spelled`` (typed prefix, the source's key there; ``""``: the item's own keys) goes
    on after ``where``. One under no such prefix is left to the enclosing reader, or with
    ``at_least_here`` pointed at ``where``."""

    def __init__(
        self, span: Span, where: str, spelled: tuple[tuple[str, str], ...], *,
        at_least_here: bool = False,
    ) -> None:
        self.span = span
        self.where = where
        self.spelled = spelled
        self.at_least_here = at_least_here

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if not isinstance(error, TraceError) or error.index is not None:
            return
        inside = _in_source(error.path or "", self.spelled)
        if inside is None and not self.at_least_here:
            return
        raise error.relocated(
            index=self.span.index, path=self.span.at(f"{self.where}{inside or ''}"),
            source=SOURCE,
        ) from None


def _in_source(typed: str, spelled: tuple[tuple[str, str], ...]) -> str | None:
    """``args.x`` under ``("args", "arguments")`` -> ``.arguments.x``; None under no prefix."""
    for prefix, key in spelled:
        rest = typed[len(prefix):]
        if typed.startswith(prefix) and rest[:1] in ("", ".", "["):
            return f".{key}{rest}" if key else rest
    return None


RESPONSE_KEYS = ("response", "result")
"""A tool result's keys, in order: the convention's (its JSON schema requires ``response``),
then Pydantic AI's (``result``, as in earlier drafts of the convention)."""


def response_key(part: dict[str, Any]) -> str | None:
    """The key that holds a ``tool_call_response`` part's response, None when it has none."""
    return next((key for key in RESPONSE_KEYS if key in part), None)


def _is_result(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "tool_call_response"


def reads_as_parts(response: Any) -> TypeGuard[list[Any]]:
    """Whether a tool result's ``response`` is read as content parts (a non-empty list of
    parts of known types), not as a tool's JSON output."""
    return (
        isinstance(response, list)
        and bool(response)
        and all(
            isinstance(p, dict) and isinstance(p.get("type"), str)
            and p["type"] in KNOWN_PART_TYPES
            for p in response
        )
    )


def _ns(namespace: dict[str, Any]) -> dict[str, Any]:
    return {SOURCE: namespace} if namespace else {}
