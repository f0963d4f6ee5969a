"""LlamaIndex event streams: a ``StopEvent``'s result is checked against the run it ends.

The result of an AgentWorkflow / FunctionAgent run is an ``AgentOutput``: the last output of
the run, or, when a tool returned directly, an assistant reply made of that tool's text. It
says again what the stream said, so it contributes no message; but it was not read at all,
and a stream whose end says something else (another reply, another agent, calls no event
made, a structured response of its own) passed as if it agreed. Now it is checked, with
``conflicting_fields`` where it disagrees, and its structured response is kept as the
streamed one is. A fault of the run itself is still told where the run has it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import workflow as core_workflow
from llama_index.core.agent import workflow
from test_llama_index_event_calls import FORMS, Form, _objects

from tracebridge import TraceError
from tracebridge.adapters import llama_index

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "llama_index"


def _golden(name: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads(
        (GOLDEN / f"{name}.json").read_text(encoding="utf-8"))["events"]
    return events


RUN = _golden("function_agent_two_turns")  # StopEvents at 8 and 15
DIRECT = _golden("return_direct_tool")  # [3] a result returned directly, [4] the StopEvent
STRUCTURED = _golden("structured_output")  # [6] AgentStreamStructuredOutput, [7] StopEvent


def _refused(events: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    return caught.value


def _result(events: list[dict[str, Any]], e: int) -> dict[str, Any]:
    result: dict[str, Any] = events[e]["data"]["result"]
    return result


def _text(result: dict[str, Any], text: str) -> None:
    result["response"]["blocks"] = [{"block_type": "text", "text": text}]


@pytest.mark.parametrize("form", FORMS)
def test_a_result_with_another_reply_conflicts(form: Form) -> None:
    events = copy.deepcopy(RUN)
    _text(_result(events, 8), "2 + 3 = 6.")
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 8, "events[8].data.result.response")


@pytest.mark.parametrize("form", FORMS)
def test_a_result_of_another_agent_conflicts(form: Form) -> None:
    events = copy.deepcopy(RUN)
    _result(events, 15)["current_agent_name"] = "someone_else"
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 15, "events[15].data.result.current_agent_name")


@pytest.mark.parametrize("form", FORMS)
def test_a_result_naming_a_call_no_event_made_conflicts(form: Form) -> None:
    events = copy.deepcopy(RUN)
    _result(events, 8)["tool_calls"][0]["tool_kwargs"] = {"a": 2, "b": 4}
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 8, "events[8].data.result.tool_calls[0]")


def test_a_result_that_is_the_output_object_itself_is_read() -> None:
    # what a live run streams: the StopEvent holds the final AgentOutput object
    events = _objects(copy.deepcopy(RUN))
    for e in (8, 15):
        events[e] = core_workflow.StopEvent(result=events[e - 1])
    assert llama_index.events_to_messages(events) == llama_index.events_to_messages(RUN)
    changed = workflow.AgentOutput.model_validate(RUN[7]["data"])
    changed.response.blocks[0].text = "2 + 3 = 6."  # type: ignore[union-attr]
    events[8] = core_workflow.StopEvent(result=changed)
    error = _refused(events)
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 8, "events[8].data.result.response")


@pytest.mark.parametrize("form", FORMS)
def test_a_returned_direct_reply_must_be_the_tools_text(form: Form) -> None:
    assert llama_index.events_to_messages(form(copy.deepcopy(DIRECT)))[-1].type == "tool"
    events = copy.deepcopy(DIRECT)
    _text(_result(events, 4), "Order A-17 is lost.")
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 4, "events[4].data.result.response")


def test_a_failed_result_is_not_a_returned_direct_reply() -> None:
    # FunctionAgent returns directly only from a tool that did not fail
    events = copy.deepcopy(DIRECT)
    events[3]["data"]["tool_output"]["is_error"] = True
    error = _refused(events)
    assert (error.code, error.index) == ("conflicting_fields", 4)


@pytest.mark.parametrize("form", FORMS)
def test_a_result_that_is_not_an_agent_output_is_malformed(form: Form) -> None:
    events = copy.deepcopy(RUN)
    events[8]["data"]["result"] = "2 + 3 = 5 and 4 * 5 = 20."
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == (
        "malformed_event", 8, "events[8].data.result")


def test_a_stop_with_no_output_before_it_is_malformed() -> None:
    events = [RUN[0], RUN[8]]
    error = _refused(events)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "events[1].data.result")


def test_a_stop_without_a_result_says_nothing() -> None:
    events = copy.deepcopy(RUN)
    events[8]["data"] = {}
    assert llama_index.events_to_messages(events) == llama_index.events_to_messages(RUN)


@pytest.mark.parametrize("form", FORMS)
def test_a_structured_response_of_its_own_conflicts(form: Form) -> None:
    events = copy.deepcopy(STRUCTURED)
    _result(events, 7)["structured_response"] = {"sum": 41, "terms": [40, 2]}
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 7, "events[7].data.result.structured_response")


def test_a_structured_response_only_the_result_says_is_kept() -> None:
    events = copy.deepcopy(STRUCTURED)
    del events[6]  # the AgentStreamStructuredOutput
    answer = llama_index.events_to_messages(events)[-1]
    assert answer.metadata == {
        "llama_index": {"event": {"structured_response": {"sum": 42, "terms": [40, 2]}}}}


def test_a_fault_of_the_run_is_told_where_the_run_has_it() -> None:
    # the StopEvent repeats the result's call id; the orphan result is the fault
    events = copy.deepcopy(RUN)
    events[4]["data"]["tool_id"] = "call_x"
    error = _refused(events)
    assert (error.code, error.index) == ("orphan_tool_result", 4)


def test_a_returned_direct_reply_with_more_than_the_text_conflicts() -> None:
    # FunctionAgent makes that reply of the tool's text alone
    events = copy.deepcopy(DIRECT)
    _result(events, 4)["response"]["additional_kwargs"] = {"note": "only here"}
    error = _refused(events)
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 4, "events[4].data.result.response")


@pytest.mark.parametrize("value", ["", 0, {}, False])
def test_tool_calls_of_another_type_are_malformed_even_when_empty(value: Any) -> None:
    events = copy.deepcopy(RUN)
    events[1]["data"]["tool_calls"] = value
    error = _refused(events)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "events[1].data.tool_calls")
    events = copy.deepcopy(RUN)
    _result(events, 8)["tool_calls"] = value
    error = _refused(events)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 8, "events[8].data.result.tool_calls")
