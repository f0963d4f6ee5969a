"""Messages kept as flat span attributes: OpenInference and the older GenAI convention.

OpenInference writes ``llm.input_messages.{i}.message.role`` / ``.content`` / ``.name`` /
``.tool_call_id`` / ``.contents.{k}.message_content.{type,text,image.image.url}`` /
``.tool_calls.{j}.tool_call.{id,function.name,function.arguments}`` / a legacy
``.function_call_name`` with ``.function_call_arguments_json`` (and the same under
``llm.output_messages``). The older GenAI convention (Traceloop/OpenLLMetry before
``gen_ai.input.messages``) writes ``gen_ai.prompt.{i}.role`` / ``.content`` /
``.tool_call_id`` / ``.tool_calls.{j}.{id,name,arguments}`` and ``gen_ai.completion.{i}.*``.

Both are Chat Completions messages spelled flat, so each is rebuilt as a Chat Completions
dict and read by the ``openai_chat`` reader (its parts, calls and argument parsing), with
errors moved to the span attribute they came from.
"""

from __future__ import annotations

import json
import re
from typing import Any, NoReturn

from tracebridge.errors import TraceError, short_repr
from tracebridge.messages import Message

from ..openai_chat._read import ROLES, Dialect, _Reader
from ._genai import refuse_loose_list
from ._origins import Origin
from ._spans import SOURCE, Span

OTEL = Dialect(SOURCE, {role: "name" for role in ROLES})

_DIGITS = re.compile(r"(0|[1-9][0-9]{0,17})\Z")
"""An index as OpenInference and Traceloop write one (ASCII digits, no leading zero, at most
18 of them): any other spelling (``01``, a second ``0`` as ``00``) is not one of their
messages, nor is a number no list of attributes reaches."""

IMAGE_SWITCHES = (
    "OpenInference leaves an image out (or masks it) when OPENINFERENCE_HIDE_INPUT_IMAGES is "
    "set, and masks a base64 image longer than OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH (32,000 "
    "characters unless raised)"
)

OPENINFERENCE_INPUT = "llm.input_messages"
OPENINFERENCE_OUTPUT = "llm.output_messages"
LEGACY_INPUT = "gen_ai.prompt"
LEGACY_OUTPUT = "gen_ai.completion"
RESPONSES_SCOPES = frozenset(
    ("openinference.instrumentation.openai", "openinference.instrumentation.openai_agents")
)


def has_flat(span: Span, prefix: str) -> bool:
    dotted = prefix + "."
    return any(key.startswith(dotted) for key in span.attributes)


def flat_messages(span: Span, prefix: str, *, openinference: bool) -> list[Message] | None:
    """The messages under ``prefix``, or None when the span has none."""
    read = flat_read(span, prefix, openinference=openinference)
    return None if read is None else read[0]


def flat_read(
    span: Span, prefix: str, *, openinference: bool
) -> tuple[list[Message], list[Origin]] | None:
    """``flat_messages``, and where each was recorded (``_origins``)."""
    dotted = prefix + "."
    tree: dict[str, Any] = {}
    nodes = {id(tree)}
    for key, value in span.attributes.items():
        if key.startswith(dotted):
            _place(tree, key[len(dotted):].split("."), value, nodes, span, dotted)
    if not tree:
        return None
    # OpenInference's Responses API readers (the openai and the Agents SDK instrumentations)
    # keep index 0 of the input for the instructions and leave it out when there are none.
    skip_first = (
        openinference
        and prefix == OPENINFERENCE_INPUT
        and span.scope in RESPONSES_SCOPES
        and "0" not in tree
    )
    unscoped = openinference and prefix == OPENINFERENCE_INPUT and not span.scope
    listed = _as_list(tree, span, prefix, start=1 if skip_first else 0,
                      hint=_UNSCOPED if unscoped and "0" not in tree else "")
    messages = []
    origins = []
    for position, item in enumerate(listed):
        number = position + (1 if skip_first else 0)
        where = f"{prefix}.{number}"
        entry = item
        if openinference and isinstance(item, dict) and "message" in item:
            entry, where = _unwrapped(item, "message", span, where)
        if not isinstance(entry, dict):
            span.fail("malformed_event", f"expected message attributes under {where}", where)
        chat = _chat_dict(entry, span, where, openinference=openinference)
        try:
            messages.append(_Reader(OTEL, number).message(chat))
        except TraceError as error:
            raise _moved(error, span, where, number, openinference=openinference) from None
        origins.append(_origin(where, chat, openinference=openinference))
    return messages, origins


def _origin(where: str, chat: dict[str, Any], *, openinference: bool) -> Origin:
    """Where a flat message and its calls were recorded (a legacy ``function_call``: at
    the message's ``function_call_name``)."""
    inner = ".tool_call" if openinference else ""
    calls = tuple(f"{where}.tool_calls.{j}{inner}" for j in range(len(chat.get("tool_calls", []))))
    if "function_call" in chat:
        calls = (f"{where}.function_call_name",)
    return Origin(where, calls, f"{where}.tool_call_id")


def _unwrapped(node: dict[str, Any], wrapper: str, span: Span, where: str) -> tuple[Any, str]:
    """What OpenInference keeps under ``{where}.{wrapper}``, and that attribute prefix; an
    attribute beside the wrapper is refused (nothing would read it)."""
    for key in node:
        if key != wrapper:
            span.fail("malformed_event", f"an attribute beside {where}.{wrapper}.*: "
                      f"OpenInference keeps everything under {wrapper!r}", f"{where}.{key}")
    return node[wrapper], f"{where}.{wrapper}"


def _moved(
    error: TraceError, span: Span, where: str, number: int, *, openinference: bool
) -> TraceError:
    """The reader's error at the attribute that holds what it points at (the Chat Completions
    path spelled as the convention's flat key), or below the message's attributes."""
    root = f"messages[{number}]"
    suffix = error.path[len(root):] if error.path and error.path.startswith(root) else ""
    key = _flat_key(suffix, openinference)
    if key is not None:
        return error.relocated(index=span.index, path=span.at(f"{where}{key}"))
    return error.relocated(index=span.index, path=f"{span.at(where)}{suffix}")


def _flat_key(suffix: str, openinference: bool) -> str | None:
    """A message's Chat Completions path (``.role``, ``.tool_calls[0].function.name``,
    ``.content[1].image_url.url``) as the flat key below the message; None when no one
    attribute holds it."""
    if _FIELDS.fullmatch(suffix):  # a message field (.role, .name): an attribute of its own
        return suffix
    if not openinference and _PART_LIST.match(suffix):  # Traceloop's content: the list itself
        return suffix
    found = _CALL_FIELD.fullmatch(suffix)
    if found is not None:
        number, field = found.groups()
        if openinference:
            return f".tool_calls.{number}.tool_call{field}"
        return f".tool_calls.{number}{field.removeprefix('.function')}"
    found = _PART_FIELD.fullmatch(suffix)
    if found is not None and openinference:
        number, field = found.groups()
        inner = _PART_KEYS.get(field)
        return None if inner is None else f".contents.{number}.message_content{inner}"
    return None


_FIELDS = re.compile(r"(\.[A-Za-z_]+)+")
_CALL_FIELD = re.compile(r"\.tool_calls\[(\d+)\]((?:\.function)?\.[A-Za-z_]+)")
_PART_FIELD = re.compile(r"\.content\[(\d+)\]((?:\.[A-Za-z_]+)*)")
_PART_LIST = re.compile(r"\.content\[\d+\]")
_PART_KEYS = {"": "", ".type": ".type", ".text": ".text", ".image_url": ".image.image",
              ".image_url.url": ".image.image.url"}
"""A Chat Completions part's fields, as OpenInference spells them below ``message_content``."""


def _place(
    tree: dict[str, Any], parts: list[str], value: Any, nodes: set[int], span: Span, dotted: str
) -> None:
    """``value`` at ``parts`` of ``tree``, whose own nodes are ``nodes`` (by id: a value may
    be a mapping, a kvlist, which is never descended into or changed). A key that holds a
    value and starts another key (``….content`` and ``….content.foo``) is refused at that
    key, in either order: one would hide the other."""
    node = tree
    for depth, part in enumerate(parts[:-1]):
        child = node.get(part, _ABSENT)
        if child is _ABSENT:
            child = node[part] = {}
            nodes.add(id(child))
        elif id(child) not in nodes:
            _shadowing(span, dotted + ".".join(parts[: depth + 1]), dotted + ".".join(parts))
        node = child
    if parts[-1] in node:  # a node of the tree: keys under it came first
        key = dotted + ".".join(parts)
        under = _first_key(span, key + ".")
        _shadowing(span, key, under)
    node[parts[-1]] = value


_ABSENT = object()


def _first_key(span: Span, start: str) -> str:
    return next(key for key in span.attributes if key.startswith(start))


def _shadowing(span: Span, key: str, other: str) -> NoReturn:
    span.fail(
        "malformed_event",
        f"the attribute {key!r} holds a value and is the start of the attribute {other!r}: "
        "one would hide the other (each attribute of a flat message holds one field)",
        key,
    )


_UNSCOPED = (
    "; the span records no instrumentation scope (ReadableSpan.to_json() leaves it out), so "
    "it cannot be told to come from OpenInference's Responses API readers, whose inputs "
    "start at index 1: read the SDK spans themselves, or add the scope to each dict as "
    "\"instrumentation_scope\": {\"name\": span.instrumentation_scope.name}"
)


def _as_list(
    node: dict[str, Any], span: Span, where: str, start: int = 0, hint: str = ""
) -> list[Any]:
    """The numbered children of ``node`` in order; a gap in the numbers is a truncated trace."""
    if not isinstance(node, dict) or not node or not all(_DIGITS.match(key) for key in node):
        span.fail("malformed_event", f"expected numbered attributes under {where} (indexes "
                  "0, 1, 2...: digits without a leading zero, at most 18)", where)
    numbers = sorted(int(key) for key in node)
    expected = range(start, start + len(numbers))
    if numbers != list(expected):
        # (sorted, distinct, from start on: the first index that differs is missing)
        missing = next(n for n, found in zip(expected, numbers, strict=True) if n != found)
        span.fail(
            "truncated_trace",
            f"message attributes under {where} skip index {missing} (found "
            f"{numbers[:8]}{'...' if len(numbers) > 8 else ''}): part of the conversation was "
            "lost, e.g. the SDK's attribute limit (OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT) cut it"
            + hint,
            where,
        )
    return [node[str(number)] for number in numbers]


def _chat_dict(
    entry: dict[str, Any], span: Span, where: str, *, openinference: bool
) -> dict[str, Any]:
    """A Chat Completions message dict from one flat message's attributes."""
    chat: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "tool_calls":
            chat["tool_calls"] = [
                _call(call, span, f"{where}.tool_calls.{j}", openinference=openinference)
                for j, call in enumerate(_as_list(value, span, f"{where}.tool_calls"))
            ]
        elif key == "contents" and openinference:
            chat["contents"] = [
                _content(item, span, f"{where}.contents.{k}")
                for k, item in enumerate(_as_list(value, span, f"{where}.contents"))
            ]
        elif key == "content" and not openinference and isinstance(value, str):
            chat["content"] = _legacy_content(value, span, f"{where}.content")
        else:
            chat[key] = value
    if openinference and any(key in chat for key in LEGACY_CALL_KEYS):
        chat["function_call"] = _function_call(chat, span, where)
    parts = chat.pop("contents", None) if openinference else None  # (Traceloop's: its own)
    if parts is not None:
        text = chat.get("content")
        plain = all(part.get("type") == "text" and isinstance(part["text"], str) for part in parts)
        if text is None:
            chat["content"] = parts
        elif not (plain and text == "".join(part["text"] for part in parts)):
            span.fail(
                "conflicting_fields",
                f"{where}.content says {text!r} but its contents parts say otherwise",
                f"{where}.content",
            )
    if chat.get("role") == "assistant" and not any(
        key in chat for key in ("content", "tool_calls", "function_call")
    ):
        chat["content"] = None
    return chat


LEGACY_CALL_KEYS = ("function_call_name", "function_call_arguments_json")
"""OpenInference's spelling of a legacy ``function_call`` (``MESSAGE_FUNCTION_CALL_NAME``,
``MESSAGE_FUNCTION_CALL_ARGUMENTS_JSON``)."""


def _function_call(chat: dict[str, Any], span: Span, where: str) -> dict[str, Any]:
    """The ``function_call`` OpenInference spelled as its two attributes: both are written
    for one (the arguments are the API's text), and never beside a ``function_call``."""
    if "function_call" in chat:
        span.fail("conflicting_fields", "a message with both function_call and "
                  "function_call_name / function_call_arguments_json", f"{where}.function_call")
    function = {}
    for key, field in zip(LEGACY_CALL_KEYS, ("name", "arguments"), strict=True):
        if key not in chat:
            span.fail("malformed_event", f"{where}.{key} is missing: OpenInference records a "
                      "function_call's name and arguments together", f"{where}.{key}")
        function[field] = chat.pop(key)
    return function


def _legacy_content(value: str, span: Span, key: str) -> Any:
    """Traceloop wrote a list of content parts as its JSON text; it is read as GenAI's message
    lists are (a key given twice, or ``NaN`` / ``Infinity``, is refused at ``key``). Other
    text (no JSON, or the JSON of no part list) is the text, as it is."""
    if value.startswith("[{"):
        try:
            parts = json.loads(value)
        except (ValueError, RecursionError):  # the text, as it is
            return value
        if isinstance(parts, list) and all(
            isinstance(part, dict) and "type" in part for part in parts
        ):
            refuse_loose_list(span, key, value)
            return parts
    return value


def _call(call: Any, span: Span, where: str, *, openinference: bool) -> dict[str, Any]:
    inner = call
    if openinference and isinstance(call, dict) and "tool_call" in call:
        inner, where = _unwrapped(call, "tool_call", span, where)
    if not isinstance(inner, dict):
        span.fail("malformed_event", f"expected tool call attributes under {where}", where)
    fields = dict(inner)
    function = fields.pop("function", None) if openinference else None
    if function is None:
        function = {key: fields.pop(key) for key in ("name", "arguments") if key in fields}
    if not isinstance(function, dict):
        span.fail("malformed_event", f"expected function attributes under {where}", where)
    function = dict(function)
    # OpenInference leaves out the arguments of a call made without any ("{}").
    function.setdefault("arguments", "{}")
    for key, allowed in (("type", "function"), ("function", None)):
        if key in fields and fields[key] != allowed:  # (a recorded one would be overwritten)
            span.fail("malformed_event", f"a tool call attribute {key} = "
                      f"{short_repr(fields[key])} is not one this convention records",
                      f"{where}.{key}")
    return {**fields, "type": "function", "function": function}


def _content(item: Any, span: Span, where: str) -> dict[str, Any]:
    """One ``message_content``: ``type`` text with its ``text`` (left out when empty, as
    OpenInference leaves it out), or ``type`` image with its ``image.image.url``."""
    part = item
    if isinstance(item, dict) and "message_content" in item:
        part, where = _unwrapped(item, "message_content", span, where)
    if not isinstance(part, dict):
        span.fail("malformed_event", f"expected content attributes under {where}", where)
    kind = part.get("type")
    if kind == "text":
        _only(part, ("type", "text"), span, where)
        return {"type": "text", "text": part.get("text", "")}
    if kind == "image":
        _only(part, ("type", "image"), span, where)
        holder = part.get("image")
        if holder is None:  # OpenInference's censor drops every image key, keeps the type
            span.fail("content_not_captured", f"an image content with no {where}.image.image.url"
                      ": the instrumentation left the image out. " + IMAGE_SWITCHES,
                      f"{where}.image")
        if not (isinstance(holder, dict) and "image" in holder):
            span.fail("malformed_event", "an image content needs image.image.url",
                      f"{where}.image")
        image, at = _unwrapped(holder, "image", span, f"{where}.image")
        if not isinstance(image, dict):
            span.fail("malformed_event", "an image content needs image.image.url", at)
        _only(image, ("url",), span, at)
        return {"type": "image_url", "image_url": {"url": image.get("url")}}
    span.fail("malformed_event", f"unknown message_content type {kind!r}", f"{where}.type")


def _only(node: dict[str, Any], known: tuple[str, ...], span: Span, where: str) -> None:
    """Refuse an attribute under ``where`` that is none of ``known`` (nothing would read it)."""
    for key in node:
        if key not in known:
            span.fail("malformed_event", f"an attribute OpenInference does not write here "
                      f"(expected {', '.join(known)})", f"{where}.{key}")
