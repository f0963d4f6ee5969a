"""Typed messages as one OpenInference ``LLM`` span's flat attributes.

OpenInference records Chat Completions messages spelled flat (see ``_flat``), and its reader
keeps what the Chat Completions reader keeps (a tool-call-only reply whose content was left
out, a refusal beside the text, a function's other fields). Those have no GenAI spelling, so
a conversation holding them is written here: each message by the ``openai_chat`` writer (in
the ``otel`` dialect, so it reads ``metadata["otel"]``), then spelled as the attributes
``_flat`` reads back. A value that is not text (an audio reply, annotations, a kept field) is
one attribute holding an OTLP ``AnyValue`` (``kvlistValue``, ``arrayValue``; an empty one for
null), which the span reader turns back into the same JSON value.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator
from typing import Any

from tracebridge._json import json_path
from tracebridge.errors import short_repr, with_article
from tracebridge.messages import (
    AIMessage,
    AnyMessage,
    ImagePart,
    RefusalPart,
    TextPart,
    ToolMessage,
)

from ..openai_chat._parts import PartWriter
from ..openai_chat._read import dumps
from ..openai_chat._write import _Writer as _ChatWriter
from ._calls import REDACTED
from ._flat import OPENINFERENCE_INPUT, OPENINFERENCE_OUTPUT, OTEL
from ._spans import SOURCE

FLAT_MARKERS = {
    "message": ("content", "refusal", "annotations"),
    "call": ("inner",),
    "part": ("inner", "format"),
}
"""What the reader keeps from flat messages only (``metadata["otel"]`` keys): a conversation
holding any of them is written as OpenInference attributes by ``convention="auto"``."""

GENAI_MARKERS = {
    "message": ("system_instructions", "part_fields", "response", "response_key", "role",
                "tool_message"),
    "part": ("modality",),
}
"""What the reader keeps from GenAI messages only."""

FLAT_ONLY_FIELDS = {"message": frozenset(("parts",)), "call": frozenset(("name", "arguments"))}
"""Own keys (``metadata["otel"]["fields"]``) that the reader keeps from flat messages and a
GenAI message or call spells itself (its ``parts``; a call's ``name`` and ``arguments``, which
OpenInference records under ``function``): written in GenAI they would be read back as that,
so ``convention="auto"`` writes a conversation holding any of them as OpenInference."""

_INT64 = range(-(2**63), 2**63)


def markers_in(
    typed: list[AnyMessage], markers: dict[str, tuple[str, ...]]
) -> Iterator[tuple[int, str, str]]:
    """``(index, path below the message, key)`` of each of ``markers`` that a message, one
    of its parts or one of its calls keeps under ``metadata["otel"]``, in order."""
    for i, message in enumerate(typed):
        for key in _kept(message.metadata, markers.get("message", ())):
            yield i, f".metadata.{SOURCE}.{key}", key
        if isinstance(message.content, list):
            for k, part in enumerate(message.content):
                for key in _kept(part.metadata, markers.get("part", ())):
                    yield i, f".content[{k}].metadata.{SOURCE}.{key}", key
        for k, call in enumerate(getattr(message, "tool_calls", ())):
            for key in _kept(call.metadata, markers.get("call", ())):
                yield i, f".tool_calls[{k}].metadata.{SOURCE}.{key}", key


def flat_only_in(typed: list[AnyMessage]) -> Iterator[tuple[int, str, str]]:
    """``(index, path below the message, what)`` of each thing only flat messages hold that a
    message keeps: one of ``FLAT_ONLY_FIELDS``, on it or on one of its calls."""
    for i, message in enumerate(typed):
        where = f".metadata.{SOURCE}.fields"
        for key in sorted(_field_names(message.metadata) & FLAT_ONLY_FIELDS["message"]):
            yield i, json_path(where, key), f"the kept key {key!r}, {_GENAI_OWN}"
        for k, call in enumerate(getattr(message, "tool_calls", ())):
            for key in sorted(_field_names(call.metadata) & FLAT_ONLY_FIELDS["call"]):
                yield (i, json_path(f".tool_calls[{k}]{where}", key),
                       f"the call's kept key {key!r}, {_GENAI_OWN}")


_GENAI_OWN = "which a GenAI message or call would read back as its own"

LONE_TEXT = "a GenAI message of one text part reads back as its plain text"


def is_lone_text(content: Any) -> bool:
    """Whether ``content`` is one text part alone that keeps nothing under ``metadata["otel"]``
    (GenAI writes it as a text part and nothing beside; other namespaces are not written)."""
    if not (isinstance(content, list) and len(content) == 1 and isinstance(content[0], TextPart)):
        return False
    metadata = content[0].metadata
    return not (isinstance(metadata, dict) and metadata.get(SOURCE))


def _field_names(metadata: dict[str, Any]) -> set[str]:
    own = metadata.get(SOURCE)
    fields = own.get("fields") if isinstance(own, dict) else None
    return set(fields) if isinstance(fields, dict) else set()


def _kept(metadata: dict[str, Any], keys: tuple[str, ...]) -> list[str]:
    own = metadata.get(SOURCE)
    return [key for key in keys if key in own] if isinstance(own, dict) else []


def flat_attributes(
    typed: list[AnyMessage], end: int, split: int | None, drop: Collection[str]
) -> list[dict[str, Any]]:
    """``openinference.span.kind`` and the input (``typed[:end]``) and output (``split``)
    messages as ``llm.input_messages.{i}.message.*`` / ``llm.output_messages.0.message.*``."""
    if end == 0:
        _FlatWriter(0, drop).refuse(
            "an OpenInference model call records its input, and this conversation starts "
            "with the reply (the reader takes an output without input for a truncated "
            "trace); convention='genai' writes an empty input",
            "",
        )
    attributes = [attribute("openinference.span.kind", "LLM")]
    for i in range(end):
        attributes += _FlatWriter(i, drop).flat(typed[i], f"{OPENINFERENCE_INPUT}.{i}")
    if split is not None:
        attributes += _FlatWriter(split, drop).flat(typed[split], f"{OPENINFERENCE_OUTPUT}.0")
    return attributes


def attribute(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": any_value(value)}


def any_value(value: Any) -> dict[str, Any]:
    """A JSON value as an OTLP ``AnyValue`` (the span reader's ``_any_value`` inverts it)."""
    if value is None:
        return {}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(item) for item in value]}}
    return {
        "kvlistValue": {
            "values": [{"key": key, "value": any_value(item)} for key, item in value.items()]
        }
    }


class _FlatWriter(_ChatWriter):
    """The Chat Completions writer of one message, whose dict is then spelled flat."""

    FORMAT = "OpenInference"

    def __init__(self, index: int, drop: Collection[str]) -> None:
        # Of the GenAI writer's drop names, custom_calls and citations (a citation's cited
        # text, which a url_citation has no place for) mean something here: is_error is
        # written in a tool span, and audio replies have a place.
        super().__init__(OTEL, index, [name for name in drop if name in _HONOURED], ())

    def lose(self, what: str, path: str, option: str | None) -> None:
        """The Chat Completions writer's refusal, naming only a ``drop`` option that
        ``from_messages`` takes and this writer honours; for what only the Chat Completions
        writer could leave out, the convention that holds it."""
        if option is not None and option not in _HONOURED:
            if option in _GENAI_HOLDS:
                what = f"{what} (convention='genai' writes it)"
            option = None
        super().lose(what, path, option)

    def flat(self, message: AnyMessage, prefix: str) -> list[dict[str, Any]]:
        if isinstance(message.content, list):
            if not message.content:
                self.refuse("an empty part list has no OpenInference spelling", ".content")
            for k, part in enumerate(message.content):
                if not isinstance(part, (TextPart, ImagePart, RefusalPart)):
                    self.refuse(
                        "OpenInference message contents hold text and images; "
                        f"{with_article(part.type)} part has no place there (convention='genai' "
                        "writes it)",
                        f".content[{k}]",
                    )
        self.own_keys(message)
        if isinstance(message, ToolMessage) and message.is_error:
            message = message.model_copy(update={"is_error": False})  # (in its tool span)
        chat = self.message(message)
        attributes = []
        where = f"{prefix}.message"
        own = self.namespace(message.metadata)
        fields = own.get("fields", {})
        for key, value in chat.items():
            at = _typed_path(message, key, own) if key in fields or key in _MOVED else f".{key}"
            self.flat_key(key, at)
            if key == "content" and isinstance(value, list):
                for k, part in enumerate(value):
                    attributes += self.flat_part(part, f"{where}.contents.{k}.message_content", k)
            elif key == "tool_calls":
                calls = message.tool_calls if isinstance(message, AIMessage) else []
                for j, call in enumerate(value):
                    attributes += self.flat_call(call, f"{where}.tool_calls.{j}.tool_call", j,
                                                 self.namespace(calls[j].metadata))
            elif key == "function_call" and _legacy_spelled(value):
                # OpenInference's own spelling of a legacy function call
                attributes += [
                    self.flat_attribute(f"{where}.function_call_name", value["name"],
                                        ".tool_calls[0].function.name"),
                    self.flat_attribute(f"{where}.function_call_arguments_json",
                                        value["arguments"], ".tool_calls[0].function.arguments"),
                ]
            else:
                attributes.append(self.flat_attribute(f"{where}.{key}", value, at))
        return attributes

    def own_keys(self, message: AnyMessage) -> None:
        """Refuse what the reader would read otherwise: a content marker where flat messages
        never leave content out (any message but a reply; a reply without calls reads as
        null), kept fields named as the message's or a call's own keys, and arguments kept
        as GenAI recorded them (not text, or marked ``"text"``)."""
        own = self.namespace(message.metadata)
        if "content" in own and message.content == "" and not (
            isinstance(message, AIMessage) and (message.tool_calls or own["content"] == "null")
        ):
            self.refuse(
                f"metadata.{SOURCE}.content says the content was {own['content']}: flat "
                "messages leave it out only on a reply that calls tools, and read a reply's "
                "missing content as null otherwise",
                f".metadata.{SOURCE}.content",
            )
        for key in own.get("fields", {}):
            if key in _CHAT_KEYS:
                self.refuse(f"metadata.{SOURCE}.fields holds {key!r}, a key of the message "
                            "itself: it would be read back as that, not kept",
                            json_path(f".metadata.{SOURCE}.fields", key))
        for k, call in enumerate(getattr(message, "tool_calls", ())):
            kept = self.namespace(call.metadata)
            where = f".tool_calls[{k}].metadata.{SOURCE}"
            taken = [(f"fields.{key}", key) for key in kept.get("fields", {})
                     if key in ("id", "type", "function")]
            taken += [(f"inner.{key}", key) for key in kept.get("inner", {})
                      if key in ("name", "arguments")]
            if taken:
                self.refuse(f"a call's kept {taken[0][1]!r} is a key of the call itself: it "
                            "would be read back as that, not kept", f"{where}.{taken[0][0]}")
            if call.id is None and "fields" in kept:
                self.refuse("a call without id is written as the legacy function_call, which "
                            "has no place for the call's kept fields (convention='genai' "
                            "writes them)", f"{where}.fields")
            spelled = kept.get("arguments", "")
            if "arguments" in kept and (not isinstance(spelled, str) or spelled == "text"):
                self.refuse("the arguments are kept as GenAI recorded them, which flat "
                            "messages (text) cannot say (convention='genai' writes them)",
                            f"{where}.arguments")

    def flat_part(self, part: dict[str, Any], where: str, k: int) -> list[dict[str, Any]]:
        path = f".content[{k}]"
        if set(part) == {"type", "text"} and part["type"] == "text":
            return [attribute(f"{where}.type", "text"),
                    self.flat_attribute(f"{where}.text", part["text"], f"{path}.text")]
        image = part.get("image_url")
        if set(part) == {"type", "image_url"} and isinstance(image, dict) and set(image) == {"url"}:
            return [attribute(f"{where}.type", "image"),
                    self.flat_attribute(f"{where}.image.image.url", image["url"], f"{path}.url")]
        self.refuse(
            "OpenInference message contents hold a text or an image URL, and nothing beside "
            f"them; this part is written {sorted(part)} (convention='genai' writes it)",
            f".content[{k}]",
        )

    def flat_call(
        self, call: dict[str, Any], where: str, j: int, kept: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """One call's attributes; ``kept``: its ``metadata["otel"]`` (whose ``fields`` and
        ``inner`` keys a refusal names where the typed call holds them)."""
        path = f".tool_calls[{j}]"
        if call.get("type") != "function":
            self.lose("OpenInference records function calls only; this one is custom",
                      path, "custom_calls")
            call = _as_function(call, self, f"{path}.metadata.{SOURCE}.inner")
        fields = kept.get("fields", {})
        inner = kept.get("inner", {})
        attributes = []
        for key, value in call.items():
            at = json_path(f"{path}.metadata.{SOURCE}.fields", key) if key in fields else (
                f"{path}.{key}"
            )
            self.flat_key(key, at)
            if key == "function":
                for name, item in value.items():
                    at = json_path(f"{path}.metadata.{SOURCE}.inner", name) if name in inner else (
                        f"{path}.function.{name}"
                    )
                    self.flat_key(name, at)
                    attributes.append(self.flat_attribute(f"{where}.function.{name}", item, at))
            elif key != "type":
                attributes.append(self.flat_attribute(f"{where}.{key}", value, at))
        return attributes

    def flat_key(self, key: str, path: str) -> None:
        if "." in key or key in ("contents", "message", "tool_call", "message_content"):
            self.refuse(
                f"the key {key!r} has no flat spelling: OpenInference attribute names are "
                "dotted, and the reader gives this one a meaning of its own",
                path,
            )
        if not key.isascii():
            check_storable(self, key, path, _IN_GENAI)

    def flat_attribute(self, key: str, value: Any, path: str) -> dict[str, Any]:
        if value == REDACTED and key.endswith(_READ_FOR_MASKS):
            self.refuse(
                f"the text {REDACTED!r} is how OpenInference marks masked content: the reader "
                "would refuse it as content not captured",
                path,
            )
        if type(value) is not str or not value.isascii():  # (most values: ASCII text)
            check_storable(self, value, path, _IN_GENAI)
        return attribute(key, value)


_HONOURED = ("custom_calls", "citations")
"""The ``drop`` names of ``from_messages`` the flat writer honours."""

_GENAI_HOLDS = frozenset(("reasoning", "mime_types", "refusals", "opaque_parts"))
"""What the Chat Completions writer could leave out by name that GenAI messages hold."""

_IN_GENAI = " (convention='genai' writes it, in JSON text)"


def check_storable(writer: PartWriter, value: Any, path: str, hint: str = "") -> None:
    """Refuse what an OTLP ``AnyValue`` cannot hold: an integer past 64 bits (``intValue``),
    a NaN or an infinity (a ``doubleValue`` with no JSON number: a value parsed from a
    result's text, which ``json.loads`` reads them in), or a string (a value, or an object's
    key) with a lone surrogate, which has no UTF-8 form (OTLP strings are UTF-8: protobuf's
    parser, and so collectors, reject the document). Walked with a stack of its own: values
    may nest deep."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            if not item.isascii() and not _utf8(item):
                writer.refuse(f"the text {short_repr(item)} holds a lone surrogate, which has "
                              f"no UTF-8 form, and OTLP strings are UTF-8{hint}", path)
        elif kind is int:
            if item not in _INT64:
                writer.refuse(f"the number {item} is past what an OTLP intValue holds (64 "
                              f"bits){hint}", path)
        elif kind is float:
            if not math.isfinite(item):
                writer.refuse(f"the number {dumps(item)} is no JSON number: an OTLP/JSON "
                              f"doubleValue cannot hold it{hint}", path)
        elif kind is list:
            stack.extend(item)
        elif kind is dict:
            stack.extend(item)  # its keys: strings too
            stack.extend(item.values())


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_MOVED = frozenset(("refusal", "annotations", "function_call"))
"""The Chat Completions keys whose value the typed message holds elsewhere (``_typed_path``)."""


def _typed_path(message: AnyMessage, key: str, own: dict[str, Any]) -> str:
    """Where the typed message holds what the Chat Completions writer wrote as ``key``."""
    if key in own.get("fields", {}):
        return json_path(f".metadata.{SOURCE}.fields", key)
    if key == "refusal" and isinstance(message.content, list):
        return f".content[{len(message.content) - 1}]"  # a refusal is the last part
    if key == "annotations":
        return f".metadata.{SOURCE}.annotations" if "annotations" in own else ".citations"
    if key == "function_call":
        return ".tool_calls[0]"  # the one call without id
    return f".{key}"


def _as_function(call: dict[str, Any], writer: _FlatWriter, where: str) -> dict[str, Any]:
    """A Chat Completions custom call as the function call ``drop=["custom_calls"]`` writes:
    its free text as the arguments ``{"input": text}``, as the GenAI convention writes it.
    The custom object's kept keys (``inner``) have no place there: refused."""
    custom = call.get("custom", {})
    for key in custom:
        if key not in ("name", "input"):
            writer.refuse("the kept keys of a custom call's own object have no place in the "
                          "function call drop=['custom_calls'] writes", json_path(where, key))
    function = {"name": custom.get("name"), "arguments": dumps({"input": custom.get("input")})}
    out = {key: value for key, value in call.items() if key not in ("type", "custom")}
    return {**out, "type": "function", "function": function}


def _legacy_spelled(function: Any) -> bool:
    """Whether a ``function_call`` is what OpenInference spells as its two attributes (a
    name and argument text, nothing else); one with more is written as one value."""
    return (
        isinstance(function, dict)
        and set(function) == {"name", "arguments"}
        and all(isinstance(value, str) for value in function.values())
    )


_READ_FOR_MASKS = (".content", ".text", ".arguments", ".url", ".function_call_arguments_json")
"""Flat attributes whose value the reader refuses when it is ``__REDACTED__``."""

_CHAT_KEYS = frozenset(("role", "content", "contents", "name", "tool_calls", "tool_call_id",
                        "refusal", "audio", "annotations", "function_call",
                        "function_call_name", "function_call_arguments_json"))
"""The Chat Completions message keys the writer writes or the reader gives a meaning."""

