"""The one-step readers of the commonest AgentWorkflow events give what the general readers give.

``_events_fast`` reads AgentInput, AgentOutput, ToolCall and ToolCallResult objects of the
shape FunctionAgent makes in one step each, and hands every other event, untouched, to the
general reader (``_events._Rebuild``). Whatever a stream holds, ``events_to_messages`` must
give exactly what it gives with the general readers alone: the same typed messages (fields
set included), or the same ``TraceError`` (code, index, path and message). Each test below
takes a FunctionAgent stream, changes one event just inside or just outside a fast reader's
shape, and compares; ``taken`` says whether the fast reader read it.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llama_index.core.agent.workflow import (
    AgentInput,
    AgentOutput,
    AgentStream,
    ToolCall,
    ToolCallResult,
)
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock, ToolCallBlock
from llama_index.core.tools import ToolOutput, ToolSelection
from test_llama_index_fast import same

from tracebridge import TraceError
from tracebridge.adapters import llama_index
from tracebridge.adapters.llama_index import _events

GENERAL = {
    "AgentInput": _events._Rebuild.input_object,
    "AgentOutput": _events._Rebuild.output_object,
    "ToolCall": _events._Rebuild.call_object,
    "ToolCallResult": _events._Rebuild.result_object,
}
"""The general reader of each event type a fast reader takes."""


@contextmanager
def general_readers() -> Iterator[None]:
    """``events_to_messages`` with the general readers alone."""
    saved = dict(_events._READERS), dict(_events._OBJECT_READERS), dict(_events._KNOWN_CLASSES)
    _events._READERS.update(GENERAL)
    _events._OBJECT_READERS.clear()
    _events._KNOWN_CLASSES.clear()
    try:
        yield
    finally:
        _events._READERS.clear()
        _events._READERS.update(saved[0])
        _events._OBJECT_READERS.clear()
        _events._OBJECT_READERS.update(saved[1])
        _events._KNOWN_CLASSES.clear()
        _events._KNOWN_CLASSES.update(saved[2])


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """How many events each general reader was handed (by a fast reader, or in its place)."""
    count: Counter[str] = Counter()
    saved = {kind: getattr(_events._Rebuild, method.__name__) for kind, method in GENERAL.items()}
    for kind, method in GENERAL.items():
        def spy(self: Any, event: Any, e: int, kind: str = kind, method: Any = method) -> None:
            count[kind] += 1
            method(self, event, e)
        setattr(_events._Rebuild, method.__name__, spy)
    try:
        yield count
    finally:
        for kind, method in GENERAL.items():
            setattr(_events._Rebuild, method.__name__, saved[kind])


def outcome(events: list[Any], allow_pending: bool = False) -> Any:
    """The messages read, or the TraceError's code, index, path and text. Any other exception
    is a fault of ours and fails the test, even when both roads raise it alike."""
    try:
        return llama_index.events_to_messages(events, allow_pending=allow_pending)
    except TraceError as error:
        return ("error", error.code, error.index, error.path, str(error))


def check(events: list[Any], allow_pending: bool = False) -> Counter[str]:
    """The fast readers' outcome is the general readers' (on copies: neither may change the
    events); how many events each general reader was handed on the way."""
    with general_readers():
        expected = outcome(copy.deepcopy(events), allow_pending)
    # the event classes seen, so that every event is read as an object (the first of a
    # class is read through its JSON fields)
    assert not isinstance(outcome(run()), tuple)
    with counting() as count:
        found = outcome(events, allow_pending)
    if isinstance(expected, tuple):
        assert found == expected
    else:
        assert not isinstance(found, tuple), found
        assert same(found, expected)
    return count


# --- a FunctionAgent stream -------------------------------------------------------------

BASE = Counter({"AgentInput": 1})
"""What the general readers are handed in ``run()`` as it is: its first input (nothing read
before it)."""

ARGS = {"query": "lisbon", "limit": 5}


def user(text: str) -> ChatMessage:
    return ChatMessage(role="user", content=text)


def asking(text: str, *calls: tuple[str, str, dict[str, Any]]) -> ChatMessage:
    blocks: list[Any] = [TextBlock(text=text)]
    blocks += [ToolCallBlock(tool_call_id=i, tool_name=n, tool_kwargs=a) for i, n, a in calls]
    return ChatMessage(role="assistant", blocks=blocks)


def answer(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def result(call_id: str, text: str) -> ChatMessage:
    return ChatMessage(role="tool", content=text, additional_kwargs={"tool_call_id": call_id})


def output(response: ChatMessage, agent: str = "planner", **fields: Any) -> AgentOutput:
    calls = [ToolSelection(tool_id=b.tool_call_id, tool_name=b.tool_name,
                           tool_kwargs=b.tool_kwargs)
             for b in response.blocks if isinstance(b, ToolCallBlock)]
    return AgentOutput(response=response, tool_calls=fields.pop("tool_calls", calls), raw=None,
                       current_agent_name=agent, **fields)


def tool_result(call_id: str, text: str, args: dict[str, Any] = ARGS,
                **fields: Any) -> ToolCallResult:
    made = {"content": text, "tool_name": "search", "raw_input": {"args": [], "kwargs": args},
            "raw_output": text, **fields.pop("output", {})}
    return ToolCallResult(tool_name="search", tool_kwargs=args, tool_id=call_id,
                          tool_output=ToolOutput(**made),
                          return_direct=fields.pop("return_direct", False), **fields)


def run(prompt: list[ChatMessage] | None = None, fresh: bool = True) -> list[Any]:
    """Two turns of a FunctionAgent: a call and its result, an answer, a second question and
    its answer. ``fresh``: each input holds its own copies of the history (as a stream read
    back from its JSON does), else the same objects (as a live run's memory gives them)."""
    prompt = prompt or []
    history: list[ChatMessage] = [user("Plan my trip.")]

    def given() -> list[ChatMessage]:
        items = [*prompt, *history]
        return [m.model_copy(deep=True) for m in items] if fresh else items

    events: list[Any] = [AgentInput(input=given(), current_agent_name="planner")]
    call = asking("Looking it up.", ("c0", "search", dict(ARGS)))
    events += [output(call), ToolCall(tool_name="search", tool_kwargs=dict(ARGS), tool_id="c0"),
               tool_result("c0", "Sunny.")]
    history += [call, result("c0", "Sunny.")]
    events.append(AgentInput(input=given(), current_agent_name="planner"))
    done = answer("It will be sunny.")
    events.append(output(done))
    history += [done, user("And tomorrow?")]
    events.append(AgentInput(input=given(), current_agent_name="planner"))
    events.append(output(answer("Rain.")))
    return events


def test_a_plain_run_takes_the_fast_readers_throughout() -> None:
    for fresh in (True, False):
        assert check(run(fresh=fresh)) == BASE


def test_a_run_with_a_system_prompt_takes_the_fast_readers() -> None:
    prompt = [ChatMessage(role="system", content="Be brief.")]
    for fresh in (True, False):
        assert check(run(prompt, fresh)) == BASE


def test_the_benchmark_stream_takes_the_fast_readers() -> None:
    import sys
    from pathlib import Path

    benchmarks = str(Path(__file__).resolve().parents[1] / "benchmarks")
    sys.path.insert(0, benchmarks)
    try:
        import _inputs
        from _tracebridge_side import llama_event_objects
    finally:
        sys.path.remove(benchmarks)
    assert check(llama_event_objects(_inputs.llama_events(40))) == BASE


# --- each reader, just inside and just outside its shape ----------------------------------

Change = Callable[[list[Any]], None]
"""A change to the events of ``run()`` (in place)."""

# the events of run(): 0 input, 1 output with a call, 2 ToolCall, 3 ToolCallResult,
# 4 input (after the result), 5 output (answer), 6 input (the next question), 7 output


def _set(at: int, field: str, value: Any) -> Change:
    def change(events: list[Any]) -> None:
        setattr(events[at], field, value)
    return change


def _response(at: int, response: ChatMessage, **fields: Any) -> Change:
    def change(events: list[Any]) -> None:
        events[at] = output(response, **fields)
    return change


def _item(at: int, j: int, item: Any) -> Change:
    def change(events: list[Any]) -> None:
        events[at].input[j] = item
    return change


def _output_field(field: str, value: Any) -> Change:
    def change(events: list[Any]) -> None:
        setattr(events[3].tool_output, field, value)
    return change


def _removed(at: int, field: str, inner: str | None = None) -> Change:
    def change(events: list[Any]) -> None:
        holder = events[at] if inner is None else getattr(events[at], inner)
        del holder.__dict__[field]
    return change


def _stream_before(at: int) -> Change:
    def change(events: list[Any]) -> None:
        events.insert(at, AgentStream(delta="x", response="x", current_agent_name="planner",
                                      raw=None))
    return change


def _said_again_plainly(extra: dict[str, Any]) -> Change:
    """The question of the second turn read with ``extra`` as its ``additional_kwargs``, and
    then given to the model again without them (another input right after it)."""
    def change(events: list[Any]) -> None:
        again = AgentInput(input=[m.model_copy(deep=True) for m in events[6].input],
                           current_agent_name="planner")
        events[6].input[-1] = ChatMessage(role="user", content="And tomorrow?",
                                          additional_kwargs=extra)
        events.insert(7, again)
    return change


def _call_dropped_after_output(events: list[Any]) -> None:
    """An input right after the output with a call, holding that reply without its call."""
    events.insert(2, AgentInput(input=[user("Plan my trip."), answer("Looking it up.")],
                                current_agent_name="planner"))


def _two(at: int, first: Change, second: Change) -> Change:
    def change(events: list[Any]) -> None:
        first(events)
        second(events)
    del at
    return change


TWO_CALLS = asking("Two.", ("c0", "search", dict(ARGS)), ("c1", "search", {"query": "porto"}))

INSIDE: dict[str, tuple[Change, str]] = {
    # (change, the reader that must still be fast)
    "output without calls or selections": (_response(5, answer("Sunny, yes.")), "AgentOutput"),
    "output with a call but no selections": (
        _response(1, asking("Looking.", ("c0", "search", dict(ARGS))), tool_calls=[]),
        "AgentOutput"),
    "selections fewer than the calls": (
        _two(1, _response(1, TWO_CALLS, tool_calls=[ToolSelection(
            tool_id="c0", tool_name="search", tool_kwargs=dict(ARGS))]),
            lambda events: events.insert(4, tool_result("c1", "Rainy.", {"query": "porto"}))),
        "AgentOutput"),
    "an output with no tool_calls at all": (_set(5, "tool_calls", None), "AgentOutput"),
    "a response of two text blocks": (
        _response(5, ChatMessage(role="assistant",
                                 blocks=[TextBlock(text="a"), TextBlock(text="b")])),
        "AgentOutput"),
    "a response of a call alone": (
        _response(1, ChatMessage(role="assistant", blocks=[ToolCallBlock(
            tool_call_id="c0", tool_name="search", tool_kwargs=dict(ARGS))])), "AgentOutput"),
    "a result that returned directly": (
        lambda events: setattr(events[3], "return_direct", True), "ToolCallResult"),
    "a result that failed": (_output_field("is_error", True), "ToolCallResult"),
    "a result with no raw values": (
        _two(3, _output_field("raw_input", None), _output_field("raw_output", None)),
        "ToolCallResult"),
    "a result with its arguments as raw input": (_output_field("raw_input", dict(ARGS)),
                                                 "ToolCallResult"),
    "a result of no call of the output (refused by the rules)": (_set(3, "tool_id", "c9"),
                                                                 "ToolCallResult"),
    "a new user message of any text": (_item(6, 4, user("And the day after?")), "AgentInput"),
    "a result named in the input beside its call id": (
        _item(4, 2, ChatMessage(role="tool", content="Sunny.",
                                additional_kwargs={"tool_call_id": "c0", "name": "search"})),
        "AgentInput"),
}

OUTSIDE: dict[str, tuple[Change, str]] = {
    # (change, the general reader it must reach)
    "a structured response": (_set(5, "structured_response", {"a": 1}), "AgentOutput"),
    "a response with a name": (
        _response(5, ChatMessage(role="assistant", content="Sunny.",
                                 additional_kwargs={"name": "x"})), "AgentOutput"),
    "a response of another role": (
        _response(5, ChatMessage(role="model", content="Sunny.")), "AgentOutput"),
    "a response with text after its call": (
        _response(1, ChatMessage(role="assistant", blocks=[ToolCallBlock(
            tool_call_id="c0", tool_name="search", tool_kwargs=dict(ARGS)),
            TextBlock(text="Looking.")])), "AgentOutput"),
    "a response with an image": (
        _response(5, ChatMessage(role="assistant", blocks=[
            TextBlock(text="Here."), ImageBlock(url="https://example.com/a.png")])),
        "AgentOutput"),
    "a call without arguments": (
        _response(1, asking("Looking.", ("c0", "search", {}))), "AgentOutput"),
    "a call with a NaN": (
        _response(1, asking("Looking.", ("c0", "search", {"x": math.nan}))), "AgentOutput"),
    "a call whose text did not parse": (
        _response(1, asking("Looking.", ("c0", "search", '{"query": "lis'))), "AgentOutput"),
    "a selection with other arguments": (
        _response(1, asking("Looking.", ("c0", "search", dict(ARGS))), tool_calls=[
            ToolSelection(tool_id="c0", tool_name="search",
                          tool_kwargs={"query": "lisbon", "limit": 5.0})]), "AgentOutput"),
    "a selection of another name": (
        _response(1, asking("Looking.", ("c0", "search", dict(ARGS))), tool_calls=[
            ToolSelection(tool_id="c0", tool_name="find", tool_kwargs=dict(ARGS))]),
        "AgentOutput"),
    "a selection as a dict": (
        _set(1, "tool_calls", [{"tool_id": "c0", "tool_name": "search",
                                "tool_kwargs": dict(ARGS)}]), "AgentOutput"),
    "more selections than calls": (
        _response(1, asking("Looking.", ("c0", "search", dict(ARGS))), tool_calls=[
            ToolSelection(tool_id="c0", tool_name="search", tool_kwargs=dict(ARGS)),
            ToolSelection(tool_id="c9", tool_name="search", tool_kwargs=dict(ARGS))]),
        "AgentOutput"),
    "an output of another agent": (_response(5, answer("Sunny."), agent="other"),
                                   "AgentOutput"),
    "an output without its tool_calls field": (_removed(5, "tool_calls"), "AgentOutput"),
    "a ToolCall with other arguments": (_set(2, "tool_kwargs", {"query": "lisbon", "limit": 5.0}),
                                        "ToolCall"),
    "a ToolCall of another name": (_set(2, "tool_name", "find"), "ToolCall"),
    "a ToolCall of no call": (_set(2, "tool_id", "c9"), "ToolCall"),
    "a result with other arguments": (_set(3, "tool_kwargs", {"query": "lisbon", "limit": True}),
                                      "ToolCallResult"),
    "a result whose output names another tool": (_output_field("tool_name", "find"),
                                                 "ToolCallResult"),
    "a result that returned a number": (_output_field("raw_output", 5), "ToolCallResult"),
    "a result whose raw output is not its text": (_output_field("raw_output", "Cloudy."),
                                                  "ToolCallResult"),
    "a result whose raw input says more": (
        _output_field("raw_input", {"args": [], "kwargs": {**ARGS, "units": "c"}}),
        "ToolCallResult"),
    "a result of two text blocks": (
        _output_field("blocks", [TextBlock(text="Sun"), TextBlock(text="ny.")]),
        "ToolCallResult"),
    "a result of no blocks": (_output_field("blocks", []), "ToolCallResult"),
    "a result without its raw input": (_removed(3, "raw_input", "tool_output"),
                                       "ToolCallResult"),
    "an input whose last item says another text": (_item(4, 2, result("c0", "Cloudy.")),
                                                   "AgentInput"),
    "an input whose answer item says another text": (_item(6, 3, answer("Cloudy.")),
                                                     "AgentInput"),
    "an input where a user message is named": (
        _item(6, 3, ChatMessage(role="assistant", content="It will be sunny.",
                                additional_kwargs={"name": "planner"})), "AgentInput"),
    "an input whose tool item holds more": (
        _item(4, 2, ChatMessage(role="tool", content="Sunny.",
                                additional_kwargs={"tool_call_id": "c0", "x": "y"})),
        "AgentInput"),
    "an input whose tool item names another call": (_item(4, 2, result("c9", "Sunny.")),
                                                    "AgentInput"),
    "an input that stops short": (lambda events: events[4].input.pop(), "AgentInput"),
    "an input of a memory that dropped the oldest": (
        lambda events: events[6].input.pop(0), "AgentInput"),
    "an input with a new system prompt": (
        _item(6, 0, ChatMessage(role="system", content="Be brief.")), "AgentInput"),
    "an input after a streamed reply": (_stream_before(4), "AgentInput"),
    "an input that drops a reply's call": (_call_dropped_after_output, "AgentInput"),
    "an input that drops a user message's name": (_said_again_plainly({"name": "bob"}),
                                                  "AgentInput"),
    "an input that drops what a user message kept": (_said_again_plainly({"mood": "curious"}),
                                                     "AgentInput"),
    "an input of another agent": (_set(6, "current_agent_name", "other"), "AgentOutput"),
}


@pytest.mark.parametrize("name", list(INSIDE))
def test_just_inside_the_fast_readers_reads_as_the_general_readers(name: str) -> None:
    change, kind = INSIDE[name]
    for fresh in (True, False):
        events = run(fresh=fresh)
        change(events)
        count = check(events, allow_pending=True)
        assert count[kind] == BASE[kind], count


@pytest.mark.parametrize("name", list(OUTSIDE))
def test_just_outside_the_fast_readers_the_general_readers_read(name: str) -> None:
    change, kind = OUTSIDE[name]
    for fresh in (True, False):
        events = run(fresh=fresh)
        change(events)
        count = check(events, allow_pending=True)
        assert count[kind] > BASE[kind], count


def test_a_changed_prompt_is_read_by_the_general_reader() -> None:
    prompt = [ChatMessage(role="system", content="Be brief.")]
    events = run(prompt)
    events[6].input[0] = ChatMessage(role="system", content="Be thorough.")  # a handoff
    assert check(events)["AgentInput"] == 2
    events = run(prompt)
    events[6].input.pop(0)  # to an agent without a prompt
    assert check(events)["AgentInput"] == 2


def test_a_prompt_said_in_another_shape_is_read_by_the_general_reader() -> None:
    prompt = [ChatMessage(role="system", content="Be brief.", additional_kwargs={"k": "v"})]
    events = run(prompt)
    assert check(events)["AgentInput"] == 3  # (the dumps are compared)


def test_a_tail_after_a_dropped_head_is_read_fast_again() -> None:
    events = run()
    events[4].input.pop(0)  # memory dropped the first message
    events[6].input.pop(0)
    assert check(events)["AgentInput"] == 2  # the first, and the one that found the tail


# --- generated: any of the changes, at any place, in any number ---------------------------

CHANGES = [change for change, _ in [*INSIDE.values(), *OUTSIDE.values()]]


@given(st.lists(st.sampled_from(range(len(CHANGES))), max_size=4), st.booleans(),
       st.booleans())
def test_the_fast_readers_agree_on_changed_runs(picked: list[int], fresh: bool,
                                                prompted: bool) -> None:
    prompt = [ChatMessage(role="system", content="Be brief.")] if prompted else None
    events = run(prompt, fresh)
    for k in picked:
        # (an earlier change may have moved or removed what this one changes)
        with contextlib.suppress(IndexError, AttributeError, KeyError):
            CHANGES[k](events)
    check(events, allow_pending=True)


# --- the results of parallel calls, given in another order than streamed ------------------


def parallel_run(given_order: list[int], fresh: bool = True) -> list[Any]:
    """One reply calling ``search`` as many times as ``given_order`` is long, its results
    streamed c0 c1 ... and given to the model in ``given_order`` (as FunctionAgent gives them
    in the order it gathered them), then an answer."""
    history: list[ChatMessage] = [user("Plan my trip.")]
    events: list[Any] = [AgentInput(input=[*history], current_agent_name="planner")]
    calls = [(f"c{k}", "search", {**ARGS, "limit": k}) for k in range(len(given_order))]
    reply = asking("Looking it up.", *calls)
    events += [output(reply)]
    for call_id, _, args in calls:
        events += [ToolCall(tool_name="search", tool_kwargs=args, tool_id=call_id),
                   tool_result(call_id, f"Sunny {call_id}.", args)]
    history += [reply, *(result(f"c{k}", f"Sunny c{k}.") for k in given_order)]
    items = [m.model_copy(deep=True) for m in history] if fresh else history
    events += [AgentInput(input=items, current_agent_name="planner"),
               output(answer("It will be sunny."))]
    return events


@pytest.mark.parametrize("given_order", [[0, 1, 2], [0, 2, 1], [1, 0, 2], [2, 1, 0]])
def test_results_given_in_another_order_read_alike_on_both_roads(given_order: list[int]) -> None:
    for fresh in (True, False):
        events = parallel_run(given_order, fresh)
        count = check(events)
        # the input after the results is read fast when it gives them in the order read
        assert count["AgentInput"] == (1 if given_order == [0, 1, 2] else 2), count
        read = llama_index.events_to_messages(events)
        assert [m.tool_call_id for m in read if m.type == "tool"] == [
            f"c{k}" for k in given_order]
