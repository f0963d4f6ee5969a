"""langchain: the provider's copies of a reply's calls that LangChain's own edits leave
behind (``filter_messages(exclude_tool_calls=...)``, LangGraph's human-in-the-loop edit of a
call) are stale copies: the calls are read from ``tool_calls``, as langchain-core reads them,
the copies are kept as they are and written back byte for byte. Copies that cannot be matched
to a call stay ``conflicting_fields``.

The runs are real LangGraph runs on a scripted chat model.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    convert_to_openai_messages,
    filter_messages,
    messages_to_dict,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.types import Command, interrupt

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain

LC = "langchain"


class Scripted(BaseChatModel):
    """A chat model that replies with the given messages, in turn."""

    replies: list[Any]
    at: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        reply = self.replies[self.at]
        self.at += 1
        return ChatResult(generations=[ChatGeneration(message=reply.model_copy(deep=True))])


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18C in {city}"


def ai_at(messages: list[tb.Message], i: int) -> tb.AIMessage:
    message = messages[i]
    assert isinstance(message, tb.AIMessage)
    return message


def where(error: TraceError) -> tuple[str, int | None, str | None]:
    return error.code, error.index, error.path


def rejected(trace: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace)
    return caught.value


def refused_write(typed: list[tb.Message]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(typed)
    return caught.value


def written(trace: list[BaseMessage]) -> list[dict[str, Any]]:
    return messages_to_dict(langchain.from_messages(langchain.to_messages(trace)))


def raw_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def sent_arguments(trace: list[BaseMessage]) -> list[str]:
    """The arguments langchain-core's own converter sends for the reply's calls."""
    return [c["function"]["arguments"] for c in convert_to_openai_messages(trace)[1]["tool_calls"]]


def hitl_edited_run(reply: AIMessage, args: dict[str, Any], name: str | None = None) -> list[Any]:
    """A ReAct agent paused before its tools (``interrupt_before``), one call edited in
    ``tool_calls`` as LangGraph's docs show (``update_state``), then resumed."""
    model = Scripted(replies=[reply, AIMessage("It is 18C.", id="a2")])
    with warnings.catch_warnings():  # moved to langchain.agents; still LangGraph's prebuilt
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(
            model, [get_weather], checkpointer=InMemorySaver(), interrupt_before=["tools"]
        )
    config: Any = {"configurable": {"thread_id": "1"}}
    agent.invoke({"messages": [HumanMessage("Weather?", id="u")]}, config)
    last = agent.get_state(config).values["messages"][-1]
    last.tool_calls[0]["args"] = args
    if name is not None:
        last.tool_calls[0]["name"] = name
    agent.update_state(config, {"messages": [last]})
    messages: list[Any] = agent.invoke(None, config)["messages"]
    return messages


PARIS_RAW = raw_call("c1", "get_weather", '{"city": "Paris"}')


def openai_reply() -> AIMessage:
    return AIMessage(
        "",
        id="a1",
        additional_kwargs={"tool_calls": [PARIS_RAW], "refusal": None},
        tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}],
    )


# --- ChatOpenAI: the raw additional_kwargs["tool_calls"] ---------------------------------------


def test_a_hitl_edit_of_a_chatopenai_call_reads_the_edited_call_and_keeps_the_raw_copy() -> None:
    run = hitl_edited_run(openai_reply(), {"city": "Rome"})
    assert sent_arguments(run) == ['{"city": "Rome"}']
    assert run[2].content == "18C in Rome"
    typed = langchain.to_messages(run)
    assert typed[1] == tb.AIMessage(
        content="",
        id="a1",
        tool_calls=[
            tb.ToolCall(
                name="get_weather",
                args={"city": "Rome"},
                id="c1",
                metadata={LC: {"stale": ["additional_kwargs.tool_calls"]}},
            )
        ],
        metadata={LC: {"additional_kwargs": {"tool_calls": [PARIS_RAW], "refusal": None}}},
    )
    assert written(run) == messages_to_dict(run)
    assert langchain.to_messages(messages_to_dict(run)) == typed


def test_a_hitl_rename_of_a_call_reads_the_name_tool_calls_has() -> None:
    # LangChain links the raw call to its call by id and sends tool_calls' name
    run = hitl_edited_run(openai_reply(), {"city": "Paris"}, name="get_forecast")
    typed = langchain.to_messages([*run[:2], ToolMessage("ok", tool_call_id="c1")])
    assert [(c.name, c.args, c.metadata) for c in ai_at(typed, 1).tool_calls] == [
        ("get_forecast", {"city": "Paris"}, {LC: {"stale": ["additional_kwargs.tool_calls"]}})
    ]
    trace = [*run[:2], ToolMessage("ok", tool_call_id="c1")]
    assert written(trace) == messages_to_dict(trace)


def test_a_hitl_edited_run_converts_with_the_edited_arguments() -> None:
    run = hitl_edited_run(openai_reply(), {"city": "Rome"})
    out = tb.convert(run, source="langchain", target="openai_chat")
    assert out[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}
        ],
    }


def two_call_run() -> list[BaseMessage]:
    raw = [raw_call("c1", "f", "{}"), raw_call("c2", "g", "{}")]
    ai = AIMessage(
        "",
        id="a",
        additional_kwargs={"tool_calls": raw, "refusal": None},
        tool_calls=[{"name": "f", "args": {}, "id": "c1"}, {"name": "g", "args": {}, "id": "c2"}],
    )
    return [
        HumanMessage("q"),
        ai,
        ToolMessage("r1", tool_call_id="c1"),
        ToolMessage("r2", tool_call_id="c2"),
        AIMessage("done"),
    ]


def test_filter_messages_excluding_a_call_reads_the_calls_left_and_keeps_the_raw_copy() -> None:
    trace = filter_messages(two_call_run(), exclude_tool_calls=["c2"])
    assert sent_arguments(trace) == ["{}"]
    typed = langchain.to_messages(trace)
    # c1's raw call names it: no mark; c2's raw call is the copy of a call taken out
    assert typed[1].tool_calls == [tb.ToolCall(name="f", args={}, id="c1")]
    assert typed[1].metadata == {LC: {"additional_kwargs": {
        "tool_calls": [raw_call("c1", "f", "{}"), raw_call("c2", "g", "{}")], "refusal": None}}}
    assert [m.type for m in typed] == ["human", "ai", "tool", "ai"]
    assert written(trace) == messages_to_dict(trace)


def test_a_call_edited_after_reading_beside_a_taken_out_call_has_its_raw_call_rewritten() -> None:
    typed = langchain.to_messages(filter_messages(two_call_run(), exclude_tool_calls=["c2"]))
    ai = typed[1]
    assert isinstance(ai, tb.AIMessage)
    edited = ai.model_copy(update={"tool_calls": [
        ai.tool_calls[0].model_copy(update={"args": {"x": "REDACTED"}})]})
    back = langchain.from_messages([typed[0], edited, *typed[2:]])
    assert back[1].additional_kwargs["tool_calls"] == [
        raw_call("c1", "f", '{"x": "REDACTED"}'), raw_call("c2", "g", "{}")]
    again = langchain.to_messages(back)
    assert ai_at(again, 1).tool_calls == edited.tool_calls
    assert again[2:] == typed[2:]


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        # matching by id needs ids: an id-less raw call is matched by its place
        ([{"type": "function", "function": {"name": "f", "arguments": '{"x": 2}'}}],
         "messages[1].additional_kwargs.tool_calls[0].id"),
        # a call of tool_calls that no raw call names
        ([raw_call("c2", "f", '{"x": 1}')], "messages[1].additional_kwargs.tool_calls[0].id"),
        ([raw_call("c1", "f", '{"x": 1}'), raw_call("c1", "f", '{"x": 2}')],
         "messages[1].additional_kwargs.tool_calls"),
    ],
    ids=["no-id", "call-without-raw-call", "two-raw-calls-one-id"],
)
def test_raw_calls_that_cannot_be_matched_by_id_still_conflict(
    raw: list[Any], path: str
) -> None:
    trace = [
        HumanMessage("go"),
        AIMessage("", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}],
                  additional_kwargs={"tool_calls": raw}),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    assert where(rejected(trace)) == ("conflicting_fields", 1, path)


def test_raw_calls_without_any_parsed_call_still_conflict() -> None:
    # with both lists empty, LangChain sends the raw calls themselves
    ai = AIMessage("", additional_kwargs={"tool_calls": [raw_call("c1", "f", "{}")]})
    ai.tool_calls = []
    ai.invalid_tool_calls = []
    assert where(rejected([HumanMessage("go"), ai])) == (
        "conflicting_fields", 1, "messages[1].additional_kwargs.tool_calls")


# --- Anthropic: tool_use blocks ------------------------------------------------------------


def review_run() -> list[Any]:
    """LangGraph's "review tool calls" pattern: ``interrupt()``, then the reviewer's args put
    into the reply's tool_calls by ``Command(update=...)``; the content keeps its tool_use."""
    model = Scripted(replies=[
        AIMessage(
            [{"type": "text", "text": "Let me check."},
             {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
              "input": {"city": "san francisco"}}],
            tool_calls=[{"name": "get_weather", "args": {"city": "san francisco"},
                         "id": "toolu_01"}],
            id="msg_01",
        ),
        AIMessage("It's 18C in SF.", id="msg_02"),
    ])

    def call_llm(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def human_review_node(state: MessagesState) -> Command[Literal["call_llm", "run_tool"]]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        call = last.tool_calls[-1]
        review = interrupt({"question": "Is this correct?", "tool_call": call})
        edited = {"id": call["id"], "name": call["name"], "args": review["data"]}
        update = {"role": "ai", "content": last.content, "tool_calls": [edited], "id": last.id}
        return Command(goto="run_tool", update={"messages": [update]})

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "human_review_node" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node(call_llm)
    builder.add_node("run_tool", ToolNode([get_weather]))
    builder.add_node(human_review_node)
    builder.add_edge(START, "call_llm")
    builder.add_conditional_edges("call_llm", route)
    builder.add_edge("run_tool", "call_llm")
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "1"}}
    graph.invoke({"messages": [HumanMessage("weather in SF?", id="u")]}, config)
    resume: Command[Any] = Command(
        resume={"action": "update", "data": {"city": "San Francisco, USA"}}
    )
    messages: list[Any] = graph.invoke(resume, config)["messages"]
    return messages


def test_a_reviewed_anthropic_call_reads_the_edited_args_and_keeps_the_tool_use_block() -> None:
    run = review_run()
    assert sent_arguments(run) == ['{"city": "San Francisco, USA"}']
    typed = langchain.to_messages(run)
    assert typed[1] == tb.AIMessage(
        content=[tb.TextPart(text="Let me check.")],
        id="msg_01",
        tool_calls=[
            tb.ToolCall(
                name="get_weather",
                args={"city": "San Francisco, USA"},
                id="toolu_01",
                metadata={LC: {
                    "stale": ["content"],
                    "content_block": {"at": 1, "block": {
                        "type": "tool_use", "name": "get_weather",
                        "input": {"city": "san francisco"}}},
                }},
            )
        ],
    )
    assert written(run) == messages_to_dict(run)


def test_a_tool_use_block_renamed_in_tool_calls_is_a_stale_copy() -> None:
    block = {"type": "tool_use", "id": "c1", "name": "f", "input": {"x": 1}}
    trace = [
        HumanMessage("go"),
        AIMessage([block], tool_calls=[{"name": "h", "args": {"x": 1}, "id": "c1"}]),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    [call] = ai_at(langchain.to_messages(trace), 1).tool_calls
    assert (call.name, call.metadata[LC]["stale"]) == ("h", ["content"])
    assert written(trace) == messages_to_dict(trace)


def test_a_responses_function_call_block_edited_in_tool_calls_is_a_stale_copy() -> None:
    block = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"x": 1}',
             "id": "fc_1"}
    trace = [
        HumanMessage("go"),
        AIMessage([block], tool_calls=[{"name": "f", "args": {"x": 2}, "id": "c1"}]),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    [call] = ai_at(langchain.to_messages(trace), 1).tool_calls
    assert (call.args, call.metadata[LC]["stale"]) == ({"x": 2}, ["content"])
    assert written(trace) == messages_to_dict(trace)


@pytest.mark.parametrize(
    ("block", "path"),
    [
        # a block naming no call of tool_calls: LangChain reads it as one more call
        ({"type": "tool_use", "id": "c7", "name": "f", "input": {"x": 1}},
         "messages[1].content[0].id"),
        # a v1 tool_call block is LangChain's own standard reading of the call
        ({"type": "tool_call", "id": "c1", "name": "f", "args": {"x": 2}},
         "messages[1].content[0].args"),
    ],
    ids=["names-no-call", "v1-tool-call"],
)
def test_call_blocks_langchain_does_not_resolve_by_id_still_conflict(
    block: dict[str, Any], path: str
) -> None:
    trace = [
        HumanMessage("go"),
        AIMessage([block], tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}]),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    assert where(rejected(trace)) == ("conflicting_fields", 1, path)


def test_a_custom_block_that_disagrees_says_its_input_disagrees() -> None:
    block = {"type": "custom_tool_call", "call_id": "c1", "name": "shell", "input": "ls"}
    trace = [
        HumanMessage("go"),
        AIMessage([block], tool_calls=[{"name": "shell", "args": {"__arg1": "rm"}, "id": "c1"}]),
        ToolMessage("ok", tool_call_id="c1"),
    ]
    error = rejected(trace)
    assert where(error) == ("conflicting_fields", 1, "messages[1].content[0].input")
    assert error.detail == (
        "the custom_tool_call block's input 'ls' disagrees with tool_calls' args "
        "{'__arg1': 'rm'}"
    )


# --- Gemini: the function_call copy of the last call -------------------------------------------


def gemini_reply() -> AIMessage:
    return AIMessage(
        "",
        id="g1",
        additional_kwargs={"function_call": {"name": "get_weather",
                                             "arguments": '{"city": "Paris"}'}},
        tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "7f0c"}],
    )


def test_a_hitl_edit_of_a_gemini_call_keeps_its_function_call_copy() -> None:
    run = hitl_edited_run(gemini_reply(), {"city": "Rome"})
    assert sent_arguments(run) == ['{"city": "Rome"}']
    typed = langchain.to_messages(run)
    assert ai_at(typed, 1).tool_calls == [
        tb.ToolCall(name="get_weather", args={"city": "Rome"}, id="7f0c",
                    metadata={LC: {"stale": ["additional_kwargs.function_call"]}})
    ]
    assert written(run) == messages_to_dict(run)


def test_a_gemini_copy_of_a_renamed_call_still_conflicts() -> None:
    # the copy has no id: only its name ties it to the last call
    run = hitl_edited_run(gemini_reply(), {"city": "Paris"}, name="get_forecast")
    trace = [*run[:2], ToolMessage("ok", tool_call_id="7f0c")]
    assert where(rejected(trace)) == (
        "conflicting_fields", 1, "messages[1].additional_kwargs.function_call")


# --- the way back --------------------------------------------------------------------------


def test_a_stale_mark_whose_copy_now_names_the_call_is_refused() -> None:
    typed = langchain.to_messages(hitl_edited_run(openai_reply(), {"city": "Rome"}))
    ai = typed[1]
    assert isinstance(ai, tb.AIMessage)
    back_to_paris = ai.tool_calls[0].model_copy(update={"args": {"city": "Paris"}})
    edited = [typed[0], ai.model_copy(update={"tool_calls": [back_to_paris]}), *typed[2:]]
    assert where(refused_write(edited)) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.langchain.stale")


def test_a_stale_mark_the_reader_does_not_write_is_refused() -> None:
    typed = langchain.to_messages(hitl_edited_run(openai_reply(), {"city": "Rome"}))
    ai = typed[1]
    assert isinstance(ai, tb.AIMessage)
    call = ai.tool_calls[0].model_copy(update={"metadata": {LC: {"stale": ["elsewhere"]}}})
    edited = [typed[0], ai.model_copy(update={"tool_calls": [call]}), *typed[2:]]
    assert where(refused_write(edited)) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.langchain.stale")


def test_a_stale_block_mark_is_written_with_its_block_after_a_further_edit() -> None:
    typed = langchain.to_messages(review_run())
    ai = typed[1]
    assert isinstance(ai, tb.AIMessage)
    call = ai.tool_calls[0].model_copy(update={"args": {"city": "Oakland"}})
    edited = [typed[0], ai.model_copy(update={"tool_calls": [call]}), *typed[2:]]
    back = langchain.from_messages(edited)
    assert back[1].content[1] == {"type": "tool_use", "id": "toolu_01", "name": "get_weather",
                                  "input": {"city": "san francisco"}}
    assert back[1].tool_calls[0]["args"] == {"city": "Oakland"}
    assert langchain.to_messages(back) == edited


def test_a_stale_raw_call_whose_call_got_another_id_is_refused() -> None:
    typed = langchain.to_messages(hitl_edited_run(openai_reply(), {"city": "Rome"}))
    ai = ai_at(typed, 1)
    call = ai.tool_calls[0].model_copy(update={"id": "c9"})
    result = typed[2].model_copy(update={"tool_call_id": "c9"})
    edited = [typed[0], ai.model_copy(update={"tool_calls": [call]}), result, *typed[3:]]
    assert where(refused_write(edited)) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.langchain.stale")


def test_a_stale_function_call_copy_is_written_as_kept_after_a_further_edit() -> None:
    typed = langchain.to_messages(hitl_edited_run(gemini_reply(), {"city": "Rome"}))
    ai = ai_at(typed, 1)
    call = ai.tool_calls[0].model_copy(update={"args": {"city": "Oslo"}})
    edited = [typed[0], ai.model_copy(update={"tool_calls": [call]}), *typed[2:]]
    back = langchain.from_messages(edited)
    assert back[1].additional_kwargs == {
        "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    assert back[1].tool_calls[0]["args"] == {"city": "Oslo"}
    assert langchain.to_messages(back) == edited


def test_raw_calls_of_two_parallel_calls_one_edited_read_as_stale_and_round_trip() -> None:
    raw = [raw_call("call_paris", "get_weather", '{"city": "Lyon"}'),
           raw_call("call_rome", "get_weather", '{"city": "Rome"}')]
    ai = AIMessage("", id="ai-1", additional_kwargs={"tool_calls": raw}, tool_calls=[
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_paris"},
        {"name": "get_weather", "args": {"city": "Rome"}, "id": "call_rome"},
    ])
    trace = [HumanMessage("Weather in Paris and Rome?"), ai,
             ToolMessage("18C", tool_call_id="call_paris"),
             ToolMessage("24C", tool_call_id="call_rome"), AIMessage("Paris 18C, Rome 24C.")]
    calls = ai_at(langchain.to_messages(trace), 1).tool_calls
    assert [(c.args, c.metadata) for c in calls] == [
        ({"city": "Paris"}, {LC: {"stale": ["additional_kwargs.tool_calls"]}}),
        ({"city": "Rome"}, {}),
    ]
    assert written(trace) == messages_to_dict(trace)


def test_a_stale_block_mark_whose_block_now_names_the_call_is_refused() -> None:
    typed = langchain.to_messages(review_run())
    ai = ai_at(typed, 1)
    call = ai.tool_calls[0].model_copy(update={"args": {"city": "san francisco"}})
    edited = [typed[0], ai.model_copy(update={"tool_calls": [call]}), *typed[2:]]
    error = refused_write(edited)
    assert where(error) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.langchain.stale")
    assert error.detail == (
        "this call is marked as having a stale tool_use block (metadata.langchain.stale names "
        "'content'), but the block kept for it (metadata.langchain.content_block) names the "
        "call as it is now: it would read back without the mark (take 'content' out of the "
        "mark, and the block's name and arguments out of the kept block, to write the block "
        "from the call)"
    )
