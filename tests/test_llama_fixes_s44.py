"""The results of one reply's parallel calls, given to the model in another order than streamed.

``FunctionAgent`` runs a reply's calls as concurrent steps: each writes its ``ToolCallResult``
to the stream, and the step that gathers them gives them to the model (the next
``AgentInput``) and to memory in the order it gathered them. With three or more calls to
plain sync tools that order often differs from the stream's. The two runs in
``data/llama_parallel_results.json`` are real ``FunctionAgent`` runs (four sync tools called
in one reply) dumped with ``dump_events``, each with the orders apart:

* ``four_sync_calls``: streamed c1 c2 c3 c4, given to the model (and memory) c1 c3 c4 c2;
* ``four_sync_calls_last_returns_directly_then_a_second_run``: ``t4`` returns directly,
  streamed c1 c2 c3 c4, gathered (the StopEvent's ``tool_calls``, memory, the next run's
  input) c1 c3 c2 c4.

The results are read in the order the model was given them, so the stream reads as memory
does; anything else an input says differently is refused as before.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.agent.workflow import (
    AgentInput,
    AgentOutput,
    AgentStream,
    ToolCall,
    ToolCallResult,
)
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.workflow import StopEvent
from test_llama_events_speed_paths import check

from tracebridge import AIMessage, HumanMessage, SystemMessage, ToolMessage, TraceError
from tracebridge import ToolCall as Call
from tracebridge.adapters import llama_index

RUNS = json.loads((Path(__file__).parent / "data" / "llama_parallel_results.json").read_text(
    encoding="utf-8"))
REORDERED = RUNS["four_sync_calls"]
DIRECT = RUNS["four_sync_calls_last_returns_directly_then_a_second_run"]

_CLASSES = {"AgentInput": AgentInput, "AgentOutput": AgentOutput, "AgentStream": AgentStream,
            "ToolCall": ToolCall, "ToolCallResult": ToolCallResult}


def as_objects(events: list[dict[str, Any]]) -> list[Any]:
    """The events as the objects a live run streams (a StopEvent's result an AgentOutput
    whose ``tool_calls`` are the ToolCallResults of the run, as FunctionAgent appends them)."""
    results = {event["data"]["tool_id"]: event["data"] for event in events
               if event["event"] == "ToolCallResult"}
    made = []
    for event in events:
        data = copy.deepcopy(event["data"])
        if event["event"] == "StopEvent":
            output = AgentOutput.model_validate({**data["result"], "tool_calls": []})
            output.tool_calls.extend(ToolCallResult.model_validate(results[entry["tool_id"]])
                                     for entry in data["result"]["tool_calls"])
            made.append(StopEvent(result=output))
        else:
            made.append(_CLASSES[event["event"]].model_validate(data))
    return made


def tool_ids(messages: list[Any]) -> list[str | None]:
    return [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]


def given_ids(event: dict[str, Any]) -> list[str]:
    """The call ids of the results an AgentInput's JSON gives, in its order."""
    return [item["additional_kwargs"]["tool_call_id"] for item in event["data"]["input"]
            if item["role"] == "tool"]


def memory_view(items: list[dict[str, Any]], *replies: str) -> list[Any]:
    """``to_messages`` of what memory holds at the end: an input's history (after its system
    prompt), then the replies saved after it."""
    held = [ChatMessage.model_validate(item) for item in items[1:]]
    return llama_index.to_messages([*held, *(ChatMessage(role="assistant", content=text)
                                             for text in replies)])


CALLS = [Call(name=f"t{i}", args={"x": "q"}, id=f"c{i}") for i in (1, 2, 3, 4)]


def result(i: int, direct: bool = False) -> ToolMessage:
    return ToolMessage(content=f"r{i}", tool_call_id=f"c{i}", name=f"t{i}",
                       metadata={"llama_index": {"event": {"return_direct": True}}}
                       if direct else {})


def test_a_real_run_whose_next_input_gives_the_results_in_another_order_reads_in_that_order(
) -> None:
    assert given_ids(REORDERED[11]) == ["c1", "c3", "c4", "c2"]  # streamed c1 c2 c3 c4
    read = llama_index.events_to_messages(REORDERED)
    assert read == [
        SystemMessage(content="sys"),
        HumanMessage(content="go"),
        AIMessage(content=[], tool_calls=CALLS, name="Agent"),
        result(1), result(3), result(4), result(2),
        AIMessage(content="ok", name="Agent"),
    ]
    # the same run, seen two ways
    memory = memory_view(REORDERED[11]["data"]["input"], "ok")
    assert llama_index.strip_event_extras(read) == memory


def test_the_same_run_read_from_its_objects_reads_alike_on_both_roads() -> None:
    events = as_objects(REORDERED)
    check(events)  # the fast readers give what the general readers give
    read = llama_index.events_to_messages(events)
    assert read == llama_index.events_to_messages(REORDERED)
    assert tool_ids(read) == ["c1", "c3", "c4", "c2"]


def test_a_run_a_tool_ended_reads_its_results_in_the_order_the_next_run_was_given() -> None:
    # the StopEvent repeats the results in the order gathered; the next run's input too
    assert [entry["tool_id"] for entry in DIRECT[11]["data"]["result"]["tool_calls"]] == [
        "c1", "c3", "c2", "c4"]
    assert given_ids(DIRECT[12]) == ["c1", "c3", "c2", "c4"]
    for events in (DIRECT, as_objects(DIRECT)):
        read = llama_index.events_to_messages(events)
        assert read == [
            SystemMessage(content="sys"),
            HumanMessage(content="go"),
            AIMessage(content=[], tool_calls=CALLS, name="Agent"),
            result(1), result(3), result(2), result(4, direct=True),
            AIMessage(content="r4", metadata={"llama_index": {"additional_kwargs": {
                "tool_call_id": "c4"}}}),
            HumanMessage(content="thanks"),
            AIMessage(content="bye", name="Agent"),
        ]
    check(as_objects(DIRECT))


def test_the_stop_events_repeated_results_are_compared_with_the_results_they_repeat() -> None:
    # the StopEvent's tool_calls as a live run's object holds them: whole results, each
    # compared with the one read with its id, wherever the input put it
    events = copy.deepcopy(DIRECT)
    results = {e["data"]["tool_id"]: e["data"] for e in events if e["event"] == "ToolCallResult"}
    stop = events[11]["data"]["result"]
    stop["tool_calls"] = [copy.deepcopy(results[entry["tool_id"]]) for entry in stop["tool_calls"]]
    assert tool_ids(llama_index.events_to_messages(events)) == ["c1", "c3", "c2", "c4"]
    stop["tool_calls"][1]["tool_output"]["blocks"][0]["text"] = "r3!"
    stop["tool_calls"][1]["tool_output"]["raw_output"] = "r3!"
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "conflicting_fields", 11, "events[11].data.result.tool_calls[1]")
    assert "the result of call 'c3' repeated here is not the one read at events[8]" in str(
        caught.value)


def _swapped_earlier(events: list[dict[str, Any]]) -> None:
    """The input gives c1 c3 c2 c4: the last result where it was streamed, two before it
    swapped."""
    items = events[11]["data"]["input"]
    items[3:7] = [items[3], items[4], items[6], items[5]]
    assert given_ids(events[11]) == ["c1", "c3", "c2", "c4"]


def test_results_swapped_before_the_last_one_streamed_are_read_in_the_inputs_order() -> None:
    events = copy.deepcopy(REORDERED)
    _swapped_earlier(events)
    for road in (events, as_objects(events)):
        read = llama_index.events_to_messages(road)
        assert tool_ids(read) == ["c1", "c3", "c2", "c4"]
        assert llama_index.strip_event_extras(read) == memory_view(
            events[11]["data"]["input"], "ok")
    assert check(as_objects(events))["AgentInput"] == 2  # the first, and the reordered one


def test_a_stream_that_ends_after_the_results_keeps_the_order_they_were_streamed() -> None:
    for road in (REORDERED[:11], as_objects(REORDERED[:11])):
        assert tool_ids(llama_index.events_to_messages(road)) == ["c1", "c2", "c3", "c4"]


def test_results_put_in_the_inputs_order_are_still_placed_at_their_own_events() -> None:
    # c3 answered again after the input that put the results in its order: refused at the
    # repeat, naming the event c3 was first read from
    events = copy.deepcopy(REORDERED)
    events.insert(12, copy.deepcopy(REORDERED[8]))
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "orphan_tool_result", 12, "events[12].data.tool_id")
    assert str(caught.value) == ("llama_index: events[12].data.tool_id: tool_call_id 'c3' was "
                                 "already answered at events[8].data [orphan_tool_result]")


def _set_text(j: int, text: str) -> Any:
    def change(items: list[dict[str, Any]]) -> None:
        items[j]["blocks"][0]["text"] = text
    return change


def _set_id(j: int, tool_id: str) -> Any:
    def change(items: list[dict[str, Any]]) -> None:
        items[j]["additional_kwargs"]["tool_call_id"] = tool_id
    return change


def _drop(j: int) -> Any:
    def change(items: list[dict[str, Any]]) -> None:
        del items[j]
    return change


def _add_copy(j: int) -> Any:
    def change(items: list[dict[str, Any]]) -> None:
        items.insert(j, copy.deepcopy(items[j]))
    return change


def _reply_text(text: str) -> Any:
    def change(items: list[dict[str, Any]]) -> None:
        items[2]["blocks"].insert(0, {"block_type": "text", "text": text})
    return change


_DEPARTS = "this input does not go on from what was read before it"
_R3_FOR_R2 = (f"the model was given a tool message 'r3' here, where the conversation read has "
              f"a tool message 'r2' (events[7]): {_DEPARTS}")
_AT_4 = ("conflicting_fields", "events[11].data.input[4]")

# the input of REORDERED[11]: 0 system, 1 user, 2 reply, 3 c1, 4 c3, 5 c4, 6 c2; each is
# refused as it was before results could come in another order than streamed
REFUSED: dict[str, tuple[Any, str, str, str]] = {
    "a result changed": (_set_text(4, "r3!"), *_AT_4, _R3_FOR_R2.replace("'r3'", "'r3!'")),
    "the last result changed": (_set_text(6, "r2!"), *_AT_4, _R3_FOR_R2),
    "a result missing": (_drop(5), *_AT_4, _R3_FOR_R2),
    "a result of another call": (_set_id(4, "c9"), *_AT_4, _R3_FOR_R2),
    "a result added": (_add_copy(5), "orphan_tool_result",
                       "events[11].data.input[7].tool_call_id",
                       "tool_call_id 'c2' was already answered at events[7].data"),
    "another reply before them": (_reply_text("hm"), "conflicting_fields",
                                  "events[11].data.input[2]",
                                  f"the model was given an assistant message 'hm' here, where "
                                  f"the conversation read has an assistant message '' "
                                  f"(events[2]): {_DEPARTS}"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_an_input_that_gives_other_results_than_those_read_is_refused(name: str) -> None:
    change, code, path, said = REFUSED[name]
    events = copy.deepcopy(REORDERED)
    change(events[11]["data"]["input"])
    for road in (events, as_objects(events)):
        with pytest.raises(TraceError) as caught:
            llama_index.events_to_messages(road)
        assert (caught.value.code, caught.value.index, caught.value.path) == (code, 11, path)
        assert str(caught.value) == f"llama_index: {path}: {said} [{code}]"
    check(as_objects(events))


# Review: the items of the results are read only when their call ids are the block's in
# another order; a broken item inside the repeated history is otherwise not looked at, as
# before (docs/adapters/llama_index.md: "a broken or changed item inside the repeated history,
# before the last message read, is not seen").


@pytest.mark.parametrize("broken", [{"role": "nonsense", "blocks": []}, ["not", "a", "dict"]])
def test_a_broken_item_among_results_in_stream_order_is_not_read(broken: Any) -> None:
    from test_llama_events_speed_paths import parallel_run

    from tracebridge.adapters.llama_index._events import dump_events

    events = json.loads(json.dumps(dump_events(parallel_run([0, 1, 2]))))
    items = events[8]["data"]["input"]
    assert [item.get("additional_kwargs", {}).get("tool_call_id") for item in items[2:]] == [
        "c0", "c1", "c2"]
    whole = llama_index.events_to_messages(copy.deepcopy(events))
    items[3] = broken
    read = llama_index.events_to_messages(events)
    assert read == whole
    assert [getattr(m, "tool_call_id", None) or m.type for m in read] == [
        "human", "ai", "c0", "c1", "c2", "ai"]


# Mutation audit: a block of exactly two results given in another order (every reorder test
# above has three or more calls).


def two_call_run(given_order: list[int], fresh: bool) -> list[Any]:
    """``parallel_run`` of test_llama_events_speed_paths with two calls, not three."""
    from test_llama_events_speed_paths import parallel_run

    return parallel_run(given_order, fresh)


@pytest.mark.parametrize("fresh", [True, False])
def test_two_results_given_in_another_order_read_in_that_order(fresh: bool) -> None:
    straight = llama_index.events_to_messages(two_call_run([0, 1], fresh))
    assert [getattr(m, "tool_call_id", None) or m.type for m in straight] == [
        "human", "ai", "c0", "c1", "ai"]
    events = two_call_run([1, 0], fresh)
    count = check(events)
    assert count["AgentInput"] == 2, count
    read = llama_index.events_to_messages(events)
    assert read == [straight[0], straight[1], straight[3], straight[2], straight[4]]
    assert [(m.tool_call_id, m.content) for m in read if m.type == "tool"] == [
        ("c1", "Sunny c1."), ("c0", "Sunny c0.")]
