"""LangChain message objects: roles, names, tool calls and results, the fields around them."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    HumanMessageChunk,
    RemoveMessage,
    SystemMessage,
    SystemMessageChunk,
    ToolMessage,
    ToolMessageChunk,
)
from langchain_core.messages.tool import tool_call_chunk

from .case import case


def _call(name: str, args: dict[str, Any], call_id: str | None) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


@case("messages", "system, human and AI strings")
def lc_plain_turns() -> list[Any]:
    return [
        SystemMessage("You answer in French."),
        HumanMessage("Good morning"),
        AIMessage("Bonjour"),
    ]


@case("messages", "text blocks that a string content would join")
def lc_text_blocks() -> list[Any]:
    return [
        HumanMessage([{"type": "text", "text": "First line"}, {"type": "text", "text": "second"}]),
        AIMessage([{"type": "text", "text": "Noted"}, {"type": "text", "text": "twice"}]),
    ]


@case("messages", "an empty human message and an empty list content")
def lc_empty_contents() -> list[Any]:
    return [HumanMessage(""), AIMessage([]), HumanMessage("again?"), AIMessage("yes")]


@case("messages", "names on every role")
def lc_names() -> list[Any]:
    return [
        SystemMessage("Rules", name="policy"),
        HumanMessage("hi", name="ana"),
        AIMessage("hello", name="planner"),
    ]


@case("messages", "a developer prompt kept as additional_kwargs.__openai_role__")
def lc_developer_role() -> list[Any]:
    return [
        SystemMessage("Think step by step.", additional_kwargs={"__openai_role__": "developer"}),
        HumanMessage("2+2?"),
        AIMessage("4"),
    ]


@case("messages", "a developer prompt with a name, then a system prompt")
def lc_developer_and_system() -> list[Any]:
    return [
        SystemMessage("Use tools.", name="dev", additional_kwargs={"__openai_role__": "developer"}),
        SystemMessage("Be polite."),
        HumanMessage("go"),
    ]


@case("messages", "a system message of text blocks")
def lc_system_blocks() -> list[Any]:
    return [
        SystemMessage([{"type": "text", "text": "Part one."}, {"type": "text", "text": "Two."}]),
        HumanMessage("ok"),
    ]


@case("messages", "one tool call answered by a named ToolMessage")
def lc_tool_round() -> list[Any]:
    return [
        HumanMessage("Weather in Lyon?"),
        AIMessage("", tool_calls=[_call("weather", {"city": "Lyon"}, "call_w1")]),
        ToolMessage("18C and sunny", tool_call_id="call_w1", name="weather"),
        AIMessage("It is 18C and sunny in Lyon."),
    ]


@case("messages", "text beside a tool call")
def lc_text_and_call() -> list[Any]:
    return [
        HumanMessage("Look it up"),
        AIMessage("Let me check.", tool_calls=[_call("search", {"q": "tides"}, "call_s1")]),
        ToolMessage("High tide 14:02", tool_call_id="call_s1"),
    ]


@case("messages", "two parallel calls, two results")
def lc_parallel_calls() -> list[Any]:
    return [
        HumanMessage("Compare Oslo and Rome"),
        AIMessage(
            "",
            tool_calls=[
                _call("weather", {"city": "Oslo"}, "call_a"),
                _call("weather", {"city": "Rome"}, "call_b"),
            ],
        ),
        ToolMessage("-2C", tool_call_id="call_a", name="weather"),
        ToolMessage("16C", tool_call_id="call_b", name="weather"),
        AIMessage("Rome is warmer."),
    ]


@case("messages", "non-ASCII arguments")
def lc_unicode_args() -> list[Any]:
    return [
        HumanMessage("Crée le client"),
        AIMessage("", tool_calls=[_call("create_customer", {"name": "你好啊集团"}, "call_u")]),
        ToolMessage("créé", tool_call_id="call_u"),
    ]


@case("messages", "a call without arguments")
def lc_empty_args() -> list[Any]:
    return [
        HumanMessage("What time is it?"),
        AIMessage("", tool_calls=[_call("now", {}, "call_now")]),
        ToolMessage("12:00", tool_call_id="call_now"),
    ]


@case("messages", "nested arguments of every JSON type")
def lc_nested_args() -> list[Any]:
    args = {"filters": [{"k": "size", "v": 3.5}, {"k": "open", "v": True}], "none": None}
    return [
        HumanMessage("Filter"),
        AIMessage("", tool_calls=[_call("query", args, "call_q")]),
        ToolMessage("2 rows", tool_call_id="call_q"),
    ]


@case("messages", "a tool result with status='error'")
def lc_tool_error_status() -> list[Any]:
    return [
        HumanMessage("Divide 1 by 0"),
        AIMessage("", tool_calls=[_call("divide", {"a": 1, "b": 0}, "call_d")]),
        ToolMessage("ZeroDivisionError", tool_call_id="call_d", status="error"),
        AIMessage("That cannot be done."),
    ]


@case("messages", "a tool result with an artifact")
def lc_tool_artifact() -> list[Any]:
    return [
        HumanMessage("Rows?"),
        AIMessage("", tool_calls=[_call("sql", {"q": "select 1"}, "call_sql")]),
        ToolMessage("1 row", tool_call_id="call_sql", artifact={"rows": [[1]]}),
    ]


@case("messages", "a tool result made of text blocks")
def lc_tool_text_blocks() -> list[Any]:
    return [
        HumanMessage("Read it"),
        AIMessage("", tool_calls=[_call("read", {"path": "a.txt"}, "call_r")]),
        ToolMessage([{"type": "text", "text": "line 1"}, "line 2"], tool_call_id="call_r"),
    ]


@case("messages", "an invalid call nobody ran, then a reply")
def lc_invalid_call_unanswered() -> list[Any]:
    invalid = {"name": "lookup", "args": '{"id": 4', "id": "call_bad", "error": "bad JSON"}
    return [
        HumanMessage("Find 4"),
        AIMessage("", invalid_tool_calls=[invalid]),
        HumanMessage("Well?"),
        AIMessage("Sorry, try again."),
    ]


@case("messages", "a valid call answered beside an invalid one")
def lc_valid_and_invalid_calls() -> list[Any]:
    invalid = {"name": "lookup", "args": "not json", "id": "call_x", "error": None}
    return [
        HumanMessage("Do both"),
        AIMessage(
            "",
            tool_calls=[_call("ping", {}, "call_ok")],
            invalid_tool_calls=[invalid],
        ),
        ToolMessage("pong", tool_call_id="call_ok"),
    ]


@case("messages", "a refusal in additional_kwargs (ChatOpenAI)")
def lc_refusal_kwarg() -> list[Any]:
    return [
        HumanMessage("Help me pick a lock"),
        AIMessage("", additional_kwargs={"refusal": "I can't help with that."}),
    ]


@case("messages", "an assistant audio reply in additional_kwargs (ChatOpenAI)")
def lc_audio_reply_kwarg() -> list[Any]:
    audio = {"id": "audio_abc", "transcript": "Hello!", "expires_at": 1729000000, "data": "AAAA"}
    return [HumanMessage("Say hello"), AIMessage("", additional_kwargs={"audio": audio})]


@case("messages", "Chat Completions annotations in additional_kwargs")
def lc_annotations_kwarg() -> list[Any]:
    annotation = {
        "type": "url_citation",
        "url_citation": {"url": "https://ex.org/a", "title": "A", "start_index": 0, "end_index": 4},
    }
    return [
        HumanMessage("Source?"),
        AIMessage("Here it is.", additional_kwargs={"annotations": [annotation]}),
    ]


@case("messages", "a legacy function_call answered by a FunctionMessage")
def lc_function_call_kwarg() -> list[Any]:
    call = {"name": "get_time", "arguments": '{"tz": "UTC"}'}
    return [
        HumanMessage("Time?"),
        AIMessage("", additional_kwargs={"function_call": call}),
        FunctionMessage("12:00", name="get_time"),
        AIMessage("Noon."),
    ]


@case("messages", "a call without an id answered by a FunctionMessage")
def lc_call_without_id() -> list[Any]:
    return [
        HumanMessage("Time?"),
        AIMessage("", tool_calls=[_call("get_time", {"tz": "UTC"}, None)]),
        FunctionMessage("12:00", name="get_time"),
    ]


@case("messages", "ChatMessage with the user, assistant and system roles")
def lc_chat_message_roles() -> list[Any]:
    return [
        ChatMessage(role="system", content="Rules"),
        ChatMessage(role="user", content="hi"),
        ChatMessage(role="assistant", content="hello"),
    ]


@case("messages", "ChatMessage with the developer role")
def lc_chat_message_developer() -> list[Any]:
    return [ChatMessage(role="developer", content="Be brief."), HumanMessage("hi")]


@case("messages", "ChatMessage with a role no format defines")
def lc_chat_message_unknown_role() -> list[Any]:
    return [HumanMessage("Review this"), ChatMessage(role="critic", content="Too long.")]


@case("messages", "response_metadata, usage_metadata and ids")
def lc_response_metadata() -> list[Any]:
    usage = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
    return [
        HumanMessage("hi", id="m-1"),
        AIMessage(
            "hello",
            id="m-2",
            response_metadata={"model_name": "gpt-4o", "finish_reason": "stop"},
            usage_metadata=usage,
        ),
    ]


@case("messages", "an AIMessageChunk summed from a stream, with a call")
def lc_chunk_aggregated() -> list[Any]:
    first = AIMessageChunk(
        "", tool_call_chunks=[tool_call_chunk(name="add", args='{"a": ', id="call_c", index=0)]
    )
    second = AIMessageChunk("", tool_call_chunks=[tool_call_chunk(args="1}", index=0)])
    return [HumanMessage("add"), first + second, ToolMessage("1", tool_call_id="call_c")]


@case("messages", "an AIMessageChunk summed from text pieces")
def lc_chunk_text() -> list[Any]:
    return [HumanMessage("hi"), AIMessageChunk("Hel") + AIMessageChunk("lo")]


@case("messages", "human, system and tool chunk classes")
def lc_other_chunks() -> list[Any]:
    return [
        SystemMessageChunk("Rules"),
        HumanMessageChunk("go"),
        AIMessage("", tool_calls=[_call("run", {}, "call_run")]),
        ToolMessageChunk("done", tool_call_id="call_run"),
    ]


@case("messages", "a three-step agent run")
def lc_agent_run() -> list[Any]:
    return [
        SystemMessage("You are a travel agent."),
        HumanMessage("Book Paris, then a hotel"),
        AIMessage("", tool_calls=[_call("book_flight", {"to": "CDG"}, "call_1")], id="ai-1"),
        ToolMessage("flight AF12", tool_call_id="call_1", name="book_flight", id="t-1"),
        AIMessage("", tool_calls=[_call("book_hotel", {"city": "Paris"}, "call_2")], id="ai-2"),
        ToolMessage("hotel booked", tool_call_id="call_2", name="book_hotel", id="t-2"),
        AIMessage("Done: flight AF12 and a hotel.", id="ai-3"),
        HumanMessage("Thanks"),
        AIMessage("You're welcome."),
    ]


@case("messages", "a tool result that answers no call")
def lc_orphan_tool_result() -> list[Any]:
    return [HumanMessage("hi"), ToolMessage("stray", tool_call_id="call_none")]


@case("messages", "a call left unanswered before the user speaks again")
def lc_unanswered_call() -> list[Any]:
    return [
        HumanMessage("Book it"),
        AIMessage("", tool_calls=[_call("book", {}, "call_b1")]),
        HumanMessage("Hello?"),
    ]


@case("messages", "a trace cut while a call runs", allow_pending=True)
def lc_pending_call() -> list[Any]:
    return [HumanMessage("Book it"), AIMessage("", tool_calls=[_call("book", {}, "call_p1")])]


@case("messages", "two calls with the same id")
def lc_duplicate_call_ids() -> list[Any]:
    return [
        HumanMessage("twice"),
        AIMessage("", tool_calls=[_call("ping", {}, "call_dup")]),
        ToolMessage("pong", tool_call_id="call_dup"),
        AIMessage("", tool_calls=[_call("ping", {}, "call_dup")]),
        ToolMessage("pong", tool_call_id="call_dup"),
    ]


@case("messages", "an empty list")
def lc_empty_list() -> list[Any]:
    return []


@case("messages", "a RemoveMessage among messages")
def lc_remove_message() -> list[Any]:
    return [HumanMessage("hi", id="h1"), RemoveMessage(id="h1")]
