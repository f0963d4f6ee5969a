"""LangChain and LlamaIndex objects in kept fields, and two documented limits of event streams.

* A pydantic model or a dataclass (whose Python-mode dump is a dict) in a kept LangChain
  field (``additional_kwargs``, ``response_metadata``, ``artifact``, an extra attribute) or in
  a LlamaIndex field that takes any value is not JSON: ``unserializable_value`` at its exact
  path, checked on the value the message holds, before any dump. A retriever tool's
  ``Document`` artifact is dropped under ``drop_artifacts=True``; the errors say what to do for
  that artifact and for the parsed object of a structured reply, only when that object is
  the value at the error's path. A key only the dump holds (a computed field, a key a
  serializer adds) is kept as the dump gives it, checked as JSON.
* A token-limited LlamaIndex ``Memory`` that flushed every earlier message gives an input with
  an empty history: refused, and the error names that cause beside another conversation.
* A ``chat_history`` written by ``from_messages`` keeps its names in memory (a documented
  difference between the two views of a run).
"""

from __future__ import annotations

import asyncio
import dataclasses
import warnings
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage as LcAI
from langchain_core.messages import HumanMessage as LcHuman
from langchain_core.messages import ToolMessage as LcTool
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ThinkingBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool
from pydantic import BaseModel, computed_field, model_serializer

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain as lc
from tracebridge.adapters import llama_index as li

JSON_VALUE = "expected a JSON value (dict, list, str, int, float, bool, None), got "
OBJECT_SAID = ("a pydantic model or a dataclass is refused rather than kept as the dict its dump "
               "gives, which would read back as a dict")


class Answer(BaseModel):
    answer: int


@dataclasses.dataclass
class Point:
    x: int


def refused(read: Any) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as caught:
        read()
    error = caught.value
    return error.code, error.index, error.path, error.detail


# --- LangChain: a real retriever tool's Documents in ToolMessage.artifact -----------------------


class Scripted(BaseChatModel):
    replies: list[Any]
    at: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        reply = self.replies[self.at]
        self.at += 1
        return ChatResult(generations=[ChatGeneration(message=reply)])


@tool(response_format="content_and_artifact")
def retrieve(query: str) -> tuple[str, list[Document]]:
    """Retrieve documents."""
    return "Paris is in France", [Document(page_content="Paris is in France",
                                           metadata={"source": "wiki"}, id="d1")]


def retriever_run() -> list[Any]:
    model = Scripted(replies=[
        LcAI("", tool_calls=[{"name": "retrieve", "args": {"query": "paris"}, "id": "r1"}]),
        LcAI("France"),
    ])
    with warnings.catch_warnings():  # moved to langchain.agents; still LangGraph's prebuilt
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(model, [retrieve])
    out = agent.invoke({"messages": [LcHuman("where is paris", id="u1")]})
    messages: list[Any] = out["messages"]
    assert type(messages[2].artifact[0]) is Document
    return messages


def test_a_retrievers_documents_are_refused_where_the_first_one_is() -> None:
    messages = retriever_run()
    assert refused(lambda: lc.to_messages(messages)) == (
        "unserializable_value", 2, "messages[2].artifact[0]",
        f"{JSON_VALUE}Document Document(id='d1', metadata={{'source': 'wiki'}}, "
        f"page_content='Paris is in France'); a ToolMessage's artifact is kept only as JSON: "
        f"to_messages(..., drop_artifacts=True) drops the Documents a content_and_artifact "
        f"tool returns (recording its type as metadata.langchain.artifact_dropped)",
    )


def test_a_retrievers_documents_are_dropped_with_drop_artifacts() -> None:
    messages = retriever_run()
    typed = lc.to_messages(messages, drop_artifacts=True)
    assert typed[2] == tb.ToolMessage(content="Paris is in France", tool_call_id="r1",
                                      name="retrieve", id=messages[2].id,
                                      metadata={"langchain": {"artifact_dropped": "list"}})
    assert lc.from_messages(typed)[2].artifact is None


def test_an_artifact_object_says_drop_artifacts_drops_it() -> None:
    call = LcAI("", tool_calls=[{"name": "f", "args": {}, "id": "c"}])
    result = LcTool("r", tool_call_id="c", artifact={"points": [Point(1)]})
    assert refused(lambda: lc.to_messages([LcHuman("x"), call, result])) == (
        "unserializable_value", 2, "messages[2].artifact.points[0]",
        f"{JSON_VALUE}Point Point(x=1); a ToolMessage's artifact is kept only as JSON: "
        f"to_messages(..., drop_artifacts=True) drops an artifact that is not JSON (recording "
        f"its type as metadata.langchain.artifact_dropped)",
    )
    typed = lc.to_messages([LcHuman("x"), call, result], drop_artifacts=True)
    assert typed[2].metadata == {"langchain": {"artifact_dropped": "dict"}}


def test_a_json_artifact_is_kept_as_a_copy() -> None:
    call = LcAI("", tool_calls=[{"name": "f", "args": {}, "id": "c"}])
    artifact = {"docs": [{"page_content": "p", "n": 1}]}
    for result in (LcTool("r", tool_call_id="c", artifact=artifact),  # the fast path
                   LcTool("r", tool_call_id="c", artifact=artifact, run="r1")):  # the general
        typed = lc.to_messages([LcHuman("x"), call, result])
        kept = typed[2].metadata["langchain"]["artifact"]
        assert kept == artifact
        assert kept is not artifact
        assert kept["docs"][0] is not artifact["docs"][0]


# --- LangChain: objects in additional_kwargs, response_metadata and extra attributes ----------


def test_a_structured_replys_parsed_object_is_refused_saying_what_to_do() -> None:
    reply = LcAI('{"answer": 3}', additional_kwargs={"parsed": Answer(answer=3)})
    assert refused(lambda: lc.to_messages([LcHuman("q"), reply])) == (
        "unserializable_value", 1, "messages[1].additional_kwargs.parsed",
        f"{JSON_VALUE}Answer Answer(answer=3); {OBJECT_SAID}. This is the parsed object of a "
        f"structured reply (ChatOpenAI's with_structured_output keeps it here): the message's "
        f"content holds the same reply as JSON text, so remove the key before converting, or "
        f"put parsed.model_dump() in its place to keep it as a dict",
    )


def test_a_parsed_dict_is_kept() -> None:
    reply = LcAI('{"answer": 3}', additional_kwargs={"parsed": {"answer": 3}})
    typed = lc.to_messages([LcHuman("q"), reply])
    assert typed[1].metadata == {"langchain": {"additional_kwargs": {"parsed": {"answer": 3}}}}


@pytest.mark.parametrize(("message", "path", "said"), [
    (LcHuman("x", run=Answer(answer=1)), "messages[0].run", "Answer Answer(answer=1)"),
    (LcHuman("x", run={"at": [Point(2)]}), "messages[0].run.at[0]", "Point Point(x=2)"),
    (LcHuman("x", response_metadata={"r": [1, Point(1)]}), "messages[0].response_metadata.r[1]",
     "Point Point(x=1)"),
    (LcHuman("x", additional_kwargs={"k": {"deep": Answer(answer=2)}}),
     "messages[0].additional_kwargs.k.deep", "Answer Answer(answer=2)"),
    (LcAI("x", response_metadata={"model": Answer(answer=4)}),
     "messages[0].response_metadata.model", "Answer Answer(answer=4)"),
])
def test_an_object_in_a_kept_field_is_refused_at_its_path(
    message: Any, path: str, said: str
) -> None:
    assert refused(lambda: lc.to_messages([message])) == (
        "unserializable_value", 0, path, f"{JSON_VALUE}{said}; {OBJECT_SAID}")


class Tagged(LcHuman):
    run: Answer | None = None


def test_an_object_field_a_subclass_declares_is_refused() -> None:
    assert refused(lambda: lc.to_messages([Tagged("x", run=Answer(answer=5))])) == (
        "unserializable_value", 0, "messages[0].run",
        f"{JSON_VALUE}Answer Answer(answer=5); {OBJECT_SAID}")


def test_a_tuple_is_still_refused_without_the_objects_words() -> None:
    message = LcHuman("x", additional_kwargs={"k": (1, 2)})
    assert refused(lambda: lc.to_messages([message])) == (
        "unserializable_value", 0, "messages[0].additional_kwargs.k", f"{JSON_VALUE}tuple (1, 2)")


# --- LlamaIndex: objects in the fields that take any value ---------------------------------------


@pytest.mark.parametrize(("message", "path", "said"), [
    (ChatMessage(role="user", content="x", additional_kwargs={"k": Answer(answer=3)}),
     "messages[0].additional_kwargs.k", "Answer Answer(answer=3) (LlamaIndex's dump writes it "
     "as {'answer': 3}, which reads back as a dict, not as the Answer it was)"),
    (ChatMessage(role="user", content="x", additional_kwargs={"k": [1, Point(1)]}),
     "messages[0].additional_kwargs.k[1]", "Point Point(x=1) (LlamaIndex's dump writes it as "
     "{'x': 1}, which reads back as a dict, not as the Point it was)"),
    (ChatMessage(role="user", content="x", additional_kwargs={"k": b"ab"}),
     "messages[0].additional_kwargs.k", "bytes b'ab' (LlamaIndex's dump writes it as its "
     "base64 text, 'YWI=')"),
])
def test_an_object_in_additional_kwargs_is_refused_at_its_path(
    message: ChatMessage, path: str, said: str
) -> None:
    assert refused(lambda: li.to_messages([message])) == (
        "unserializable_value", 0, path, f"{JSON_VALUE}{said}")


def test_an_object_in_a_blocks_free_field_is_refused_at_its_path() -> None:
    call = ChatMessage(role="assistant", blocks=[ToolCallBlock(
        tool_call_id="c", tool_name="f", tool_kwargs={"o": Answer(answer=1)})])
    result = ChatMessage(role="tool", content="r", additional_kwargs={"tool_call_id": "c"})
    assert refused(lambda: li.to_messages([ChatMessage(role="user", content="x"), call,
                                           result])) == (
        "unserializable_value", 1, "messages[1].blocks[0].tool_kwargs.o",
        f"{JSON_VALUE}Answer Answer(answer=1) (LlamaIndex's dump writes it as {{'answer': 1}}, "
        f"which reads back as a dict, not as the Answer it was)")
    thinking = ChatMessage(role="assistant", blocks=[ThinkingBlock(
        content="t", additional_information={"o": Point(1)})])
    assert refused(lambda: li.to_messages([ChatMessage(role="user", content="x"),
                                           thinking])) == (
        "unserializable_value", 1, "messages[1].blocks[0].additional_information.o",
        f"{JSON_VALUE}Point Point(x=1) (LlamaIndex's dump writes it as {{'x': 1}}, which reads "
        f"back as a dict, not as the Point it was)")


async def add(a: int, b: int) -> int:
    """Add."""
    return a + b


def events_of(agent: FunctionAgent, texts: list[str], memory: Memory | None = None,
              **kwargs: Any) -> list[Any]:
    async def main() -> list[Any]:
        events: list[Any] = []
        for text in texts:
            handler = agent.run(user_msg=text, memory=memory, **kwargs)
            events += [event async for event in handler.stream_events()]
            await handler
        return events
    return asyncio.run(main())


def test_a_replys_parsed_object_in_an_event_stream_is_refused() -> None:
    reply = ChatMessage(role="assistant", content='{"answer": 3}',
                        additional_kwargs={"parsed": Answer(answer=3)})
    agent = FunctionAgent(tools=[], system_prompt="sys",
                          llm=MockFunctionCallingLLM(response_generator=lambda m, **kw: reply))
    events = events_of(agent, ["q"])
    kinds = [type(event).__name__ for event in events]
    output = kinds.index("AgentOutput")
    assert refused(lambda: li.events_to_messages(events)) == (
        "unserializable_value", output,
        f"events[{output}].data.response.additional_kwargs.parsed",
        f"{JSON_VALUE}Answer Answer(answer=3) (LlamaIndex's dump writes it as {{'answer': 3}}, "
        f"which reads back as a dict, not as the Answer it was)")


# --- LlamaIndex: a token-limited memory that flushed everything ----------------------------------


def test_a_memory_that_flushed_everything_is_refused_naming_that_cause() -> None:
    script = [ChatMessage(role="assistant", blocks=[ToolCallBlock(
                  tool_call_id="c0", tool_name="add", tool_kwargs={"a": 1, "b": 1})]),
              ChatMessage(role="assistant", content="answer " + "blah " * 3000),
              ChatMessage(role="assistant", content="short answer")]
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(fn=add)], system_prompt="sys",
                          llm=MockFunctionCallingLLM(
                              response_generator=lambda m, **kw: script.pop(0)))
    memory = Memory.from_defaults(session_id="s43-one-conversation", token_limit=4000)
    events = events_of(agent, ["add 1 1", "thanks, and now?"], memory)
    assert [m.content for m in events[9].input] == ["sys", "thanks, and now?"]
    code, index, path, detail = refused(lambda: li.events_to_messages(events))
    assert (code, index, path) == ("ambiguous_trace", 9, "events[9].data.input")
    start = "this input holds no history after its system messages, none of the conversation "
    end = ("either it begins another conversation (another run with a memory of its own, "
           "logged in the same list), or its memory has a token limit and flushed every "
           "earlier message (a long reply can make it flush them all); from the events alone "
           "the two look the same. For one conversation, read the memory view (to_messages("
           "await memory.aget_all())); otherwise split the list: events[:9] and events[9:] "
           "are each read on their own")
    assert detail.startswith(start + "read from the events before it (the last, an assistant "
                             "message 'answer blah blah")
    assert detail.endswith(" from events[7]): " + end)
    held = asyncio.run(memory.aget_all())
    assert [m.type for m in li.to_messages(held)] == ["human", "ai", "tool", "ai", "human", "ai"]


# --- LlamaIndex: names a given history keeps in memory (a known difference) ----------------------


def test_names_in_a_given_history_stay_in_memory_only() -> None:
    history = li.from_messages([
        tb.HumanMessage(content="weather?"),
        tb.AIMessage(content="", name="planner",
                     tool_calls=[tb.ToolCall(name="get_weather", args={}, id="c1")]),
        tb.ToolMessage(content="18C", tool_call_id="c1", name="get_weather"),
        tb.AIMessage(content="18C", name="planner"),
    ])
    agent = FunctionAgent(tools=[], system_prompt="sys", llm=MockFunctionCallingLLM(
        response_generator=lambda m, **kw: ChatMessage(role="assistant", content="ok")))
    memory = Memory.from_defaults(session_id="s43-names")
    events = events_of(agent, ["thanks"], memory, chat_history=history)
    seen = li.strip_event_extras(li.events_to_messages(events))
    held = li.to_messages(asyncio.run(memory.aget_all()))
    assert [(m.type, m.name) for m in seen[:4]] == [
        ("human", None), ("ai", None), ("tool", None), ("ai", None)]
    assert [(m.type, m.name) for m in held[:4]] == [
        ("human", None), ("ai", "planner"), ("tool", "get_weather"), ("ai", "planner")]
    assert [m.model_copy(update={"name": None}) for m in held] == seen


def test_openai_sdk_calls_in_additional_kwargs_are_still_read_as_calls() -> None:
    # what llama-index-llms-openai keeps there: the reader reads each as its JSON dump
    from openai.types.chat.chat_completion_message_tool_call import (
        ChatCompletionMessageToolCall,
        Function,
    )
    entry = ChatCompletionMessageToolCall(id="c", type="function",
                                          function=Function(name="f", arguments='{"a": 1}'))
    call = ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [entry]})
    result = ChatMessage(role="tool", content="r", additional_kwargs={"tool_call_id": "c"})
    typed = li.to_messages([ChatMessage(role="user", content="x"), call, result])
    assert typed[1].tool_calls == [tb.ToolCall(name="f", args={"a": 1}, id="c", metadata={
        "llama_index": {"entry": {"function": {"arguments": '{"a": 1}'}, "type": "function"},
                        "entry_index": 0, "in_blocks": False}})]


# --- LangChain: keys only the dump holds, and the hint at the error's own value ------------------


class Counted(LcAI):
    @computed_field  # type: ignore[prop-decorator]
    @property
    def words(self) -> int:
        return len(str(self.content).split())


class Spanned(LcAI):
    @computed_field  # type: ignore[prop-decorator]
    @property
    def span(self) -> tuple[int, int]:
        return (0, len(str(self.content)))


class Stamped(LcAI):
    @model_serializer(mode="wrap")
    def _stamped(self, handler: Any) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        return {**dumped, "stamp": {"by": ["app"]}}


@pytest.mark.parametrize(("message", "extra"), [
    (Counted(content="a b", id="a1"), {"words": 2}),
    (Stamped(content="a b", id="a1"), {"stamp": {"by": ["app"]}}),
])
def test_a_key_only_the_dump_holds_is_kept_as_an_extra_attribute(
    message: Any, extra: dict[str, Any]
) -> None:
    typed = lc.to_messages([LcHuman("q", id="u1"), message])
    assert typed[1] == tb.AIMessage(content="a b", id="a1",
                                    metadata={"langchain": {"extra": extra}})
    back = lc.from_messages(typed)[1]
    assert type(back) is LcAI
    assert back.__pydantic_extra__ == extra
    assert lc.to_messages([LcHuman("q", id="u1"), back]) == typed


def test_a_key_only_the_dump_holds_is_checked_as_json() -> None:
    assert refused(lambda: lc.to_messages([LcHuman("q"), Spanned(content="a b")])) == (
        "unserializable_value", 1, "messages[1].span", f"{JSON_VALUE}tuple (0, 3)")


def test_the_object_hint_is_not_given_for_a_fault_elsewhere() -> None:
    reply = LcAI("x", additional_kwargs={"a": {1: "x"}, "b": Answer(answer=1)})
    assert refused(lambda: lc.to_messages([LcHuman("q"), reply])) == (
        "unserializable_value", 1, "messages[1].additional_kwargs.a",
        "object keys must be strings, got int 1")


def test_the_object_hint_is_given_at_the_objects_own_path() -> None:
    reply = LcAI("x", additional_kwargs={"a b": [Answer(answer=1)], "c": {1: "x"}})
    assert refused(lambda: lc.to_messages([LcHuman("q"), reply])) == (
        "unserializable_value", 1, "messages[1].additional_kwargs['a b'][0]",
        f"{JSON_VALUE}Answer Answer(answer=1); {OBJECT_SAID}")


def test_an_artifact_fault_beside_documents_does_not_name_them() -> None:
    call = LcAI("", tool_calls=[{"name": "f", "args": {}, "id": "c"}])
    result = LcTool("r", tool_call_id="c",
                    artifact={"ids": {1: "d1"}, "docs": [Document(page_content="p")]})
    assert refused(lambda: lc.to_messages([LcHuman("x"), call, result])) == (
        "unserializable_value", 2, "messages[2].artifact.ids",
        "object keys must be strings, got int 1; a ToolMessage's artifact is kept only as JSON: "
        "to_messages(..., drop_artifacts=True) drops an artifact that is not JSON (recording "
        "its type as metadata.langchain.artifact_dropped)",
    )
