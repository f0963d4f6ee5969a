"""LlamaIndex event streams: what a run says again is checked whole, and every fault in it is
refused where it is.

After a run, FunctionAgent appends the run's ToolCallResults to the final AgentOutput's
``tool_calls``, and the StopEvent's result is that AgentOutput again. A repeated result that
is not the one read (another text, error flag, return_direct or raw value) used to be taken
on its id, name and arguments alone, the rest dropped; a StopEvent result changed after it
was made let a raw AttributeError out; a key of no field in a result's JSON was ignored.
NaN in a value has no JSON form: it is refused, where LlamaIndex's dump writes null."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from llama_index.core.agent import workflow
from llama_index.core.tools import ToolOutput
from llama_index.core.workflow import StopEvent
from test_llama_index_event_calls import RUN, _objects

from tracebridge import TraceError
from tracebridge.adapters import llama_index

FINAL, STOP = 7, 8
"""The golden run's first turn: results at 4 and 5, its final AgentOutput and StopEvent."""


def _refused(events: list[Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    return caught.value.code, caught.value.index, caught.value.path


def _after_the_run(results: list[Any]) -> list[Any]:
    """The run's objects, its final output (and the StopEvent holding it) listing
    ``results`` as FunctionAgent does after the run."""
    objects = _objects(RUN)
    assert [type(o).__name__ for o in objects[4:9]] == [
        "ToolCallResult", "ToolCallResult", "AgentInput", "AgentOutput", "StopEvent"]
    final = objects[FINAL].model_copy(deep=True)
    final.tool_calls = results
    objects[FINAL] = final
    objects[STOP] = StopEvent(result=final)
    return objects


def test_the_runs_own_results_repeated_read_as_the_run() -> None:
    objects = _objects(RUN)
    repeated = _after_the_run([objects[4], objects[5]])
    assert llama_index.events_to_messages(repeated) == llama_index.events_to_messages(RUN)


def _changed_result(**output: Any) -> Any:
    result = _objects(RUN)[4].model_copy(deep=True)
    fields = {"content": "5", "tool_name": "add",
              "raw_input": {"args": [], "kwargs": {"a": 2, "b": 3}}, "raw_output": 5,
              "is_error": False, **output}
    result.tool_output = ToolOutput(**fields)
    return result


@pytest.mark.parametrize("change", [
    {"content": "999"}, {"is_error": True}, {"raw_output": 6},
    {"raw_input": {"args": [], "kwargs": {"a": 2, "b": 3, "c": 0}}},
], ids=["text", "is_error", "raw_output", "raw_input"])
def test_a_repeated_result_that_is_not_the_one_read_conflicts(change: dict[str, Any]) -> None:
    assert llama_index.events_to_messages(
        _after_the_run([_changed_result(), _objects(RUN)[5]])) == (
        llama_index.events_to_messages(RUN))  # unchanged, it is the one read
    events = _after_the_run([_changed_result(**change), _objects(RUN)[5]])
    assert _refused(events) == ("conflicting_fields", FINAL, f"events[{FINAL}].data.tool_calls[0]")


def test_a_repeated_result_returned_directly_conflicts() -> None:
    result = _changed_result()
    result.return_direct = True
    events = _after_the_run([_objects(RUN)[4], result])
    assert _refused(events) == ("conflicting_fields", FINAL, f"events[{FINAL}].data.tool_calls[1]")


def test_a_repeated_result_in_a_dict_stream_is_checked_whole() -> None:
    for output, code, at in [
        (42, "malformed_event", ".tool_output"),
        ({**RUN[4]["data"]["tool_output"], "is_error": True}, "conflicting_fields", ""),
    ]:
        events = copy.deepcopy(RUN)
        entry = {**RUN[4]["data"], "tool_output": output}
        events[FINAL]["data"]["tool_calls"] = [entry]
        assert _refused(events) == (code, FINAL, f"events[{FINAL}].data.tool_calls[0]{at}")
        events = copy.deepcopy(RUN)
        events[STOP]["data"]["result"]["tool_calls"][0] = entry
        assert _refused(events) == (
            code, STOP, f"events[{STOP}].data.result.tool_calls[0]{at}")
    events = copy.deepcopy(RUN)
    events[FINAL]["data"]["tool_calls"] = [RUN[4]["data"]]  # the result itself: no fault
    assert llama_index.events_to_messages(events) == llama_index.events_to_messages(RUN)


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")  # its dump
@pytest.mark.parametrize("response", [None, "text"])
def test_a_stop_result_changed_after_it_was_made_is_refused_where_it_is(response: Any) -> None:
    objects = _objects(RUN)
    final = objects[FINAL].model_copy(deep=True)
    final.response = response
    objects[STOP] = StopEvent(result=final)
    assert _refused(objects) == ("malformed_event", STOP, f"events[{STOP}].data.result.response")


def test_a_key_of_no_field_in_a_stop_result_is_malformed() -> None:
    events = copy.deepcopy(RUN)
    events[STOP]["data"]["result"]["note"] = 1
    assert _refused(events) == ("malformed_event", STOP, f"events[{STOP}].data.result.note")
    objects = _objects(RUN)
    final = objects[FINAL].model_copy(deep=True)
    final.__pydantic_private__["_data"]["note"] = 1
    objects[STOP] = StopEvent(result=final)
    assert _refused(objects) == (
        "malformed_event", STOP, f"events[{STOP}].data.result._data.note")


def test_raw_input_changed_after_it_was_made_is_malformed() -> None:
    objects = _objects(RUN)
    objects[4].tool_output.raw_input = [1, 2]
    path = "events[4].data.tool_output.raw_input"
    assert _refused(objects) == ("malformed_event", 4, path)
    events = copy.deepcopy(RUN)
    events[4]["data"]["tool_output"]["raw_input"] = [1, 2]
    assert _refused(events) == ("malformed_event", 4, path)


@pytest.mark.parametrize("value", [math.nan, {"x": math.inf}], ids=["nan", "nested-inf"])
def test_nan_in_a_raw_value_is_refused_also_by_dump_events(value: Any) -> None:
    objects = _objects(RUN)
    objects[4].tool_output.raw_output = value
    path = "events[4].data.tool_output.raw_output" + ("" if value is math.nan else ".x")
    assert _refused(objects) == ("unserializable_value", 4, path)
    with pytest.raises(TraceError) as caught:
        llama_index.dump_events(objects)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unserializable_value", 4, path)


def test_dump_events_refuses_nan_where_it_is() -> None:
    objects = _objects(RUN)
    objects[FINAL] = workflow.AgentOutput.model_validate(
        {**RUN[FINAL]["data"], "structured_response": {"x": [1.0, math.nan]}})
    with pytest.raises(TraceError) as caught:
        llama_index.dump_events(objects)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unserializable_value", FINAL, f"events[{FINAL}].data.structured_response.x[1]")
    assert _refused(objects) == (
        "unserializable_value", FINAL, f"events[{FINAL}].data.structured_response.x[1]")
