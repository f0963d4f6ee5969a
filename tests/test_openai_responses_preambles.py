"""A reply of several assistant message items: a message (a "preamble") before each call.

Reasoning models on the Responses API write a short message before each tool call, so one
response's output is ``[reasoning, message, function_call, message, function_call]``, every
call answered after it. While a call of the reply waits for its output item, a further
message item joins the reply: one ``AIMessage`` with every message's parts in item order, its
calls in order, and ``metadata.<ns>.messages`` (one entry per message item: ``at``, ``parts``,
``id``, ``content``, ``type``, ``fields``) with ``calls_at`` to write the items back as they
were. A citation names its message item (``message: k``, left out for the first). Metadata
edited so that it no longer fits is refused where it says otherwise.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import test_openai_responses_api as api
from agents import Runner
from hypothesis import given
from hypothesis import strategies as st
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage
from test_openai_agents import GENERATOR
from test_reasoning_without_id import unnamed

from tracebridge import AIMessage, HumanMessage, TraceError
from tracebridge.adapters import openai_agents, openai_responses
from tracebridge.messages import (
    Citation,
    Message,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
)

NS = "openai_responses"
USER = {"role": "user", "content": "hi"}
CITE = {"type": "url_citation", "url": "https://e.com", "title": "E", "start_index": 0,
        "end_index": 1}


def outcome(read: Any, *args: Any, **kwargs: Any) -> Any:
    """What ``read`` gives, or the ``(code, index, path, detail)`` of the TraceError it
    raises."""
    try:
        return read(*args, **kwargs)
    except TraceError as error:
        return (error.code, error.index, error.path, error.detail)


def message(item_id: str, text: str, annotations: list[Any] | None = None) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "id": item_id, "status": "completed",
            "content": [{"type": "output_text", "text": text,
                         "annotations": [] if annotations is None else annotations}]}


def function_call(call_id: str, name: str = "f") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}",
            "id": f"fc_{call_id}", "status": "completed"}


def output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": f"out {call_id}"}


def reasoning(item_id: str) -> dict[str, Any]:
    return {"id": item_id, "type": "reasoning",
            "summary": [{"type": "summary_text", "text": f"why {item_id}"}]}


def called(call_id: str, name: str = "f") -> ToolCall:
    return ToolCall(name=name, args={}, id=call_id,
                    metadata={NS: {"id": f"fc_{call_id}", "fields": {"status": "completed"}}})


def answered(call_id: str) -> ToolMessage:
    return ToolMessage(content=f"out {call_id}", tool_call_id=call_id)


def listed(at: int, item_id: str, parts: int = 1) -> dict[str, Any]:
    """The kept entry of a message item as ``message()`` makes it."""
    return {"at": at, "parts": parts, "id": item_id, "fields": {"status": "completed"}}


REPRO = [
    USER,
    message("msg_1", "a"),
    function_call("c1"),
    message("msg_2", "b"),
    function_call("c2", "g"),
    output("c1"),
    output("c2"),
]

WITH_SEARCH = {"id": "ws_1", "type": "web_search_call", "status": "completed",
               "action": {"type": "search", "query": "q"}}

VARIANTS = {
    "repro": REPRO,
    "first message an EasyInputMessage": [
        USER, {"role": "assistant", "content": "a"}, function_call("c1"), message("msg_2", "b"),
        function_call("c2"), output("c1"), output("c2"),
    ],
    "both string contents, the second with an id": [
        USER, {"role": "assistant", "content": "a"}, function_call("c1"),
        {"role": "assistant", "content": "b", "id": "msg_2"}, function_call("c2"),
        output("c1"), output("c2"),
    ],
    "an empty string content": [
        USER, {"role": "assistant", "content": ""}, function_call("c1"),
        {"role": "assistant", "content": "b"}, function_call("c2"), output("c1"), output("c2"),
    ],
    "three messages": [
        USER, message("msg_1", "a"), function_call("c1"), message("msg_2", "b"),
        function_call("c2"), message("msg_3", "c"), function_call("c3"), output("c1"),
        output("c2"), output("c3"),
    ],
    "preambles marked with their phase": [
        USER, {**message("msg_1", "a"), "phase": "commentary"}, function_call("c1"),
        {**message("msg_2", "b"), "phase": "commentary"}, function_call("c2"), output("c1"),
        output("c2"),
    ],
    "reasoning before each message": [
        USER, reasoning("rs_1"), message("msg_1", "a"), function_call("c1"), reasoning("rs_2"),
        message("msg_2", "b"), function_call("c2"), output("c1"), output("c2"),
    ],
    "a hosted call among them": [
        USER, message("msg_1", "a"), function_call("c1"), WITH_SEARCH, message("msg_2", "b"),
        function_call("c2"), output("c1"), output("c2"),
    ],
    "annotations on the second message": [
        USER, message("msg_1", "a"), function_call("c1"),
        message("msg_2", "b", [CITE, {"type": "file_path", "file_id": "file_1", "index": 0}]),
        function_call("c2"), output("c1"), output("c2"),
    ],
    "annotations on both messages": [
        USER, message("msg_1", "a", [CITE]), function_call("c1"), message("msg_2", "b", [CITE]),
        function_call("c2"), output("c1"), output("c2"),
    ],
    "a message after the last call": [
        USER, message("msg_1", "a"), function_call("c1"), message("msg_2", "b"), output("c1"),
    ],
    "an empty message and one without type or annotations": [
        USER, message("msg_1", "a"), function_call("c1"),
        {"type": "message", "role": "assistant", "id": "msg_2", "content": []}, function_call("c2"),
        {"role": "assistant", "id": "msg_3", "content": [{"type": "output_text", "text": "c"}]},
        function_call("c3"), output("c1"), output("c2"), output("c3"),
    ],
    "two parts in one message, a refusal in the next": [
        USER,
        {"type": "message", "role": "assistant", "id": "msg_1", "content": [
            {"type": "output_text", "text": "a", "annotations": []},
            {"type": "output_text", "text": "b", "annotations": [CITE]}]},
        function_call("c1"),
        {"type": "message", "role": "assistant", "id": "msg_2", "content": [
            {"type": "refusal", "refusal": "no"}]},
        function_call("c2"), output("c1"), output("c2"),
    ],
}


# -- reading --


def test_a_message_before_each_call_reads_as_one_reply() -> None:
    assert openai_responses.to_messages(REPRO) == [
        HumanMessage(content="hi"),
        AIMessage(
            content=[TextPart(text="a"), TextPart(text="b")],
            tool_calls=[called("c1"), called("c2", "g")],
            metadata={NS: {"messages": [listed(0, "msg_1"), listed(1, "msg_2")],
                           "calls_at": [1, 2]}},
        ),
        answered("c1"),
        answered("c2"),
    ]


def test_string_contents_are_text_parts_marked_in_their_entries() -> None:
    read = openai_responses.to_messages(VARIANTS["both string contents, the second with an id"])
    assert read[1] == AIMessage(
        content=[TextPart(text="a"), TextPart(text="b")],
        tool_calls=[called("c1"), called("c2")],
        metadata={NS: {"messages": [{"at": 0, "parts": 1, "content": "string"},
                                    {"at": 1, "parts": 1, "content": "string", "id": "msg_2"}],
                       "calls_at": [1, 2]}},
    )
    empty = openai_responses.to_messages(VARIANTS["an empty string content"])
    assert empty[1].content == [TextPart(text="b")]
    assert empty[1].metadata == {NS: {"messages": [{"at": 0, "parts": 0, "content": "string"},
                                                   {"at": 0, "parts": 1, "content": "string"}],
                                      "calls_at": [1, 2]}}


def test_reasoning_and_messages_keep_their_order() -> None:
    read = openai_responses.to_messages(VARIANTS["reasoning before each message"])
    assert read[1] == AIMessage(
        content=[
            ReasoningPart(text="why rs_1", id="rs_1"),
            TextPart(text="a"),
            ReasoningPart(text="why rs_2", id="rs_2"),
            TextPart(text="b"),
        ],
        tool_calls=[called("c1"), called("c2")],
        metadata={NS: {"messages": [listed(1, "msg_1"), listed(3, "msg_2")], "calls_at": [2, 4]}},
    )


def test_a_hosted_call_among_them_keeps_its_result_after_the_reply() -> None:
    read = openai_responses.to_messages(VARIANTS["a hosted call among them"])
    assert read[1:] == [
        AIMessage(
            content=[TextPart(text="a"), TextPart(text="b")],
            tool_calls=[
                called("c1"),
                ToolCall(name="web_search", args={"action": {"type": "search", "query": "q"}},
                         id="ws_1", metadata={NS: {"item": "web_search_call"}}),
                called("c2"),
            ],
            metadata={NS: {"messages": [listed(0, "msg_1"), listed(1, "msg_2")],
                           "calls_at": [1, 1, 2]}},
        ),
        ToolMessage(content='{"status": "completed"}', tool_call_id="ws_1", name="web_search"),
        answered("c1"),
        answered("c2"),
    ]


def test_citations_stay_with_their_message_item() -> None:
    # the indexes count characters of the reply's text ("a\nb"): "b" is at 2 to 3, in the
    # second message item, where the writer puts the citation back
    read = openai_responses.to_messages(VARIANTS["annotations on the second message"])
    assert read[1].citations == [
        Citation(url="https://e.com", title="E", start_index=2, end_index=3),
    ]
    assert read[1].content == [
        TextPart(text="a"),
        TextPart(text="b", metadata={NS: {"annotations": [
            None, {"type": "file_path", "file_id": "file_1", "index": 0}]}}),
    ]
    both = openai_responses.to_messages(VARIANTS["annotations on both messages"])
    plain = Citation(url="https://e.com", title="E", start_index=0, end_index=1)
    assert both[1].citations == [
        plain, plain.model_copy(update={"start_index": 2, "end_index": 3}),
    ]
    two = VARIANTS["two parts in one message, a refusal in the next"]
    parts = openai_responses.to_messages(two)
    assert parts[1].citations == [plain.model_copy(update={"start_index": 2, "end_index": 3})]


def test_sdk_objects_read_as_their_dicts() -> None:
    objects = [
        USER,
        ResponseOutputMessage.model_validate(message("msg_1", "a")),
        ResponseFunctionToolCall.model_validate(function_call("c1")),
        ResponseOutputMessage.model_validate(message("msg_2", "b")),
        ResponseFunctionToolCall.model_validate(function_call("c2", "g")),
        output("c1"),
        output("c2"),
    ]
    assert openai_responses.to_messages(objects) == openai_responses.to_messages(REPRO)
    assert openai_responses.from_messages(openai_responses.to_messages(objects)) == REPRO


def test_one_message_keeps_its_metadata_as_before() -> None:
    items = [USER, message("msg_1", "a"), function_call("c1"), reasoning("rs_2"),
             function_call("c2"), output("c1"), output("c2")]
    read = openai_responses.to_messages(items)
    assert read[1] == AIMessage(
        content=[TextPart(text="a"), ReasoningPart(text="why rs_2", id="rs_2")],
        tool_calls=[called("c1"), called("c2")],
        id="msg_1",
        metadata={NS: {"fields": {"status": "completed"}, "calls_at": [1, 2]}},
    )
    assert openai_responses.from_messages(read) == items


def test_a_second_message_with_no_call_waiting_still_starts_the_next_reply() -> None:
    for between in ([], [WITH_SEARCH]):
        items = [USER, message("msg_1", "a"), *between, message("msg_2", "b")]
        read = openai_responses.to_messages(items)
        assert [(type(m).__name__, m.id) for m in read] == [
            ("HumanMessage", None), ("AIMessage", "msg_1"), *(
                [("ToolMessage", None)] if between else []), ("AIMessage", "msg_2"),
        ]
        assert openai_responses.from_messages(read) == items


def test_a_cut_preamble_reply_is_pending() -> None:
    cut = REPRO[:4]
    read = openai_responses.to_messages(cut, allow_pending=True)
    assert read[1] == AIMessage(
        content=[TextPart(text="a"), TextPart(text="b")],
        tool_calls=[called("c1")],
        metadata={NS: {"messages": [listed(0, "msg_1"), listed(1, "msg_2")], "calls_at": [1]}},
    )
    assert outcome(openai_responses.to_messages, cut) == (
        "unanswered_tool_call", 2, "items[2]",
        "tool call 'f' (id 'c1') has no result before the conversation ends (allow_pending=True "
        "accepts a trace cut mid-tool)",
    )


# -- the laws --


@pytest.mark.parametrize("items", list(VARIANTS.values()), ids=list(VARIANTS))
def test_preamble_replies_roundtrip(items: list[Any]) -> None:
    read = openai_responses.to_messages(items)
    replies = [m for m in read if isinstance(m, AIMessage)]
    assert len(replies) == 1
    assert len(replies[0].metadata[NS]["messages"]) == sum(
        item.get("role") == "assistant" for item in items
    )
    written = openai_responses.from_messages(read)
    assert written == items  # lossless
    assert openai_responses.to_messages(written) == read  # faithful
    assert api.api_problems(written) == []  # what the API takes


def test_a_typed_reply_from_another_format_is_written_as_one_message() -> None:
    typed = [
        HumanMessage(content="hi"),
        AIMessage(content=[TextPart(text="a"), TextPart(text="b")],
                  tool_calls=[ToolCall(name="f", id="c1"), ToolCall(name="g", id="c2")],
                  id="msg_1"),
        ToolMessage(content="x", tool_call_id="c1"),
        ToolMessage(content="y", tool_call_id="c2"),
    ]
    assert openai_responses.from_messages(typed) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "type": "message", "id": "msg_1", "content": [
            {"type": "output_text", "text": "a", "annotations": []},
            {"type": "output_text", "text": "b", "annotations": []}]},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"},
        {"type": "function_call_output", "call_id": "c2", "output": "y"},
    ]


# -- metadata that no longer fits --


def edited(items: list[Any], change: Any) -> list[Message]:
    """The reading of ``items`` with its reply (``messages[1]``) changed by ``change``."""
    read = openai_responses.to_messages(items)
    reply = read[1]
    assert isinstance(reply, AIMessage)
    kept = reply.model_dump()
    change(kept)
    return [read[0], AIMessage.model_validate(kept), *read[2:]]


def entry(k: int, key: str, value: Any) -> Any:
    def change(kept: dict[str, Any]) -> None:
        kept["metadata"][NS]["messages"][k][key] = value
    return change


def namespace(key: str, value: Any) -> Any:
    def change(kept: dict[str, Any]) -> None:
        kept["metadata"][NS][key] = value
    return change


def without(key: str) -> Any:
    def change(kept: dict[str, Any]) -> None:
        del kept["metadata"][NS][key]
    return change


def appended_text(kept: dict[str, Any]) -> None:
    kept["content"].append({"type": "text", "text": "c"})


def both_texts_in_the_first(kept: dict[str, Any]) -> None:
    kept["metadata"][NS]["messages"] = [
        {"at": 0, "parts": 2, "content": "string"},
        {"at": 2, "parts": 0, "content": "string", "id": "msg_2"},
    ]


def with_id(kept: dict[str, Any]) -> None:
    kept["id"] = "msg_1"


def citation(value: Any) -> Any:
    def change(kept: dict[str, Any]) -> None:
        kept["citations"][0]["metadata"] = {NS: {"message": value}}
    return change


MESSAGES = f"messages[1].metadata.{NS}.messages"
REASONED = VARIANTS["reasoning before each message"]
CITED = VARIANTS["annotations on the second message"]
STRINGS = VARIANTS["both string contents, the second with an id"]


def entry_kinds(key: str, got: str) -> str:
    """The detail refusing an entry's ``key`` whose value (``got``, as quoted) is not as
    to_messages writes it."""
    return (f"an entry's {key!r} is, as to_messages writes it: id a string, content 'string', "
            f"type 'absent' (a message with parts and no type key), fields an object; got {got}")


def at_range(first: int, last: int, got: str) -> str:
    return ("'at' is where the message item's parts start in the content, after the item before "
            f"it: from {first} to {last}; got {got}")


def parts_range(at: int, most: int, got: str) -> str:
    return (f"'parts' is how many content parts from content[{at}] on are the message item's: "
            f"0 to {most}; got {got}")


def outside(j: int, what: str) -> str:
    return (f"content[{j}] is {what}: the message item's 'at' and 'parts' no longer fit the "
            "content")


def cited_range(got: str) -> str:
    return (f"metadata.{NS}.message names the message item (1 to 1; the first when left out) a "
            f"citation annotates; got {got}")


LISTS = (f"metadata.{NS}.messages lists the reply's message items (two or more), as "
         "to_messages writes it; got ")
BESIDE = (f"a reply of several message items keeps each item's keys in its entry of "
          f"metadata.{NS}.messages; ")
NO_ITEM = "a part of no message item"
OWN_ITEM = "an item of its own (reasoning, a kept item)"


@pytest.mark.parametrize(
    ("items", "change", "code", "path", "detail"),
    [
        (REPRO, entry(1, "parts", 2), "malformed_event", f"{MESSAGES}[1].parts",
         parts_range(1, 1, "2")),
        (REPRO, entry(0, "parts", 2), "malformed_event", f"{MESSAGES}[1].at",
         at_range(2, 2, "1")),
        (REPRO, entry(0, "parts", 0), "malformed_event", f"{MESSAGES}[1].at",
         outside(0, NO_ITEM)),
        (REPRO, entry(1, "parts", 0), "malformed_event", MESSAGES,
         "content[1] is a part of no message item: the entries no longer fit the content"),
        (REPRO, entry(1, "parts", -1), "malformed_event", f"{MESSAGES}[1].parts",
         parts_range(1, 1, "-1")),
        (REPRO, entry(1, "at", "1"), "malformed_event", f"{MESSAGES}[1].at",
         at_range(1, 2, "'1'")),
        (REPRO, entry(1, "at", 3), "malformed_event", f"{MESSAGES}[1].at", at_range(1, 2, "3")),
        (REPRO, entry(1, "id", 2), "malformed_event", f"{MESSAGES}[1].id", entry_kinds("id", "2")),
        (REPRO, entry(1, "place", 2), "malformed_event", f"{MESSAGES}[1].place",
         f"an entry of metadata.{NS}.messages holds at, parts, id, content, type, fields; "
         "got 'place'"),
        (REPRO, entry(1, "type", "message"), "malformed_event", f"{MESSAGES}[1].type",
         entry_kinds("type", "'message'")),
        (REPRO, entry(1, "content", "parts"), "malformed_event", f"{MESSAGES}[1].content",
         entry_kinds("content", "'parts'")),
        (REPRO, entry(1, "fields", ["status"]), "malformed_event", f"{MESSAGES}[1].fields",
         entry_kinds("fields", "['status']")),
        (REPRO, entry(1, "fields", {"id": "msg_9"}), "not_representable",
         f"{MESSAGES}[1].fields.id",
         "the kept key 'id' ('msg_9') is one this format's reader maps to the typed message: "
         "written, it would replace what the typed message says"),
        (REPRO, namespace("messages", [{"at": 0, "parts": 2}]), "malformed_event", MESSAGES,
         LISTS + "[{'at': 0, 'parts': 2}]"),
        (REPRO, namespace("messages", {"at": 0}), "malformed_event", MESSAGES,
         LISTS + "{'at': 0}"),
        (REPRO, namespace("messages", [{"at": 0, "parts": 1}, "msg_2"]), "malformed_event",
         f"{MESSAGES}[1]",
         f"an entry of metadata.{NS}.messages is an object (at, parts, id, content, type, "
         "fields); got 'msg_2'"),
        (REPRO, namespace("fields", {"status": "completed"}), "not_representable",
         f"messages[1].metadata.{NS}.fields", BESIDE + "'fields' beside them would be lost"),
        (REPRO, namespace("content", "string"), "not_representable",
         f"messages[1].metadata.{NS}.content", BESIDE + "'content' beside them would be lost"),
        (REPRO, without("calls_at"), "not_representable", MESSAGES,
         "a second message item reads back as the next reply unless a call before it waits "
         "for its output item (calls_at places none there)"),
        (REPRO, appended_text, "malformed_event", MESSAGES,
         "content[2] is a part of no message item: the entries no longer fit the content"),
        (REPRO, with_id, "not_representable", "messages[1].id",
         "a reply of several message items has no id of its own: each item's id is in its "
         f"entry of metadata.{NS}.messages (found 'msg_1')"),
        (REASONED, entry(0, "parts", 2), "malformed_event", f"{MESSAGES}[0].parts",
         outside(2, OWN_ITEM)),
        (REASONED, entry(0, "at", 0), "malformed_event", f"{MESSAGES}[0].parts",
         outside(0, OWN_ITEM)),
        (REASONED, entry(0, "parts", 4), "malformed_event", f"{MESSAGES}[0].parts",
         parts_range(1, 3, "4")),
        (STRINGS, entry(0, "parts", 2), "malformed_event", f"{MESSAGES}[1].at",
         at_range(2, 2, "1")),
        (STRINGS, both_texts_in_the_first, "not_representable", f"{MESSAGES}[0].content",
         "a message item's string content reads as one text part (none when empty), with "
         "nothing kept; these 2 parts would read back otherwise"),
        # 'absent' is refused beside content 'string': a string content has no parts
        (STRINGS, entry(0, "type", "absent"), "malformed_event", f"{MESSAGES}[0].type",
         entry_kinds("type", "'absent'")),
        (CITED, citation(2), "malformed_event", f"messages[1].citations[0].metadata.{NS}.message",
         cited_range("2")),
        (CITED, citation(0), "malformed_event", f"messages[1].citations[0].metadata.{NS}.message",
         cited_range("0")),
        (CITED, citation(True), "malformed_event",
         f"messages[1].citations[0].metadata.{NS}.message", cited_range("True")),
    ],
)
def test_metadata_that_no_longer_fits_is_refused_where_it_says_otherwise(
    items: list[Any], change: Any, code: str, path: str, detail: str
) -> None:
    # each detail says what would fit: a range the check itself takes
    assert outcome(openai_responses.from_messages, edited(items, change)) == (
        code, 1, path, detail)


def test_a_citation_of_a_string_message_is_not_representable() -> None:
    read = openai_responses.to_messages(STRINGS)
    reply = read[1].model_copy(update={"citations": [
        Citation(url="https://e.com", title="E", start_index=0, end_index=1,
                 metadata={NS: {"message": 1}})]})
    assert outcome(openai_responses.from_messages, [read[0], reply, *read[2:]]) == (
        "not_representable", 1, "messages[1].citations[0]",
        f"the citation annotates a message item whose content is a string (metadata.{NS}"
        ".messages[1].content), which has no annotations",
    )


def test_a_citation_naming_a_message_item_in_a_reply_of_one_is_malformed() -> None:
    items = [USER, message("msg_1", "a", [CITE])]
    read = openai_responses.to_messages(items)
    cited = read[1].citations[0].model_copy(update={"metadata": {NS: {"message": 1}}})
    reply = read[1].model_copy(update={"citations": [cited]})
    assert outcome(openai_responses.from_messages, [read[0], reply]) == (
        "malformed_event", 1, f"messages[1].citations[0].metadata.{NS}.message",
        f"metadata.{NS}.message names the message item a citation annotates in a reply of "
        f"several (metadata.{NS}.messages); this reply has one, got 1",
    )


# -- a property: any such reply --


@st.composite
def preamble_replies(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A user message, then one response of 2-3 message items each before its call (some
    string contents, some with reasoning before, citations, a hosted call), then the outputs."""
    texts = st.text(max_size=8)
    items: list[dict[str, Any]] = [USER]
    calls = []
    for n in range(draw(st.integers(2, 3))):
        if draw(st.booleans()):
            items.append(reasoning(f"rs_{n}"))
        text = draw(texts)
        shape = draw(st.sampled_from(["parts", "string", "string with id", "cited"]))
        if shape == "parts":
            items.append(message(f"msg_{n}", text))
        elif shape == "cited":
            items.append(message(f"msg_{n}", text, [CITE] * draw(st.integers(1, 2))))
        else:
            items.append({"role": "assistant", "content": text,
                          **({"id": f"msg_{n}"} if shape == "string with id" else {})})
        if draw(st.booleans()) and n:
            items.append({**WITH_SEARCH, "id": f"ws_{n}"})
        items.append(function_call(f"c{n}"))
        calls.append(f"c{n}")
    return [*items, *(output(call) for call in calls)]


@given(items=preamble_replies())
def test_every_preamble_reply_reads_as_one_reply_and_roundtrips(items: list[Any]) -> None:
    read = openai_responses.to_messages(items)
    replies = [m for m in read if isinstance(m, AIMessage)]
    assert len(replies) == 1
    assert len(replies[0].metadata[NS]["messages"]) == sum(
        item.get("role") == "assistant" for item in items
    )
    assert openai_responses.from_messages(read) == items
    assert openai_responses.to_messages(openai_responses.from_messages(read)) == read


# -- a real Agents SDK run --


def test_an_agents_run_with_a_message_before_each_call_reads_and_writes_back() -> None:
    model = GENERATOR.ScriptModel([
        [GENERATOR.reasoning("rs_1", "Two cities."),
         GENERATOR.message("msg_1", "Checking Paris."),
         GENERATOR.call("c1", "get_weather", '{"city":"Paris"}'),
         GENERATOR.message("msg_2", "Checking Rome."),
         GENERATOR.call("c2", "get_weather", '{"city":"Rome"}')],
        [GENERATOR.message("msg_3", "Paris 18 C, Rome 24 C.")],
    ])
    result = asyncio.run(Runner.run(GENERATOR.weather_agent(model), "Weather in Paris and Rome?"))
    listed = result.to_input_list()
    # the SDK ran both calls and sent the model the response, then both outputs
    assert [item.get("type") for item in model.inputs[1][1:]] == [
        "reasoning", "message", "function_call", "message", "function_call",
        "function_call_output", "function_call_output",
    ]
    source = "openai_agents"

    def weather(call_id: str, city: str) -> ToolCall:
        return ToolCall(name="get_weather", args={"city": city}, id=call_id, metadata={source: {
            "id": f"fc_{call_id}", "arguments": f'{{"city":"{city}"}}',
            "fields": {"status": "completed"}}})

    expected = [
        HumanMessage(content="Weather in Paris and Rome?"),
        AIMessage(
            content=[ReasoningPart(text="Two cities.", id="rs_1"),
                     TextPart(text="Checking Paris."), TextPart(text="Checking Rome.")],
            tool_calls=[weather("c1", "Paris"), weather("c2", "Rome")],
            metadata={source: {"messages": [
                {"at": 1, "parts": 1, "id": "msg_1", "fields": {"status": "completed"}},
                {"at": 2, "parts": 1, "id": "msg_2", "fields": {"status": "completed"}},
            ], "calls_at": [2, 3]}},
        ),
        ToolMessage(content="18 C, sunny", tool_call_id="c1"),
        ToolMessage(content="24 C, clear", tool_call_id="c2"),
    ]
    read = openai_agents.to_messages(result)
    assert unnamed(read)[:4] == expected
    assert read[1].name == "Weather Bot"
    assert [r["type"] for r in read[1].metadata[source]["run_items"]] == [
        "reasoning_item", "message_output_item", "tool_call_item", "message_output_item",
        "tool_call_item",
    ]
    assert openai_agents.to_messages(listed)[:4] == expected
    assert openai_agents.to_messages(list(result.new_items), input=result.input) == read
    assert openai_agents.from_messages(read, drop_names=True) == listed
    assert openai_responses.from_messages(openai_responses.to_messages(listed)) == listed
