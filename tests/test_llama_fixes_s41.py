"""LlamaIndex event streams: how a run that ended mid-reply ended, and a retry whose failed run
gave the model its user message with more around it; a result object with two faults.

Every stream here is a real ``FunctionAgent`` or ``AgentWorkflow`` run of llama-index-core
with its ``MockFunctionCallingLLM`` answering from a script, logged as a user logs it, and
read in the three forms a stream comes in (the event objects, ``dump_events`` JSON, the
workflow ``JsonSerializer``'s output):

* a reply cut by the event the run ended with says what the run did: failed, was cancelled,
  timed out (each naming its event);
* a retry on the same memory after a run that ended before it saved its replies holds that
  run's user message plain, where the run gave it with memory blocks before it
  (``insert_method="user"``) or in a state prompt (``initial_state``), or both (an image
  alone has the state prompt around the blocks' text): read on when the
  retry's new user message, the input's last, has the same around it, else
  ``ambiguous_trace`` at the plain message; anything else around it (another conversation
  whose memory holds part of that message) is no wrapping, and the input another
  conversation, and a large state costs its length; a retry of an image alone that is an
  image alone has the very same blocks in the very same state prompt;
* a refusal names a message without text by its parts (``a user message of an image``);
* a ToolCallResult object whose arguments differ from its call's and whose output was changed
  after it was made is refused at the output whichever road reads it (its JSON, the first of
  its class; the object, after).
"""

from __future__ import annotations

import asyncio
import copy
import tracemalloc
from collections.abc import Sequence
from typing import Any

import pytest
import test_llama_events_speed_paths as speed
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.base.llms.types import AudioBlock, ImageBlock, TextBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import Memory, StaticMemoryBlock
from test_llama_index_events_audit import kinds, read, refused
from test_llama_index_fixes_s40 import (
    add,
    broken_stream,
    call,
    connection_lost,
    ended,
    failed,
    run,
    run_ok,
    say,
    scripted,
)

from tracebridge import (
    AIMessage,
    HumanMessage,
    ImagePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index

SYSTEM = SystemMessage(content="Be brief.")
BLOCK = TextPart(text="<memory>\n<profile>\nUser is Bob.\n</profile>\n</memory>")
"""The memory block a ``blocks_memory`` puts before the latest user message."""


def stalled_stream(messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
    async def chunks() -> Any:
        yield ChatMessage(role="assistant", content="The answer")
        await asyncio.sleep(5)

    return chunks()


def blocks_memory(session: str) -> Memory:
    return Memory.from_defaults(
        session_id=session, token_limit=1_000_000, insert_method="user",
        memory_blocks=[StaticMemoryBlock(name="profile", static_content="User is Bob.",
                                         priority=0)])


def stated(text: str, state: str = "{'user': 'bob'}") -> str:
    """``text`` in LlamaIndex's default state prompt."""
    return f"Current state:\n{state}\n\nCurrent message:\n{text}\n"


# --- 1. a reply cut by the event the run ended with says how it ended --------------------------


CUT = ("a reply was streamed from here (AgentStream), but no AgentOutput follows it before "
       "the run ended at events[2] ({how}): the run {did}, and the partial reply is no message")


@pytest.mark.parametrize(("answer", "timeout", "cancel_after", "event", "how", "did"), [
    (broken_stream, None, None, "WorkflowFailedEvent",
     "WorkflowFailedEvent: step 'run_agent_step' failed with builtins.ConnectionError: "
     "stream reset by peer", "failed mid-reply"),
    (stalled_stream, None, "AgentStream", "WorkflowCancelledEvent", "WorkflowCancelledEvent",
     "was cancelled mid-reply"),
    (stalled_stream, 0.5, None, "WorkflowTimedOutEvent",
     "WorkflowTimedOutEvent: timed out after 0.5 seconds, in ['run_agent_step']",
     "timed out mid-reply"),
])
def test_a_reply_cut_by_the_run_ending_says_how_the_run_ended(
    answer: Any, timeout: float | None, cancel_after: str | None, event: str, how: str,
    did: str,
) -> None:
    agent = FunctionAgent(name="calc", tools=[], llm=scripted([answer]),
                          system_prompt="Be brief.", streaming=True, timeout=timeout)
    events = run(agent, ["what is 2+2?"], cancel_after=cancel_after)
    assert kinds(events) == ["AgentInput", "AgentStream", event]
    expected = ("truncated_trace", 1, "events[1]", CUT.format(how=how, did=did))
    assert refused(events) == expected
    assert refused(events, allow_pending=True) == expected


def test_a_reply_cut_with_no_event_logged_names_every_way_a_run_stops() -> None:
    agent = FunctionAgent(name="calc", tools=[], llm=scripted([stalled_stream]),
                          system_prompt="Be brief.", streaming=True, timeout=0.5)
    events = run(agent, ["what is 2+2?"])
    assert refused(events[:2]) == (
        "truncated_trace", 1, "events[1]",
        "a reply was streamed from here (AgentStream), but no AgentOutput follows it before "
        "the events end: the run stopped mid-reply (it failed, was cancelled or timed out), "
        "and the partial reply is no message")


# --- 2. a retry whose failed run gave its user message with more around it --------------------


def test_a_retry_after_a_failure_with_a_state_prompt_reads_on() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([connection_lost, say("3")]),
                          system_prompt="Be brief.", streaming=False,
                          initial_state={"user": "bob"})
    memory = Memory.from_defaults(session_id="s41-state", token_limit=1_000_000)
    events = run(agent, ["add 1 2"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    assert kinds(events) == ["AgentInput", "WorkflowFailedEvent", "AgentInput", "AgentOutput",
                             "StopEvent"]
    # the retry is given the failed run's message plain, and its own in the state prompt
    assert [m.content for m in events[2].input] == ["Be brief.", "add 1 2", stated("again")]
    assert read(events) == [
        SYSTEM,
        HumanMessage(content=stated("add 1 2"), metadata=ended(
            "WorkflowFailedEvent", failed(events[1], "connection reset"))),
        HumanMessage(content=stated("again")),
        AIMessage(content="3", name="calc"),
    ]


def test_a_state_holding_the_message_itself_reads_on() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([connection_lost, say("3")]),
                          system_prompt="Be brief.", streaming=False,
                          initial_state={"last": "add 1 2"})
    memory = Memory.from_defaults(session_id="s41-echo", token_limit=1_000_000)
    events = run(agent, ["add 1 2"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    state = "{'last': 'add 1 2'}"
    assert [m.text for m in read(events)] == [
        "Be brief.", stated("add 1 2", state), stated("again", state), "3"]


def test_a_retry_after_a_failure_with_blocks_and_a_state_prompt_in_a_workflow_reads_on() -> None:
    agent = FunctionAgent(name="calc", description="Adds.", tools=[add], llm=scripted([
        say("hi"), connection_lost, say("3")]), system_prompt="Be brief.", streaming=False)
    workflow = AgentWorkflow(agents=[agent], root_agent="calc", initial_state={"n": 1})
    memory = blocks_memory("s41-workflow")
    events = (run_ok(workflow, ["hello"], memory=memory) + run(workflow, ["add 1 2"],
                                                                memory=memory)
              + run_ok(workflow, ["again"], memory=memory))
    assert kinds(events) == ["AgentInput", "AgentOutput", "StopEvent", "AgentInput",
                             "WorkflowFailedEvent", "AgentInput", "AgentOutput", "StopEvent"]
    state = "{'n': 1}"
    assert [m.content for m in events[5].input[3:]] == [
        "add 1 2", f"{BLOCK.text}\n{stated('again', state)}"]
    assert read(events) == [
        SYSTEM,
        HumanMessage(content=[BLOCK, TextPart(text=stated("hello", state))]),
        AIMessage(content="hi", name="calc"),
        HumanMessage(content=[BLOCK, TextPart(text=stated("add 1 2", state))], metadata=ended(
            "WorkflowFailedEvent", failed(events[4], "connection reset"))),
        HumanMessage(content=[BLOCK, TextPart(text=stated("again", state))]),
        AIMessage(content="3", name="calc"),
    ]


def test_a_retry_after_a_tool_round_with_memory_blocks_reads_on() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([
        call("c1", "add", a=1, b=2), connection_lost, say("3")]),
        system_prompt="Be brief.", streaming=False)
    memory = blocks_memory("s41-round")
    events = run(agent, ["add 1 2"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    assert kinds(events) == ["AgentInput", "AgentOutput", "ToolCall", "ToolCallResult",
                             "AgentInput", "WorkflowFailedEvent", "AgentInput", "AgentOutput",
                             "StopEvent"]
    data = failed(events[5], "connection reset")
    assert read(events) == [
        SYSTEM, HumanMessage(content=[BLOCK, TextPart(text="add 1 2")]),
        AIMessage(content=[], tool_calls=[ToolCall(name="add", args={"a": 1, "b": 2},
                                                   id="c1")], name="calc"),
        ToolMessage(content="3", tool_call_id="c1", name="add", metadata={"llama_index": {
            "event": {"raw_output": 3,
                      "run_ended": [{"event": "WorkflowFailedEvent", "data": data}]}}}),
        HumanMessage(content=[BLOCK, TextPart(text="again")]),
        AIMessage(content="3", name="calc"),
    ]


def unconfirmed(message: str, read_as: str, after: str,
                how: str = "in a state prompt") -> tuple[str, int, str, str]:
    return (
        "ambiguous_trace", 2, "events[2].data.input[1]",
        f"the model was given a user message {message} here, where the conversation read "
        f"has a user message {read_as} (events[0]), the last message the run that ended at "
        f"events[1] gave the model: that one is this one {how}, but {after}. This input may "
        f"be a retry on the same memory or another conversation, and nothing tells which. "
        f"Split the list: events[:2] and events[2:] are each read on their own")


def test_a_retry_given_other_memory_blocks_is_ambiguous_at_the_plain_message() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([connection_lost, say("3")]),
                          system_prompt="Be brief.", streaming=False)
    memory = blocks_memory("s41-changed")
    events = run(agent, ["add 1 2"], memory=memory)
    memory.memory_blocks[0].static_content = [TextBlock(text="User is Ann.")]
    events += run_ok(agent, ["again"], memory=memory)
    assert [m.content for m in events[2].input[1:]] == [
        "add 1 2", "<memory>\n<profile>\nUser is Ann.\n</profile>\n</memory>\nagain"]
    assert refused(events) == unconfirmed(
        "'add 1 2'", "'<memory>\\n<profile>\\nUser is Bob.\\n</profile>\\n</memory>\\nadd 1 2'",
        "the user message after it (events[2].data.input[2]) does not have the same around it",
        "with memory blocks put before it")


def test_a_retry_in_another_state_is_ambiguous_at_the_plain_message() -> None:
    memory = Memory.from_defaults(session_id="s41-other-state", token_limit=1_000_000)
    events = []
    for user, answer in (("bob", connection_lost), ("ann", say("3"))):
        agent = FunctionAgent(name="calc", tools=[add], llm=scripted([answer]),
                              system_prompt="Be brief.", streaming=False,
                              initial_state={"user": user})
        events += (run if user == "bob" else run_ok)(
            agent, ["add 1 2" if user == "bob" else "again"], memory=memory)
    assert events[2].input[2].content == stated("again", "{'user': 'ann'}")
    assert refused(events) == unconfirmed(
        "'add 1 2'", '"Current state:\\n{\'user\': \'bob\'}\\n\\nCurrent message:\\nadd 1 2\\n"',
        "the user message after it (events[2].data.input[2]) does not have the same around it")


def test_a_retry_with_no_new_user_message_is_ambiguous_at_the_plain_message() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([connection_lost, say("3")]),
                          system_prompt="Be brief.", streaming=False,
                          initial_state={"user": "bob"})
    memory = Memory.from_defaults(session_id="s41-no-new", token_limit=1_000_000)
    events = run(agent, ["add 1 2"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    dumped = copy.deepcopy(llama_index.dump_events(events))
    del dumped[2]["data"]["input"][2]  # the retry's own message, as if none was given
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(dumped)
    assert (caught.value.code, caught.value.index, caught.value.path,
            caught.value.detail) == unconfirmed(
        "'add 1 2'", '"Current state:\\n{\'user\': \'bob\'}\\n\\nCurrent message:\\nadd 1 2\\n"',
        "no user message follows it to show the same around it")


def test_a_retry_on_another_memory_is_still_another_conversation() -> None:
    # the plain message is not the one read with more around it: nothing to match
    first = FunctionAgent(name="calc", tools=[add], llm=scripted([connection_lost]),
                          system_prompt="Be brief.", streaming=False)
    other = FunctionAgent(name="calc", tools=[add], llm=scripted([say("3")]),
                          system_prompt="Be brief.", streaming=False)
    events = run(first, ["add 1 2"], memory=blocks_memory("s41-one"))
    memory = blocks_memory("s41-two")
    asyncio.run(memory.aput(ChatMessage(role="user", content="add 3 4")))
    events += run_ok(other, ["again"], memory=memory)
    assert refused(events) == (
        "ambiguous_trace", 2, "events[2].data.input",
        "this input holds none of the conversation read from the events before it (the last, "
        "a user message '<memory>\\n<profile>\\nUser is Bob.\\n</profile>\\n</memory>\\nadd 1 2' "
        "from events[0]): it begins another conversation, such as another run with a memory "
        "of its own, logged in the same list. Split the list: events[:2] and events[2:] are "
        "each read on their own")


# --- a ToolCallResult object with two faults is refused alike on every road -------------------


def test_a_result_object_with_other_arguments_and_a_changed_raw_input_is_told_alike() -> None:
    # the first event of a class is read through its JSON (whose dump refuses the changed
    # output), the next ones as objects: both roads tell the output first
    changes = {**speed.INSIDE, **speed.OUTSIDE}
    events = speed.run(None, False)
    for name in ("a result with other arguments", "a result without its raw input"):
        changes[name][0](events)
    speed.check(events, allow_pending=True)
    assert speed.outcome(events, allow_pending=True) == (
        "error", "malformed_event", 3, "events[3].data.tool_output.raw_input",
        "llama_index: events[3].data.tool_output.raw_input: the ToolOutput has no value for "
        "this field, which LlamaIndex always gives it (it was removed from the object after "
        "it was made) [malformed_event]")


# --- only what the framework puts around a user message makes a retry ------------------------


def other_conversation(last: str) -> tuple[str, int, str, str]:
    return (
        "ambiguous_trace", 2, "events[2].data.input",
        f"this input holds none of the conversation read from the events before it (the last, "
        f"a user message {last} from events[0]): it begins another conversation, such as "
        f"another run with a memory of its own, logged in the same list. Split the list: "
        f"events[:2] and events[2:] are each read on their own")


def empty_history(last: str) -> tuple[str, int, str, str]:
    """``other_conversation`` for an input with no history: a fresh memory's, or one a
    token-limited memory that flushed everything gives (the error names both)."""
    return (
        "ambiguous_trace", 2, "events[2].data.input",
        f"this input holds no history after its system messages, none of the conversation "
        f"read from the events before it (the last, a user message {last} from events[0]): "
        f"either it begins another conversation (another run with a memory of its own, "
        f"logged in the same list), or its memory has a token limit and flushed every earlier "
        f"message (a long reply can make it flush them all); from the events alone the two "
        f"look the same. For one conversation, read the memory view (to_messages(await "
        f"memory.aget_all())); otherwise split the list: events[:2] and events[2:] are each "
        f"read on their own")


def two_sessions(failing: Any, held: list[Any], asked: Any) -> list[Any]:
    """A session whose run fails on ``failing``, then another session, whose memory holds
    ``held``, asked ``asked``, logged in one list (neither has memory blocks or a state)."""
    first = FunctionAgent(name="calc", tools=[add], llm=scripted([connection_lost]),
                          system_prompt="Be brief.", streaming=False)
    other = FunctionAgent(name="calc", tools=[add], llm=scripted([say("Noon.")]),
                          system_prompt="Be brief.", streaming=False)
    events = run(first, [failing], memory=Memory.from_defaults(session_id="s41-first",
                                                               token_limit=1_000_000))
    memory = Memory.from_defaults(session_id="s41-other", token_limit=1_000_000)
    for message in held:
        asyncio.run(memory.aput(ChatMessage(role="user", content=message)))
    return events + run_ok(other, [asked], memory=memory)


@pytest.mark.parametrize(("failing", "held", "asked"), [
    ("hello?", "hello", "what time is it?"),  # text after the message: no state prompt
    ("Please translate: bonjour", "bonjour", "Please translate: merci"),  # text before it
])
def test_another_conversation_whose_memory_holds_part_of_the_failed_message_is_ambiguous(
    failing: str, held: str, asked: str,
) -> None:
    events = two_sessions(failing, [held], asked)
    assert [m.content for m in events[2].input] == ["Be brief.", held, asked]
    assert refused(events) == other_conversation(repr(failing))


def test_another_conversation_starting_with_part_of_the_failed_message_is_ambiguous() -> None:
    events = two_sessions("hi there", [], "hi")
    assert [m.content for m in events[2].input] == ["Be brief.", "hi"]
    assert refused(events) == empty_history("'hi there'")


def test_another_conversation_whose_messages_share_a_text_block_is_ambiguous() -> None:
    # parts before the plain message that are no memory blocks' are no wrapping either
    def look(text: str) -> ChatMessage:
        return ChatMessage(role="user", blocks=[TextBlock(text="Look:"), TextBlock(text=text)])

    events = two_sessions(look("hello"), ["hello"], look("what time is it?"))
    assert [m.content for m in events[2].input] == [
        "Be brief.", "hello", "Look:\nwhat time is it?"]
    assert refused(events) == other_conversation("'Look:\\nhello'")


def test_a_retry_whose_new_user_message_is_not_the_last_item_is_ambiguous() -> None:
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([connection_lost, say("3")]),
                          system_prompt="Be brief.", streaming=False,
                          initial_state={"user": "bob"})
    memory = Memory.from_defaults(session_id="s41-not-last", token_limit=1_000_000)
    events = run(agent, ["add 1 2"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    dumped = copy.deepcopy(llama_index.dump_events(events))
    dumped[2]["data"]["input"].append(dumped[3]["data"]["response"])  # an item after it
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(dumped)
    assert (caught.value.code, caught.value.index, caught.value.path,
            caught.value.detail) == unconfirmed(
        "'add 1 2'", '"Current state:\\n{\'user\': \'bob\'}\\n\\nCurrent message:\\nadd 1 2\\n"',
        "the user message after it (events[2].data.input[2]) is not the last item of the "
        "input, where a run's new user message is")


def test_a_retry_after_a_short_message_in_a_large_state_costs_its_length() -> None:
    notes = "the quick brown fox jumps over the lazy dog; " * 2_000
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted([connection_lost, say("ok")]),
                          system_prompt="Be brief.", streaming=False,
                          initial_state={"notes": notes})
    memory = Memory.from_defaults(session_id="s41-large", token_limit=1_000_000)
    events = run(agent, ["e"], memory=memory) + run_ok(agent, ["again"], memory=memory)
    state = repr({"notes": notes})
    assert [m.text for m in read(events)] == [
        "Be brief.", stated("e", state), stated("again", state), "ok"]
    dumped = llama_index.dump_events(events)
    tracemalloc.start()
    try:
        llama_index.events_to_messages(dumped)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the wrapped texts, a few times over; not a copy of the state for each "e" in it
    assert peak < 10 * len(state)


# --- a user message that is an image alone: the state prompt goes around the memory blocks ----


IMAGE = "https://example.com/cat.png"
ANN = "{'user': 'ann'}"
AROUND_BLOCKS = "with memory blocks put before it and their last text in a state prompt"


def image_retry(session: str, states: tuple[str, str] = ("bob", "bob"),
                profiles: tuple[str, str] = ("User is Bob.", "User is Bob."),
                retry: Any = "again") -> list[Any]:
    """A run given an image alone, with memory blocks in the user message and a state, that
    fails, then its retry ``retry`` on the same memory, in ``states`` with ``profiles``."""
    memory = blocks_memory(session)
    events: list[Any] = []
    asked = (ChatMessage(role="user", blocks=[ImageBlock(url=IMAGE)]), retry)
    for user, answer, profile, message in zip(states, (connection_lost, say("ok")), profiles,
                                              asked, strict=True):
        memory.memory_blocks[0].static_content = [TextBlock(text=profile)]
        agent = FunctionAgent(name="calc", tools=[add], llm=scripted([answer]),
                              system_prompt="Be brief.", streaming=False,
                              initial_state={"user": user})
        events += (run if answer is connection_lost else run_ok)(agent, [message],
                                                                 memory=memory)
    return events


def test_a_retry_of_an_image_alone_with_blocks_and_a_state_prompt_reads_on() -> None:
    events = image_retry("s41-image")
    assert kinds(events) == ["AgentInput", "WorkflowFailedEvent", "AgentInput", "AgentOutput",
                             "StopEvent"]
    # the failed run's message has no text: the state prompt is around the blocks' text
    assert [block.text for block in events[0].input[1].blocks[:1]] == [stated(BLOCK.text)]
    assert [m.content for m in events[2].input[2:]] == [f"{BLOCK.text}\n{stated('again')}"]
    assert read(events) == [
        SYSTEM,
        HumanMessage(content=[TextPart(text=stated(BLOCK.text)), ImagePart(url=IMAGE)],
                     metadata=ended("WorkflowFailedEvent",
                                    failed(events[1], "connection reset"))),
        HumanMessage(content=[BLOCK, TextPart(text=stated("again"))]),
        AIMessage(content="ok", name="calc"),
    ]


def test_a_retry_of_an_image_alone_with_blocks_holding_the_state_prompt_reads_on() -> None:
    # where the state ends is told by the blocks the retry is given, not by the text
    profile = "Said:\n\nCurrent message:\n<memory>\nhi"
    events = image_retry("s41-image-echo", profiles=(profile, profile))
    block = f"<memory>\n<profile>\n{profile}\n</profile>\n</memory>"
    assert [m.text for m in read(events)] == [
        "Be brief.", stated(block), f"{block}\n{stated('again')}", "ok"]


@pytest.mark.parametrize(("states", "profiles", "given"), [
    (("bob", "ann"), ("User is Bob.", "User is Bob."),
     f"{BLOCK.text}\n{stated('again', ANN)}"),
    (("bob", "bob"), ("User is Bob.", "User is Ann."),
     f"{BLOCK.text.replace('Bob', 'Ann')}\n{stated('again')}"),
])
def test_a_retry_of_an_image_alone_in_another_state_or_memory_is_ambiguous(
    states: tuple[str, str], profiles: tuple[str, str], given: str,
) -> None:
    events = image_retry(f"s41-image-{states[1]}-{profiles[1]}", states, profiles)
    assert [m.content for m in events[2].input[1:]] == [None, given]
    assert refused(events) == unconfirmed(
        "of an image", repr(stated(BLOCK.text)),
        "the user message after it (events[2].data.input[2]) does not have the same around it",
        AROUND_BLOCKS)


# --- a retry of an image alone that is an image alone; a message without text, as refused ---


DOG = "https://example.com/dog.png"
NOT_AROUND = ("the user message after it (events[2].data.input[2]) does not have the same "
              "around it")


def image_alone(url: str) -> ChatMessage:
    return ChatMessage(role="user", blocks=[ImageBlock(url=url)])


@pytest.mark.parametrize("url", [IMAGE, DOG])
def test_a_retry_of_an_image_alone_that_is_an_image_alone_reads_on(url: str) -> None:
    events = image_retry(f"s41-image-alone-{url}", retry=image_alone(url))
    assert kinds(events) == ["AgentInput", "WorkflowFailedEvent", "AgentInput", "AgentOutput",
                             "StopEvent"]
    # neither message has text: both have the state prompt around the same blocks' text
    assert [block.text for block in events[2].input[2].blocks[:1]] == [stated(BLOCK.text)]
    assert read(events) == [
        SYSTEM,
        HumanMessage(content=[TextPart(text=stated(BLOCK.text)), ImagePart(url=IMAGE)],
                     metadata=ended("WorkflowFailedEvent",
                                    failed(events[1], "connection reset"))),
        HumanMessage(content=[TextPart(text=stated(BLOCK.text)), ImagePart(url=url)]),
        AIMessage(content="ok", name="calc"),
    ]


@pytest.mark.parametrize(("states", "profiles", "given"), [
    (("bob", "ann"), ("User is Bob.", "User is Bob."), stated(BLOCK.text, ANN)),
    (("bob", "bob"), ("User is Bob.", "User is Ann."), stated(BLOCK.text.replace("Bob", "Ann"))),
])
def test_a_retry_of_an_image_alone_that_is_one_in_another_state_or_memory_is_ambiguous(
    states: tuple[str, str], profiles: tuple[str, str], given: str,
) -> None:
    events = image_retry(f"s41-image-alone-{states[1]}-{profiles[1]}", states, profiles,
                         image_alone(DOG))
    assert [[block.text for block in m.blocks[:1]] for m in events[2].input[2:]] == [[given]]
    assert refused(events) == unconfirmed("of an image", repr(stated(BLOCK.text)), NOT_AROUND,
                                          AROUND_BLOCKS)


HISTORY = [ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="yo")]
MEDIA = ChatMessage(role="user", blocks=[ImageBlock(url=IMAGE), ImageBlock(url=DOG),
                                         AudioBlock(url="https://example.com/a.wav",
                                                    format="wav")])


def holding(session: str, history: list[ChatMessage]) -> Memory:
    memory = Memory.from_defaults(session_id=session, token_limit=1_000_000)
    if history:
        asyncio.run(memory.aput_messages(history))
    return memory


def two_memories(session: str, first: Any, history: list[ChatMessage],
                 then: list[ChatMessage], answers: Sequence[Any]) -> list[Any]:
    """A run given ``first`` after ``history``, then a run given "bye" after ``then``, each on
    a memory of its own, the first ending as ``answers`` say."""
    agent = FunctionAgent(name="calc", tools=[add], llm=scripted(list(answers)),
                          system_prompt="Be brief.", streaming=False)
    went = run if answers[0] is connection_lost else run_ok
    events = went(agent, [first], memory=holding(f"{session}-first", history))
    return events + run_ok(agent, ["bye"], memory=holding(f"{session}-then", then))


DEPARTS = ("conflicting_fields", 3, "events[3].data.input[3]",
           "the model was given a user message {given} here, where the conversation read has "
           "a user message {read_as} (events[0]): this input does not go on from what was read "
           "before it")


@pytest.mark.parametrize(("first", "then", "given", "read_as"), [
    (image_alone(IMAGE), [*HISTORY, ChatMessage(role="user", content="look")], "'look'",
     "of an image"),
    ("look", [*HISTORY, MEDIA], "of 2 images and an audio clip", "'look'"),
])
def test_a_message_without_text_is_named_by_its_parts_where_an_input_departs(
    first: Any, then: list[ChatMessage], given: str, read_as: str,
) -> None:
    events = two_memories(f"s41-departs-{given}", first, HISTORY, then, [say("ok"), say("fine")])
    code, index, path, detail = DEPARTS
    assert refused(events) == (code, index, path,
                               detail.format(given=given, read_as=read_as))


def test_a_message_without_text_is_named_by_its_parts_in_another_conversation() -> None:
    events = two_memories("s41-other", image_alone(IMAGE), [], [], [connection_lost, say("fine")])
    assert kinds(events) == ["AgentInput", "WorkflowFailedEvent", "AgentInput", "AgentOutput",
                             "StopEvent"]
    assert refused(events) == empty_history("of an image")
