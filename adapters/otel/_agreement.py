"""One span read in several conventions (GenAI's message lists beside OpenInference's or
Traceloop's flat keys): the readings must record the same messages, and what one keeps in
``metadata["otel"]`` that the first does not is kept on the first's messages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tracebridge._json import same_json
from tracebridge.errors import short_repr
from tracebridge.hashing import hashed_messages
from tracebridge.messages import AIMessage, Message, TextPart

from ._flat import (
    LEGACY_CALL_KEYS,
    LEGACY_INPUT,
    LEGACY_OUTPUT,
    OPENINFERENCE_INPUT,
    OPENINFERENCE_OUTPUT,
)
from ._genai import _PART_KEYS, INPUT, OUTPUT
from ._origins import Origin
from ._spans import SOURCE, Span

Read = tuple[list[Message], list[Origin]]
"""Messages, and where each was recorded (``_origins``)."""

Reading = tuple[str, Read | None, Read | None]
"""One convention's input key, input and output."""

OUTPUT_KEYS = {INPUT: OUTPUT, OPENINFERENCE_INPUT: OPENINFERENCE_OUTPUT,
               LEGACY_INPUT: LEGACY_OUTPUT}
"""The output attribute (or prefix) of each convention, by its input's."""

_CARRIED = "fields"
"""The one key of ``metadata["otel"]`` carried over from a second reading: the own keys of a
message, part or call (``finish_reason``, say). The second reading is always flat
(OpenInference's or Traceloop's), and every other key its reader keeps says how the flat
messages spelled what both record (a message's ``content``, ``refusal``, ``content_parts``,
``joined``, ``joined_parts``; a call's ``arguments``; a part's ``verbatim``, ``detail``,
``from``, ``also``, ``content``) or has a place in flat messages only (a message's
``annotations``, a call's or part's ``inner``, a part's ``format``): the first reading spells
those its own way, so they are neither compared nor carried over."""

_RESERVED = {
    INPUT: {"message": frozenset(("role", "parts", "name")),
            "part": frozenset().union(*_PART_KEYS.values()),
            "call": frozenset(("type", "id", "name", "arguments"))},
    OPENINFERENCE_INPUT: {"message": frozenset(("contents", *LEGACY_CALL_KEYS)),
                          "part": frozenset(), "call": frozenset()},
}
"""Per first convention (by its input key) and kind, the own keys its writer spells itself:
one carried over would be read back as that, so it is not carried."""

_FINISH_REASONS = {"tool_calls": "tool_call", "function_call": "tool_call",
                   "tool_use": "tool_call", "end_turn": "stop", "stop_sequence": "stop",
                   "max_tokens": "length"}
"""Providers' finish reasons (OpenAI's, Anthropic's, as Traceloop records them) that are the
GenAI convention's ``tool_call``, ``stop`` and ``length``: one reason in two spellings."""


def same(messages: list[Message]) -> str:
    """What the transcript hash covers, as text: two readings agree when this does."""
    return json.dumps(hashed_messages(messages), sort_keys=True)


def agreed(span: Span, readings: list[Reading]) -> tuple[Read | None, Read | None]:
    """The first reading's input and output, with what the other readings keep and it does
    not; ``conflicting_fields`` at the other reading's input (or output) when they record
    different messages, or at its key when they keep different values of one field (naming
    the reading that kept the first value: the first, or the one it was carried from)."""
    key, given, answered = readings[0]
    reserved = _RESERVED.get(key, {})
    carried_in: dict[_Place, str] = {}
    carried_out: dict[_Place, str] = {}
    for other, other_given, other_answered in readings[1:]:
        _refuse_different(span, (key, given), (other, other_given), "input")
        _refuse_different(span, (OUTPUT_KEYS[key], answered),
                          (OUTPUT_KEYS[other], other_answered), "output")
        given = _merged_read(_Merge(span, key, reserved, carried_in), given, other_given)
        answered = _merged_read(_Merge(span, OUTPUT_KEYS[key], reserved, carried_out),
                                answered, other_answered)
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


_Place = tuple[int | str, ...]
"""An own key's place in one side's messages: ``(message, name)``, ``(message, "call", j,
name)`` or ``(message, "part", k, name)``."""


@dataclass(frozen=True)
class _Merge:
    """What a merge of one side (input or output) needs to know of the first reading."""

    span: Span
    key: str
    """The first reading's attribute (or prefix) for this side."""
    reserved: dict[str, frozenset[str]]
    """The own keys its writer spells itself, by kind (``_RESERVED``)."""
    carried: dict[_Place, str]
    """Where each own key carried over from an earlier reading was recorded, by its place:
    a later reading that disagrees with it disagrees with that key, not the first's."""


def _merged_read(merge: _Merge, first: Read | None, other: Read | None) -> Read | None:
    if first is None or other is None:
        return first
    messages = [
        _merged_message(merge, (mine, theirs), origin, i)
        for i, (mine, theirs, origin) in enumerate(zip(first[0], other[0], other[1],
                                                       strict=True))
    ]
    return messages, first[1]


def _merged_message(merge: _Merge, pair: tuple[Message, Message], origin: Origin,
                    i: int) -> Message:
    """The first reading's message ``i`` with what the other's keeps and it does not; a
    message read from ``gen_ai.system_instructions`` takes no key of its own (that attribute
    holds parts only)."""
    mine, theirs = pair
    where = origin.where or merge.key
    update: dict[str, Any] = {}
    if "system_instructions" not in mine.metadata.get(SOURCE, {}):
        update["metadata"] = _merged_metadata(merge, mine.metadata, theirs.metadata,
                                              "message", (where, (i,)))
    if isinstance(mine, AIMessage) and isinstance(theirs, AIMessage):
        update["tool_calls"] = [
            call.model_copy(update={"metadata": _merged_metadata(
                merge, call.metadata, other.metadata, "call",
                (origin.calls[j] if j < len(origin.calls) else where, (i, "call", j)),
            )})
            for j, (call, other) in enumerate(zip(mine.tool_calls, theirs.tool_calls,
                                                  strict=True))
        ]
    content = _merged_content(merge, (mine.content, theirs.content), where, i)
    if content is not mine.content:
        update["content"] = content
    return mine.model_copy(update=update)


def _merged_content(merge: _Merge, pair: tuple[Any, Any], where: str, i: int) -> Any:
    """The parts' kept values merged, part by part; a plain text that the other reading
    records as one text part with kept values becomes that part (the same text)."""
    mine, theirs = pair
    if isinstance(mine, str):
        kept = (_merged_metadata(merge, {}, theirs[0].metadata, "part",
                                 (_part_at(where, 0), (i, "part", 0)))
                if isinstance(theirs, list) else {})
        return [TextPart(text=mine, metadata=kept)] if kept else mine
    if not isinstance(theirs, list) or len(theirs) != len(mine):
        return mine  # one text spelled two ways: the other keeps nothing on it
    return [
        part.model_copy(update={"metadata": _merged_metadata(
            merge, part.metadata, other.metadata, "part", (_part_at(where, k), (i, "part", k)))})
        for k, (part, other) in enumerate(zip(mine, theirs, strict=True))
    ]


def _part_at(where: str, k: int) -> str:
    """Where a flat message (at ``where``) recorded its part ``k``: OpenInference's
    ``contents.{k}.message_content``, or the JSON part list of Traceloop's ``content``."""
    if where.startswith("llm."):
        return f"{where}.contents.{k}.message_content"
    return f"{where}.content[{k}]"


def _merged_metadata(merge: _Merge, mine: dict[str, Any], theirs: dict[str, Any],
                     kind: str, at: tuple[str, _Place]) -> dict[str, Any]:
    """``mine`` with the own keys (``fields``) ``theirs`` keeps in ``metadata["otel"]`` and
    it does not, less those the first convention spells itself (``_RESERVED``); a value both
    keep that differs is ``conflicting_fields`` at the other reading's key (``at``: where it
    recorded the message, call or part, and its place)."""
    held = theirs.get(SOURCE, {}).get(_CARRIED)
    if not isinstance(held, dict):
        return dict(mine)
    where, place = at
    kept = dict(mine.get(SOURCE, {}))
    fields = dict(kept.get(_CARRIED, {}))
    for name, value in held.items():
        named: _Place = (*place, name)
        if name in fields:
            _refuse_other_value(merge, name, (fields[name], value),
                                (merge.carried.get(named), f"{where}.{name}"))
        elif name not in merge.reserved.get(kind, ()):
            fields[name] = value
            merge.carried[named] = f"{where}.{name}"
    if fields:
        kept[_CARRIED] = fields
    return {**mine, SOURCE: kept} if kept else dict(mine)


def _refuse_other_value(merge: _Merge, name: str, values: tuple[Any, Any],
                        keys: tuple[str | None, str]) -> None:
    """``conflicting_fields`` when two readings keep different values of one own key, as JSON
    (``true`` and ``1`` differ); a finish reason in two conventions' spellings is one.
    ``keys``: where an earlier reading recorded the first value, when it was carried over
    from one (else the first reading holds it), and where the other reading records its."""
    first, value = values
    carried_from, where = keys
    if same_json(first, value) or (
        name == "finish_reason" and isinstance(first, str) and isinstance(value, str)
        and _FINISH_REASONS.get(first, first) == _FINISH_REASONS.get(value, value)
    ):
        return
    held = f"{merge.key}* attributes" if carried_from is None else carried_from
    merge.span.fail(
        "conflicting_fields",
        f"the span's {held} and {where} record different values of {name!r} "
        f"for one message ({short_repr(first)} and {short_repr(value)})",
        where,
    )
