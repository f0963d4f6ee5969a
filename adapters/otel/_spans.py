"""Spans from every accepted input form, as one plain record each.

Accepted: an OTLP/JSON ``TracesData`` document (``{"resourceSpans": [...]}``, ids in hex as
the OTLP/JSON spec writes them or in base64 as protobuf's JSON mapping does), a list of such
documents, OTLP JSON lines (the file exporter's form: one document per line), SDK
``ReadableSpan`` objects (duck-typed: no OpenTelemetry import) and the dicts their
``to_json()`` text parses to. Each span keeps its position in the input (``index``) and the
path that names it there, so every error can point at the span.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, NoReturn, TypeGuard

from tracebridge._json import RepeatedKey, read_json
from tracebridge.errors import ErrorCode, TraceError, short_repr, with_article

from ._values import SOURCE as SOURCE  # (the adapter's name, imported from here)
from ._values import any_value, count, plain_value

_HEX = re.compile(r"^[0-9a-fA-F]+$")


@dataclass
class Span:
    """One span, whatever form it came in."""

    index: int
    """Position among all spans of the input, in the order they appear."""
    path: str
    """Where it is in the input, e.g. ``resourceSpans[0].scopeSpans[0].spans[3]``."""
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    attributes: dict[str, Any]
    dropped_attributes: int = 0
    error: bool = False
    """The span's status is ERROR."""
    scope: str = ""
    keys: dict[str, str] = field(default_factory=dict)
    """For each attribute, the path of its value (for errors)."""
    events: tuple[str, ...] = ()
    """The names of the span's events (they are not read: an error says when content is
    there)."""

    def fail(self, code: ErrorCode, detail: str, attribute: str | None = None) -> NoReturn:
        raise TraceError(code, detail, index=self.index, path=self.at(attribute), source=SOURCE)

    def at(self, attribute: str | None) -> str:
        if attribute is None:
            return self.path
        return f"{self.path}.attributes[{attribute!r}]"


_RECORDED = ("parent_id", "name", "start", "end", "attributes", "dropped_attributes", "error",
             "scope", "events")
"""What a span records (all but where it is in the input): two copies of one span agree on it."""


def fail(code: ErrorCode, detail: str, path: str | None = None) -> NoReturn:
    raise TraceError(code, detail, path=path, source=SOURCE)


def spans_of(trace: Any) -> list[Span]:
    """Every span of ``trace``, in input order, copies included (``once`` leaves them out,
    after the ``trace_id`` filter); ``malformed_event`` for anything else."""
    return list(_spans(trace))


def once(spans: list[Span]) -> list[Span]:
    """The spans with each ``(trace_id, span_id)`` once. OTLP delivery is at-least-once (an
    exporter retries a batch the collector may already hold), so a copy that records what
    the first did is that span again and is left out; a copy that records something else
    is ``conflicting_fields`` at it: a span id is unique in its trace. Given the spans the
    ``trace_id`` filter keeps: another trace's copies are not looked at."""
    first: dict[tuple[str, str], Span] = {}
    kept: list[Span] = []
    for span in spans:
        seen = first.setdefault((span.trace_id, span.span_id), span)
        if seen is span:
            kept.append(span)
            continue
        differs = next((name for name in _RECORDED
                        if getattr(seen, name) != getattr(span, name)), None)
        if differs is not None:
            span.fail(
                "conflicting_fields",
                f"span {span.span_id} of trace {span.trace_id} appears twice (first at "
                f"{seen.path}) and the copies' {differs} differ: a span id is unique in its "
                "trace, so which record is the span cannot be told",
            )
    return kept


def _spans(trace: Any) -> Iterator[Span]:
    counter = iter(range(1 << 62))
    if isinstance(trace, str):
        yield from _text_spans(trace, counter)
        return
    if isinstance(trace, Mapping):
        yield from _document(trace, "", counter)
        return
    if isinstance(trace, (list, tuple)):
        for k, item in enumerate(trace):
            if isinstance(item, Mapping) and "resourceSpans" in item:
                yield from _document(item, f"[{k}]", counter)
            elif isinstance(item, Mapping) and "context" in item:
                yield _json_span(item, f"[{k}]", next(counter))
            elif is_sdk_span(item):
                yield _sdk_span_at(item, f"[{k}]", next(counter))
            else:
                fail(
                    "malformed_event",
                    "expected an OTLP/JSON document ({'resourceSpans': [...]}), an SDK span or "
                    f"a span's to_json() dict, got {type(item).__name__} {short_repr(item)}",
                    f"[{k}]",
                )
        return
    fail(
        "malformed_event",
        "expected OTLP/JSON (a document, a list of them, or JSON lines text) or SDK spans, "
        f"got {type(trace).__name__}",
    )


def _text_spans(text: str, counter: Iterator[int]) -> Iterator[Span]:
    """The spans of JSON text: one document, or JSON lines. A line ends at ``\\n`` only (a
    raw U+2028 or U+0085 is valid inside a JSON string); ``lines[n]`` is the text's line n,
    blank lines counted. An object holding a key twice is ``malformed_event``: which value
    was meant is not known."""
    repeated: RepeatedKey | None = None
    try:
        whole = read_json(text)
    except RepeatedKey as error:
        whole, repeated = None, error
    except (ValueError, RecursionError):
        whole = None
    if isinstance(whole, (dict, list)):
        yield from _spans(whole)
        return
    read = False
    for n, line in enumerate(text.split("\n")):
        if not line.strip():
            continue
        try:
            document = read_json(line)
        except RepeatedKey as error:
            fail("malformed_event", f"line {n + 1}: {error}", f"lines[{n}]")
        except (ValueError, RecursionError) as error:
            if repeated is not None and not read:  # one document, not lines
                fail("malformed_event", f"the text is one JSON document, and {repeated}")
            fail("malformed_event", f"line {n + 1} is not JSON ({error})", f"lines[{n}]")
        read = True
        yield from _document(document, f"lines[{n}]", counter)


def is_sdk_span(item: Any) -> bool:
    """Whether ``item`` has what an SDK ``ReadableSpan`` has."""
    return all(_has(item, key) for key in ("context", "attributes", "name", "parent"))


def _has(item: Any, key: str) -> bool:
    try:
        return hasattr(item, key)
    except (TypeError, ValueError, KeyError):
        return True  # there, but what it holds cannot be read: _sdk_span says where


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _document(document: Any, prefix: str, counter: Iterator[int]) -> Iterator[Span]:
    if not isinstance(document, Mapping) or not isinstance(
        document.get("resourceSpans"), list
    ):
        fail(
            "malformed_event",
            "expected an OTLP/JSON document with a 'resourceSpans' list, got "
            f"{short_repr(document)}",
            prefix or None,
        )
    for r, resource in enumerate(document["resourceSpans"]):
        at_resource = _join(prefix, f"resourceSpans[{r}]")
        scopes = resource.get("scopeSpans") if isinstance(resource, Mapping) else None
        if not isinstance(scopes, list):
            fail("malformed_event", "expected a 'scopeSpans' list", at_resource)
        for s, scope in enumerate(scopes):
            at_scope = f"{at_resource}.scopeSpans[{s}]"
            spans = scope.get("spans") if isinstance(scope, Mapping) else None
            if not isinstance(spans, list):
                fail("malformed_event", "expected a 'spans' list", at_scope)
            scope_info = scope.get("scope")
            scope_name = scope_info.get("name", "") if isinstance(scope_info, Mapping) else ""
            for k, span in enumerate(spans):
                yield _otlp_span(span, f"{at_scope}.spans[{k}]", next(counter), str(scope_name))


def _otlp_span(span: Any, path: str, index: int, scope: str) -> Span:
    if not isinstance(span, Mapping):
        fail("malformed_event", f"expected a span object, got {short_repr(span)}", path)

    def need(key: str) -> Any:
        if key not in span:
            raise TraceError(
                "malformed_event", f"a span needs {key!r}", index=index, path=path, source=SOURCE
            )
        return span[key]

    attributes: dict[str, Any] = {}
    keys: dict[str, str] = {}
    listed = span.get("attributes", [])
    if not isinstance(listed, list):
        raise TraceError(
            "malformed_event", "expected an attribute list", index=index,
            path=f"{path}.attributes", source=SOURCE,
        )
    for a, attribute in enumerate(listed):
        where = f"{path}.attributes[{a}]"
        if not isinstance(attribute, Mapping) or not isinstance(attribute.get("key"), str):
            raise TraceError(
                "malformed_event", f"expected {{'key', 'value'}}, got {short_repr(attribute)}",
                index=index, path=where, source=SOURCE,
            )
        if attribute["key"] in keys:
            raise TraceError(
                "malformed_event", f"the attribute {attribute['key']!r} is listed twice (first "
                f"at {keys[attribute['key']]}): a span's attribute keys are unique",
                index=index, path=where, source=SOURCE,
            )
        try:
            attributes[attribute["key"]] = any_value(attribute.get("value", {}), where, index)
        except RecursionError:
            raise TraceError("malformed_event", "a value nested too deeply to read",
                             index=index, path=where, source=SOURCE) from None
        keys[attribute["key"]] = where
    error = _failed(span.get("status"), "code", _OTLP_CODES, f"{path}.status", index)
    dropped = span.get("droppedAttributesCount")
    return Span(
        index=index,
        path=path,
        trace_id=_id(need("traceId"), 16, f"{path}.traceId", index),
        span_id=_id(need("spanId"), 8, f"{path}.spanId", index),
        parent_id=_id(span["parentSpanId"], 8, f"{path}.parentSpanId", index)
        if span.get("parentSpanId")
        else None,
        name=str(span.get("name", "")),
        start=count(span.get("startTimeUnixNano"), f"{path}.startTimeUnixNano", index),
        end=count(span.get("endTimeUnixNano"), f"{path}.endTimeUnixNano", index),
        attributes=attributes,
        dropped_attributes=count(dropped, f"{path}.droppedAttributesCount", index),
        error=error,
        scope=scope,
        keys=keys,
        events=event_names(span.get("events")),
    )


_OTLP_CODES = {None: False, "STATUS_CODE_UNSET": False, "STATUS_CODE_OK": False,
               "STATUS_CODE_ERROR": True, 0: False, 1: False, 2: True}
"""A span status code in OTLP/JSON (the enum's name, or its number), and whether it failed."""
_JSON_CODES = {None: False, "UNSET": False, "OK": False, "ERROR": True}
"""The same in ``ReadableSpan.to_json()``."""


def _failed(status: Any, key: str, codes: dict[Any, bool], path: str, index: int) -> bool:
    """Whether a span's status says it failed; a status that is not one is malformed."""
    if status is None:
        return False
    code = status.get(key) if isinstance(status, Mapping) else _NO_CODE
    if type(code) not in _CODE_TYPES or code not in codes:  # (True == 1: a bool is no code)
        raise TraceError(
            "malformed_event", f"expected a status with {key!r} one of "
            f"{', '.join(repr(c) for c in codes if c is not None)}, got {short_repr(status)}",
            index=index, path=path, source=SOURCE,
        )
    return codes[code]


_NO_CODE = object()
_CODE_TYPES = frozenset({str, int, type(None)})


def _id(value: Any, size: int, path: str, index: int) -> str:
    """A trace or span id as lowercase hex, from hex or base64 text."""
    if isinstance(value, str):
        text = value[2:] if value.startswith("0x") else value
        if len(text) == 2 * size and _HEX.match(text):
            return text.lower()
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) == size:
            return raw.hex()
    raise TraceError(
        "malformed_event",
        f"expected {with_article(size)}-byte id in hex or base64, got {short_repr(value)}",
        index=index, path=path, source=SOURCE,
    )


def normalize_id(value: object, size: int) -> str | None:
    """A filter value as the hex the spans are keyed by: hex or base64 text, or the SDK's own
    int id (``span.context.trace_id``, ``span_id``: SDK spans are keyed by it in hex,
    ``_sdk_id``); None, which no span has, for any other value (a bool, an int out of the
    id's range, bytes): the filter selects nothing, ``ambiguous_trace``, saying what an id
    is (``id_form``)."""
    if _is_sdk_id(value, size):
        return f"{value:0{2 * size}x}"
    if not isinstance(value, str):
        return None
    try:
        return _id(value, size, "", 0)
    except TraceError:
        return value.lower()


def id_form(value: object, size: int) -> str:
    """What the refusal of an id filter that selected no span adds when ``value`` is no id
    (``normalize_id`` gives None): the forms an id is given in."""
    if normalize_id(value, size) is not None:
        return ""
    named = "trace_id" if size == 16 else "span_id"
    return (f": an id filter is the id's hex or base64 text, or the SDK's int "
            f"(span.context.{named}, from 0 to 2**{8 * size} - 1)")


def _is_sdk_id(value: object, size: int) -> TypeGuard[int]:
    """Whether ``value`` is an int an SDK id of ``size`` bytes can be (not a bool)."""
    return (isinstance(value, int) and not isinstance(value, bool)
            and 0 <= value < 2 ** (8 * size))


def _json_span(item: Mapping[str, Any], path: str, index: int) -> Span:
    """A span as ``ReadableSpan.to_json()`` writes it."""
    context = item.get("context")
    if not isinstance(context, Mapping):
        raise TraceError(
            "malformed_event", "expected 'context' with trace_id and span_id", index=index,
            path=f"{path}.context", source=SOURCE,
        )
    attributes = item.get("attributes") or {}
    if not isinstance(attributes, Mapping):
        raise TraceError(
            "malformed_event", "expected an attribute object", index=index,
            path=f"{path}.attributes", source=SOURCE,
        )
    plain: dict[str, Any] = {}
    for key, value in attributes.items():
        if not isinstance(key, str):
            raise TraceError(
                "malformed_event", f"an attribute name is text, got {short_repr(key)}",
                index=index, path=f"{path}.attributes", source=SOURCE,
            )
        # (json.loads reads NaN and Infinity, which no AnyValue holds)
        plain[key] = value if type(value) is str else plain_value(
            value, f"{path}.attributes[{key!r}]", index
        )
    error = _failed(item.get("status"), "status_code", _JSON_CODES, f"{path}.status", index)
    scope = item.get("instrumentation_scope") or item.get("instrumentation_info") or {}
    return Span(
        index=index,
        path=path,
        trace_id=_id(context.get("trace_id"), 16, f"{path}.context.trace_id", index),
        span_id=_id(context.get("span_id"), 8, f"{path}.context.span_id", index),
        parent_id=_id(item["parent_id"], 8, f"{path}.parent_id", index)
        if item.get("parent_id")
        else None,
        name=str(item.get("name", "")),
        start=_iso(item.get("start_time"), f"{path}.start_time", index),
        end=_iso(item.get("end_time"), f"{path}.end_time", index),
        attributes=plain,
        dropped_attributes=count(item.get("dropped_attributes"), f"{path}.dropped_attributes",
                                  index),
        error=error,
        scope=str(scope.get("name", "")) if isinstance(scope, Mapping) else "",
        events=event_names(item.get("events")),
        keys={key: f"{path}.attributes[{key!r}]" for key in attributes},
    )


def _iso(value: Any, path: str, index: int) -> int:
    """A time as ``to_json`` writes it (``2026-12-02T15:04:05.123456Z``) in nanoseconds;
    absent (None) is 0."""
    if value is None:
        return 0
    try:
        moment = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        raise TraceError(
            "malformed_event", f"expected a time like 2026-12-02T15:04:05.123456Z, got "
            f"{short_repr(value)}", index=index, path=path, source=SOURCE,
        ) from None
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _sdk_span_at(item: Any, path: str, index: int) -> Span:
    """``_sdk_span``, its refusals of the span's own fields at the span's position too (as
    every refusal of a span is: docs/adapters/otel.md "Refusals")."""
    try:
        return _sdk_span(item, path, index)
    except TraceError as error:
        if error.index is not None:
            raise
        raise error.relocated(index=index) from None


def _sdk_span(item: Any, path: str, index: int) -> Span:
    """An SDK ``ReadableSpan`` (read by attribute name; OpenTelemetry is not imported).

    A span's fields can be changed after it was made (its private attributes, or a stand-in
    object): each is checked to be what the SDK keeps there."""
    context = item.context
    parent = item.parent
    trace_id = _sdk_id(getattr(context, "trace_id", None), f"{path}.context.trace_id")
    span_id = _sdk_id(getattr(context, "span_id", None), f"{path}.context.span_id")
    parent_id = None
    if parent is not None:
        parent_id = _sdk_id(getattr(parent, "span_id", None), f"{path}.parent.span_id")
    status = getattr(item, "status", None)
    code = getattr(getattr(status, "status_code", None), "name", None)
    if status is not None and type(code) is not str:
        fail("malformed_event", f"a span's status has a status_code (UNSET, OK or ERROR), got "
             f"{short_repr(status)}", f"{path}.status")
    scope = getattr(item, "instrumentation_scope", None)
    scope_name = getattr(scope, "name", None)
    if scope_name is not None and type(scope_name) is not str:
        fail("malformed_event", f"an instrumentation scope's name is a string, got "
             f"{short_repr(scope_name)}", f"{path}.instrumentation_scope.name")
    name = item.name
    if type(name) is not str:
        fail("malformed_event", f"a span's name is a string, got {short_repr(name)}",
             f"{path}.name")
    try:
        # ReadableSpan's property wraps whatever the span holds in a mapping proxy
        entries = list((item.attributes or {}).items())
    except (TypeError, AttributeError, ValueError):
        fail("malformed_event", "a span's attributes are a mapping of names to values, got "
             f"{short_repr(getattr(item, '_attributes', None))}", f"{path}.attributes")
    attributes = {}
    for key, value in entries:
        if type(key) is not str:
            fail("malformed_event", f"an attribute name is a string, got {short_repr(key)}",
                 f"{path}.attributes")
        attributes[key] = value if type(value) is str else plain_value(
            value, f"{path}.attributes[{key!r}]", index
        )
    return Span(
        index=index,
        path=path,
        trace_id=f"{trace_id:032x}",
        span_id=f"{span_id:016x}",
        parent_id=None if parent_id is None else f"{parent_id:016x}",
        name=name,
        start=_sdk_count(getattr(item, "start_time", 0), f"{path}.start_time"),
        end=_sdk_count(getattr(item, "end_time", 0), f"{path}.end_time"),
        attributes=attributes,
        dropped_attributes=_sdk_count(
            getattr(item, "dropped_attributes", 0), f"{path}.dropped_attributes"
        ),
        error=code == "ERROR",
        scope=scope_name or "",
        keys={key: f"{path}.attributes[{key!r}]" for key in attributes},
        events=event_names(getattr(item, "events", None)),
    )


def event_names(events: Any) -> tuple[str, ...]:
    """The names of a span's events (OTLP/JSON and ``to_json()`` objects, or the SDK's
    ``Event``s); an event without a text name has none to give."""
    if not isinstance(events, (list, tuple)):
        return ()
    names = (
        event.get("name") if isinstance(event, Mapping) else getattr(event, "name", None)
        for event in events
    )
    return tuple(name for name in names if isinstance(name, str))


def _sdk_id(value: Any, path: str) -> int:
    """A trace or span id of an SDK span: an int."""
    if type(value) is not int or value < 0:
        fail("malformed_event", f"an SDK span's ids are non-negative ints, got "
             f"{short_repr(value)}", path)
    return value


def _sdk_count(value: Any, path: str) -> int:
    """A time in nanoseconds or a count of an SDK span: an int, or None for 0."""
    if value is None:
        return 0
    if type(value) is not int:
        fail("malformed_event", f"expected an int or None, got {short_repr(value)}", path)
    return value
