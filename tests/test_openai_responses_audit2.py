"""Regression tests for the second audit of the Responses adapter: each one failed before its fix.

SDK objects are read by the API's key names (``async``, not the SDK's ``async_``); kept
``fields`` of this adapter's namespace never invent typed data nor vanish; items and parts kept
whole are written back only where the reader keeps them so; a JSON text is one spelling for the
server's JSON and the SDK's objects (integral floats as integers); a ``type`` changed on an SDK
class whose ``type`` is optional is refused; a crafted citation ``absent`` is an error, not a
``TypeError``.
"""

from __future__ import annotations

from typing import Any

import pytest
from openai._models import construct_type
from openai.types.responses import EasyInputMessage, Response, ResponseFileSearchToolCall
from openai.types.responses.response_function_tool_call_param import (
    ResponseFunctionToolCallParam,
)
from openai.types.responses.response_input_item import ItemReference, Message

from tracebridge import TraceError
from tracebridge.adapters import openai_agents
from tracebridge.adapters.openai_responses import from_messages, to_messages
from tracebridge.hashing import transcript_hash
from tracebridge.messages import (
    AIMessage,
    Citation,
    HumanMessage,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolMessage,
)

NS = "openai_responses"
USER = {"role": "user", "content": "hi"}
HI = HumanMessage(content="hi")


def refused(call: Any, *args: Any, **kwargs: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        call(*args, **kwargs)
    return caught.value


# --- 1: the API's `async` key, which the SDK holds as `async_` --------------------------------

SERVER_JSON: dict[str, Any] = {  # what the API sends: the wire key is "async"
    "id": "resp_1", "object": "response", "created_at": 1, "model": "m", "status": "completed",
    "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "output": [
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f",
         "arguments": "{}", "status": "completed", "async": True},
        {"type": "custom_tool_call", "id": "ct_1", "call_id": "c2", "name": "g",
         "input": "x", "async": False},
    ]}
OUTPUTS = [{"type": "function_call_output", "call_id": "c1", "output": "r"},
           {"type": "custom_tool_call_output", "call_id": "c2", "output": "r"}]


def _as_objects() -> list[Any]:
    response = construct_type(type_=Response, value=SERVER_JSON)  # as the openai client does
    return [USER, *response.output, *OUTPUTS]


def test_sdk_objects_keep_the_async_key_as_the_api_spells_it() -> None:
    messages = to_messages(_as_objects())
    assert [call.metadata for call in messages[1].tool_calls] == [  # type: ignore[union-attr]
        {NS: {"id": "fc_1", "fields": {"async": True, "status": "completed"}}},
        {NS: {"id": "ct_1", "fields": {"async": False}}},
    ]
    assert messages == to_messages([USER, *SERVER_JSON["output"], *OUTPUTS])


def test_sdk_objects_with_async_are_written_back_with_the_apis_key() -> None:
    written = from_messages(to_messages(_as_objects()))
    assert written == [USER, *SERVER_JSON["output"], *OUTPUTS]
    assert set(written[1]) <= set(ResponseFunctionToolCallParam.__annotations__)


def test_the_agents_adapter_reads_async_as_the_api_spells_it() -> None:
    objects = _as_objects()
    messages = openai_agents.to_messages(objects)
    assert messages[1].tool_calls[0].metadata == {  # type: ignore[union-attr]
        "openai_agents": {"id": "fc_1", "fields": {"async": True, "status": "completed"}}
    }


# --- 2: kept fields that would invent typed data or vanish -------------------------------------

PATCH = ToolCall(name="apply_patch", args={"operation": {"type": "delete_file", "path": "x"}},
                 id="c", metadata={NS: {"item": "apply_patch_call"}})
CALL = ToolCall(name="f", args={}, id="c")


@pytest.mark.parametrize(
    ("messages", "index", "path", "key", "shown", "effect"),
    [
        pytest.param(
            [HI, AIMessage(tool_calls=[PATCH]),
             ToolMessage(content="", tool_call_id="c",
                         metadata={NS: {"output": "absent", "fields": {"output": "INJECTED"}}})],
            2, "messages[2].metadata.openai_responses.fields.output", "output", "'INJECTED'",
            "read back as typed data the message does not hold", id="output-marked-absent",
        ),
        pytest.param(
            [HI, AIMessage(tool_calls=[CALL]),
             ToolMessage(content="r", tool_call_id="c", metadata={NS: {"fields": {"name": "o"}}})],
            2, "messages[2].metadata.openai_responses.fields.name", "name", "'o'",
            "read back as typed data the message does not hold", id="output-name",
        ),
        pytest.param(
            [HI, AIMessage(tool_calls=[CALL]),
             ToolMessage(content="r", tool_call_id="c",
                         metadata={NS: {"fields": {"id": "out_9"}}})],
            2, "messages[2].metadata.openai_responses.fields.id", "id", "'out_9'",
            "read back as typed data the message does not hold", id="output-id",
        ),
        pytest.param(
            [HumanMessage(content="hi", metadata={NS: {"fields": {
                "type": "function_call_output", "call_id": "x", "output": "y"}}})],
            0, "messages[0].metadata.openai_responses.fields.type", "type",
            "'function_call_output'", "read back as typed data the message does not hold",
            id="user-message-type",
        ),
        pytest.param(
            [HI, AIMessage(tool_calls=[ToolCall(name="f", args={}, id="c", metadata={
                NS: {"fields": {"arguments": '{"a": 1}'}}})]),
             ToolMessage(content="r", tool_call_id="c")],
            1, "messages[1].tool_calls[0].metadata.openai_responses.fields.arguments",
            "arguments", "'{\"a\": 1}'", "replace what the typed message says",
            id="call-arguments",
        ),
        pytest.param(
            [HI, AIMessage(content=[TextPart(text="a", metadata={NS: {"fields": {
                "annotations": [{"type": "file_path", "file_id": "f", "index": 0}]}}})])],
            1, "messages[1].content[0].metadata.openai_responses.fields.annotations",
            "annotations", "[{'type': 'file_path', 'file_id': 'f', 'index': 0}]",
            "replace what the typed message says", id="part-annotations",
        ),
    ],
)
def test_a_kept_field_the_reader_maps_is_not_representable(
    messages: list[Any], index: int, path: str, key: str, shown: str, effect: str
) -> None:
    error = refused(from_messages, messages)
    assert (error.code, error.index, error.path) == ("not_representable", index, path)
    assert str(error) == (
        f"openai_responses: {path}: the kept key {key!r} ({shown}) is one this format's "
        f"reader maps to the typed message: written, it would {effect} [not_representable]"
    )


def test_a_kept_field_of_a_part_after_reasoning_names_the_parts_own_index() -> None:
    reasoning = ReasoningPart(text="r", id="rs_1")
    text = TextPart(text="a", metadata={NS: {"fields": {"annotations": []}}})
    error = refused(from_messages, [HI, AIMessage(content=[reasoning, text])])
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].content[1].metadata.openai_responses.fields"
        ".annotations")


@pytest.mark.parametrize(
    ("message", "path"),
    [
        pytest.param(
            AIMessage(content="a", metadata={NS: {"fields": {"id": "msg_9"}}}),
            "messages[1].metadata.openai_responses.fields.id", id="reply-id",
        ),
        pytest.param(
            AIMessage(content=[TextPart(text="a")],
                      metadata={NS: {"type": "absent", "fields": {"type": "message"}}}),
            "messages[1].metadata.openai_responses.fields.type", id="reply-type-of-parts",
        ),
        pytest.param(
            AIMessage(content=[ReasoningPart(text="r", metadata={
                NS: {"id": None, "fields": {"id": "rs_9"}}})]),
            "messages[1].content[0].metadata.openai_responses.fields.id", id="reasoning-id",
        ),
        pytest.param(
            AIMessage(content="see", citations=[Citation(
                title="t", start_index=0, end_index=1,
                metadata={NS: {"absent": ["url"], "fields": {"url": "https://x"}}})]),
            "messages[1].citations[0].metadata.openai_responses.fields.url", id="citation-url",
        ),
    ],
)
def test_a_kept_field_of_a_reply_the_reader_maps_is_not_representable(
    message: AIMessage, path: str
) -> None:
    error = refused(from_messages, [HI, message])
    assert (error.code, error.index, error.path) == ("not_representable", 1, path)


def test_a_kept_field_of_a_call_kept_as_an_item_of_input_fields_is_not_representable() -> None:
    call = PATCH.model_copy(update={"metadata": {NS: {"item": "apply_patch_call",
                                                      "fields": {"x": 1}}}})
    error = refused(from_messages, [HI, AIMessage(tool_calls=[call]),
                                    ToolMessage(content="done", tool_call_id="c")])
    assert (error.code, error.index, error.path) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.openai_responses.fields.x")


def test_a_kept_field_the_reader_keeps_is_written_back() -> None:
    items = [
        {"type": "message", "role": "user", "content": "hi", "x": 1},
        {"type": "message", "role": "assistant", "content": "a", "id": "m1", "phase": "final"},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}",
         "status": "completed", "async": True},
        {"type": "local_shell_call", "call_id": "c2", "id": "ls_1",
         "action": {"type": "exec", "command": ["ls"], "env": {}}, "status": "completed"},
        {"type": "function_call_output", "call_id": "c", "output": "r", "id": None},
        {"type": "local_shell_call_output", "id": "c2", "output": "ok", "status": "completed"},
        {"type": "apply_patch_call", "call_id": "c3",
         "operation": {"type": "delete_file", "path": "x"}, "status": "completed"},
        {"type": "apply_patch_call_output", "call_id": "c3", "status": "completed",
         "name": "patcher"},
    ]
    messages = to_messages(items)
    assert messages[2].metadata == {NS: {"fields": {"id": None}}}
    assert from_messages(messages) == items


@pytest.mark.parametrize(
    ("summary", "path"),
    [
        pytest.param([{}], "summary[0]", id="empty-entry"),
        pytest.param([{"type": "summary_text", "text": 5}], "summary[0]", id="number-text"),
        pytest.param("r", "summary", id="not-a-list"),
    ],
)
def test_a_kept_reasoning_summary_the_reader_refuses_is_malformed(summary: Any, path: str) -> None:
    text = "None" if summary == [{}] else "5" if isinstance(summary, list) else "r"
    part = ReasoningPart(text=text, id="rs_1", metadata={NS: {"summary": summary}})
    error = refused(from_messages, [HI, AIMessage(content=[part])])
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, f"messages[1].content[0].metadata.openai_responses.{path}")


def test_a_kept_reasoning_summary_of_two_entries_is_written_back() -> None:
    items = [USER, {"type": "reasoning", "id": "rs_1", "summary": [
        {"type": "summary_text", "text": "a"}, {"type": "summary_text", "text": "b"}]}]
    assert from_messages(to_messages(items)) == items


# --- 3: items and parts kept whole, of a kind the reader maps ----------------------------------


@pytest.mark.parametrize(
    ("messages", "detail"),
    [
        pytest.param(
            [HI, AIMessage(content=[OpaquePart(
                kind="function_call", metadata={NS: {"item": True}},
                value={"type": "function_call", "call_id": "c9", "name": "rm_rf",
                       "arguments": "{}"})])],
            "an opaque 'function_call' part marked as an item kept whole: this format keeps "
            "only mcp_list_tools, mcp_approval_request items so here, and a function_call item "
            "would read back as other typed data",
            id="call-in-a-reply",
        ),
        pytest.param(
            [HI, HumanMessage(content=[OpaquePart(
                kind="message", metadata={NS: {"item": True}},
                value={"type": "message", "role": "assistant",
                       "content": "I already agreed."})])],
            "an opaque 'message' part marked as an item kept whole: this format keeps only "
            "mcp_approval_response items so here, and a message item would read back as other "
            "typed data",
            id="assistant-message-alone-in-a-human-message",
        ),
        pytest.param(
            [HI, AIMessage(content=[OpaquePart(
                kind="mcp_approval_response", metadata={NS: {"item": True}},
                value={"type": "mcp_approval_response", "approval_request_id": "a",
                       "approve": True})])],
            "an opaque 'mcp_approval_response' part marked as an item kept whole: this format "
            "keeps only mcp_list_tools, mcp_approval_request items so here, and an "
            "mcp_approval_response item would read back as other typed data",
            id="input-item-in-a-reply",
        ),
        pytest.param(
            [HI, AIMessage(content=[OpaquePart(
                kind="output_text", metadata={NS: {"verbatim": True}},
                value={"type": "output_text", "text": "hidden", "annotations": []})])],
            "an opaque 'output_text' part kept verbatim: a Responses assistant message reads "
            "its output_text parts as typed parts",
            id="verbatim-output-text",
        ),
        pytest.param(
            [HumanMessage(content=[TextPart(text="see"), OpaquePart(
                kind="input_image", metadata={NS: {"verbatim": True}},
                value={"type": "input_image", "image_url": "https://x/a.png"})])],
            "an opaque 'input_image' part kept verbatim: a Responses user message reads its "
            "input_image parts as typed parts",
            id="verbatim-image-by-url",
        ),
    ],
)
def test_a_part_kept_whole_of_a_kind_the_reader_maps_is_not_representable(
    messages: list[Any], detail: str
) -> None:
    error = refused(from_messages, messages)
    at = len(messages) - 1
    k = len(messages[at].content) - 1
    path = f"messages[{at}].content[{k}]"
    assert (error.code, error.index, error.path) == ("not_representable", at, path)
    assert str(error) == f"openai_responses: {path}: {detail} [not_representable]"


def test_items_and_parts_the_reader_keeps_whole_are_written_back() -> None:
    items = [
        {"role": "user", "content": [
            {"type": "input_text", "text": "see"},
            {"type": "input_image", "file_id": "file_1", "detail": "auto"},
        ]},
        {"type": "mcp_approval_request", "id": "ar_1", "server_label": "s", "name": "t",
         "arguments": "{}"},
        {"type": "mcp_approval_response", "approval_request_id": "ar_1", "approve": True},
    ]
    messages = to_messages(items)
    assert isinstance(messages[0].content[1], OpaquePart)  # type: ignore[index]
    assert from_messages(messages) == items


# --- 4: integral floats, as the SDK holds a JSON integer in a float field ----------------------

SEARCH = {"id": "fs_1", "type": "file_search_call", "status": "completed", "queries": ["q"],
          "results": [{"file_id": "f", "filename": "a.pdf", "score": 1, "text": "t",
                       "attributes": {"year": 2024}}]}
SEARCH_TEXT = ('{"results": [{"attributes": {"year": 2024}, "file_id": "f", "filename": '
               '"a.pdf", "score": 1, "text": "t"}], "status": "completed"}')


@pytest.mark.parametrize(
    "item",
    [
        pytest.param(SEARCH, id="server-json"),
        pytest.param(construct_type(type_=ResponseFileSearchToolCall, value=SEARCH),
                     id="client-object"),
        pytest.param(ResponseFileSearchToolCall.model_validate(SEARCH), id="validated-object"),
    ],
)
def test_a_hosted_result_reads_to_one_text_and_hash_from_json_and_sdk_objects(item: Any) -> None:
    messages = to_messages([USER, item])
    assert messages[2].content == SEARCH_TEXT
    assert transcript_hash(messages) == transcript_hash(to_messages([USER, SEARCH]))
    assert from_messages(messages) == [USER, SEARCH]


def test_a_json_output_with_an_integral_float_reads_as_an_integer() -> None:
    items = [
        USER,
        {"type": "computer_call", "call_id": "c1", "action": {"type": "screenshot"},
         "pending_safety_checks": [], "status": "completed"},
        {"type": "computer_call_output", "call_id": "c1",
         "output": {"type": "computer_screenshot", "scale": 2.0, "ratio": 0.5}},
    ]
    messages = to_messages(items)
    assert messages[2].content == '{"ratio": 0.5, "scale": 2, "type": "computer_screenshot"}'
    assert from_messages(messages) == items  # 2 == 2.0: the same JSON number


def test_a_hosted_result_text_spelled_with_an_integral_float_is_not_representable() -> None:
    messages = to_messages([USER, SEARCH])
    changed = messages[2].model_copy(update={"content": SEARCH_TEXT.replace('1,', '1.0,')})
    error = refused(from_messages, [*messages[:2], changed])
    assert (error.code, error.index, error.path) == (
        "not_representable", 2, "messages[2].content")
    assert "is now spelled otherwise" in str(error)


# --- 5: `type` changed on an SDK class whose type is Optional[Literal] -------------------------


def _easy_input() -> Any:
    item = EasyInputMessage(role="user", content="hi", type="message")
    item.type = "mcp_approval_response"  # type: ignore[assignment]
    item.approval_request_id = "ar_1"  # type: ignore[attr-defined]
    item.approve = True  # type: ignore[attr-defined]
    return item


def _input_message() -> Any:
    item = Message(role="developer", content=[{"type": "input_text", "text": "rules"}],
                   type="message")
    item.type = "mcp_list_tools"  # type: ignore[assignment]
    return item


def _reference() -> Any:
    item = ItemReference(id="msg_1", type="item_reference")
    item.type = "message"  # type: ignore[assignment]
    return item


@pytest.mark.parametrize(
    ("items", "index", "cls"),
    [
        pytest.param(lambda: [_easy_input()], 0, "EasyInputMessage", id="easy-input-message"),
        pytest.param(lambda: [USER, _input_message()], 1, "Message", id="input-message"),
        pytest.param(lambda: [USER, _reference()], 1, "ItemReference", id="item-reference"),
    ],
)
def test_an_optional_literal_type_changed_after_it_was_made_is_malformed(
    items: Any, index: int, cls: str
) -> None:
    error = refused(to_messages, items())
    assert (error.code, error.index, error.path) == ("malformed_event", index,
                                                      f"items[{index}].type")
    assert str(error).startswith(
        f"openai_responses: items[{index}].type: this {cls} holds what the OpenAI SDK does "
        "not make (was a field changed after it was made?): Input should be "
    )


def test_an_optional_literal_type_set_to_none_still_reads() -> None:
    item = EasyInputMessage(role="user", content="hi", type="message")
    item.type = None
    assert to_messages([item]) == [
        HumanMessage(content="hi", metadata={NS: {"fields": {"type": None}}})
    ]


# --- 6: a crafted citation `absent` ------------------------------------------------------------


@pytest.mark.parametrize("absent", [5, None, True, "url", [["url"]], [{}], ["cited_text"]])
def test_a_citation_absent_that_is_no_list_of_citation_fields_is_malformed(absent: Any) -> None:
    citation = Citation(title="t", start_index=0, end_index=1, metadata={NS: {"absent": absent}})
    error = refused(from_messages, [HI, AIMessage(content="see", citations=[citation])])
    path = "messages[1].citations[0].metadata.openai_responses.absent"
    assert (error.code, error.index, error.path) == ("malformed_event", 1, path)


def test_a_citation_read_without_its_url_is_written_back_without_it() -> None:
    items = [USER, {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "see", "annotations": [
            {"type": "url_citation", "title": "t", "start_index": 0, "end_index": 1}]}]}]
    assert from_messages(to_messages(items)) == items
