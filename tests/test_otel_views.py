"""One model call's view (``to_messages(trace, span_id=...)``) of the real golden traces:
every call of them reads, a failed tool span that recorded no result leaves its call
unanswered in the view (only there), and the openai-agents handoff span is no tool run."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import otel
from tracebridge.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

GOLDEN = Path(__file__).parent.parent / "golden_traces" / "otel"


def golden(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / f"{name}.json").read_text())["trace"]  # type: ignore[no-any-return]


def spans(document: dict[str, Any]) -> list[dict[str, Any]]:
    return document["resourceSpans"][0]["scopeSpans"][0]["spans"]  # type: ignore[no-any-return]


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: a["value"] for a in span["attributes"]}


@pytest.mark.parametrize(
    ("name", "sizes"),
    [
        ("openinference_langgraph_agent", [4, 6]),
        ("openinference_agents_handoff", [3, 6, 7]),
    ],
)
def test_every_call_of_the_goldens_has_a_view(name: str, sizes: list[int]) -> None:
    trace = golden(name)
    views = [otel.to_messages(trace, span_id=view.span_id) for view in otel.calls(trace)]
    assert list(map(len, views)) == sizes


def test_a_failed_tool_without_result_leaves_its_call_unanswered_in_the_view() -> None:
    messages = otel.to_messages(golden("openinference_langgraph_agent"), span_id="0000000000001006")
    assert [type(m) for m in messages] == [SystemMessage, HumanMessage, AIMessage, ToolMessage]
    ai = messages[2]
    assert isinstance(ai, AIMessage)
    assert [call.id for call in ai.tool_calls] == ["call_1", "call_2"]
    assert messages[3] == ToolMessage(
        content="18 C, sunny", tool_call_id="call_1", name="get_weather"
    )


def test_the_whole_trace_still_takes_the_failed_result_from_the_next_input() -> None:
    messages = otel.to_messages(golden("openinference_langgraph_agent"))
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.is_error) for m in results] == [("call_1", False), ("call_2", True)]


@pytest.mark.parametrize("allow_pending", [False, True])
def test_a_cut_trace_ending_on_a_failed_tool_without_result_is_still_refused(
    allow_pending: bool,
) -> None:
    """Outside a view the call was answered (it failed) and its answer is lost: not pending.
    The span recorded its input, so capture was on: the trace ends too soon (truncated)."""
    trace = golden("openinference_langgraph_agent")
    kept = spans(trace)[:10]  # up to the tools node; the second model call is cut
    spans(trace)[:] = kept
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace, allow_pending=allow_pending)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "truncated_trace", 8, "resourceSpans[0].scopeSpans[0].spans[8]",
    )


def test_the_handoff_span_is_no_tool_run_in_the_triage_agents_view() -> None:
    messages = otel.to_messages(golden("openinference_agents_handoff"), span_id="0000000000001005")
    assert [type(m) for m in messages] == [SystemMessage, HumanMessage, AIMessage]
    ai = messages[2]
    assert isinstance(ai, AIMessage)
    assert [(call.name, call.id) for call in ai.tool_calls] == [
        ("transfer_to_weather_agent", "call_1")
    ]


def test_the_handoff_span_changes_nothing_in_the_whole_trace() -> None:
    trace = golden("openinference_agents_handoff")
    without = copy.deepcopy(trace)
    del spans(without)[1]
    assert otel.to_messages(trace) == otel.to_messages(without)


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"name": "handoff to Someone else"}, "ambiguous_trace"),  # not named after its output
        ({"attributes": [{"key": "tool.name", "value": {"stringValue": "transfer"}}]},
         "ambiguous_trace"),
        ({"attributes": [{"key": "tool_call.id", "value": {"stringValue": "call_9"}}]},
         "orphan_tool_result"),
    ],
)
def test_a_span_unlike_the_handoff_span_is_still_a_tool_run(
    change: dict[str, Any], code: str
) -> None:
    trace = golden("openinference_agents_handoff")
    span = spans(trace)[1]
    assert span["name"] == "handoff to Weather agent"
    span["name"] = change.get("name", span["name"])
    span["attributes"] = span["attributes"] + change.get("attributes", [])
    with pytest.raises(TraceError) as caught:
        otel.to_messages(trace, span_id="0000000000001005")
    assert (caught.value.code, caught.value.index) == (code, 1)
