"""Attribute values as plain JSON values, from every input form: an OTLP/JSON ``AnyValue``
(``any_value``), and what an SDK ``ReadableSpan`` (or its ``to_json()`` dict) holds
(``plain_value``). A value with no JSON form (a NaN or an infinity, bytes) is
``unserializable_value`` in every form alike.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from tracebridge.errors import TraceError, short_repr

SOURCE = "otel"
"""The adapter's name: its metadata namespace and ``TraceError.source``."""


_DIGITS = 20
"""Digits of a 64-bit integer at most (longer text is no OTLP integer, and Python refuses to
read one of thousands of digits)."""


def count(value: Any, path: str, index: int) -> int:
    """A count or a time in nanoseconds: a number, or its digits as text (64-bit integers in
    OTLP/JSON); absent is 0, as in the protocol."""
    if value is None:
        return 0
    if (type(value) is int and value >= 0) or (
        type(value) is str and value.isascii() and value.isdigit() and len(value) <= _DIGITS
    ):
        return int(value)
    raise TraceError(
        "malformed_event", f"expected a count (a whole number, or its digits as text), got "
        f"{short_repr(value)}", index=index, path=path, source=SOURCE,
    )


def _integer(value: Any, path: str, index: int) -> int:
    """An ``intValue``: a number, or its digits (and sign) as text."""
    text = value[1:] if type(value) is str and value[:1] == "-" else value
    if type(value) is int or (
        type(text) is str and text.isascii() and text.isdigit() and len(text) <= _DIGITS
    ):
        return int(value)
    raise TraceError(
        "malformed_event", f"expected an integer, got {short_repr(value)}",
        index=index, path=path, source=SOURCE,
    )


def _typed(value: Any, kind: type, what: str, path: str, index: int) -> Any:
    """``value`` when it is of ``kind`` (exactly: no ``True`` for a number)."""
    if type(value) is kind:
        return value
    raise TraceError(
        "malformed_event", f"expected {what}, got {short_repr(value)}",
        index=index, path=path, source=SOURCE,
    )


_NON_FINITE = frozenset({"NaN", "Infinity", "-Infinity"})
"""How protobuf's JSON mapping spells a double that JSON has no number for."""
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
"""A JSON number's text (protobuf's JSON mapping takes a double as one, quoted)."""


def _double(value: Any, path: str, index: int) -> float:
    """A ``doubleValue``: a number (``2``, as protobuf's JSON mapping writes ``2.0``, is the
    double 2.0, so it is written back as a double), or its text; finite."""
    number: float | None = None
    if type(value) is float or type(value) is int:
        try:
            number = float(value)
        except OverflowError:  # a whole number past the largest double
            number = math.inf
    elif type(value) is str and _DECIMAL.fullmatch(value):
        number = float(value)
    elif type(value) is str and value in _NON_FINITE:
        number = math.nan
    if number is None:
        raise TraceError(
            "malformed_event", f"expected a number, got {short_repr(value)}",
            index=index, path=path, source=SOURCE,
        )
    if not math.isfinite(number):
        raise TraceError(
            "unserializable_value", f"the double {short_repr(value)} has no JSON number",
            index=index, path=path, source=SOURCE,
        )
    return number


def any_value(value: Any, path: str, index: int) -> Any:
    """An OTLP ``AnyValue`` as a plain Python value."""
    if not isinstance(value, Mapping):
        raise TraceError(
            "malformed_event", f"expected an AnyValue object, got {short_repr(value)}",
            index=index, path=path, source=SOURCE,
        )
    if not value:
        return None
    if len(value) > 1:
        raise TraceError(
            "malformed_event", f"an AnyValue holds one value; this one has {sorted(value)}",
            index=index, path=path, source=SOURCE,
        )
    if "stringValue" in value:
        return _typed(value["stringValue"], str, "text", f"{path}.value.stringValue", index)
    if "boolValue" in value:
        return _typed(value["boolValue"], bool, "true or false", f"{path}.value.boolValue", index)
    if "intValue" in value:
        return _integer(value["intValue"], f"{path}.value.intValue", index)
    if "doubleValue" in value:
        return _double(value["doubleValue"], f"{path}.value.doubleValue", index)
    if "bytesValue" in value:
        # base64 text in OTLP/JSON: as text it would be written back as a stringValue
        raise TraceError(
            "unserializable_value", "a bytesValue has no JSON value to be kept as (as text "
            "it would be written back as a stringValue)", index=index,
            path=f"{path}.value.bytesValue", source=SOURCE,
        )
    if "arrayValue" in value:
        items = _values(value["arrayValue"], path, index)
        return [any_value(item, path, index) for item in items]
    if "kvlistValue" in value:
        pairs = _values(value["kvlistValue"], path, index)
        found: dict[str, Any] = {}
        for pair in pairs:
            if not isinstance(pair, Mapping) or not isinstance(pair.get("key"), str):
                raise TraceError(
                    "malformed_event", f"expected {{'key', 'value'}}, got {short_repr(pair)}",
                    index=index, path=path, source=SOURCE,
                )
            if pair["key"] in found:
                raise TraceError(
                    "malformed_event", f"the key {pair['key']!r} is listed twice in one "
                    "kvlistValue", index=index, path=path, source=SOURCE,
                )
            found[pair["key"]] = any_value(pair.get("value", {}), path, index)
        return found
    raise TraceError(
        "malformed_event", f"unknown AnyValue {short_repr(value)}", index=index, path=path,
        source=SOURCE,
    )


def _values(value: Any, path: str, index: int) -> list[Any]:
    """The ``values`` list of an ``arrayValue`` or ``kvlistValue``."""
    items = value.get("values", []) if isinstance(value, Mapping) else None
    if not isinstance(items, list):
        raise TraceError(
            "malformed_event", f"expected {{'values': [...]}}, got {short_repr(value)}",
            index=index, path=path, source=SOURCE,
        )
    return items


def plain_value(value: Any, path: str, index: int) -> Any:
    """An attribute value of an SDK span (or of a ``to_json()`` dict) as the JSON value its
    OTLP export holds, a copy: the SDK keeps every sequence as a tuple (at any depth) and
    accepts mappings, bytes and any float. Bytes, which an export writes as a
    ``bytesValue``, and a NaN or an infinity, which no JSON number is, are
    ``unserializable_value`` (as they are in OTLP/JSON); what the SDK never holds is
    ``malformed_event``."""
    try:
        return _copied(value, path, index)
    except RecursionError:
        raise TraceError("malformed_event", "a value nested too deeply to read", index=index,
                         path=path, source=SOURCE) from None


def _copied(value: Any, path: str, index: int) -> Any:
    if value is None or isinstance(value, (str, int)):  # (bool is an int)
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise TraceError(
            "unserializable_value", f"the double {value!r} has no JSON number (its OTLP "
            "export is refused alike)", index=index, path=path, source=SOURCE,
        )
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise TraceError(
            "unserializable_value", f"bytes ({short_repr(bytes(value))}) have no JSON value to "
            "be kept as (exported, they are a bytesValue; as text they would be written back "
            "as a stringValue)", index=index, path=path, source=SOURCE,
        )
    if isinstance(value, (list, tuple)):
        return [_copied(item, path, index) for item in value]
    if isinstance(value, Mapping):
        copy: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TraceError(
                    "malformed_event", f"a mapping's keys in an attribute value are text, got "
                    f"{short_repr(key)}", index=index, path=path, source=SOURCE,
                )
            copy[key] = _copied(item, path, index)
        return copy
    raise TraceError(
        "malformed_event", "an attribute value is text, a number, true or false, or a "
        f"sequence or mapping of them; got {type(value).__name__} {short_repr(value)}",
        index=index, path=path, source=SOURCE,
    )
