"""LlamaIndex, audit s38: a null namespace in the writer, raw values the event road merged or
kept under alias names, huge ints in block fields told nowhere, drops that left out what has a
place, raw errors of ``strip_event_extras``, and a lone surrogate in a key accepted on one road
and refused on the other. Each case is the audit's repro."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.agent.workflow.workflow_events import (
    AgentInput,
    AgentOutput,
    ToolCallResult,
)
from llama_index.core.base.llms.types import TextBlock, ThinkingBlock, ToolCallBlock, VideoBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.schema import Document
from llama_index.core.tools import FunctionTool, ToolOutput
from workflows.context.serializers import JsonSerializer

from tracebridge import (
    AIMessage,
    Citation,
    HumanMessage,
    ImagePart,
    ReasoningPart,
    RefusalPart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index
from tracebridge.hashing import transcript_hash
from tracebridge.messages import AudioReference
from tracebridge.registry import get_adapter

GOLDEN = Path(__file__).resolve().parent.parent / "golden_traces"
NS = "llama_index"


def caught(call: Callable[[], Any]) -> tuple[Any, ...]:
    with pytest.raises(TraceError) as error:
        call()
    return (error.value.code, error.value.index, error.value.path, error.value.detail)


# --- 1. a null namespace in the writer -------------------------------------------------

N = {NS: None}
NULL_NAMESPACE = "metadata['llama_index'] holds what to_messages keeps there, a dict; found None"
CALL = [HumanMessage(content="q"),
        AIMessage(tool_calls=[ToolCall(name="f", args={"a": 1}, id="c1", metadata=N)]),
        ToolMessage(content="r", tool_call_id="c1")]


@pytest.mark.parametrize(("conversation", "index", "path"), [
    ([HumanMessage(content="x", metadata=N)], 0, "messages[0].metadata.llama_index"),
    ([HumanMessage(content=[TextPart(text="x", metadata=N), TextPart(text="y")])], 0,
     "messages[0].content[0].metadata.llama_index"),
    ([HumanMessage(content=[ImagePart(url="https://a.com/x.png", metadata=N)])], 0,
     "messages[0].content[0].metadata.llama_index"),
    ([HumanMessage(content="q"),
      AIMessage(content="Oslo.", citations=[Citation(url="https://a.com", metadata=N)])], 1,
     "messages[1].citations[0].metadata.llama_index"),
    ([HumanMessage(content="q"),
      AIMessage(content="", audio=AudioReference(id="au1", data="UklGRg==", metadata=N))], 1,
     "messages[1].audio.metadata.llama_index"),
    ([HumanMessage(content="q"), AIMessage(content=[RefusalPart(text="No.", metadata=N)])], 1,
     "messages[1].content[0].metadata.llama_index"),
    ([HumanMessage(content="q"),
      AIMessage(content=[ReasoningPart(text="t", metadata=N), TextPart(text="a")])], 1,
     "messages[1].content[0].metadata.llama_index"),
    (CALL, 1, "messages[1].tool_calls[0].metadata.llama_index"),
], ids=["message", "text part", "image part", "citation", "spoken reply", "refusal",
        "reasoning", "tool call"])
def test_a_null_namespace_is_refused_where_it_is(conversation: list[Any], index: int,
                                                 path: str) -> None:
    assert caught(lambda: llama_index.from_messages(conversation)) == (
        "not_representable", index, path, NULL_NAMESPACE)


def test_a_null_namespace_on_a_call_is_refused_whatever_is_dropped() -> None:
    assert caught(lambda: llama_index.from_messages(CALL, drop=list(llama_index.DROPPABLE))) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.llama_index",
        NULL_NAMESPACE)


def test_a_null_namespace_on_the_second_call_is_refused_at_it() -> None:
    conversation = [HumanMessage(content="q"), AIMessage(tool_calls=[
        ToolCall(name="f", args={}, id="c1"), ToolCall(name="g", args={}, id="c2", metadata=N)])]
    assert caught(lambda: llama_index.from_messages(conversation)) == (
        "not_representable", 1, "messages[1].tool_calls[1].metadata.llama_index",
        NULL_NAMESPACE)


# --- 2. raw_output with keys that are not strings --------------------------------------


def _agent_run(returns: Any) -> list[Any]:
    """A real FunctionAgent run whose tool ``lookup`` returns ``returns``."""

    def lookup(x: int) -> Any:
        """look up"""
        return returns

    script = [ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="lookup", tool_kwargs={"x": 1})]),
        ChatMessage(role="assistant", content="done")]
    llm = MockFunctionCallingLLM(response_generator=lambda m, **k: script.pop(0))
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(fn=lookup)], llm=llm,
                          system_prompt="S")

    async def main() -> list[Any]:
        handler = agent.run(user_msg="go", memory=Memory.from_defaults(session_id="s"))
        events = [event async for event in handler.stream_events()]
        await handler
        return events

    return asyncio.run(main())


@pytest.mark.parametrize(("returns", "path", "key"), [
    ({1: "a", "1": "b"}, "events[4].data.tool_output.raw_output", "int 1"),
    ({1: "a"}, "events[4].data.tool_output.raw_output", "int 1"),
    ([{1: "a"}], "events[4].data.tool_output.raw_output[0]", "int 1"),
    ({"n": {(1, 2): "a"}}, "events[4].data.tool_output.raw_output.n", "tuple (1, 2)"),
], ids=["merged", "int key", "in a list", "nested"])
def test_a_raw_output_key_that_is_no_string_is_refused_as_dump_events_refuses_it(
    returns: Any, path: str, key: str
) -> None:
    events = _agent_run(returns)
    assert type(events[4]).__name__ == "ToolCallResult"
    text = str(key.split(" ", 1)[1])
    refused = ("unserializable_value", 4, path,
               f"object keys must be strings, got {key} (LlamaIndex's dump writes it as "
               f"{text!r}, over any key of that text)")
    assert caught(lambda: llama_index.dump_events(events)) == refused
    assert caught(lambda: llama_index.events_to_messages(events)) == refused


def one_call_events(text: str, raw_input: Any, raw_output: Any) -> list[Any]:
    """A run of one call of ``t`` whose output shows ``text`` and holds the raw values."""
    return [
        AgentInput(input=[ChatMessage(role="user", content="go")], current_agent_name="A"),
        AgentOutput(response=ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id="c1", tool_name="t", tool_kwargs={"x": 1})]),
            current_agent_name="A"),
        ToolCallResult(tool_name="t", tool_kwargs={"x": 1}, tool_id="c1", return_direct=False,
                       tool_output=ToolOutput(tool_name="t", blocks=[TextBlock(text=text)],
                                              raw_input=raw_input, raw_output=raw_output)),
    ]


def test_a_raw_input_key_that_is_no_string_is_refused_as_dump_events_refuses_it() -> None:
    events = one_call_events("r", {"kwargs": {"x": {1: "a"}}}, "r")
    refused = ("unserializable_value", 2, "events[2].data.tool_output.raw_input.kwargs.x",
               "object keys must be strings, got int 1 (LlamaIndex's dump writes it as '1', "
               "over any key of that text)")
    assert caught(lambda: llama_index.dump_events(events)) == refused
    assert caught(lambda: llama_index.events_to_messages(events, allow_pending=True)) == refused


def test_a_plain_dict_raw_output_of_a_run_is_still_kept() -> None:
    events = _agent_run({"1": "b"})
    tool = llama_index.events_to_messages(events)[3]
    assert tool.metadata == {NS: {"event": {"raw_output": {"1": "b"}}}}
    assert llama_index.events_to_messages(llama_index.dump_events(events)) == (
        llama_index.events_to_messages(events))


# --- 3. a pydantic raw_output by field name, as its dump writes it ----------------------


def test_a_model_raw_output_is_kept_by_field_name_on_every_road() -> None:
    doc = Document(text="doc", id_="d1")
    events = one_call_events("doc", {"args": [], "kwargs": {"x": 1}}, doc)
    objects = llama_index.events_to_messages(events, allow_pending=True)
    dumped = llama_index.events_to_messages(
        json.loads(json.dumps(llama_index.dump_events(events))), allow_pending=True)
    serialized = llama_index.events_to_messages(
        [json.loads(JsonSerializer().serialize(event)) for event in events], allow_pending=True)
    kept = objects[-1].metadata[NS]["event"]["raw_output"]
    assert kept == doc.model_dump(mode="json")
    assert {"metadata", "metadata_separator"} <= kept.keys()
    assert not {"extra_info", "metadata_seperator"} & kept.keys()
    assert objects == dumped == serialized


def test_a_model_raw_input_is_kept_by_field_name() -> None:
    doc = Document(text="doc", id_="d1")
    events = one_call_events("r", {"doc": doc}, "r")
    objects = llama_index.events_to_messages(events, allow_pending=True)
    assert objects[-1].metadata[NS]["event"]["raw_input"] == {"doc": doc.model_dump(mode="json")}
    assert objects == llama_index.events_to_messages(llama_index.dump_events(events),
                                                     allow_pending=True)


# --- 4. huge ints in a ThinkingBlock's num_tokens and a VideoBlock's fps ----------------

H = 10**5000
HUGE = "an integer of more than 4,300 digits: JSON readers refuse it"
THINKING = [ChatMessage(role="user", content="q"),
            ChatMessage(role="assistant",
                        blocks=[ThinkingBlock(content="x", num_tokens=H), TextBlock(text="a")])]
VIDEO = [ChatMessage(role="user", blocks=[VideoBlock(url="https://a.com/v.mp4", fps=H)])]


@pytest.mark.parametrize(("read", "index", "path"), [
    (lambda: llama_index.to_messages(THINKING), 1, "messages[1].blocks[0].num_tokens"),
    (lambda: llama_index.to_messages([m.model_dump(mode="json") for m in THINKING]), 1,
     "messages[1].blocks[0].num_tokens"),
    (lambda: llama_index.events_to_messages([
        AgentInput(input=[THINKING[0]], current_agent_name="A"),
        AgentOutput(response=THINKING[1], current_agent_name="A")]), 1,
     "events[1].data.response.blocks[0].num_tokens"),
    (lambda: llama_index.to_messages(VIDEO), 0, "messages[0].blocks[0].fps"),
    (lambda: llama_index.to_messages([m.model_dump(mode="json") for m in VIDEO]), 0,
     "messages[0].blocks[0].fps"),
], ids=["thinking objects", "thinking dicts", "thinking events", "video objects",
        "video dicts"])
def test_a_huge_int_in_a_block_field_is_refused_at_the_field(
    read: Callable[[], Any], index: int, path: str
) -> None:
    assert caught(read) == ("unserializable_value", index, path, HUGE)


# --- 5. drop= leaves out only what has no place ----------------------------------------

CONVERSATION = [
    HumanMessage(content="q"),
    AIMessage(content=[RefusalPart(text="No.")]),
    HumanMessage(content="q2"),
    AIMessage(content="Oslo.", citations=[
        Citation(url="https://a.example", title="A", start_index=0, end_index=4)]),
]


@pytest.mark.parametrize("drop", [["refusals"], ["citations"]])
def test_a_drop_keeps_a_last_refusal_and_citations_without_cited_text(drop: list[str]) -> None:
    back = llama_index.to_messages(llama_index.from_messages(CONVERSATION, drop=drop))
    assert back == CONVERSATION


@pytest.mark.parametrize(("adapter", "case", "drop"), [
    ("openai_chat", "refusal", ["refusals"]), ("openai_agents", "refusal", ["refusals"]),
    ("openai_chat", "url_citations", ["citations"])])
def test_a_golden_with_a_refusal_or_citations_keeps_them_with_a_drop(
    adapter: str, case: str, drop: list[str]
) -> None:
    golden = json.loads((GOLDEN / adapter / f"{case}.json").read_text(encoding="utf-8"))
    messages = get_adapter(adapter).to_messages(golden["trace"], **golden.get("to_options", {}))
    back = llama_index.to_messages(llama_index.from_messages(messages, drop=drop),
                                   allow_pending=True)
    assert transcript_hash(back) == transcript_hash(messages)
    assert back == llama_index.to_messages(llama_index.from_messages(messages),
                                           allow_pending=True)


def test_drop_refusals_leaves_out_only_the_refusal_that_is_not_last() -> None:
    reply = AIMessage(content=[RefusalPart(text="a"), TextPart(text="t"), RefusalPart(text="b")])
    back = llama_index.to_messages(llama_index.from_messages([reply], drop=["refusals"]),
                                   allow_pending=True)
    assert back == [AIMessage(content=[TextPart(text="t"), RefusalPart(text="b")])]


def test_drop_citations_leaves_out_only_the_citation_with_cited_text() -> None:
    plain = Citation(url="https://b.example", title="B", start_index=0, end_index=4)
    reply = AIMessage(content="Oslo.", citations=[
        Citation(url="https://a.example", cited_text="Oslo is the capital"), plain])
    written = llama_index.from_messages([HumanMessage(content="q"), reply], drop=["citations"])
    assert written[1].additional_kwargs == {"annotations": [{
        "type": "url_citation",
        "url_citation": {"url": "https://b.example", "title": "B", "start_index": 0,
                         "end_index": 4}}]}
    back = llama_index.to_messages(written)
    assert back[1] == reply.model_copy(update={"citations": [plain]})


def test_drop_citations_writes_no_annotations_when_every_citation_is_left_out() -> None:
    reply = AIMessage(content="Oslo.", citations=[
        Citation(url="https://a.example", cited_text="Oslo is the capital")])
    written = llama_index.from_messages([HumanMessage(content="q"), reply], drop=["citations"])
    assert written[1].additional_kwargs == {}


# --- 6a. strip_event_extras refuses a namespace that is not a dict ----------------------


@pytest.mark.parametrize("value", [5, "ab", [1], None])
def test_strip_event_extras_refuses_a_namespace_that_is_no_dict(value: Any) -> None:
    messages = [HumanMessage(content="x", metadata={NS: value})]
    detail = ("metadata['llama_index'] holds what to_messages keeps there, a dict; found "
              f"{value!r}")
    refused = ("not_representable", 0, "messages[0].metadata.llama_index", detail)
    assert caught(lambda: llama_index.strip_event_extras(messages)) == refused
    assert caught(lambda: llama_index.from_messages(messages)) == refused


def test_strip_event_extras_tells_the_message_that_holds_it() -> None:
    messages = [HumanMessage(content="x"), AIMessage(content="y", metadata={NS: [1]})]
    assert caught(lambda: llama_index.strip_event_extras(messages))[:3] == (
        "not_representable", 1, "messages[1].metadata.llama_index")


# --- 6b. a lone surrogate in a key: the object road refuses what LlamaIndex cannot dump --

SURROGATE = ChatMessage(role="user", content="a", additional_kwargs={"\udc00": "x"})
SURROGATE_EVENTS = [
    AgentInput(input=[SURROGATE], current_agent_name="A"),
    AgentOutput(response=ChatMessage(role="assistant", content="hi"), current_agent_name="A"),
]
CANNOT_WRITE = ("LlamaIndex cannot write this ChatMessage as JSON: UnicodeEncodeError: 'utf-8' "
                "codec can't encode character '\\udc00' in position 0: surrogates not allowed")


def test_a_surrogate_key_is_refused_on_objects_as_dump_events_refuses_it() -> None:
    with pytest.raises(UnicodeEncodeError):
        SURROGATE.model_dump(mode="json")  # LlamaIndex's own dump
    assert caught(lambda: llama_index.to_messages([SURROGATE])) == (
        "unserializable_value", 0, "messages[0].additional_kwargs", CANNOT_WRITE)
    refused = ("unserializable_value", 0, "events[0].data.input[0].additional_kwargs",
               CANNOT_WRITE)
    assert caught(lambda: llama_index.dump_events(SURROGATE_EVENTS)) == refused
    assert caught(lambda: llama_index.events_to_messages(SURROGATE_EVENTS)) == refused


def test_a_surrogate_key_in_a_dict_and_a_surrogate_value_on_objects_are_kept() -> None:
    dumped = {"role": "user", "blocks": [{"block_type": "text", "text": "a"}],
              "additional_kwargs": {"\udc00": "x"}}
    assert llama_index.to_messages([dumped]) == [
        HumanMessage(content="a", metadata={NS: {"additional_kwargs": {"\udc00": "x"}}})]
    value = ChatMessage(role="user", content="a", additional_kwargs={"k": "\udc00"})
    assert llama_index.to_messages([value]) == [
        HumanMessage(content="a", metadata={NS: {"additional_kwargs": {"k": "\udc00"}}})]


def test_a_non_ascii_key_that_llama_index_writes_is_still_read() -> None:
    message = ChatMessage(role="user", content="a", additional_kwargs={"clé": "x"})
    assert llama_index.to_messages([message]) == llama_index.to_messages(
        [message.model_dump(mode="json")]) == [
        HumanMessage(content="a", metadata={NS: {"additional_kwargs": {"clé": "x"}}})]
