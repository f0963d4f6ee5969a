"""LlamaIndex event streams, read against what the model was really given (audit findings).

Every stream here is a real ``FunctionAgent`` / ``AgentWorkflow`` run of llama-index-core
with its ``MockFunctionCallingLLM`` answering from a script, and each case is read in the
three forms a stream comes in (the event objects, ``dump_events`` JSON, the workflow
``JsonSerializer``'s output):

* an ``AgentInput`` is what the model was given: a message it holds beyond what was read (the
  assistant copy of a ``return_direct`` tool's output) is read, not dropped; one that does not
  go on from what was read (a result the model never got; another run's conversation) is
  refused; a memory that dropped its oldest messages is read on;
* a reply streamed (``AgentStream``) with no ``AgentOutput`` after it is ``truncated_trace``;
* the arguments a call whose text did not parse was run with are kept with its result;
* what only the events say (``metadata["llama_index"]["event"]``) is written or refused;
* a handoff to an agent without a system prompt is marked on that agent's reply;
* a broken conversation rule points at the event field, not at ``messages[<event index>]``;
* a state prompt (``initial_state``) rewrites user messages in the events only (documented).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool
from workflows.context.serializers import JsonSerializer

from tracebridge import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import llama_index

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "llama_index"
EVENT = "llama_index"  # the metadata namespace


# --- real runs ------------------------------------------------------------------------------


def call(call_id: str, name: str, **kwargs: Any) -> ToolCallBlock:
    return ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=kwargs)


def say(text: str) -> ChatMessage:
    return ChatMessage(role="assistant", content=text)


def calls(*blocks: ToolCallBlock) -> ChatMessage:
    return ChatMessage(role="assistant", blocks=list(blocks))


def scripted(script: list[Any]) -> MockFunctionCallingLLM:
    """A mock LLM answering each chat with the next scripted message (or what a scripted
    function makes of the chat: a stream of chunks)."""
    remaining = list(script)

    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        answer = remaining.pop(0)
        return answer(messages, **kwargs) if callable(answer) else answer

    return MockFunctionCallingLLM(response_generator=respond)


def run(workflow: Any, turns: list[str], memory: Any = None, fresh: bool = False,
        **options: Any) -> list[Any]:
    """The events of each turn's run (copied as they come: the framework changes some later),
    all runs sharing one memory unless ``fresh`` (each run its own conversation); a run that
    fails stops the turns, its events kept."""
    shared = memory or Memory.from_defaults(session_id="audit", token_limit=1_000_000)

    async def turns_run() -> list[Any]:
        events: list[Any] = []
        for text in turns:
            extra = {} if fresh else {"memory": shared}
            handler = workflow.run(user_msg=text, **extra, **options)
            async for event in handler.stream_events():
                events.append(copy.deepcopy(event))
            try:
                await handler
            except ConnectionError:  # the model's stream broke: the run failed mid-reply
                break
        return events

    return asyncio.run(turns_run())


def forms(events: list[Any]) -> list[list[Any]]:
    """The stream as objects, as ``dump_events`` JSON and as the workflow serializer writes it."""
    dumped = json.loads(json.dumps(llama_index.dump_events(events)))
    serializer = JsonSerializer()
    return [events, dumped, [json.loads(serializer.serialize(event)) for event in events]]


def read(events: list[Any], **options: Any) -> list[Any]:
    """The messages of a stream, the same in every form."""
    first, *others = [llama_index.events_to_messages(form, **options) for form in forms(events)]
    assert all(other == first for other in others)
    return first


def refused(events: list[Any], **options: Any) -> tuple[str, int | None, str | None, str]:
    """The error of a stream, the same in every form."""
    errors = []
    for form in forms(events):
        with pytest.raises(TraceError) as caught:
            llama_index.events_to_messages(form, **options)
        errors.append((caught.value.code, caught.value.index, caught.value.path,
                       caught.value.detail))
    assert all(error == errors[0] for error in errors)
    return errors[0]


def kinds(events: list[Any]) -> list[str]:
    return [type(event).__name__ for event in events]


def lookup_order(order_id: str) -> str:
    """Look an order up; the answer goes straight to the user."""
    return f"Order {order_id} shipped on Monday."


async def bad(x: int) -> str:
    """Always fails."""
    raise RuntimeError("boom")


async def slow_add(a: int, b: int) -> int:
    """Add, slowly."""
    await asyncio.sleep(0.1)
    return a + b


async def add(a: int, b: int) -> int:
    """Add."""
    return a + b


async def add_ten(a: int, b: int = 10) -> int:
    """Add, b defaulting to ten."""
    return a + b


ORDER = FunctionTool.from_defaults(fn=lookup_order, return_direct=True)
BAD = FunctionTool.from_defaults(async_fn=bad, return_direct=True)


# --- 1. the assistant copy of a return_direct tool's output -----------------------------------


def direct_then_turn() -> list[Any]:
    agent = FunctionAgent(tools=[ORDER], llm=scripted([
        calls(call("c1", "lookup_order", order_id="A-17")), say("You're welcome.")]),
        system_prompt="Help.", streaming=False)
    return run(agent, ["Where is order A-17?", "thanks"])


def test_the_copy_of_a_direct_output_in_the_next_input_is_read_as_an_ai_message() -> None:
    events = direct_then_turn()
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "ToolCallResult",
                             "StopEvent", "AgentInput", "AgentOutput", "StopEvent"]
    assert read(events) == [
        SystemMessage(content="Help."),
        HumanMessage(content="Where is order A-17?"),
        AIMessage(content=[], tool_calls=[
            ToolCall(name="lookup_order", args={"order_id": "A-17"}, id="c1")], name="Agent"),
        ToolMessage(content="Order A-17 shipped on Monday.", tool_call_id="c1",
                    name="lookup_order", metadata={EVENT: {"event": {"return_direct": True}}}),
        # FunctionAgent's copy, which the model was given in the next input
        AIMessage(content="Order A-17 shipped on Monday.",
                  metadata={EVENT: {"additional_kwargs": {"tool_call_id": "c1"}}}),
        HumanMessage(content="thanks"),
        AIMessage(content="You're welcome.", name="Agent"),
    ]


def test_a_run_seen_two_ways_agrees_after_a_direct_output_and_another_turn() -> None:
    agent = FunctionAgent(tools=[ORDER], llm=scripted([
        calls(call("c1", "lookup_order", order_id="A-17")), say("You're welcome.")]),
        system_prompt="Help.", streaming=False)
    memory = Memory.from_defaults(session_id="two-ways", token_limit=1_000_000)
    events = run(agent, ["Where is order A-17?", "thanks"], memory=memory)
    history = asyncio.run(memory.aget_all())
    assert llama_index.strip_event_extras(read(events)) == llama_index.to_messages(history)


def test_the_copy_of_a_failed_direct_output_is_read_in_the_same_turn() -> None:
    agent = FunctionAgent(tools=[BAD], llm=scripted([calls(call("c1", "bad", x=1)),
                                                     say("sorry")]),
                          system_prompt="Help.", streaming=False)
    assert read(run(agent, ["go"])) == [
        SystemMessage(content="Help."),
        HumanMessage(content="go"),
        AIMessage(content=[], tool_calls=[ToolCall(name="bad", args={"x": 1}, id="c1")],
                  name="Agent"),
        ToolMessage(content="boom", tool_call_id="c1", name="bad", is_error=True,
                    metadata={EVENT: {"event": {"return_direct": True}}}),
        AIMessage(content="boom", metadata={EVENT: {"additional_kwargs": {"tool_call_id": "c1"}}}),
        AIMessage(content="sorry", name="Agent"),
    ]


def test_a_result_the_model_never_got_conflicts_where_its_input_departs() -> None:
    # The failing return_direct tool ends first: FunctionAgent gives the model its copy and
    # stops there, so the slower tool's result (a ToolCallResult of the stream) never
    # reaches the model.
    agent = FunctionAgent(tools=[BAD, slow_add], llm=scripted([
        calls(call("c1", "bad", x=1), call("c2", "slow_add", a=1, b=2)), say("sorry")]),
        system_prompt="Help.", streaming=False)
    events = run(agent, ["go"])
    results = [e for e, event in enumerate(events) if type(event).__name__ == "ToolCallResult"]
    assert [events[e].tool_id for e in results] == ["c1", "c2"]
    given = kinds(events).index("AgentInput", 1)
    assert given == results[1] + 1
    assert [m.role.value for m in events[given].input] == [
        "system", "user", "assistant", "tool", "assistant"]
    assert refused(events) == (
        "conflicting_fields", given, f"events[{given}].data.input[4]",
        f"the model was given an assistant message 'boom' here, where the conversation read "
        f"has a tool message '3' (events[{results[1]}]): this input does not go on from what "
        f"was read before it",
    )


# --- 2. two conversations in one list -------------------------------------------------------


def test_two_runs_with_memories_of_their_own_are_not_merged() -> None:
    agent = FunctionAgent(name="a", tools=[], llm=scripted([say("Paris."), say("Four.")]),
                          system_prompt="Be brief.", streaming=False)
    events = run(agent, ["Capital of France?", "What is 2+2?"], fresh=True)
    assert kinds(events) == ["AgentInput", "AgentOutput", "StopEvent"] * 2
    assert [m.content for m in events[3].input] == ["Be brief.", "What is 2+2?"]
    assert refused(events) == (
        "ambiguous_trace", 3, "events[3].data.input",
        "this input holds no history after its system messages, none of the conversation read "
        "from the events before it (the last, an assistant message 'Paris.' from events[1]): "
        "either it begins another conversation (another run with a memory of its own, logged "
        "in the same list), or its memory has a token limit and flushed every earlier message "
        "(a long reply can make it flush them all); from the events alone the two look the "
        "same. For one conversation, read the memory view (to_messages(await "
        "memory.aget_all())); otherwise split the list: events[:3] and events[3:] are each "
        "read on their own",
    )
    assert read(events[:3])[-1] == AIMessage(content="Paris.", name="a")
    assert read(events[3:])[-1] == AIMessage(content="Four.", name="a")


def test_a_run_of_another_agent_with_a_memory_of_its_own_is_not_merged() -> None:
    first = FunctionAgent(name="a", tools=[], llm=scripted([say("Paris.")]),
                          system_prompt="Be brief.", streaming=False)
    second = FunctionAgent(name="b", tools=[], llm=scripted([say("Four.")]),
                           system_prompt="Be exact.", streaming=False)
    events = run(first, ["Capital of France?"]) + run(second, ["What is 2+2?"])
    code, index, path, _ = refused(events)
    assert (code, index, path) == ("ambiguous_trace", 3, "events[3].data.input")


def test_a_run_given_a_history_without_the_calls_read_conflicts() -> None:
    # The second run gets the first as a history the caller kept (its text only): the model
    # never saw the call and result the stream read.
    agent = FunctionAgent(name="a", tools=[add], llm=scripted([
        calls(call("c1", "add", a=1, b=2)), say("3"), say("Bye.")]),
        system_prompt="Be brief.", streaming=False)
    first = run(agent, ["add 1 2"], fresh=True)

    async def second_run() -> list[Any]:
        history = [ChatMessage(role="user", content="add 1 2"), say("3")]
        handler = agent.run(user_msg="bye", chat_history=history)
        events = [copy.deepcopy(event) async for event in handler.stream_events()]
        await handler
        return events

    events = first + asyncio.run(second_run())
    assert refused(events) == (
        "conflicting_fields", 7, "events[7].data.input[2]",
        "the model was given an assistant message '3' here, where the conversation read has "
        "an assistant message '' (events[1]): this input does not go on from what was read "
        "before it",
    )


def test_a_stream_that_begins_after_its_conversation_did_is_refused() -> None:
    # The log starts at the run's first AgentOutput: the next input holds the user message
    # no event before it gave, which would be dropped (or put after the reply).
    events = _golden_events("function_agent_two_turns")
    assert [event["event"] for event in events][:7] == [
        "AgentInput", "AgentOutput", "ToolCall", "ToolCall", "ToolCallResult",
        "ToolCallResult", "AgentInput"]
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events[1:])
    assert (caught.value.code, caught.value.index, caught.value.path, caught.value.detail) == (
        "conflicting_fields", 5, "events[5].data.input[1]",
        "the input holds 1 message(s) before the conversation read, which no event before it "
        "gave: the events begin after the conversation did, or the memory put them there")


def test_a_memory_that_dropped_its_oldest_messages_is_read_on() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([
        calls(call("c1", "add", a=1, b=2)), say("three " * 10), say("second answer " * 5),
        calls(call("c2", "add", a=3, b=4)), say("seven" * 5), say("bye")]),
        system_prompt="Be brief.", streaming=False)
    memory = Memory.from_defaults(session_id="short", token_limit=80)
    events = run(agent, ["add 1 2 please now", "and again something", "add 3 4", "bye"],
                 memory=memory)
    last_input = [e for e in events if type(e).__name__ == "AgentInput"][-1]
    assert [m.content for m in last_input.input][:2] == ["Be brief.", "add 3 4"]  # dropped
    messages = read(events)
    assert [(m.type, m.text) for m in messages] == [
        ("system", "Be brief."), ("human", "add 1 2 please now"), ("ai", ""), ("tool", "3"),
        ("ai", "three " * 10), ("human", "and again something"), ("ai", "second answer " * 5),
        ("human", "add 3 4"), ("ai", ""), ("tool", "7"), ("ai", "seven" * 5), ("human", "bye"),
        ("ai", "bye"),
    ]


# --- 3. a reply cut mid-stream --------------------------------------------------------------


def broken_stream(messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
    async def chunks() -> Any:
        yield ChatMessage(role="assistant", content="The answer")
        yield ChatMessage(role="assistant", content="The answer is 4")
        raise ConnectionError("stream reset by peer")

    return chunks()


def test_a_reply_cut_mid_stream_is_a_truncated_trace() -> None:
    agent = FunctionAgent(name="calc", tools=[], llm=scripted([broken_stream]),
                          system_prompt="Be brief.", streaming=True)
    events = run(agent, ["what is 2+2?"])
    assert kinds(events) == ["AgentInput", "AgentStream", "AgentStream", "WorkflowFailedEvent"]
    logged = events[:3]  # the log as it stands when the run fails (no failure event kept)
    expected = (
        "truncated_trace", 1, "events[1]",
        "a reply was streamed from here (AgentStream), but no AgentOutput follows it before "
        "the events end: the run stopped mid-reply (it failed, was cancelled or timed out), "
        "and the partial reply is no message",
    )
    assert refused(logged) == expected
    assert refused(logged, allow_pending=True) == expected


def test_a_reply_cut_mid_stream_before_the_next_run_is_a_truncated_trace() -> None:
    agent = FunctionAgent(name="calc", tools=[], llm=scripted([broken_stream, say("4")]),
                          system_prompt="Be brief.", streaming=True)
    memory = Memory.from_defaults(session_id="cut", token_limit=1_000_000)
    events = run(agent, ["what is 2+2?"], memory=memory)[:3] + run(
        agent, ["again: what is 2+2?"], memory=memory)
    assert kinds(events)[3] == "AgentInput"
    code, index, path, detail = refused(events)
    assert (code, index, path) == ("truncated_trace", 1, "events[1]")
    assert "no AgentOutput follows it before the next AgentInput (events[3])" in detail


def test_a_streamed_reply_with_its_output_reads() -> None:
    def chunks(messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
        async def stream() -> Any:
            yield ChatMessage(role="assistant", content="Fo")
            yield ChatMessage(role="assistant", content="Four.")

        return stream()

    agent = FunctionAgent(name="calc", tools=[], llm=scripted([chunks]),
                          system_prompt="Be brief.", streaming=True)
    events = run(agent, ["what is 2+2?"])
    assert kinds(events) == ["AgentInput", "AgentStream", "AgentStream", "AgentOutput",
                             "StopEvent"]
    assert read(events)[-1] == AIMessage(content="Four.", name="calc")


# --- 4. the arguments a call whose text did not parse ran with ------------------------------


def unparsed_call_run() -> list[Any]:
    agent = FunctionAgent(name="calc", tools=[add_ten], llm=scripted([
        calls(ToolCallBlock(tool_call_id="c1", tool_name="add_ten", tool_kwargs='{"a": 1')),
        say("done")]), system_prompt="Be brief.", streaming=False)
    return run(agent, ["add"])


def _ran_with(events: list[Any], value: dict[str, Any]) -> list[dict[str, Any]]:
    """The dumped stream, each copy of the run arguments said as ``value``."""
    dumped = json.loads(json.dumps(llama_index.dump_events(events)))
    for event in dumped:
        data = event["data"]
        if event["event"] in ("ToolCall", "ToolCallResult"):
            data["tool_kwargs"] = value
        if event["event"] == "ToolCallResult":
            data["tool_output"]["raw_input"] = {"args": [], "kwargs": value}
        output = data.get("result") or data  # a StopEvent's result, an AgentOutput
        for entry in output.get("tool_calls") or []:
            entry["tool_kwargs"] = value
    return dumped


def test_the_arguments_an_unparsed_call_ran_with_are_kept_with_its_result() -> None:
    events = unparsed_call_run()
    assert [e.tool_kwargs for e in events if hasattr(e, "tool_kwargs")] == [{"a": 1}, {"a": 1}]
    messages = read(events)
    assert messages[2].tool_calls == [  # type: ignore[union-attr]
        ToolCall(name="add_ten", id="c1", invalid_args='{"a": 1')]
    assert messages[3] == ToolMessage(
        content="11", tool_call_id="c1", name="add_ten",
        metadata={EVENT: {"event": {"raw_output": 11, "tool_kwargs": {"a": 1}}}})
    # a stream saying the tool ran with other arguments says so
    assert llama_index.events_to_messages(_ran_with(events, {"a": 7}))[3].metadata == {
        EVENT: {"event": {"raw_output": 11, "tool_kwargs": {"a": 7}}}}


def test_copies_of_the_arguments_an_unparsed_call_ran_with_must_agree() -> None:
    dumped = _ran_with(unparsed_call_run(), {"a": 1})
    assert [event["event"] for event in dumped][1:4] == ["AgentOutput", "ToolCall",
                                                        "ToolCallResult"]
    dumped[2]["data"]["tool_kwargs"] = {"a": 7}  # the ToolCall event
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(dumped)
    assert (caught.value.code, caught.value.index, caught.value.path, caught.value.detail) == (
        "conflicting_fields", 2, "events[2].data",
        "call 'c1' is add_ten({'a': 7}) here, but the AgentOutput before it has "
        "add_ten({\"a\": 1), run with {'a': 1}; both must agree")
    dumped[2]["data"]["tool_kwargs"] = {"a": 1}
    dumped[3]["data"]["tool_kwargs"] = {"a": 7}  # the ToolCallResult
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(dumped)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "conflicting_fields", 3, "events[3].data")


# --- 5. what only the events say, written ---------------------------------------------------


def _golden_events(name: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads(
        (GOLDEN / f"{name}.json").read_text(encoding="utf-8"))["events"]
    return events


@pytest.mark.parametrize(("name", "index", "kept"), [
    ("return_direct_tool", 3, {"return_direct": True}),
    ("structured_output", 3, {"raw_output": 42}),
    ("multi_agent_handoff", 3, {"return_direct": True}),
    ("function_agent_two_turns", 3, {"raw_output": 5}),
])
def test_what_only_the_events_say_is_not_written_without_a_word(
    name: str, index: int, kept: dict[str, Any]
) -> None:
    messages = llama_index.events_to_messages(_golden_events(name))
    assert messages[index].metadata == {EVENT: {"event": kept}}
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(messages, drop=["is_error"])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", index, f"messages[{index}].metadata.llama_index.event")
    assert "drop=['event_extras'] leaves it out" in caught.value.detail


def test_event_extras_dropped_by_name_are_left_out() -> None:
    messages = llama_index.events_to_messages(_golden_events("structured_output"))
    written = llama_index.from_messages(messages, drop=["is_error", "event_extras"])
    back = llama_index.to_messages(written)
    assert back == [m.model_copy(update={"metadata": {}}) for m in messages]
    assert messages[4].metadata == {
        EVENT: {"event": {"structured_response": {"sum": 42, "terms": [40, 2]}}}}


def test_the_run_arguments_of_an_unparsed_call_are_written_or_refused() -> None:
    messages = read(unparsed_call_run())
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 3, "messages[3].metadata.llama_index.event")
    back = llama_index.to_messages(llama_index.from_messages(messages, drop=["event_extras"]))
    assert back[3] == ToolMessage(content="11", tool_call_id="c1", name="add_ten")
    assert back[2] == messages[2]


# --- 6. a handoff to an agent without a system prompt ---------------------------------------


def test_a_reply_made_without_a_system_prompt_says_so() -> None:
    triage = FunctionAgent(name="triage", description="Routes.", llm=scripted([
        calls(call("h1", "handoff", to_agent="math", reason="r")), say("hello again")]),
        system_prompt="Route.", can_handoff_to=["math"], streaming=False)
    math = FunctionAgent(name="math", description="Math.", llm=scripted([
        say("3"), calls(call("h2", "handoff", to_agent="triage", reason="greeting"))]),
        tools=[add], can_handoff_to=["triage"], streaming=False)
    workflow = AgentWorkflow(agents=[triage, math], root_agent="triage")
    events = run(workflow, ["add 1 2", "hi"])
    assert [(m.role.value) for m in events[4].input] == ["user", "assistant", "tool"]
    messages = read(events)
    assert [(m.type, m.name, m.text) for m in messages] == [
        ("system", None, "Route."), ("human", None, "add 1 2"), ("ai", "triage", ""),
        ("tool", "handoff", messages[3].text), ("ai", "math", "3"), ("system", None, "Route."),
        ("human", None, "hi"), ("ai", "triage", "hello again"),
    ]
    assert messages[4].metadata == {EVENT: {"event": {"no_system_prompt": True}}}
    assert messages[7].metadata == {}
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(messages, drop=["is_error"])
    assert (caught.value.index, caught.value.path) == (
        3, "messages[3].metadata.llama_index.event")  # the handoff's return_direct first


# --- 7. conversation rules, pointed at the events -------------------------------------------


def test_an_unanswered_call_is_told_at_the_output_that_made_it() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([
        calls(call("c1", "add", a=1, b=2)), calls(call("c2", "add", a=3, b=4)),
        say("gave up: 3")]), system_prompt="Be brief.", streaming=False,
        early_stopping_method="generate")
    events = run(agent, ["add stuff"], max_iterations=2)
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "ToolCallResult",
                             "AgentInput", "AgentOutput", "AgentOutput", "StopEvent"]
    assert refused(events) == (
        "unanswered_tool_call", 5, "events[5].data.response.tool_calls[0]",
        "tool call 'add' (id 'c2') has no result before events[6].data.response",
    )


def test_a_repeated_call_id_is_told_at_the_output_that_repeats_it() -> None:
    events = json.loads(json.dumps(_golden_events("function_agent_two_turns"))
                        .replace("call_img_1", "call_add_1"))
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    assert (caught.value.code, caught.value.index, caught.value.path, caught.value.detail) == (
        "duplicate_tool_call_id", 10, "events[10].data.response.tool_calls[0].id",
        "tool call id 'call_add_1' is already used at events[1].data.response")


def test_an_orphan_result_is_told_at_its_tool_id() -> None:
    events = copy.deepcopy(_golden_events("return_direct_tool"))
    assert events[3]["event"] == "ToolCallResult"
    events[3]["data"]["tool_id"] = "call_nobody"
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events[:4])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "orphan_tool_result", 3, "events[3].data.tool_id")


def test_a_rule_broken_in_an_input_is_told_at_the_item() -> None:
    events = copy.deepcopy(_golden_events("history_ends_with_tool_result"))
    assert events[0]["event"] == "AgentInput"
    del events[0]["data"]["input"][2]  # the history's call: its result answers nothing
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events[:1])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "orphan_tool_result", 0, "events[0].data.input[2].tool_call_id")


# --- 8. a state prompt rewrites user messages in the events only ----------------------------


def state_run(memory: Any) -> list[Any]:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([
        calls(call("c1", "add", a=1, b=2)), say("3"), say("ok")]),
        system_prompt="Be brief.", streaming=False, initial_state={"user": "bob"})
    return run(agent, ["add 1 2", "thanks"], memory=memory)


def test_a_state_prompt_shows_in_the_events_and_not_in_memory() -> None:
    memory = Memory.from_defaults(session_id="state", token_limit=1_000_000)
    events = state_run(memory)
    wrapped = "Current state:\n{'user': 'bob'}\n\nCurrent message:\nadd 1 2\n"
    assert events[0].input[1].content == wrapped
    assert events[4].input[1].content == "add 1 2"  # the next input of the same run: plain
    messages = read(events)
    assert [m.text for m in messages if m.type == "human"] == [
        wrapped, "Current state:\n{'user': 'bob'}\n\nCurrent message:\nthanks\n"]
    history = llama_index.to_messages(asyncio.run(memory.aget_all()))
    assert [m.text for m in history if m.type == "human"] == ["add 1 2", "thanks"]
    stripped = llama_index.strip_event_extras(messages)
    assert [m for m in stripped if m.type != "human"] == [
        m for m in history if m.type != "human"]


def test_a_state_prompt_and_a_memory_that_dropped_messages_read() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([
        calls(call("c1", "add", a=1, b=2)), say("three " * 10), say("second answer " * 5),
        calls(call("c2", "add", a=3, b=4)), say("seven" * 5), say("bye")]),
        system_prompt="Be brief.", streaming=False, initial_state={"user": "bob"})
    memory = Memory.from_defaults(session_id="state-short", token_limit=70)
    events = run(agent, ["add 1 2 please now", "and again something", "add 3 4", "bye"],
                 memory=memory)
    last_input = [e for e in events if type(e).__name__ == "AgentInput"][-1]
    assert last_input.input[1].content == "add 3 4"  # the oldest messages dropped, plain
    assert [m.type for m in read(events)] == [
        "system", "human", "ai", "tool", "ai", "human", "ai", "human", "ai", "tool", "ai",
        "human", "ai"]
