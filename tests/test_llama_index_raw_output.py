"""LlamaIndex event streams: a ToolCallResult's output records the tool's own input and return
value (``raw_input``, ``raw_output``) beside the blocks the model was shown. What they say
beyond the result (a number or an object the tool returned, the defaults it was called with)
is kept under ``metadata["llama_index"]["event"]``, as LlamaIndex's JSON writes it; it used to
be dropped without a word. A value with no JSON form is refused where it is."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from llama_index.core.agent import workflow
from llama_index.core.base.llms.types import TextBlock
from llama_index.core.tools import FunctionTool, ToolOutput
from pydantic import BaseModel
from test_llama_index_event_calls import FORMS, RUN, Form, _objects

from tracebridge import ToolMessage, TraceError
from tracebridge.adapters import llama_index

RESULT = 4  # the golden run's ToolCallResult of add(a=2, b=3)
"""The event replaced by each case; the message it makes is the fourth of the run."""


class Sum(BaseModel):
    value: int


def _output(returns: Any, **defaults: Any) -> ToolOutput:
    """The output of a real FunctionTool named ``add`` called with ``a=2, b=3``."""

    def add(a: int, b: int, **_: Any) -> Any:
        return returns

    tool = FunctionTool.from_defaults(fn=add, name="add", partial_params=defaults or None)
    return tool.call(a=2, b=3)


def _events(output: ToolOutput) -> list[dict[str, Any]]:
    events = copy.deepcopy(RUN)
    assert events[RESULT]["event"] == "ToolCallResult"
    assert events[RESULT]["data"]["tool_kwargs"] == {"a": 2, "b": 3}
    events[RESULT]["data"]["tool_output"] = output.model_dump(mode="json")
    return events


def _result_event(output: ToolOutput) -> Any:
    return workflow.ToolCallResult(tool_name="add", tool_kwargs={"a": 2, "b": 3},
                                   tool_id="call_add_1", tool_output=output,
                                   return_direct=False)


def _result(messages: list[Any]) -> ToolMessage:
    message = messages[3]
    assert isinstance(message, ToolMessage)
    assert message.tool_call_id == "call_add_1"
    return message


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    ("returns", "content", "kept"),
    [
        (5, "5", {"raw_output": 5}),
        ("5", "5", None),  # the text the model was shown: nothing more
        ({"sum": 5}, "{'sum': 5}", {"raw_output": {"sum": 5}}),
        ([5, "five"], "[5, 'five']", {"raw_output": [5, "five"]}),
        (Sum(value=5), "value=5", {"raw_output": {"value": 5}}),
        (TextBlock(text="5"), "5", None),  # the block itself: nothing more
        (None, "None", None),  # no value
    ],
    ids=["int", "text", "dict", "list", "model", "block", "none"],
)
def test_what_a_tool_returned_beyond_its_text_is_kept(
    form: Form, returns: Any, content: str, kept: dict[str, Any] | None
) -> None:
    output = _output(returns)
    assert output.content == content
    message = _result(llama_index.events_to_messages(form(_events(output))))
    assert message.content == content
    assert message.metadata == ({"llama_index": {"event": kept}} if kept else {})


def test_an_object_stream_keeps_the_value_as_its_dump_writes_it() -> None:
    output = _output(Sum(value=5))
    objects = _objects(RUN)
    objects[RESULT] = _result_event(output)
    read = llama_index.events_to_messages(objects)
    assert _result(read).metadata == {"llama_index": {"event": {"raw_output": {"value": 5}}}}
    assert llama_index.events_to_messages(llama_index.dump_events(objects)) == read


@pytest.mark.parametrize("form", FORMS)
def test_an_input_with_more_than_the_calls_arguments_is_kept(form: Form) -> None:
    output = _output("5", c=0)  # a partial parameter the model never chose
    message = _result(llama_index.events_to_messages(form(_events(output))))
    assert message.metadata == {"llama_index": {"event": {
        "raw_input": {"args": [], "kwargs": {"c": 0, "a": 2, "b": 3}}}}}


@pytest.mark.parametrize("form", FORMS)
def test_a_failed_calls_input_is_its_arguments(form: Form) -> None:
    # what AgentWorkflow records when the tool raised: the arguments themselves
    output = ToolOutput(content="boom", tool_name="add", raw_input={"a": 2, "b": 3},
                        raw_output="boom", is_error=True)
    message = _result(llama_index.events_to_messages(form(_events(output))))
    assert (message.content, message.is_error, message.metadata) == ("boom", True, {})


def test_a_value_with_no_json_form_is_refused_where_it_is() -> None:
    output = _output(object())
    objects = _objects(RUN)
    objects[RESULT] = _result_event(output)
    for read in (llama_index.events_to_messages, llama_index.dump_events):
        with pytest.raises(TraceError) as caught:
            read(objects)
        error = caught.value
        assert (error.code, error.index, error.path, error.source) == (
            "unserializable_value", RESULT, f"events[{RESULT}].data.tool_output.raw_output",
            "llama_index")


def test_a_dict_events_value_that_is_not_json_is_refused() -> None:
    events = _events(_output("5"))
    events[RESULT]["data"]["tool_output"]["raw_output"] = {5, 6}
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unserializable_value", RESULT, f"events[{RESULT}].data.tool_output.raw_output")


def test_a_key_of_no_field_in_an_outputs_json_is_malformed() -> None:
    events = _events(_output("5"))
    events[RESULT]["data"]["tool_output"]["note"] = "added"
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", RESULT, f"events[{RESULT}].data.tool_output.note")


def test_the_kept_values_are_what_only_the_events_know() -> None:
    read = llama_index.events_to_messages(_events(_output(5)))
    plain = llama_index.events_to_messages(_events(_output("5")))
    assert read != plain
    assert llama_index.strip_event_extras(read) == llama_index.strip_event_extras(plain)
