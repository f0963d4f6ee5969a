"""One span read in several conventions (GenAI's message lists beside OpenInference's or
Traceloop's flat keys): the readings must record the same messages, and what one keeps in
``metadata["otel"]`` that the first does not is kept on the first's messages."""

from __future__ import annotations

import json
from typing import Any

from tracebridge.errors import short_repr
from tracebridge.hashing import hashed_messages
from tracebridge.messages import AIMessage, Message, TextPart

from ._flat import LEGACY_INPUT, LEGACY_OUTPUT, OPENINFERENCE_INPUT, OPENINFERENCE_OUTPUT
from ._genai import INPUT, OUTPUT
from ._origins import Origin
from ._spans import SOURCE, Span

Read = tuple[list[Message], list[Origin]]
"""Messages, and where each was recorded (``_origins``)."""

Reading = tuple[str, Read | None, Read | None]
"""One convention's input key, input and output."""

OUTPUT_KEYS = {INPUT: OUTPUT, OPENINFERENCE_INPUT: OPENINFERENCE_OUTPUT,
               LEGACY_INPUT: LEGACY_OUTPUT}
"""The output attribute (or prefix) of each convention, by its input's."""

_SPELLINGS = {
    "message": frozenset(("content", "refusal", "system_instructions", "role", "response",
                          "response_key")),
    "call": frozenset(("arguments",)),
    "part": frozenset(("verbatim",)),
}
"""Keys of ``metadata["otel"]`` that say how one convention spelled what both record (a
content left out or null, a tool result sent in a user message, arguments as text): the
other convention spells it its own way, so they are neither compared nor carried over."""


def same(messages: list[Message]) -> str:
    """What the transcript hash covers, as text: two readings agree when this does."""
    return json.dumps(hashed_messages(messages), sort_keys=True)


def agreed(span: Span, readings: list[Reading]) -> tuple[Read | None, Read | None]:
    """The first reading's input and output, with what the other readings keep and it does
    not; ``conflicting_fields`` at the other reading's input (or output) when they record
    different messages, or at its key when they keep different values of one field."""
    key, given, answered = readings[0]
    for other, other_given, other_answered in readings[1:]:
        _refuse_different(span, (key, given), (other, other_given), "input")
        _refuse_different(span, (OUTPUT_KEYS[key], answered),
                          (OUTPUT_KEYS[other], other_answered), "output")
        given = _merged_read(span, key, given, other_given)
        answered = _merged_read(span, OUTPUT_KEYS[key], answered, other_answered)
    return given, answered


def _refuse_different(span: Span, first: tuple[str, Read | None],
                      other: tuple[str, Read | None], side: str) -> None:
    if _messages(first[1]) != _messages(other[1]):
        span.fail(
            "conflicting_fields",
            f"the span's {first[0]}* and {other[0]}* attributes record different {side} "
            "messages",
            other[0],
        )


def _messages(read: Read | None) -> str:
    return same(read[0] if read is not None else [])


def _merged_read(span: Span, key: str, first: Read | None, other: Read | None) -> Read | None:
    if first is None or other is None:
        return first
    messages = [
        _merged_message(span, key, mine, theirs, origin)
        for mine, theirs, origin in zip(first[0], other[0], other[1], strict=True)
    ]
    return messages, first[1]


def _merged_message(span: Span, key: str, mine: Message, theirs: Message,
                    origin: Origin) -> Message:
    where = origin.where or key
    update: dict[str, Any] = {
        "metadata": _merged_metadata(span, key, mine.metadata, theirs.metadata, "message",
                                     where),
    }
    if isinstance(mine, AIMessage) and isinstance(theirs, AIMessage):
        update["tool_calls"] = [
            call.model_copy(update={"metadata": _merged_metadata(
                span, key, call.metadata, other.metadata, "call",
                origin.calls[j] if j < len(origin.calls) else where,
            )})
            for j, (call, other) in enumerate(zip(mine.tool_calls, theirs.tool_calls,
                                                  strict=True))
        ]
    content = _merged_content(span, key, mine.content, theirs.content, where)
    if content is not mine.content:
        update["content"] = content
    return mine.model_copy(update=update)


def _merged_content(span: Span, key: str, mine: Any, theirs: Any, where: str) -> Any:
    """The parts' kept values merged, part by part; a plain text that the other reading
    records as one text part with kept values becomes that part (the same text)."""
    if isinstance(mine, str):
        kept = _kept_only(theirs[0].metadata, "part") if isinstance(theirs, list) else {}
        return [TextPart(text=mine, metadata={SOURCE: kept})] if kept else mine
    if not isinstance(theirs, list) or len(theirs) != len(mine):
        return mine  # one text spelled two ways: the other keeps nothing on it
    return [
        part.model_copy(update={"metadata": _merged_metadata(
            span, key, part.metadata, other.metadata, "part", _part_at(where, k))})
        for k, (part, other) in enumerate(zip(mine, theirs, strict=True))
    ]


def _part_at(where: str, k: int) -> str:
    """Where a flat message (at ``where``) recorded its part ``k``: OpenInference's
    ``contents.{k}.message_content``, or the JSON part list of Traceloop's ``content``."""
    if where.startswith("llm."):
        return f"{where}.contents.{k}.message_content"
    return f"{where}.content[{k}]"


def _kept_only(metadata: dict[str, Any], kind: str) -> dict[str, Any]:
    """What ``metadata["otel"]`` keeps, less the convention's spelling markers."""
    return {name: value for name, value in metadata.get(SOURCE, {}).items()
            if name not in _SPELLINGS[kind]}


def _merged_metadata(span: Span, key: str, mine: dict[str, Any], theirs: dict[str, Any],
                     kind: str, where: str) -> dict[str, Any]:
    """``mine`` with what ``theirs`` keeps in ``metadata["otel"]`` and it does not (its
    ``fields`` key by key); a value both keep that differs is ``conflicting_fields`` at the
    other reading's key (``where``: its message, call or part)."""
    kept = dict(mine.get(SOURCE, {}))
    for name, value in theirs.get(SOURCE, {}).items():
        if name in _SPELLINGS[kind]:
            continue
        if name == "fields" and isinstance(kept.get(name), dict) and isinstance(value, dict):
            fields = dict(kept[name])
            for field, held in value.items():
                _refuse_other_value(span, key, fields, field, held, f"{where}.{field}")
                fields[field] = held
            kept[name] = fields
            continue
        _refuse_other_value(span, key, kept, name, value, where)
        kept[name] = value
    return {**mine, SOURCE: kept} if kept else dict(mine)


def _refuse_other_value(span: Span, key: str, kept: dict[str, Any], name: str, value: Any,
                        where: str) -> None:
    if name in kept and kept[name] != value:
        span.fail(
            "conflicting_fields",
            f"the span's {key}* attributes and {where} record different values of {name!r} "
            f"for one message ({short_repr(kept[name])} and {short_repr(value)})",
            where,
        )
