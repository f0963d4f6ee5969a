"""LlamaIndex runs of calls without an id: many results out of call order, a history whose
result without an id comes before the result of a call with one, and ``tool_call_id=""``.

Every run here is a real ``FunctionAgent`` of llama-index-core, its model scripted
(``MockFunctionCallingLLM``). ``AllAtOnce`` runs every call of a reply at once (FunctionAgent
runs four at a time), and ``chained`` tools finish in reverse call order.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.agent.workflow.workflow_events import ToolCall as ToolCallEvent
from llama_index.core.agent.workflow.workflow_events import ToolCallResult
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.workflow import Context, step
from test_llama_index_events_audit import read
from test_llama_index_fixes2_s47 import add, block, finished, result_of, slow_add
from test_llama_index_fixes_s47 import EVENT, IDLESS, calls, run, say, scripted

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import llama_index
from tracebridge.adapters.llama_index import _idless

EMPTY = {EVENT: {"tool_call_id": ""}}
"""What a call whose ToolCallBlock says ``tool_call_id=""`` keeps: LlamaIndex's no id."""


class AllAtOnce(FunctionAgent):
    """A FunctionAgent running every call of a reply at once."""

    @step(num_workers=1_000)
    async def call_tool(self, ctx: Context, ev: ToolCallEvent) -> ToolCallResult:
        return await FunctionAgent.call_tool(self, ctx, ev)


def chained(count: int) -> Any:
    """``add``, each call of it finishing after the call after it (``a`` says which)."""
    done: dict[int, asyncio.Event] = {}

    async def add(a: int, b: int) -> int:
        """Add."""
        mine = done.setdefault(a, asyncio.Event())
        if a + 1 < count:
            await done.setdefault(a + 1, asyncio.Event()).wait()
            await asyncio.sleep(0.002)
        mine.set()
        return a + b

    return add


def reverse_run(count: int, *, unparsed: frozenset[int] = frozenset()) -> list[Any]:
    """The events of a run of ``count`` calls of ``add`` without an id, ``add(k, 1)`` (its text
    ``{"a": k, "b": 1`` for ``k`` in ``unparsed``), finishing in reverse order."""
    blocks = [ToolCallBlock(tool_name="add", tool_kwargs=f'{{"a": {k}, "b": 1'
                            if k in unparsed else {"a": k, "b": 1}) for k in range(count)]
    script = [calls(*blocks), say("done")]
    events, _ = run(script, ["q"], AllAtOnce(tools=[chained(count)], llm=scripted(script)))
    assert [event.tool_kwargs["a"] for event in events
            if type(event).__name__ == "ToolCallResult"] == list(range(count))[::-1]
    return events


def test_results_in_reverse_call_order_ask_each_call_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # each result is compared with the call it answers only (before: with every call not
    # answered yet before it, count * (count + 1) / 2 comparisons)
    count = 60
    events = reverse_run(count)
    asked: list[int] = []
    answer = _idless.IdlessCalls.answer

    def counted(self: Any, *args: Any) -> Any:
        *said, agrees = args

        def agrees_counted(call: ToolCall) -> bool:
            asked.append(call.args["a"])
            return bool(agrees(call))

        return answer(self, *said, agrees_counted)

    monkeypatch.setattr(_idless.IdlessCalls, "answer", counted)
    messages = llama_index.events_to_messages(events)
    assert asked == list(range(count))[::-1]
    assert [message.content for message in messages[2:2 + count]] == [
        str(k + 1) for k in range(count)]


def test_many_results_in_reverse_call_order_each_pair_with_their_call() -> None:
    count = 40
    messages = read(reverse_run(count))
    assert messages[1].tool_calls == [ToolCall(name="add", args={"a": k, "b": 1})
                                      for k in range(count)]
    assert messages[2:2 + count] == [result_of("add", k + 1) for k in range(count)]
    assert messages[2 + count:] == [AIMessage(content="done", name="Agent")]


def test_reverse_results_of_calls_whose_text_did_not_parse_keep_what_they_ran_with() -> None:
    # a call whose text did not parse agrees with the first result of its tool: asked in
    # call order as before, among the calls whose arguments parsed
    count = 6
    unparsed = frozenset({1, 4})
    messages = read(reverse_run(count, unparsed=unparsed))
    assert [call.invalid_args for call in messages[1].tool_calls] == [
        f'{{"a": {k}, "b": 1' if k in unparsed else None for k in range(count)]
    assert [(message.content, message.metadata[EVENT]["event"].get("tool_kwargs"))
            for message in messages[2:2 + count]] == [
        (str(k + 1), {"a": k, "b": 1} if k in unparsed else None) for k in range(count)]


def test_same_calls_in_reverse_order_pair_in_call_order() -> None:
    # three calls alike: each result takes the first not answered yet
    script = [calls(*[ToolCallBlock(tool_name="add", tool_kwargs={"a": 1, "b": 1})] * 3),
              say("done")]
    events, _ = run(script, ["q"], AllAtOnce(tools=[add], llm=scripted(script)))
    messages = read(events)
    assert messages[2:5] == [result_of("add", 2)] * 3


def agent_run(script: list[ChatMessage]) -> tuple[list[Any], list[ChatMessage]]:
    agent = FunctionAgent(tools=[slow_add, add], llm=scripted(script))
    return run(script, ["q"], agent)


def test_a_history_whose_idless_result_comes_before_an_earlier_calls_result_says_so() -> None:
    # slow_add (id c1) finishes after add (no id): memory holds add's result first, which the
    # rules pair with c1, the first call not answered yet (before: "tool_call_id 'c1' was
    # already answered at messages[2]", as if messages[2] named c1)
    events, history = agent_run([calls(block("slow_add", 1, 2, "c1"), block("add", 5, 2)),
                                 say("done")])
    assert finished(events) == ["add", "slow_add"]
    assert [m.additional_kwargs for m in history[2:4]] == [
        {"tool_call_id": ""}, {"tool_call_id": "c1"}]
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(history)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "orphan_tool_result", 3, "messages[3].tool_call_id")
    assert error.detail == (
        "messages[2] took call 'c1' before its own result here: messages[2] names no call "
        "(additional_kwargs {'tool_call_id': ''}, as FunctionAgent writes the result of a call "
        "without an id), so the rules pair it with the first call of messages[1] not answered "
        "yet, which is 'c1'. FunctionAgent writes a reply's results in the order its tools "
        "finished, so the result of a call without an id may come before the result of a "
        "call with one, and then the history does not say which call it answers. Read the "
        "run's events (events_to_messages): each result there names its call")
    assert read(events)[2:4] == [result_of("slow_add", 3, "c1"), result_of("add", 7)]


def test_a_result_answering_a_call_twice_by_id_is_refused_as_before() -> None:
    history = [ChatMessage(role="user", content="q"),
               calls(block("add", 1, 2, "c1"), block("add", 5, 2, "c2")),
               ChatMessage(role="tool", content="3", additional_kwargs={"tool_call_id": "c1"}),
               ChatMessage(role="tool", content="3", additional_kwargs={"tool_call_id": "c1"})]
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(history)
    error = caught.value
    assert (error.code, error.index, error.path, error.detail) == (
        "orphan_tool_result", 3, "messages[3].tool_call_id",
        "tool_call_id 'c1' was already answered at messages[2]")


def empty_id_call(a: int, b: int) -> ToolCallBlock:
    return ToolCallBlock(tool_call_id="", tool_name="add", tool_kwargs={"a": a, "b": b})


def test_a_call_with_an_empty_id_is_a_call_without_one_in_both_forms() -> None:
    # FunctionAgent names it "" as it names a call without an id (tool_call_id or ""); before,
    # it read as a call with the id ""
    events, history = run([calls(empty_id_call(1, 2)), say("3")], ["1+2?"])
    assert (events[2].tool_calls[0].tool_id, history[2].additional_kwargs) == (
        "", {"tool_call_id": ""})
    call = ToolCall(name="add", args={"a": 1, "b": 2}, metadata=EMPTY)
    assert read(events) == [
        HumanMessage(content="1+2?"),
        AIMessage(content=[], tool_calls=[call], name="Agent"),
        ToolMessage(content="3", name="add",
                    metadata={EVENT: {**IDLESS[EVENT], "event": {"raw_output": 3}}}),
        AIMessage(content="3", name="Agent"),
    ]
    messages = llama_index.to_messages(history)
    assert messages == [HumanMessage(content="1+2?"), AIMessage(content=[], tool_calls=[call]),
                        ToolMessage(content="3", metadata=IDLESS), AIMessage(content="3")]
    assert llama_index.strip_event_extras(read(events)) == messages
    written = llama_index.from_messages(messages)
    assert [m.model_dump(mode="json") for m in written] == [
        m.model_dump(mode="json") for m in history]
    assert written[1].blocks[0].tool_call_id == ""


def test_a_call_with_an_empty_id_beside_one_with_an_id_round_trips() -> None:
    history = [ChatMessage(role="user", content="q"),
               calls(empty_id_call(1, 2), block("add", 5, 2, "c2")),
               ChatMessage(role="tool", content="3", additional_kwargs={"tool_call_id": ""}),
               ChatMessage(role="tool", content="7", additional_kwargs={"tool_call_id": "c2"})]
    messages = llama_index.to_messages(history)
    assert messages[1].tool_calls == [ToolCall(name="add", args={"a": 1, "b": 2}, metadata=EMPTY),
                                      ToolCall(name="add", args={"a": 5, "b": 2}, id="c2")]
    assert [m.model_dump(mode="json") for m in llama_index.from_messages(messages)] == [
        m.model_dump(mode="json") for m in history]


def test_parallel_calls_with_empty_ids_read_from_the_events_and_not_from_the_history() -> None:
    # as calls without an id (before: the history was duplicate_tool_call_id at the calls)
    events, history = run([calls(empty_id_call(1, 2), empty_id_call(5, 2)), say("3, 7")], ["q"])
    assert [(m.content, m.tool_call_id) for m in read(events)[2:4]] == [("3", None),
                                                                          ("7", None)]
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(history)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "ambiguous_trace", 3, "messages[3].additional_kwargs.tool_call_id")


def test_a_typed_call_with_an_empty_id_is_not_written() -> None:
    conversation = [HumanMessage(content="hi"),
                    AIMessage(content="", tool_calls=[ToolCall(name="add", args={"a": 1}, id="")])]
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(conversation)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].id")
    assert "reads back as a call without an id (id=None)" in error.detail


@pytest.mark.parametrize(("call", "found"), [
    (ToolCall(name="add", args={"a": 1}, id="c1", metadata=EMPTY),
     "the call has the id 'c1', which is written"),
    (ToolCall(name="add", args={"a": 1}, metadata={EVENT: {"tool_call_id": "x"}}),
     "found 'x'"),
])
def test_a_kept_empty_id_that_would_not_be_written_is_refused(call: ToolCall, found: str) -> None:
    conversation = [HumanMessage(content="hi"), AIMessage(content="", tool_calls=[call])]
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(conversation)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.llama_index.tool_call_id")
    assert found in error.detail
