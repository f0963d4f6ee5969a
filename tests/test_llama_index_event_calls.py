"""LlamaIndex event streams: what an ``AgentOutput`` and a ``ToolCall`` say about calls is
checked against the response that holds them, and an ``AgentOutput``'s structured response
is kept.

A stream says which calls the agent acts on in four places: the response's own calls, the
output's ``tool_calls`` (``ToolSelection``s), one ``ToolCall`` event per call, and each
``ToolCallResult``'s ``tool_name`` and ``tool_kwargs``. Only the response's become typed
calls; the others must agree with it (id, name, and arguments as the same JSON), or the
stream is ``conflicting_fields`` where they differ: a call only they name would otherwise be
lost without a word. After a run, FunctionAgent appends the run's
``ToolCallResult``s to the final output's ``tool_calls`` (objects; a dump writes them as
``ToolSelection``s): each must be a result already read.

An ``AgentStreamStructuredOutput`` carries the final output's structured response (the
output's own field is set only after it is streamed): it is kept with that reply.

Every case runs on the three forms a stream comes in: event objects, ``dump_events`` dicts
and the workflow ``JsonSerializer``'s output.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import workflow as core_workflow
from llama_index.core.agent import workflow
from workflows.context.serializers import JsonSerializer

from tracebridge import AIMessage, TraceError
from tracebridge.adapters import llama_index

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "llama_index"
RUN = json.loads((GOLDEN / "function_agent_two_turns.json").read_text(encoding="utf-8"))["events"]
# events[1] AgentOutput with calls call_add_1 add(a=2, b=3) and call_mul_1 multiply(a=4, b=5),
# events[2] and [3] their ToolCalls, [4] and [5] their results, [7] the final AgentOutput.


def _objects(events: list[dict[str, Any]]) -> list[Any]:
    return [_event_class(e["event"]).model_validate(e["data"]) for e in events]


def _event_class(name: str) -> Any:
    """The agent events' class, or the workflow's own (``StopEvent``)."""
    return getattr(workflow, name, None) or getattr(core_workflow, name)


def _serialized(events: list[dict[str, Any]]) -> list[Any]:
    serializer = JsonSerializer()
    return [json.loads(serializer.serialize(event)) for event in _objects(events)]


FORMS: list[Any] = [
    pytest.param(lambda events: events, id="dumps"),
    pytest.param(_objects, id="objects"),
    pytest.param(_serialized, id="serialized"),
]

Form = Callable[[list[dict[str, Any]]], list[Any]]


def _run(**changes: Any) -> list[dict[str, Any]]:
    """The golden run with ``changes``: ``"<event>.<field>"`` -> the field's new value."""
    events = copy.deepcopy(RUN)
    for where, value in changes.items():
        index, field = where.split(".", 1)
        events[int(index.removeprefix("e"))]["data"][field] = value
    return events


def _refused(events: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    return caught.value


def _selection(tool_id: str, name: str, **kwargs: Any) -> dict[str, Any]:
    return {"tool_id": tool_id, "tool_name": name, "tool_kwargs": kwargs}


@pytest.mark.parametrize("form", FORMS)
def test_the_golden_run_reads_in_every_form(form: Form) -> None:
    assert llama_index.events_to_messages(form(RUN)) == llama_index.events_to_messages(RUN)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("selections", "k"), [
    pytest.param([_selection("call_add_1", "add", a=2, b=3),
                  _selection("call_sub_1", "multiply", a=4, b=5)], 1, id="unknown-id"),
    pytest.param([_selection("call_add_1", "subtract", a=2, b=3)], 0, id="other-name"),
    pytest.param([_selection("call_add_1", "add", a=2, b=3.0)], 0, id="float-for-int"),
    pytest.param([_selection("call_add_1", "add", a=2)], 0, id="fewer-arguments"),
])
def test_a_selection_that_is_not_a_call_of_the_response_conflicts(
    form: Form, selections: list[dict[str, Any]], k: int
) -> None:
    error = _refused(form(_run(**{"e1.tool_calls": selections})))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 1, f"events[1].data.tool_calls[{k}]")


@pytest.mark.parametrize("form", FORMS)
def test_a_selection_beside_a_response_without_calls_is_not_dropped(form: Form) -> None:
    # The agent acted on a call its response message does not hold (and the stream ends
    # before a result): reading the response alone would lose the call without a word.
    events = _run(**{"e7.tool_calls": [_selection("call_x", "lookup", id=7)]})[:8]
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 7, "events[7].data.tool_calls[0]")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("data", [
    pytest.param({"tool_name": "add", "tool_kwargs": {"a": 2, "b": 4}, "tool_id": "call_add_1"},
                 id="other-arguments"),
    pytest.param({"tool_name": "add", "tool_kwargs": {"a": 2, "b": 3}, "tool_id": "call_x"},
                 id="unknown-id"),
    pytest.param({"tool_name": "add", "tool_kwargs": {"a": 2, "b": True},
                  "tool_id": "call_add_1"}, id="true-for-3"),
])
def test_a_tool_call_event_that_is_not_a_call_of_the_output_before_it_conflicts(
    form: Form, data: dict[str, Any]
) -> None:
    events = copy.deepcopy(RUN)
    events[2]["data"] = data
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == ("conflicting_fields", 2, "events[2].data")


def _results_of_the_run() -> list[dict[str, Any]]:
    return [_selection("call_add_1", "add", a=2, b=3),
            _selection("call_mul_1", "multiply", a=4, b=5)]


@pytest.mark.parametrize("form", FORMS)
def test_the_final_output_may_list_the_results_of_the_run(form: Form) -> None:
    events = _run(**{"e7.tool_calls": _results_of_the_run()})
    assert llama_index.events_to_messages(form(events)) == llama_index.events_to_messages(RUN)


def test_the_final_output_object_may_hold_the_result_objects_of_the_run() -> None:
    # As FunctionAgent leaves it after the run: the ToolCallResult objects themselves.
    objects = _objects(RUN)
    objects[7].tool_calls.extend([objects[4], objects[5]])
    assert llama_index.events_to_messages(objects) == llama_index.events_to_messages(RUN)
    objects[7].tool_calls.append(objects[4].model_copy(update={"tool_id": "call_x"}))
    error = _refused(objects)
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 7, "events[7].data.tool_calls[2]")


@pytest.mark.parametrize("form", FORMS)
def test_the_final_output_listing_a_result_never_read_conflicts(form: Form) -> None:
    listed = [*_results_of_the_run(), _selection("call_div_1", "divide", a=1, b=0)]
    error = _refused(form(_run(**{"e7.tool_calls": listed})))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 7, "events[7].data.tool_calls[2]")


@pytest.mark.parametrize("value", ["add", {"tool_id": "call_add_1"}])
def test_tool_calls_that_are_not_a_list_of_selections_are_malformed(value: Any) -> None:
    error = _refused(_run(**{"e1.tool_calls": value if type(value) is str else [value]}))
    path = "events[1].data.tool_calls" + ("" if type(value) is str else "[0]")
    assert (error.code, error.index, error.path) == ("malformed_event", 1, path)


@pytest.mark.parametrize("form", FORMS)
def test_a_structured_response_is_kept_with_the_reply(form: Form) -> None:
    structured = {"sum": 5, "product": 20}
    messages = llama_index.events_to_messages(form(_run(**{"e7.structured_response": structured})))
    plain = llama_index.events_to_messages(RUN)
    reply = messages[5]
    assert isinstance(reply, AIMessage)
    assert reply.content == "2 + 3 = 5 and 4 * 5 = 20."
    assert reply.metadata == {"llama_index": {"event": {"structured_response": structured}}}
    assert messages[:5] + messages[6:] == plain[:5] + plain[6:]
    # an extra only the events know: gone once they are stripped, as return_direct is
    assert llama_index.strip_event_extras(messages) == llama_index.strip_event_extras(plain)


def test_a_structured_response_that_is_not_json_is_refused_where_it_is() -> None:
    objects = _objects(RUN)
    objects[7].structured_response = {"when": object()}
    error = _refused(objects)
    assert (error.code, error.index, error.path) == (
        "unserializable_value", 7, "events[7].data.structured_response.when")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("change", [
    pytest.param({"tool_kwargs": {"a": 2, "b": 3.0}}, id="float-for-int"),
    pytest.param({"tool_kwargs": {}}, id="no-arguments"),
    pytest.param({"tool_name": "subtract"}, id="other-name"),
])
def test_a_result_whose_copy_of_its_call_differs_conflicts(
    form: Form, change: dict[str, Any]
) -> None:
    events = copy.deepcopy(RUN)
    events[4]["data"].update(change)
    if "tool_name" in change:  # the output's own copy of the name goes along
        events[4]["data"]["tool_output"]["tool_name"] = change["tool_name"]
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == ("conflicting_fields", 4, "events[4].data")


def test_a_result_dict_without_its_call_arguments_is_malformed() -> None:
    events = copy.deepcopy(RUN)
    del events[4]["data"]["tool_kwargs"]
    error = _refused(events)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 4, "events[4].data.tool_kwargs")


@pytest.mark.parametrize("form", FORMS)
def test_a_result_of_no_call_of_the_output_before_it_is_left_to_the_rules(form: Form) -> None:
    events = copy.deepcopy(RUN)
    events[4]["data"]["tool_id"] = "call_x"
    error = _refused(form(events))
    assert (error.code, error.index) == ("orphan_tool_result", 4)


@pytest.mark.parametrize("form", FORMS)
def test_a_result_whose_output_names_another_tool_conflicts(form: Form) -> None:
    events = copy.deepcopy(RUN)
    events[4]["data"]["tool_output"]["tool_name"] = "subtract"
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 4, "events[4].data.tool_output.tool_name")


# --- AgentStreamStructuredOutput: the structured response, as streamed -------------------


def _structured(output: Any, at: int = 8) -> list[dict[str, Any]]:
    """The golden run with an AgentStreamStructuredOutput streamed at ``at`` (after the
    final output, before its StopEvent, as FunctionAgent streams it)."""
    events = copy.deepcopy(RUN)
    events.insert(at, {"event": "AgentStreamStructuredOutput", "data": {"output": output}})
    return events


@pytest.mark.parametrize("form", FORMS)
def test_a_streamed_structured_output_is_kept_with_the_reply_before_it(form: Form) -> None:
    # As a stream logged event by event holds it: the output's own structured_response is
    # still None (FunctionAgent sets it after streaming the output).
    structured = {"sum": 5, "product": 20}
    messages = llama_index.events_to_messages(form(_structured(structured)))
    assert messages[5].metadata == {"llama_index": {"event": {"structured_response": structured}}}
    assert llama_index.strip_event_extras(messages) == llama_index.strip_event_extras(
        llama_index.events_to_messages(RUN))


@pytest.mark.parametrize("form", FORMS)
def test_a_structured_output_said_twice_is_kept_once_when_both_agree(form: Form) -> None:
    structured = {"sum": 5}
    events = _structured(structured)
    events[7]["data"]["structured_response"] = structured  # the output object, after the run
    messages = llama_index.events_to_messages(form(events))
    assert messages[5].metadata == {"llama_index": {"event": {"structured_response": structured}}}
    events[7]["data"]["structured_response"] = {"sum": 5.0}
    error = _refused(form(events))
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 8, "events[8].data.output")


def test_a_structured_output_before_any_output_is_malformed() -> None:
    error = _refused(_structured({"sum": 5}, at=1))
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "events[1].data.output")
