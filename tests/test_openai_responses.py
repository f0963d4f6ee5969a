"""openai_responses: each item type, the reply grouping, what is kept, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)

from tracebridge import (
    AIMessage,
    AudioPart,
    Citation,
    FilePart,
    HumanMessage,
    ImagePart,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters.openai_responses import from_messages, to_messages

NS = "openai_responses"
USER = {"role": "user", "content": "Weather in Oslo?"}


def call(call_id: str = "c1", arguments: str = '{"city": "Oslo"}') -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "get_weather",
            "arguments": arguments}


def output(call_id: str = "c1", result: Any = "3 C") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": result}


def roundtrip(items: list[Any]) -> list[Any]:
    messages = to_messages(items)
    assert from_messages(messages) == items
    return messages


# --- messages ------------------------------------------------------------------------------


def test_messages_of_each_role() -> None:
    items = [
        {"role": "system", "content": "Be brief."},
        {"type": "message", "role": "developer",
         "content": [{"type": "input_text", "text": "No."}]},
        {"role": "user", "content": "hi", "type": "message", "status": "completed", "id": "m0"},
        {"role": "assistant", "content": "hello"},
    ]
    assert roundtrip(items) == [
        SystemMessage(content="Be brief."),
        SystemMessage(content=[TextPart(text="No.")], role="developer",
                      metadata={NS: {"fields": {"type": "message"}}}),
        HumanMessage(content="hi", id="m0",
                     metadata={NS: {"fields": {"type": "message", "status": "completed"}}}),
        AIMessage(content="hello"),
    ]


def test_user_parts_map_to_typed_parts() -> None:
    parts = [
        {"type": "input_text", "text": "Look:"},
        {"type": "input_image", "image_url": "https://a.example/x.png", "detail": "high"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBO", "detail": "low"},
        {"type": "input_image", "file_id": "file-1", "detail": "auto"},
        {"type": "input_file", "file_id": "file-2", "filename": "a.pdf"},
        {"type": "input_file", "file_url": "https://a.example/b.pdf"},
        {"type": "input_file", "file_data": "data:application/pdf;base64,JVBE"},
        {"type": "input_audio", "input_audio": {"data": "UklG", "format": "mp3"}},
        {"type": "text", "text": "a chat part"},
    ]
    (message,) = roundtrip([{"role": "user", "content": parts}])
    assert message.content == [
        TextPart(text="Look:"),
        ImagePart(url="https://a.example/x.png", detail="high"),
        ImagePart(data="iVBO", mime_type="image/png", detail="low"),
        OpaquePart(kind="input_image", value=parts[3], metadata={NS: {"verbatim": True}}),
        FilePart(file_id="file-2", filename="a.pdf"),
        FilePart(url="https://a.example/b.pdf"),
        FilePart(data="JVBE", mime_type="application/pdf"),
        AudioPart(data="UklG", mime_type="audio/mpeg", metadata={NS: {"read": True}}),
        OpaquePart(kind="text", value=parts[8], metadata={NS: {"verbatim": True}}),
    ]


def test_an_output_message_from_the_sdk_reads_as_its_dict() -> None:
    sdk = ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text="Hi.", annotations=[])],
    )
    dumped = sdk.model_dump(mode="json", exclude_unset=True)
    assert to_messages([USER, sdk]) == to_messages([USER, dumped])
    assert to_messages([USER, sdk])[1] == AIMessage(
        content=[TextPart(text="Hi.")],
        id="msg_1",
        metadata={NS: {"fields": {"status": "completed"}}},
    )


# --- replies -------------------------------------------------------------------------------


def test_reasoning_message_and_calls_make_one_reply() -> None:
    items = [
        USER,
        {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Hm."}],
         "encrypted_content": "gAAA"},
        {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
        call("c1"), call("c2", '{"city": "Rome"}'),
        output("c1"), output("c2", "24 C"),
    ]
    messages = roundtrip(items)
    assert messages[1] == AIMessage(
        content=[
            ReasoningPart(text="Hm.", metadata={NS: {"id": "rs_1",
                                                     "fields": {"encrypted_content": "gAAA"}}}),
            TextPart(text="Checking."),
        ],
        tool_calls=[ToolCall(name="get_weather", args={"city": "Oslo"}, id="c1"),
                    ToolCall(name="get_weather", args={"city": "Rome"}, id="c2")],
        id="msg_1",
        metadata={NS: {"fields": {"status": "completed"}}},
    )
    assert [type(m) for m in messages[2:]] == [ToolMessage, ToolMessage]


def test_the_model_speaking_after_a_call_is_the_next_reply() -> None:
    items = [USER, call(), {"role": "assistant", "content": "Done."}]
    with pytest.raises(TraceError) as caught:
        to_messages(items)  # the call is never answered
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unanswered_tool_call", 1, "items[1]"
    )
    messages = to_messages([USER, call(), output(), {"role": "assistant", "content": "Done."}])
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "ToolMessage",
                                                   "AIMessage"]


TWO = [{"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}]


@pytest.mark.parametrize(
    ("summary", "text", "kept"),
    [
        ([], "", {"summary": []}),
        (TWO, "a\n\nb", {"summary": TWO}),
    ],
    ids=["empty", "two"],
)
def test_reasoning_summaries(summary: list[Any], text: str, kept: dict[str, Any]) -> None:
    item = {"id": "rs_1", "type": "reasoning", "summary": summary}
    messages = roundtrip([USER, item])
    assert messages[1] == AIMessage(
        # one plain entry is the part's text alone, which gives the item back: the part's id;
        # any other summary stays kept, with the id beside it
        content=[ReasoningPart(text=text, metadata={NS: {"id": "rs_1", **kept}}) if kept
                 else ReasoningPart(text=text, id="rs_1")]
    )


def test_a_reasoning_item_object_reads_as_its_dict() -> None:
    sdk = ResponseReasoningItem(id="rs_1", type="reasoning", summary=[])
    assert to_messages([USER, sdk]) == to_messages([USER, {"id": "rs_1", "type": "reasoning",
                                                           "summary": []}])


def test_citations_and_other_annotations() -> None:
    cited = {"type": "url_citation", "url": "https://a.example", "title": "A",
             "start_index": 0, "end_index": 4}
    kept = {"type": "file_citation", "file_id": "file-1", "filename": "f.pdf", "index": 3}
    items = [USER, {
        "id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
        "content": [
            {"type": "output_text", "text": "News.", "annotations": [kept, cited]},
            {"type": "refusal", "refusal": "No more."},
        ],
    }]
    reply = roundtrip(items)[1]
    assert reply == AIMessage(
        content=[TextPart(text="News.", metadata={NS: {"annotations": [kept, None]}}),
                 RefusalPart(text="No more.")],
        citations=[Citation(url="https://a.example", title="A", start_index=0, end_index=4)],
        id="msg_1",
        metadata={NS: {"fields": {"status": "completed"}}},
    )


def test_a_function_call_object_reads_as_its_dict() -> None:
    sdk = ResponseFunctionToolCall(type="function_call", call_id="c1", name="get_weather",
                                   arguments='{"city":"Oslo"}', id="fc_1", status="completed")
    messages = to_messages([USER, sdk, output()])
    assert messages[1].tool_calls == [ToolCall(  # type: ignore[union-attr]
        name="get_weather", args={"city": "Oslo"}, id="c1",
        metadata={NS: {"id": "fc_1", "arguments": '{"city":"Oslo"}',
                       "fields": {"status": "completed"}}},
    )]


@pytest.mark.parametrize(
    ("arguments", "args", "invalid"),
    [('{"city": ', {}, '{"city": '), ("[1]", {}, "[1]"), ("", {}, None)],
    ids=["truncated", "a-list", "empty"],
)
def test_arguments_that_are_not_an_object_are_kept(
    arguments: str, args: dict[str, Any], invalid: str | None
) -> None:
    messages = roundtrip([USER, call(arguments=arguments), output()])
    (made,) = messages[1].tool_calls  # type: ignore[union-attr]
    assert (made.args, made.invalid_args) == (args, invalid)


def test_custom_calls_and_their_outputs() -> None:
    items = [
        USER,
        {"type": "custom_tool_call", "call_id": "c1", "name": "run_sql", "input": "SELECT 1"},
        {"type": "custom_tool_call_output", "call_id": "c1",
         "output": [{"type": "input_text", "text": "1"}]},
    ]
    messages = roundtrip(items)
    assert messages[1:] == [
        AIMessage(tool_calls=[ToolCall(name="run_sql", args={"input": "SELECT 1"}, id="c1",
                                       kind="custom")]),
        ToolMessage(content=[TextPart(text="1")], tool_call_id="c1"),
    ]


def test_an_output_of_another_type_than_its_call_is_kept_as_such() -> None:
    items = [USER, call(), {"type": "custom_tool_call_output", "call_id": "c1", "output": "x"}]
    assert roundtrip(items)[2] == ToolMessage(
        content="x", tool_call_id="c1", metadata={NS: {"item": "custom_tool_call_output"}}
    )


def test_client_calls_of_other_kinds_and_their_outputs() -> None:
    patch = {"type": "apply_patch_call", "call_id": "ap1", "status": "completed",
             "operation": {"type": "delete_file", "path": "old.txt"}}
    done = {"type": "apply_patch_call_output", "call_id": "ap1", "status": "completed"}
    shell = {"type": "shell_call", "call_id": "sh1", "action": {"commands": ["ls"]}}
    listed = {"type": "shell_call_output", "call_id": "sh1",
              "output": [{"stdout": "a\n", "stderr": "", "outcome": {"type": "exit",
                                                                       "exit_code": 0}}]}
    messages = roundtrip([USER, patch, done, {"role": "user", "content": "ls"}, shell, listed])
    assert messages[1:3] == [
        AIMessage(tool_calls=[ToolCall(
            name="apply_patch", args={"operation": {"type": "delete_file", "path": "old.txt"}},
            id="ap1", metadata={NS: {"item": "apply_patch_call", "status": "completed"}})]),
        ToolMessage(content="", tool_call_id="ap1",
                    metadata={NS: {"output": "absent", "fields": {"status": "completed"}}}),
    ]
    assert messages[5] == ToolMessage(
        content='[{"outcome": {"exit_code": 0, "type": "exit"}, "stderr": "", "stdout": "a\\n"}]',
        tool_call_id="sh1",
        metadata={NS: {"output": "json"}},
    )


def test_items_kept_whole() -> None:
    listed = {"id": "mcpl_1", "type": "mcp_list_tools", "server_label": "docs", "tools": []}
    approval = {"type": "mcp_approval_response", "approval_request_id": "mcpr_1",
                "approve": True}
    messages = roundtrip([USER, listed, approval])
    assert messages[1:] == [
        AIMessage(content=[OpaquePart(kind="mcp_list_tools", value=listed,
                                      metadata={NS: {"item": True}})]),
        HumanMessage(content=[OpaquePart(kind="mcp_approval_response", value=approval,
                                         metadata={NS: {"item": True}})]),
    ]


def test_an_empty_message_beside_calls_is_kept() -> None:
    items = [USER, {"role": "assistant", "content": ""}, call(), output()]
    messages = roundtrip(items)
    assert messages[1] == AIMessage(
        tool_calls=[ToolCall(name="get_weather", args={"city": "Oslo"}, id="c1")],
        metadata={NS: {"message": 0}},
    )


# --- errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "code", "index", "path"),
    [
        ([USER, {"type": "robot"}], "unknown_role", 1, "items[1].type"),
        ([{"type": "message", "role": "tool", "content": "x"}], "unknown_role", 0, "items[0].role"),
        ([{"type": "message", "content": "x"}], "malformed_event", 0, "items[0].role"),
        ([USER, output()], "orphan_tool_result", 1, "items[1].call_id"),
        ([USER, call(), output(), call("c1"), output()], "duplicate_tool_call_id", 3,
         "items[3].call_id"),
        ([USER, call("c1"), call("c2"), output("c1")], "unanswered_tool_call", 2, "items[2]"),
        ([USER, {"type": "function_call", "name": "f", "arguments": "{}"}], "malformed_event", 1,
         "items[1].call_id"),
        ([USER, {"type": "reasoning", "id": "rs_1"}], "malformed_event", 1, "items[1].summary"),
        ([USER, {"type": "response.output_text.delta", "delta": "x"}], "streaming_chunk", 1,
         "items[1]"),
        ([{"role": "user", "content": [{"text": "x"}]}], "malformed_event", 0,
         "items[0].content[0].type"),
        ({"output": []}, "malformed_event", None, None),
    ],
    ids=["unknown-type", "unknown-role", "no-role", "orphan", "duplicate-id", "unanswered",
         "no-call-id", "no-summary", "stream-event", "part-without-type", "not-a-list"],
)
def test_broken_items_are_refused_where_they_break(
    items: Any, code: str, index: int | None, path: str | None
) -> None:
    with pytest.raises(TraceError) as caught:
        to_messages(items)
    assert (caught.value.code, caught.value.index, caught.value.path, caught.value.source) == (
        code, index, path, NS
    )


def test_a_reply_message_item_with_a_null_type_after_a_hosted_call_writes_back_as_read() -> None:
    # A message item's type may be absent or, as here, null: it is a message item either
    # way, so it starts a reply of its own after a hosted call's item (as the reader reads it)
    # and the writer must not take it for a call joining that reply.
    search = {"id": "ws_1", "action": {"type": "search", "query": "Oslo news"},
              "status": "completed", "type": "web_search_call"}
    reply = {"id": "msg_2", "role": "assistant", "status": "completed", "type": None,
             "content": [{"type": "output_text", "text": "A library opened.", "annotations": []}]}
    items = [{"role": "user", "content": "Any news?"}, search, reply]
    messages = to_messages(items)
    assert [type(m).__name__ for m in messages] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert messages[3].content == [TextPart(text="A library opened.")]
    assert from_messages(messages) == items
