"""LlamaIndex event streams: an event of a type that is read, holding a field its type does
not declare (an extra it was made with, which LlamaIndex keeps in ``_data`` and its dump
writes under ``"_data"``), is ``malformed_event`` there. AgentWorkflow makes none, and no
message has a place for one; it used to be dropped without a word."""

from __future__ import annotations

import copy

import pytest
from test_llama_index_event_calls import FORMS, RUN, Form

from tracebridge import TraceError
from tracebridge.adapters import llama_index

READ = {0: "AgentInput", 1: "AgentOutput", 2: "ToolCall", 4: "ToolCallResult", 8: "StopEvent"}


def test_the_golden_run_has_the_read_types_where_this_test_says() -> None:
    assert {e: RUN[e]["event"] for e in READ} == READ
    assert all("_data" not in event["data"] for event in RUN)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("e", sorted(READ))
def test_an_extra_on_a_read_event_is_malformed(form: Form, e: int) -> None:
    events = copy.deepcopy(RUN)
    events[e]["data"]["_data"] = {"note": "added"}
    given = form(events)
    if e == 8 and isinstance(given[e], dict) and "qualified_name" in given[e]:
        # StopEvent's own serializer writes its result alone: the extra never reaches us
        assert "note" not in str(given[e])
        assert llama_index.events_to_messages(given) == llama_index.events_to_messages(RUN)
        return
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(given)
    error = caught.value
    assert (error.code, error.index, error.path, error.source) == (
        "malformed_event", e, f"events[{e}].data._data.note", "llama_index"
    )


@pytest.mark.parametrize("e", sorted(READ))
def test_a_key_of_no_field_in_an_events_json_is_malformed(e: int) -> None:
    events = copy.deepcopy(RUN)
    events[e]["data"]["note"] = "added"
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", e, f"events[{e}].data.note"
    )


@pytest.mark.parametrize("form", FORMS)
def test_no_extras_or_an_empty_data_read_as_before(form: Form) -> None:
    events = copy.deepcopy(RUN)
    for event in events:
        event["data"]["_data"] = {}
    expected = llama_index.events_to_messages(RUN)
    assert llama_index.events_to_messages(form(events)) == expected
