"""OpenTelemetry spans: times, counts and integer attributes are read as what they say, or
refused where they are.

A span's start time orders the model calls and places each tool run after its call; a dropped
attribute count tells a truncated trace. A value that is not a number there used to be read as
0 without a word (a trace that dropped attributes would pass for a whole one). Now: absent is
0, as in the protocol; a number, or its digits as text (OTLP/JSON writes 64-bit integers so),
is that number; anything else is ``malformed_event`` at the field. Likewise a span status
(which says whether a tool run failed) whose code is not one of the enum's: it used to read
as "did not fail".
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from test_otel import ASK, CALLING, document, genai, sdk_spans, span

from tracebridge import TraceError
from tracebridge.adapters import otel

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "otel"
TRACE = json.loads((GOLDEN / "openai_v2_tool_loop.json").read_text(encoding="utf-8"))["trace"]
SPANS = "resourceSpans[0].scopeSpans[0].spans"


def _with(field: str, value: Any, span: int = 0) -> dict[str, Any]:
    trace = copy.deepcopy(TRACE)
    item = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][span]
    if value is None:
        item.pop(field, None)
    else:
        item[field] = value
    return trace


def _refused(trace: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace)
    return caught.value


@pytest.mark.parametrize("field", ["startTimeUnixNano", "endTimeUnixNano",
                                   "droppedAttributesCount"])
@pytest.mark.parametrize("value", ["soon", "", "-1", "1.5", -1, 1.5, True, [], "\uff11\uff12"])
def test_a_count_that_is_not_a_whole_number_is_malformed(field: str, value: Any) -> None:
    error = _refused(_with(field, value))
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, f"{SPANS}[0].{field}")


@pytest.mark.parametrize("field", ["startTimeUnixNano", "endTimeUnixNano"])
@pytest.mark.parametrize("form", [str, int, None], ids=["digits", "number", "absent"])
def test_a_time_as_digits_a_number_or_absent_is_read(field: str, form: Any) -> None:
    held = TRACE["resourceSpans"][0]["scopeSpans"][0]["spans"][0][field]
    assert otel.to_messages(_with(field, None if form is None else form(held))) == (
        otel.to_messages(TRACE))


@pytest.mark.parametrize("value", ["3", 3])
def test_dropped_attributes_as_digits_or_a_number_tell_a_truncated_trace(value: Any) -> None:
    error = _refused(_with("droppedAttributesCount", value))
    assert (error.code, error.index) == ("truncated_trace", 0)


def _int_attribute(trace: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The position and value of the first span attribute that holds an ``intValue``."""
    attributes = trace["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    for a, attribute in enumerate(attributes):
        if "intValue" in attribute["value"]:
            return a, attribute["value"]
    raise AssertionError("the golden span has an integer attribute")


@pytest.mark.parametrize("value", ["many", "1e3", "", 2.5, None, "--1"])
def test_an_int_value_that_is_not_an_integer_is_malformed(value: Any) -> None:
    trace = copy.deepcopy(TRACE)
    a, held = _int_attribute(trace)
    held["intValue"] = value
    error = _refused(trace)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, f"{SPANS}[0].attributes[{a}].value.intValue")


@pytest.mark.parametrize("value", ["-5", -5, "100", 100])
def test_an_int_value_as_digits_or_a_number_is_read(value: Any) -> None:
    trace = copy.deepcopy(TRACE)
    _, held = _int_attribute(trace)
    held["intValue"] = value
    assert otel.to_messages(trace) == otel.to_messages(TRACE)


def test_a_json_span_time_that_is_not_an_iso_time_is_malformed() -> None:
    spans = [json.loads(line) for line in _json_spans()]
    assert otel.to_messages(spans)  # as ReadableSpan.to_json() writes them: read
    spans[0]["start_time"] = "yesterday"
    error = _refused(spans)
    assert (error.code, error.index, error.path) == ("malformed_event", 0, "[0].start_time")


def _json_spans() -> list[str]:
    """Spans of a run the OpenTelemetry SDK recorded, as ``ReadableSpan.to_json()`` writes."""
    return [span.to_json() for span in sdk_spans()]


# --- a span's status: whether it failed (a tool run's is_error) --------------------------


@pytest.mark.parametrize("status", [
    "ERROR", ["STATUS_CODE_ERROR"], {"code": "ERROR"}, {"code": "STATUS_CODE_FAILED"},
    {"code": 3}, {"code": True}, {"code": ["STATUS_CODE_ERROR"]}, {"code": {}},
])
def test_a_status_that_is_not_one_is_malformed(status: Any) -> None:
    error = _refused(_with("status", status))
    assert (error.code, error.index, error.path) == ("malformed_event", 0, f"{SPANS}[0].status")


@pytest.mark.parametrize("status", [
    None, {}, {"code": "STATUS_CODE_UNSET"}, {"code": "STATUS_CODE_OK"}, {"code": 0},
    {"code": 1}, {"code": "STATUS_CODE_OK", "message": "fine"},
])
def test_a_status_that_did_not_fail_reads_as_before(status: Any) -> None:
    assert otel.to_messages(_with("status", status)) == otel.to_messages(TRACE)


def test_a_json_span_status_that_is_not_one_is_malformed() -> None:
    spans = [json.loads(line) for line in _json_spans()]
    assert spans[0]["status"] == {"status_code": "UNSET"}
    spans[0]["status"] = {"status_code": "STATUS_CODE_ERROR"}  # OTLP's name, not to_json's
    error = _refused(spans)
    assert (error.code, error.index, error.path) == ("malformed_event", 0, "[0].status")


# --- a tool span's own name and call id --------------------------------------------------


@pytest.mark.parametrize("key", ["gen_ai.tool.call.id", "gen_ai.tool.name", "tool_call.id",
                                 "tool.name"])
def test_a_tool_span_name_or_call_id_that_is_not_text_is_malformed(key: str) -> None:
    # it would pair the tool run (its result, its error flag) with no call, or another one
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                  "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.result": "18 C"}
    counterpart = {"tool_call.id": "gen_ai.tool.call.id", "tool.name": "gen_ai.tool.name"}
    attributes.pop(counterpart.get(key, key))  # OpenInference's key stands in for GenAI's
    attributes[key] = 7
    tool = span(5, attributes)
    error = _refused(document(genai(1, [ASK], [CALLING]), tool))
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, f"{SPANS}[1].attributes['{key}']")
