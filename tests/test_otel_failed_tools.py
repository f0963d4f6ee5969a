"""Failed tool runs in real traces (scripts/golden/otel.py): a failed tool span after the last
model call that records no result is a trace cut too soon (``truncated_trace``), not content
capture off; Traceloop's LangChain tool spans are placed by the call id in their own record
of the tool's input (docs/adapters/otel.md, steps 6 and 7)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, ToolMessage, TraceError, transcript_hash
from tracebridge.adapters import otel
from tracebridge.registry import get_adapter

FOLDER = Path(__file__).resolve().parents[1] / "golden_traces" / "otel"
CUT = json.loads((FOLDER / "invalid" / "failed_tool_after_last_call.json").read_text("utf-8"))
TRACELOOP = json.loads((FOLDER / "traceloop_langgraph_agent.json").read_text("utf-8"))
SPANS = "resourceSpans[0].scopeSpans[0].spans"


def spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return found


def attribute(span: dict[str, Any], key: str) -> dict[str, Any]:
    [found] = [a for a in span["attributes"] if a["key"] == key]
    value: dict[str, Any] = found["value"]
    return value


def refused(trace: Any, **options: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace, **options)
    return caught.value.code, caught.value.index, caught.value.path


# --- a failed tool span after the last model call (OpenInference, LangGraph interrupted) ---


@pytest.mark.parametrize("allow_pending", [False, True])
def test_a_run_cut_after_a_failed_tool_is_truncated(allow_pending: bool) -> None:
    assert (CUT["code"], CUT["index"], CUT["path"]) == ("truncated_trace", 8, f"{SPANS}[8]")
    failed = spans(CUT["trace"])[8]
    assert (failed["name"], failed["status"]["code"]) == ("convert_currency", "STATUS_CODE_ERROR")
    with pytest.raises(TraceError) as caught:
        otel.to_messages(CUT["trace"], allow_pending=allow_pending)
    error = caught.value
    assert (error.code, error.index, error.path) == ("truncated_trace", 8, f"{SPANS}[8]")
    assert "call 'call_2'" in str(error)
    assert "content capture was on" in str(error)


def test_the_last_calls_view_leaves_the_failed_call_unanswered() -> None:
    messages = otel.to_messages(CUT["trace"], span_id="0000000000001006")
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, ToolMessage]
    ai = messages[1]
    assert isinstance(ai, AIMessage)
    assert [call.id for call in ai.tool_calls] == ["call_1", "call_2"]
    assert messages[2] == ToolMessage(
        content="18 C, sunny", tool_call_id="call_1", name="get_weather"
    )


def test_a_failed_tool_span_that_recorded_no_input_is_still_content_not_captured() -> None:
    """Nothing on the span shows capture was on (real spans edited by hand)."""
    trace = copy.deepcopy(CUT["trace"])
    failed = spans(trace)[8]
    failed["attributes"] = [a for a in failed["attributes"] if a["key"] != "input.value"]
    assert refused(trace) == ("content_not_captured", 8, f"{SPANS}[8]")
    assert refused(trace, allow_pending=True) == ("content_not_captured", 8, f"{SPANS}[8]")


def test_a_failed_tool_span_whose_input_is_masked_is_content_not_captured() -> None:
    """``OPENINFERENCE_HIDE_INPUTS`` masks a tool's input; the span given its call id, so
    that it is placed without its arguments (real spans edited by hand)."""
    trace = copy.deepcopy(CUT["trace"])
    attribute(spans(trace)[8], "input.value")["stringValue"] = "__REDACTED__"
    spans(trace)[8]["attributes"].append(
        {"key": "tool_call.id", "value": {"stringValue": "call_2"}}
    )
    assert refused(trace) == ("content_not_captured", 8, f"{SPANS}[8]")


def test_a_successful_tool_span_without_a_result_is_still_content_not_captured() -> None:
    trace = copy.deepcopy(CUT["trace"])
    succeeded = spans(trace)[6]
    assert succeeded["name"] == "get_weather"
    succeeded["attributes"] = [a for a in succeeded["attributes"] if a["key"] != "output.value"]
    assert refused(trace) == ("content_not_captured", 6, f"{SPANS}[6]")


@pytest.mark.parametrize(
    ("name", "index"),
    [("content_capture_off", 0), ("content_in_log_events", 0), ("redacted_text", 0),
     ("llama_index_content_off", 3)],
)
def test_content_capture_really_off_is_unchanged(name: str, index: int) -> None:
    case = json.loads((FOLDER / "invalid" / f"{name}.json").read_text("utf-8"))
    assert (case["code"], case["index"]) == ("content_not_captured", index)
    assert refused(case["trace"]) == ("content_not_captured", index, case["path"])
    assert refused(case["trace"], allow_pending=True) == (
        "content_not_captured", index, case["path"]
    )


# --- Traceloop's LangChain instrumentation: the call id in its record of the tool input ----


def history() -> list[Any]:
    """The application's history, its results' tool names left out (Traceloop's GenAI
    messages name no tool on a result: ``history_unrecorded``)."""
    assert TRACELOOP["history_unrecorded"] == ["ToolMessage.name"]
    typed = get_adapter("langchain").to_messages(TRACELOOP["history"])
    return [
        m.model_copy(update={"name": None}) if isinstance(m, ToolMessage) else m for m in typed
    ]


def test_the_traceloop_langgraph_run_reads_to_its_history() -> None:
    rebuilt = otel.to_messages(TRACELOOP["trace"])
    assert transcript_hash(rebuilt) == transcript_hash(history())
    assert [m.model_dump(mode="json") for m in rebuilt] == TRACELOOP["expected"]
    results = [m for m in rebuilt if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.is_error) for m in results] == [
        ("call_1", True), ("call_2", True), ("call_3", False)
    ]


def test_the_traceloop_tool_spans_hold_no_call_id_attribute() -> None:
    """What the reader is given: no gen_ai.tool.call.id, the id inside the input's record."""
    tools = [s for s in spans(TRACELOOP["trace"]) if s["name"] == "execute_tool get_weather"]
    assert len(tools) == 3
    for span in tools:
        assert "gen_ai.tool.call.id" not in {a["key"] for a in span["attributes"]}
    record = json.loads(attribute(tools[0], "gen_ai.tool.call.arguments")["stringValue"])
    assert record.keys() == {"input_str", "tags", "metadata", "inputs", "kwargs"}
    assert (record["input_str"], record["inputs"]) == ("{'city': 'Atlantis'}", {"city": "Atlantis"})
    assert record["kwargs"]["tool_call_id"] == "call_1"


def record_of(span: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    value = attribute(span, "gen_ai.tool.call.arguments")
    parsed: dict[str, Any] = json.loads(value["stringValue"])
    return value, parsed


def test_without_the_call_id_the_inputs_place_the_span() -> None:
    """``inputs`` are the arguments: the same tool and arguments twice (call_1, call_2), told
    apart by time. (A record without the key says nothing of a call; ``null`` says the run
    was for no call: tests/test_otel_wrapper_spans.py.)"""
    trace = copy.deepcopy(TRACELOOP["trace"])
    for span in spans(trace):
        if span["name"] == "execute_tool get_weather":
            value, record = record_of(span)
            del record["kwargs"]["tool_call_id"]
            value["stringValue"] = json.dumps(record)
    assert otel.to_messages(trace) == otel.to_messages(TRACELOOP["trace"])


def test_a_call_id_attribute_that_disagrees_with_the_record_conflicts() -> None:
    trace = copy.deepcopy(TRACELOOP["trace"])
    spans(trace)[6]["attributes"].append(
        {"key": "gen_ai.tool.call.id", "value": {"stringValue": "call_9"}}
    )
    assert refused(trace) == (
        "conflicting_fields", 6, f"{SPANS}[6].attributes['gen_ai.tool.call.arguments']"
    )


def test_a_call_id_in_the_record_that_is_not_text_is_malformed() -> None:
    trace = copy.deepcopy(TRACELOOP["trace"])
    value, record = record_of(spans(trace)[6])
    record["kwargs"]["tool_call_id"] = 7
    value["stringValue"] = json.dumps(record)
    assert refused(trace) == (
        "malformed_event", 6, f"{SPANS}[6].attributes['gen_ai.tool.call.arguments']"
    )


def test_the_record_is_read_only_from_traceloops_langchain_scope() -> None:
    trace = copy.deepcopy(TRACELOOP["trace"])
    trace["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"] = "my.instrumentation"
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace)
    assert (caught.value.code, caught.value.index) == ("ambiguous_trace", 6)


def cut_after_second_tools_step(trace: dict[str, Any]) -> dict[str, Any]:
    """The run as if it stopped after its second tools step: the last model call's spans
    (from ordinal time 39 on) removed; the earlier spans keep their positions."""
    cut = copy.deepcopy(trace)
    spans(cut)[:] = [s for s in spans(cut) if int(s["startTimeUnixNano"]) < 39]
    return cut


def test_a_traceloop_run_cut_after_a_failed_tool_is_truncated() -> None:
    cut = cut_after_second_tools_step(TRACELOOP["trace"])
    assert [s["name"] for s in spans(cut)][14] == "execute_tool get_weather"
    assert refused(cut) == ("truncated_trace", 14, f"{SPANS}[14]")
    assert refused(cut, allow_pending=True) == ("truncated_trace", 14, f"{SPANS}[14]")


def test_a_traceloop_result_is_the_tool_message_it_records() -> None:
    """Its ``{"output": <serialized ToolMessage>, "kwargs": ...}`` is read as that message."""
    cut = cut_after_second_tools_step(TRACELOOP["trace"])
    del spans(cut)[14]  # the failed run of call_2: its call is left pending
    messages = otel.to_messages(cut, allow_pending=True)
    assert messages[-1] == ToolMessage(
        content="18 C, sunny", tool_call_id="call_3", name="get_weather"
    )
    ai = messages[-2]
    assert isinstance(ai, AIMessage)
    assert [call.id for call in ai.tool_calls] == ["call_2", "call_3"]
    assert refused(cut)[0] == "unanswered_tool_call"


def test_a_traceloop_result_that_is_no_tool_message_is_truncated() -> None:
    """For a call LangChain makes the output a ToolMessage; text there is the str() of
    something else (a LangGraph Command): not what the model was sent (edited by hand)."""
    cut = cut_after_second_tools_step(TRACELOOP["trace"])
    del spans(cut)[14]
    value = attribute(spans(cut)[15], "gen_ai.tool.call.result")
    record = json.loads(value["stringValue"])
    record["output"] = "Command(update={'messages': []})"
    value["stringValue"] = json.dumps(record)
    assert refused(cut, allow_pending=True) == ("truncated_trace", 15, f"{SPANS}[15]")
