"""Canonical JSON and the transcript hash.

``canonical_json`` is the one byte form of a JSON value: keys sorted, no spaces, UTF-8,
no NaN. ``transcript_hash`` is the SHA-256 of the canonical JSON of the conversation with
every ``metadata`` field (of messages, parts, tool calls, citations and audio references),
every message ``id`` and every reasoning part's ``id`` left out, prefixed by the scheme
version. So it covers each message's kind, content and parts, name, tool calls (name,
arguments, invalid arguments, call id, custom kind), tool results (call id, name, error flag),
a system message's developer role, refusals, image detail, citations and the assistant's
audio reference — what the conversation *says* — and ignores what adapters keep about where
it came from. It is identical across processes and machines.

Two spellings that say the same are hashed alike: content of exactly one text part is hashed
as that text (frameworks store it either way), and an audio mime type is hashed as the spelling
``tracebridge.media`` lists for it (``audio/mp3`` as ``audio/mpeg``). The typed homes added after
the first scheme (``role``, ``detail``, ``citations``, ``audio``) are left out while they hold their
defaults, so a conversation that has none of them keeps the hash it always had (likewise a tool
call's ``kind`` while it is ``function``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ._conversation import messages_of
from ._json import _check_at, _is_plain, check_json, json_copy
from ._shape import NOT_HASHED, UNCHECKED, unchecked_field
from .errors import TraceError
from .media import canonical_audio_mime_type

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .messages import AnyMessage
    from .sample import MultiTurnSample

__all__ = ["HASH_VERSION", "canonical_json", "transcript_hash"]

HASH_VERSION = "tb1"

_LEAVE_OUT = set(NOT_HASHED)  # (a set: what model_dump takes)


def canonical_json(value: Any) -> bytes:
    """Sorted keys, compact separators, UTF-8; refuses NaN and non-JSON values.

    Exactly: Python's ``json.dumps(value, sort_keys=True, separators=(",", ":"),
    ensure_ascii=False, allow_nan=False)`` encoded as UTF-8. So keys are sorted by code
    point (U+FFFF before U+10000; RFC 8785 (JCS) and JavaScript sort by UTF-16 code units,
    which put U+10000 first); strings are written raw except ``"``, ``\\`` and the control
    characters U+0000-U+001F, which are escaped (``\\"``, ``\\\\``, ``\\b``, ``\\f``,
    ``\\n``, ``\\r``, ``\\t``, the others as ``\\u001b``, hex in lower case; U+007F and above
    are raw); an int is its decimal digits; a float is Python's ``repr`` (the shortest
    text that reads back as the same float: ``100.0``, ``-0.0``, ``1e+16``, ``1e-07``,
    ``0.1``), and a float equal to an int is still written as a float (``1.0`` is not
    ``1``); ``true``, ``false``, ``null``.

    A lone surrogate (JSON text may hold one as an escape, ``"\\ud800"``, and Python reads it
    into a string) has no UTF-8 form: it is written as the three bytes of its code point
    (``surrogatepass``), which no valid UTF-8 text holds, so no other string hashes alike.

    What is not plain JSON is refused before anything is written, with
    ``TraceError("unserializable_value")`` at its path inside ``value`` (``x[1]``; None for
    ``value`` itself), where ``json.dumps`` would write it as another value (a tuple as a
    list, ``{1: "a"}`` as ``{"1": "a"}``, an ``IntEnum`` as its int: two values would be
    one) or fail (NaN, a key of another type among strings, an int of more than 4,300
    digits, a value that holds itself). Plain JSON is what metadata may hold, nested as
    deep as Python's ``json`` writes (a conversation's ``hashed_messages`` nest a value of
    the deepest a message holds a few levels further). The error is a ``ValueError`` too,
    as ``json.dumps``'s refusals are.
    """
    if not _plain(value):
        raise _not_json(value)
    return _canonical_bytes(value)


def _canonical_bytes(value: Any) -> bytes:
    """``canonical_json`` of a value known to be JSON (``transcript_hash`` reads the values of
    validated messages: checking them again would cost about a walk of each)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8", "surrogatepass")


_ANY_DEPTH = sys.maxsize
"""No depth limit of the core's own (``MAX_DEPTH`` is for a field's value): Python's stack
is the limit, as it is ``json.dumps``'s."""


def _plain(value: Any) -> bool:
    try:
        return _is_plain(value, _ANY_DEPTH)
    except RecursionError:  # nested past Python's depth, or a value that holds itself
        return False


class _NotJson(TraceError, ValueError):
    """``unserializable_value`` from ``canonical_json``: a ``ValueError`` too, as the refusals
    of ``json.dumps`` it stands in front of are (callers that catch those keep working).
    Never raised inside a pydantic validator, which would wrap a ``ValueError``."""


def _not_json(value: Any) -> TraceError:
    """Where ``value`` is not plain JSON, as ``check_json`` tells it."""
    try:
        _check_at(value, "", _ANY_DEPTH, "")
    except TraceError as error:
        return _NotJson(error.code, error.detail, path=error.path or None)
    except RecursionError:
        pass
    return _NotJson(
        "unserializable_value",
        "a value nested past Python's depth, or one that holds itself (a dict or list inside "
        "its own contents)",
    )


def transcript_hash(conversation: Any) -> str:
    """``tb1:`` followed by the hex SHA-256 of the conversation without metadata and ids.

    ``conversation`` is a ``MultiTurnSample`` or an iterable of messages.
    """
    messages = messages_of(conversation)
    body = _hashed_body(messages)
    try:
        text = _canonical_bytes(body)
    except (ValueError, TypeError, RecursionError):
        raise _not_hashable(messages, body) from None
    return f"{HASH_VERSION}:{hashlib.sha256(text).hexdigest()}"


def _not_hashable(messages: list[AnyMessage], body: list[dict[str, Any]]) -> TraceError:
    """The error for the first value the hash covers of ``messages`` that is not plain JSON:
    what a message holds only when it was changed in place after validation (a dict inside
    it edited) or made with ``model_construct``, which pydantic does not check. Told as
    ``render`` tells it (``unchecked_field``: each value from its own field, so a value too
    deep is told at the item of the field that holds the deep part), over the fields the
    hash reads only (a metadata value it never reads is not to blame); then from ``body``,
    for a gap there."""
    refused = unchecked_field(messages, hashed_only=True)
    if refused is not None:
        return refused
    for i, fields in enumerate(body):
        try:
            check_json(fields, f"messages[{i}]")
        except TraceError as error:
            return TraceError(error.code, error.detail, index=i, path=error.path)
    # canonical_json refuses nothing that check_json takes; kept so a gap says so
    return TraceError("unserializable_value", "the conversation is not plain JSON")


def _hashed_body(messages: list[AnyMessage]) -> list[dict[str, Any]]:
    """What the hash covers of each of ``messages``, read from the messages' own values;
    ``malformed_event`` for what is not typed messages."""
    try:
        return [_hashed_fields(message) for message in messages]
    except UNCHECKED:  # a field of another type than declared (an unchecked message), or ours
        # first what the hash reads; then the rest (a dump walks a part's metadata too)
        refused = unchecked_field(messages, hashed_only=True) or unchecked_field(messages)
        if refused is None:
            raise
        raise refused from None


def hashed_messages(messages: MultiTurnSample | Iterable[AnyMessage]) -> list[Any]:
    """What the hash covers, message by message (for tests and for people auditing a hash),
    of what ``transcript_hash`` takes: a ``MultiTurnSample`` or an iterable of messages.

    A copy: editing it changes no message (``transcript_hash`` reads the messages' own
    values, and does not pay for this copy)."""
    listed = messages_of(messages)
    body = _hashed_body(listed)
    try:
        return [json_copy(fields) for fields in body]
    except RecursionError:  # a value nested past Python's depth, or one that holds itself
        raise _not_hashable(listed, body) from None


def _hashed_fields(message: AnyMessage) -> dict[str, Any]:
    """What the hash covers of one message: ``_dumped_fields``, read straight from the
    message's fields when its content is text and it holds no citation or audio reference (its
    field values are then JSON already: validated strings, flags and JSON arguments), and
    when it and its calls hold their fields alone (``model_copy(update=...)`` keeps a key
    that is no field beside them, which no dump holds)."""
    values = message.__dict__
    if type(values["content"]) is not str or len(values) != _FIELD_COUNTS[type(message)]:
        return _dumped_fields(message)
    fields = values.copy()
    del fields["metadata"], fields["id"]  # _LEAVE_OUT
    kind = fields["type"]
    if kind == "ai":
        if fields["citations"] or fields["audio"] is not None:
            return _dumped_fields(message)
        del fields["citations"], fields["audio"]
        calls = []
        for call in fields["tool_calls"]:
            held = call.__dict__
            if len(held) != _FIELD_COUNTS[type(call)]:
                return _dumped_fields(message)
            calls.append(_call_fields(held))
        fields["tool_calls"] = calls
    elif kind == "system" and fields["role"] == "system":
        del fields["role"]
    return fields


class _FieldCounts(dict[type, int]):
    """How many fields a model class declares (read once: a class attribute costs more to
    read than a dict entry)."""

    def __missing__(self, model: type[BaseModel]) -> int:
        self[model] = count = len(model.__pydantic_fields__)
        return count


_FIELD_COUNTS = _FieldCounts()


def _call_fields(values: dict[str, Any]) -> dict[str, Any]:
    """``_hashed_call`` of a call's dump, from the call's field values."""
    call = values.copy()
    del call["metadata"]
    if call["kind"] == "function":
        del call["kind"]
    return call


def _dumped_fields(message: AnyMessage) -> dict[str, Any]:
    """What the hash covers of one message, from its dump (the definition).

    Python's form, not ``mode="json"``: for a message the two are equal (every field holds
    JSON), except that pydantic's JSON mode writes a lone surrogate in a dict key as U+FFFD
    (``{"\\ud800": 1}`` would hash as ``{"\\ufffd\\ufffd\\ufffd": 1}``) or raises on one
    in an opaque part's value; ``canonical_json`` writes its code point's bytes, as it does
    for the fields ``_hashed_fields`` reads straight."""
    fields = message.model_dump(exclude=_LEAVE_OUT)
    content = fields["content"]
    if isinstance(content, list):
        if len(content) == 1 and content[0]["type"] == "text":
            # One text part says what a plain string says; frameworks store it either way
            # (a LlamaIndex message always has blocks, a LangChain one often a string).
            fields["content"] = content[0]["text"]
        else:
            fields["content"] = [_hashed_part(part) for part in content]
    kind = fields["type"]
    if kind == "ai":
        fields["tool_calls"] = [_hashed_call(call) for call in fields["tool_calls"]]
        if fields["citations"]:
            fields["citations"] = [_without_metadata(cited) for cited in fields["citations"]]
        else:
            del fields["citations"]
        if fields["audio"] is None:
            del fields["audio"]
        else:
            fields["audio"] = _without_metadata(fields["audio"])
    elif kind == "system" and fields["role"] == "system":
        del fields["role"]
    return fields


def _hashed_call(call: dict[str, Any]) -> dict[str, Any]:
    call = _without_metadata(call)
    if call["kind"] == "function":
        del call["kind"]
    return call


def _hashed_part(part: dict[str, Any]) -> dict[str, Any]:
    part = _without_metadata(part)
    kind = part["type"]
    if kind == "reasoning":
        del part["id"]  # provenance, as a message's id
    elif kind == "image" and part["detail"] is None:
        del part["detail"]
    elif kind == "audio" and part["mime_type"] is not None:
        part["mime_type"] = canonical_audio_mime_type(part["mime_type"])
    return part


def _without_metadata(fields: dict[str, Any]) -> dict[str, Any]:
    del fields["metadata"]
    return fields
