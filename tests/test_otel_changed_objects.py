"""OpenTelemetry SDK spans whose fields were changed after they were made.

``ReadableSpan`` keeps its fields in private attributes that nothing stops a user (or a
stand-in object) from changing. Reading such spans gives the conversation or a
``TraceError`` at the field, never another exception.
"""

from __future__ import annotations

from typing import Any

import pytest
from changed_objects import VALUES, outcome
from hypothesis import given, settings
from hypothesis import strategies as st
from test_otel import EXPECTED, sdk_spans

from tracebridge import TraceError, validation
from tracebridge.adapters import otel

_FIELDS = ("_name", "_context", "_parent", "_start_time", "_end_time", "_attributes", "_status",
           "_instrumentation_scope")
"""What ``ReadableSpan`` keeps behind the properties the reader reads."""


@pytest.mark.parametrize(
    ("field", "value", "path", "said"),
    [
        ("_context", None, "[0].context.trace_id",
         "an SDK span's ids are non-negative ints, got None"),
        ("_parent", "x", "[0].parent.span_id", "an SDK span's ids are non-negative ints"),
        ("_start_time", "x", "[0].start_time", "expected an int or None, got 'x'"),
        ("_end_time", 1.5, "[0].end_time", "expected an int or None, got 1.5"),
        ("_attributes", 5, "[0].attributes",
         "a span's attributes are a mapping of names to values, got 5"),
        ("_attributes", "chat", "[0].attributes", "a mapping of names to values, got 'chat'"),
        ("_attributes", {1: "x"}, "[0].attributes", "an attribute name is a string, got 1"),
        ("_name", 5, "[0].name", "a span's name is a string, got 5"),
        ("_status", 5, "[0].status", "a span's status has a status_code"),
    ],
)
def test_a_changed_span_is_refused_where_it_is(field: str, value: Any, path: str,
                                               said: str) -> None:
    spans = sdk_spans()
    setattr(spans[0], field, value)
    assert outcome(otel.to_messages, spans) == ("malformed_event", 0, path)  # the span's place
    with pytest.raises(TraceError, match=said):
        otel.to_messages(spans)
    assert otel.detect(spans)  # still spans: to_messages says what is wrong


def test_unchanged_spans_read() -> None:
    assert otel.to_messages(sdk_spans()) == EXPECTED


_CONVERSATION_CODES = {
    # a mapping without the GenAI attributes leaves the span no model call: the conversation
    # is the first call's, which ends with its call unanswered (at that call, not the field)
    "_attributes": {"unanswered_tool_call"},
    # a start before the first call's: the calls do not chain in that order (no span to blame)
    "_start_time": {"ambiguous_trace"},
}
"""What a changed field can give besides ``malformed_event`` at itself: its span's part in
the conversation changed."""


@settings(max_examples=200)
@given(st.integers(0, 2), st.sampled_from(_FIELDS), VALUES)
def test_any_changed_span_reads_or_is_refused(span: int, field: str, value: Any) -> None:
    spans = sdk_spans()
    setattr(spans[span], field, value)
    result = outcome(otel.to_messages, spans)  # any exception but a TraceError fails here
    assert otel.detect(spans) is True  # still spans: to_messages says what is wrong
    if isinstance(result, list):
        # No drawn value holds a message attribute, so a change can take a call away but not
        # alter one, and the last call holds the whole conversation.
        assert validation.check(result) == []
        assert result == EXPECTED
        return
    code, index, path = result
    changed = f"[{span}].{field.removeprefix('_')}"
    if code == "malformed_event":
        assert path == changed or path.startswith((f"{changed}.", f"{changed}["))
        assert index == span  # docs/adapters/otel.md "Refusals": the span's position
    elif code == "unanswered_tool_call":
        assert code in _CONVERSATION_CODES.get(field, set())
        assert (index, path) == (0, "[0].attributes['gen_ai.output.messages[0].parts[0]']")
        assert span == 1  # the last call's span
    else:
        assert code in _CONVERSATION_CODES.get(field, set())
        assert (code, index, path) == ("ambiguous_trace", None, None)
        assert span == 1
