"""Two typed homes of the LlamaIndex adapter, as OpenAI Chat has them.

**Argument text whose number overflows.** ``'{"a": 1e400}'`` is JSON syntax, but Python's
``json`` reads the number as ``inf``, which no call's arguments can hold. Every LlamaIndex
reader path (a ``ToolCallBlock``'s text ``tool_kwargs``, an ``additional_kwargs["tool_calls"]``
entry, the legacy ``function_call``; objects and dumps) took it for arguments and the
``ToolCall`` model refused them (``unserializable_value`` at no index, path ``args.a``). It is
text that does not parse, as NaN and Infinity are and as openai_chat reads it: the call keeps
it as ``invalid_args`` with ``args={}``. The writer asks the same parse, so a call read by
openai_chat is written. Where the tool really ran with a dict holding an infinity (the event
road), that dict is refused where it is, as ``dump_events`` refuses it.

**Reasoning text in ``additional_kwargs``.** ``from_openai_message_dict`` (llama-index-llms-
openai, and -openai-like through it) copies ``reasoning_content`` / ``reasoning`` of a
DeepSeek, vLLM or OpenRouter reply into ``additional_kwargs``. It was kept as metadata: not
rendered, not hashed, lost without a word on the way to another format. It is now a
``ReasoningPart`` first in the content, marked ``from`` (and ``also``) its key(s).
"""

from __future__ import annotations

import asyncio
import copy
import math
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import TextBlock, ThinkingBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from openai.types.chat import ChatCompletionMessageFunctionToolCall

from tracebridge import (
    AIMessage,
    HumanMessage,
    Message,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    transcript_hash,
)
from tracebridge.adapters import langchain, llama_index, openai_chat

NS = "llama_index"
OVER = '{"a": 1e400}'
USER = ChatMessage(role="user", content="add")
H = HumanMessage(content="add")


def caught(run: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as error:
        run()
    return error.value.code, error.value.index, error.value.path


def dumps(history: list[Any]) -> list[Any]:
    return [m if isinstance(m, dict) else m.model_dump(mode="json") for m in history]


def from_openai_message_dict(message: dict[str, Any]) -> ChatMessage:
    """llama-index-llms-openai's ``from_openai_message_dict``: every key but ``role`` and
    ``content`` goes to ``additional_kwargs``."""
    kwargs = dict(message)
    role = kwargs.pop("role")
    return ChatMessage(role=role, content=kwargs.pop("content", None), additional_kwargs=kwargs)


def round_trips(history: list[Any]) -> list[Message]:
    """to -> from -> to: the same typed messages (metadata and transcript hash), and the
    ChatMessages written back are the history (``additional_kwargs`` included)."""
    typed = llama_index.to_messages(history)
    back = llama_index.from_messages(typed)
    assert dumps(back) == dumps(history)
    assert [m.additional_kwargs for m in back] == [
        m["additional_kwargs"] for m in dumps(history)]
    again = llama_index.to_messages(back)
    assert again == typed
    assert [m.metadata for m in again] == [m.metadata for m in typed]
    assert transcript_hash(again) == transcript_hash(typed)
    return typed


# === 1. argument text that overflows ========================================================

def over_call(call_id: str | None = "c1", **kept: Any) -> ToolCall:
    return ToolCall(name="f", id=call_id, invalid_args=OVER, metadata={NS: kept} if kept else {})


RESULT = ChatMessage(role="tool", content="r", additional_kwargs={"tool_call_id": "c1"})
TYPED_RESULT = ToolMessage(content="r", tool_call_id="c1")
ENTRY = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": OVER}}

OVERFLOW_HISTORIES = [
    pytest.param(
        [USER, ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs=OVER)]), RESULT],
        AIMessage(content=[], tool_calls=[over_call()]),
        id="tool_call_block_text",
    ),
    pytest.param(
        [USER, ChatMessage(role="assistant", content="", additional_kwargs={
            "tool_calls": [ENTRY]}), RESULT],
        AIMessage(content="", tool_calls=[over_call(entry={
            "type": "function", "function": {"arguments": OVER}}, entry_index=0,
            in_blocks=False)]),
        id="additional_kwargs_entry",
    ),
    pytest.param(
        [USER, ChatMessage(role="assistant", content="", additional_kwargs={
            "tool_calls": [ChatCompletionMessageFunctionToolCall.model_validate(ENTRY)]}),
         RESULT],
        AIMessage(content="", tool_calls=[over_call(entry={
            "type": "function", "function": {"arguments": OVER}}, entry_index=0,
            in_blocks=False)]),
        id="additional_kwargs_sdk_entry",
    ),
    pytest.param(
        [USER, ChatMessage(role="assistant", content="", additional_kwargs={
            "function_call": {"name": "f", "arguments": OVER}}),
         ChatMessage(role="function", content="r", additional_kwargs={"name": "f"})],
        AIMessage(content="", tool_calls=[over_call(None, function_call={"arguments": OVER})]),
        id="legacy_function_call",
    ),
]


@pytest.mark.parametrize(("history", "expected"), OVERFLOW_HISTORIES)
def test_overflowing_argument_text_is_invalid_args_on_every_reader_path(
    history: list[Any], expected: AIMessage
) -> None:
    for form in (history, dumps(history)):
        typed = llama_index.to_messages(form)
        assert typed[0] == H
        assert typed[1] == expected
        assert typed[1].tool_calls[0].args == {}
        assert typed[1].tool_calls[0].invalid_args == OVER
    round_trips(history)


def test_a_tool_selection_with_overflowing_text_is_invalid_args() -> None:
    entry = {"tool_id": "c1", "tool_name": "f", "tool_kwargs": OVER}
    history = [dumps([USER])[0],
               {"role": "assistant", "additional_kwargs": {"tool_calls": [entry]}, "blocks": []},
               dumps([RESULT])[0]]
    typed = llama_index.to_messages(history)
    assert typed[1] == AIMessage(content=[], tool_calls=[over_call(
        entry={"tool_kwargs": OVER}, entry_index=0, in_blocks=False)])
    assert dumps(llama_index.from_messages(typed)) == history


@pytest.mark.parametrize("text", [
    '{"a": -1e400}',
    '{"a": [1, {"b": 2e308}]}',
    '{"a": ' + "1" + "0" * 400 + ".0}",  # no exponent: still past the largest float
    '{"a": 1E400}',
    '{"a": ' + "[" * 130 + "]" * 130 + "}",  # deeper than MAX_DEPTH
])
def test_other_text_no_call_can_hold_is_invalid_args(text: str) -> None:
    history = [USER, ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs=text)]), RESULT]
    assert llama_index.to_messages(history)[1] == AIMessage(
        content=[], tool_calls=[ToolCall(name="f", id="c1", invalid_args=text)])
    round_trips(history)


def test_a_number_that_underflows_parses() -> None:
    """``1e-400`` is 0.0 to every JSON reader: arguments, kept as the text they were given."""
    history = [USER, ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs='{"a": 1e-400}')]), RESULT]
    assert llama_index.to_messages(history)[1] == AIMessage(content=[], tool_calls=[ToolCall(
        name="f", id="c1", args={"a": 0.0}, metadata={NS: {"kwargs_text": '{"a": 1e-400}'}})])
    round_trips(history)


def test_a_dict_holding_an_infinity_is_refused_at_the_value() -> None:
    history = [USER, ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={"a": math.inf})]), RESULT]
    assert caught(lambda: llama_index.to_messages(history)) == (
        "unserializable_value", 1, "messages[1].blocks[0].tool_kwargs.a")


OPENAI = [
    {"role": "user", "content": "add"},
    {"role": "assistant", "content": None, "tool_calls": [ENTRY]},
    {"role": "tool", "tool_call_id": "c1", "content": "r"},
]


def test_openai_chat_to_llama_index_and_back_carries_the_text() -> None:
    typed = openai_chat.to_messages(OPENAI)
    assert typed[1].tool_calls == [ToolCall(name="f", id="c1", invalid_args=OVER)]
    written = llama_index.from_messages(typed)
    assert written[1].blocks == [TextBlock(text=""), ToolCallBlock(
        tool_call_id="c1", tool_name="f", tool_kwargs=OVER)]  # (openai_chat reads null as "")
    read = llama_index.to_messages(written)
    assert transcript_hash(read) == transcript_hash(typed)
    assert read[1].tool_calls == typed[1].tool_calls
    assert convert(OPENAI, source="openai_chat", target="llama_index")[1].blocks == (
        written[1].blocks)
    assert openai_chat.from_messages(read)[1]["tool_calls"] == [ENTRY]
    history = [USER, written[1], RESULT]
    assert convert(history, source="llama_index", target="openai_chat")[1]["tool_calls"] == [
        ENTRY]


# --- the event road: a real FunctionAgent run --------------------------------------------


async def add(a: float, b: int = 1) -> float:
    """Add."""
    return a + b


def agent_run(kwargs: Any) -> tuple[list[Any], list[ChatMessage]]:
    """One run whose scripted model calls ``add`` with ``kwargs``, then says "done"; its
    events (copied as they come) and its memory."""
    script = [ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="add", tool_kwargs=kwargs)]),
        ChatMessage(role="assistant", content="done")]

    def respond(messages: Sequence[ChatMessage], **options: Any) -> ChatMessage:
        return script.pop(0)

    agent = FunctionAgent(name="calc", tools=[add], system_prompt="Be brief.", streaming=False,
                          llm=MockFunctionCallingLLM(response_generator=respond))

    async def go() -> tuple[list[Any], list[ChatMessage]]:
        memory = Memory.from_defaults(session_id="s", token_limit=1_000_000)
        handler = agent.run(user_msg="add", memory=memory)
        events = [copy.deepcopy(event) async for event in handler.stream_events()]
        await handler
        return events, await memory.aget_all()

    return asyncio.run(go())


def test_a_run_given_overflowing_text_is_refused_where_the_tool_ran_with_inf() -> None:
    """LlamaIndex parsed the text itself and ran the tool with ``{"a": inf}``: its copies in
    the events are what the result keeps, and are no JSON. The first is the AgentOutput's
    ``tool_calls`` entry, where ``dump_events`` refuses it too."""
    events, memory = agent_run(OVER)
    assert [type(e).__name__ for e in events] == [
        "AgentInput", "AgentOutput", "ToolCall", "ToolCallResult", "AgentInput", "AgentOutput",
        "StopEvent"]
    where = ("unserializable_value", 1, "events[1].data.tool_calls[0].tool_kwargs.a")
    assert caught(lambda: llama_index.events_to_messages(events)) == where
    assert caught(lambda: llama_index.dump_events(events)) == where
    # The memory holds the text the model gave (and the tool's output, "inf").
    assert llama_index.to_messages(memory) == [
        H,
        AIMessage(content=[], tool_calls=[ToolCall(name="add", id="c1", invalid_args=OVER)]),
        ToolMessage(content="inf", tool_call_id="c1"),
        AIMessage(content="done"),
    ]


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_a_run_whose_model_gave_a_dict_holding_inf_is_refused_at_the_block(value: float) -> None:
    events, _ = agent_run({"a": value})
    where = ("unserializable_value", 1, "events[1].data.response.blocks[0].tool_kwargs.a")
    assert caught(lambda: llama_index.events_to_messages(events)) == where
    assert caught(lambda: llama_index.dump_events(events)) == where


def test_a_run_given_text_that_parses_is_read_as_before() -> None:
    events, _ = agent_run('{"a": 1.5}')
    typed = llama_index.events_to_messages(events)
    assert typed[2] == AIMessage(content=[], name="calc", tool_calls=[ToolCall(
        name="add", id="c1", args={"a": 1.5}, metadata={NS: {"kwargs_text": '{"a": 1.5}'}})])
    assert typed[3] == ToolMessage(content="2.5", tool_call_id="c1", name="add", metadata={
        NS: {"event": {"raw_output": 2.5}}})


# === 2. reasoning text in additional_kwargs ================================================

def marked(text: str, **mark: Any) -> ReasoningPart:
    return ReasoningPart(text=text, metadata={NS: mark})


THOUGHT = "Two plus two is four."
REASONING_READS = [
    pytest.param(
        {"reasoning_content": THOUGHT}, "4",
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning_content"}), TextPart(text="4")]),
        id="reasoning_content",
    ),
    pytest.param(
        {"reasoning": THOUGHT}, "4",
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning"}), TextPart(text="4")]),
        id="reasoning",
    ),
    pytest.param(
        {"reasoning_content": THOUGHT, "reasoning": THOUGHT}, "4",
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning_content", "also": "reasoning"}),
                           TextPart(text="4")]),
        id="both_keys_same_text",
    ),
    pytest.param(
        {"reasoning": THOUGHT, "reasoning_content": THOUGHT}, "4",
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning", "also": "reasoning_content"}),
                           TextPart(text="4")]),
        id="both_keys_other_order",
    ),
    pytest.param(
        {"reasoning_content": THOUGHT, "refusal": None, "tool_calls": None}, None,
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning_content"})], metadata={NS: {
            "additional_kwargs": {"refusal": None, "tool_calls": None}}}),
        id="no_content_openai_residue",
    ),
    pytest.param(
        {"reasoning": THOUGHT, "refusal": "I can't."}, None,
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning"}), RefusalPart(text="I can't.")]),
        id="with_a_refusal",
    ),
    pytest.param(
        {"reasoning_content": None, "reasoning": THOUGHT}, "",
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning"}), TextPart(text="")],
                  metadata={NS: {"additional_kwargs": {"reasoning_content": None}}}),
        id="null_beside_text",
    ),
    pytest.param(
        {"reasoning_content": {"steps": ["a"]}}, "4",
        AIMessage(content="4", metadata={NS: {"additional_kwargs": {
            "reasoning_content": {"steps": ["a"]}}}}),
        id="not_text_stays_verbatim",
    ),
]


@pytest.mark.parametrize(("kwargs", "content", "expected"), REASONING_READS)
def test_reasoning_text_is_a_first_reasoning_part(
    kwargs: dict[str, Any], content: str | None, expected: AIMessage
) -> None:
    history = [USER, ChatMessage(role="assistant", content=content, additional_kwargs=kwargs)]
    for form in (history, dumps(history)):
        assert llama_index.to_messages(form) == [H, expected]
    round_trips(history)


def test_other_assistant_side_roles_have_it_and_a_user_message_keeps_it() -> None:
    history = [
        ChatMessage(role="user", content="q", additional_kwargs={"reasoning_content": "u"}),
        ChatMessage(role="model", content="4", additional_kwargs={"reasoning": THOUGHT}),
    ]
    assert round_trips(history) == [
        HumanMessage(content="q", metadata={NS: {"additional_kwargs": {
            "reasoning_content": "u"}}}),
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning"}), TextPart(text="4")],
                  metadata={NS: {"role": "model"}}),
    ]


def test_a_thinking_block_beside_the_key_is_read_too_after_it() -> None:
    """Two records of reasoning: the key's text first, then the blocks in their order (the
    same text in both is kept twice: neither is invented or dropped)."""
    history = [USER, ChatMessage(role="assistant", additional_kwargs={"reasoning": THOUGHT},
                                 blocks=[TextBlock(text="a"), ThinkingBlock(content="t"),
                                         TextBlock(text="b")])]
    assert round_trips(history)[1] == AIMessage(content=[
        marked(THOUGHT, **{"from": "reasoning"}), TextPart(text="a"), ReasoningPart(text="t"),
        TextPart(text="b")])
    same = [USER, ChatMessage(role="assistant", additional_kwargs={"reasoning": THOUGHT},
                              blocks=[ThinkingBlock(content=THOUGHT), TextBlock(text="4")])]
    assert [p.text for p in round_trips(same)[1].content] == [THOUGHT, THOUGHT, "4"]


def test_both_keys_with_different_texts_conflict() -> None:
    history = [USER, ChatMessage(role="assistant", content="4", additional_kwargs={
        "reasoning_content": "one", "reasoning": "two"})]
    for form in (history, dumps(history)):
        assert caught(lambda form=form: llama_index.to_messages(form)) == (
            "conflicting_fields", 1, "messages[1].additional_kwargs.reasoning")


def test_a_tool_calling_reply_with_reasoning() -> None:
    history = [USER, ChatMessage(role="assistant", additional_kwargs={
        "reasoning_content": THOUGHT}, blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={"a": 1})]), RESULT]
    assert round_trips(history)[1] == AIMessage(
        content=[marked(THOUGHT, **{"from": "reasoning_content"})],
        tool_calls=[ToolCall(name="f", id="c1", args={"a": 1})])


# --- the writer -----------------------------------------------------------------------------

WRITER_REFUSALS = [
    pytest.param(
        AIMessage(content=[TextPart(text="4"), marked(THOUGHT, **{"from": "reasoning"})]),
        "messages[1].content[1].metadata.llama_index.from", id="not_first",
    ),
    pytest.param(
        AIMessage(content=[marked(THOUGHT, **{"from": "thinking"})]),
        "messages[1].content[0].metadata.llama_index.from", id="no_reasoning_key",
    ),
    pytest.param(
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning", "also": "reasoning"})]),
        "messages[1].content[0].metadata.llama_index.also", id="also_the_same_key",
    ),
    pytest.param(
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning", "num_tokens": 3})]),
        "messages[1].content[0].metadata.llama_index.num_tokens", id="a_thinking_key_beside",
    ),
    pytest.param(
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning"})], metadata={NS: {
            "additional_kwargs": {"reasoning": "other"}}}),
        "messages[1].metadata.llama_index.additional_kwargs.reasoning", id="kept_other_text",
    ),
    pytest.param(
        AIMessage(content=[marked(THOUGHT, **{"from": "reasoning"})], metadata={NS: {
            "additional_kwargs": {"reasoning": None}}}),
        "messages[1].metadata.llama_index.additional_kwargs.reasoning", id="kept_null_there",
    ),
    pytest.param(
        AIMessage(content=[ReasoningPart(text=THOUGHT)], metadata={NS: {
            "additional_kwargs": {"reasoning_content": THOUGHT}}}),
        "messages[1].metadata.llama_index.additional_kwargs.reasoning_content",
        id="kept_text_without_a_marked_part",
    ),
]


@pytest.mark.parametrize(("message", "path"), WRITER_REFUSALS)
def test_a_mark_the_reader_never_makes_is_refused(message: AIMessage, path: str) -> None:
    assert caught(lambda: llama_index.from_messages([H, message])) == (
        "not_representable", 1, path)


def test_a_marked_part_on_a_user_message_is_refused() -> None:
    message = HumanMessage(content=[marked(THOUGHT, **{"from": "reasoning"})])
    assert caught(lambda: llama_index.from_messages([message])) == (
        "not_representable", 0, "messages[0].content[0].metadata.llama_index.from")


def test_kept_text_equal_to_the_part_is_written_once() -> None:
    message = AIMessage(content=[marked(THOUGHT, **{"from": "reasoning"})], metadata={NS: {
        "additional_kwargs": {"reasoning": THOUGHT}}})
    assert llama_index.from_messages([H, message])[1].additional_kwargs == {"reasoning": THOUGHT}


def test_an_unmarked_reasoning_part_is_still_a_thinking_block() -> None:
    written = llama_index.from_messages([H, AIMessage(content=[ReasoningPart(text=THOUGHT),
                                                               TextPart(text="4")])])
    assert written[1].additional_kwargs == {}
    assert written[1].blocks == [ThinkingBlock(content=THOUGHT), TextBlock(text="4")]


# --- across formats ---------------------------------------------------------------------------

DEEPSEEK = [{"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "4", "reasoning_content": THOUGHT}]


def test_a_deepseek_reply_reads_the_same_through_llama_index() -> None:
    direct = openai_chat.to_messages(DEEPSEEK)
    via = llama_index.to_messages([from_openai_message_dict(m) for m in DEEPSEEK])
    assert via[1] == AIMessage(content=[marked(THOUGHT, **{"from": "reasoning_content"}),
                                        TextPart(text="4")])
    assert transcript_hash(via) == transcript_hash(direct)
    assert via[1].pretty_repr() == direct[1].pretty_repr()


def test_llama_index_reasoning_to_openai_chat_is_refused_or_dropped_by_name() -> None:
    history = [from_openai_message_dict(m) for m in DEEPSEEK]
    assert caught(lambda: convert(history, source="llama_index", target="openai_chat")) == (
        "not_representable", 1, "messages[1].content[0]")
    assert convert(history, source="llama_index", target="openai_chat",
                   target_options={"drop": ["reasoning"]}) == [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": [{"type": "text", "text": "4"}]}]


def test_openai_chat_reasoning_to_llama_index_and_back() -> None:
    """openai_chat's mark is its own: LlamaIndex writes the part as a ThinkingBlock, which
    reads back as the same reasoning (same transcript hash)."""
    direct = openai_chat.to_messages(DEEPSEEK)
    written = convert(DEEPSEEK, source="openai_chat", target="llama_index")
    assert written[1].blocks == [ThinkingBlock(content=THOUGHT), TextBlock(text="4")]
    assert transcript_hash(llama_index.to_messages(written)) == transcript_hash(direct)


def test_llama_index_reasoning_to_langchain_carries_it() -> None:
    via = llama_index.to_messages([from_openai_message_dict(m) for m in DEEPSEEK])
    back = langchain.to_messages(langchain.from_messages(via))
    assert transcript_hash(back) == transcript_hash(via)


def test_a_run_whose_model_reasons_reads_the_same_from_events_and_memory() -> None:
    reply = from_openai_message_dict({"role": "assistant", "content": "4",
                                      "reasoning_content": THOUGHT})

    def respond(messages: Sequence[ChatMessage], **options: Any) -> ChatMessage:
        return reply

    agent = FunctionAgent(name="calc", tools=[add], system_prompt="Be brief.", streaming=False,
                          llm=MockFunctionCallingLLM(response_generator=respond))

    async def go() -> tuple[list[Any], list[ChatMessage]]:
        memory = Memory.from_defaults(session_id="s", token_limit=1_000_000)
        handler = agent.run(user_msg="2+2?", memory=memory)
        events = [copy.deepcopy(event) async for event in handler.stream_events()]
        await handler
        return events, await memory.aget_all()

    events, memory = asyncio.run(go())
    answer = AIMessage(content=[marked(THOUGHT, **{"from": "reasoning_content"}),
                                TextPart(text="4")])
    assert llama_index.events_to_messages(events) == [
        SystemMessage(content="Be brief."), HumanMessage(content="2+2?"),
        answer.model_copy(update={"name": "calc"})]
    assert llama_index.events_to_messages(llama_index.dump_events(events)) == (
        llama_index.events_to_messages(events))
    assert llama_index.to_messages(memory) == [HumanMessage(content="2+2?"), answer]
