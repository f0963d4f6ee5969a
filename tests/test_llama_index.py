"""The LlamaIndex adapter, message by message, against objects built by llama-index-core."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentInput, AgentOutput, ToolCallResult
from llama_index.core.base.llms.types import (
    AudioBlock,
    CacheControl,
    CachePoint,
    ChatMessage,
    CitableBlock,
    CitationBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    VideoBlock,
)
from llama_index.core.tools import ToolOutput, ToolSelection
from llama_index.core.workflow import Event
from openai.types.chat import ChatCompletionMessageFunctionToolCall

from tracebridge import (
    AIMessage,
    AudioPart,
    FilePart,
    HumanMessage,
    ImagePart,
    OpaquePart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index
from tracebridge.registry import detect_format

NS = "llama_index"
PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)  # a real PNG: llama-index would guess its mimetype from these bytes


def dumps(messages: list[Any]) -> list[Any]:
    return [m.model_dump(mode="json") for m in messages]


def roundtrip(trace: list[Any]) -> list[Any]:
    return dumps(llama_index.from_messages(llama_index.to_messages(trace)))


def raises(trace: Any, convert: Any = llama_index.to_messages) -> TraceError:
    with pytest.raises(TraceError) as caught:
        convert(trace)
    assert caught.value.source == "llama_index"
    return caught.value


def user(text: str = "hi") -> ChatMessage:
    return ChatMessage(role="user", content=text)


# --- roles -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("system", SystemMessage(content="x")),
        ("developer", SystemMessage(content="x", role="developer")),
        ("user", HumanMessage(content="x")),
        ("assistant", AIMessage(content="x")),
        ("chatbot", AIMessage(content="x", metadata={NS: {"role": "chatbot"}})),
        ("model", AIMessage(content="x", metadata={NS: {"role": "model"}})),
    ],
)
def test_every_non_tool_role_maps_on_purpose_and_roundtrips(role: str, expected: Any) -> None:
    trace = [ChatMessage(role=role, content="x")]
    assert llama_index.to_messages(trace) == [expected]
    assert roundtrip(trace) == dumps(trace)


@pytest.mark.parametrize("role", ["tool", "function"])
def test_tool_roles_are_tool_results(role: str) -> None:
    trace = [
        ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="a", tool_name="f")]),
        ChatMessage(role=role, content="ok", additional_kwargs={"tool_call_id": "a"}),
    ]
    result = llama_index.to_messages(trace)[1]
    kept = {} if role == "tool" else {NS: {"role": "function"}}
    assert result == ToolMessage(content="ok", tool_call_id="a", metadata=kept)
    assert roundtrip(trace) == dumps(trace)


def test_an_unknown_role_is_rejected_with_its_position() -> None:
    trace = [user().model_dump(mode="json"), {"role": "robot", "blocks": []}]
    error = raises(trace)
    assert (error.code, error.index, error.path) == ("unknown_role", 1, "messages[1].role")
    assert "'robot'" in str(error)
    assert "developer" in str(error)


# --- blocks ------------------------------------------------------------------------------


def test_one_text_block_is_a_plain_string_and_several_blocks_are_parts() -> None:
    trace = [
        ChatMessage(role="user", content="hello"),
        ChatMessage(role="assistant", blocks=[TextBlock(text="a"), TextBlock(text="b")]),
        ChatMessage(role="user", blocks=[]),
    ]
    assert [m.content for m in llama_index.to_messages(trace)] == [
        "hello",
        [TextPart(text="a"), TextPart(text="b")],
        [],
    ]
    assert roundtrip(trace) == dumps(trace)


def test_media_blocks_keep_base64_data_and_mimetypes_exactly() -> None:
    trace = [
        ChatMessage(
            role="user",
            blocks=[
                ImageBlock(image=b"iVBORw0KGgo=", image_mimetype="image/webp", detail="low"),
                ImageBlock(url="https://example.com/cat.png"),
                AudioBlock(audio=b"UklGRg==", format="wav"),
                VideoBlock(url="https://example.com/v.mp4", fps=30),
                DocumentBlock(
                    data=b"JVBERi0=", title="q3.pdf", document_mimetype="application/pdf"
                ),
                DocumentBlock(url="https://example.com/a.pdf"),
            ],
        )
    ]
    assert llama_index.to_messages(trace)[0].content == [
        ImagePart(data="iVBORw0KGgo=", mime_type="image/webp", detail="low"),
        # llama-index derived image/png from the URL when the block was built: not given.
        ImagePart(url="https://example.com/cat.png"),
        AudioPart(data="UklGRg==", mime_type="audio/wav"),
        FilePart(
            url="https://example.com/v.mp4",
            mime_type="video/mp4",
            metadata={NS: {"block_type": "video", "fps": 30}},
        ),
        FilePart(data="JVBERi0=", filename="q3.pdf", mime_type="application/pdf"),
        FilePart(url="https://example.com/a.pdf", mime_type="application/pdf"),
    ]
    assert roundtrip(trace) == dumps(trace)


def test_from_messages_does_not_guess_a_missing_mimetype_of_data() -> None:
    image = ImagePart(data=PIXEL_PNG)
    (message,) = llama_index.from_messages([HumanMessage(content=[image, TextPart(text="?")])])
    block = message.blocks[0]
    assert isinstance(block, ImageBlock)
    assert block.image_mimetype is None
    assert llama_index.to_messages([message])[0].content == [image, TextPart(text="?")]


def test_thinking_is_reasoning_with_its_additional_information() -> None:
    thinking = ThinkingBlock(content="hmm", num_tokens=4, additional_information={"sig": "s1"})
    trace = [user(), ChatMessage(role="assistant", blocks=[thinking, TextBlock(text="4")])]
    assert llama_index.to_messages(trace)[1].content == [
        ReasoningPart(
            text="hmm",
            metadata={NS: {"num_tokens": 4, "additional_information": {"sig": "s1"}}},
        ),
        TextPart(text="4"),
    ]
    assert roundtrip(trace) == dumps(trace)


def test_blocks_no_part_describes_are_kept_whole() -> None:
    blocks = [
        CachePoint(cache_control=CacheControl(type="ephemeral")),
        CitableBlock(title="T", source="s", content=[TextBlock(text="c")]),
        CitationBlock(cited_content=TextBlock(text="q"), source="s", title="T",
                      additional_location_info={"page": 2}),
        DocumentBlock(path="/srv/a.pdf"),
    ]
    trace = [ChatMessage(role="user", blocks=blocks)]
    parts = llama_index.to_messages(trace)[0].content
    assert parts == [
        OpaquePart(kind=b.block_type, value=b.model_dump(mode="json")) for b in blocks
    ]
    assert roundtrip(trace) == dumps(trace)


def test_parts_a_chat_message_cannot_hold_are_not_representable() -> None:
    cases = [
        (FilePart(file_id="file-1"), "messages[0].content[0].file_id"),
        (AudioPart(data="UklGRg==", mime_type="image/png"), "messages[0].content[0].mime_type"),
        (OpaquePart(kind="refusal", value="no"), "messages[0].content[0]"),
    ]
    for part, path in cases:
        error = raises([HumanMessage(content=[part])], llama_index.from_messages)
        assert (error.code, error.index, error.path) == ("not_representable", 0, path)


# --- tool calls --------------------------------------------------------------------------


def ai_with(*blocks: Any, **kwargs: Any) -> ChatMessage:
    return ChatMessage(role="assistant", blocks=list(blocks), additional_kwargs=kwargs)


def result(call_id: str, text: str = "ok", key: str = "tool_call_id") -> ChatMessage:
    return ChatMessage(role="tool", content=text, additional_kwargs={key: call_id})


def test_tool_kwargs_as_text_keep_the_exact_string() -> None:
    text = '{"city":  "Paris"}'
    trace = [user(), ai_with(ToolCallBlock(tool_call_id="a", tool_name="weather",
                                           tool_kwargs=text)), result("a")]
    (call,) = llama_index.to_messages(trace)[1].tool_calls  # type: ignore[union-attr]
    assert call == ToolCall(name="weather", args={"city": "Paris"}, id="a",
                            metadata={NS: {"kwargs_text": text}})
    assert roundtrip(trace) == dumps(trace)


@pytest.mark.parametrize("text", ['{"city": ', "[1, 2]", "NaN", ""])
def test_malformed_tool_kwargs_are_kept_as_invalid_args(text: str) -> None:
    trace = [user(), ai_with(ToolCallBlock(tool_call_id="a", tool_name="f", tool_kwargs=text)),
             result("a")]
    (call,) = llama_index.to_messages(trace)[1].tool_calls  # type: ignore[union-attr]
    assert (call.args, call.invalid_args) == ({}, text)
    assert roundtrip(trace) == dumps(trace)


def openai_entry(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("as_sdk_object", [False, True])
def test_calls_only_in_additional_kwargs(as_sdk_object: bool) -> None:
    entries: list[Any] = [openai_entry("a", "f", '{"x": 1}'), openai_entry("b", "g", "{}")]
    if as_sdk_object:
        entries = [ChatCompletionMessageFunctionToolCall.model_validate(e) for e in entries]
    trace = [user(), ai_with(TextBlock(text=""), tool_calls=entries), result("a"), result("b")]
    ai = llama_index.to_messages(trace)[1]
    assert isinstance(ai, AIMessage)
    assert [(c.name, c.args, c.id) for c in ai.tool_calls] == [("f", {"x": 1}, "a"), ("g", {}, "b")]
    assert ai.tool_calls[0].metadata[NS]["in_blocks"] is False
    assert roundtrip(trace) == dumps(trace)


def test_calls_as_tool_selections_in_additional_kwargs() -> None:
    selections = [ToolSelection(tool_id="a", tool_name="f", tool_kwargs={"x": 1}),
                  ToolSelection(tool_id="b", tool_name="g", tool_kwargs={})]
    trace = [user(), ai_with(tool_calls=selections), result("a"), result("b")]
    ai = llama_index.to_messages(trace)[1]
    assert ai == AIMessage(
        content=[],
        tool_calls=[
            ToolCall(name="f", args={"x": 1}, id="a", metadata={NS: {
                "entry": {"tool_kwargs": {"x": 1}}, "entry_index": 0, "in_blocks": False}}),
            ToolCall(name="g", args={}, id="b", metadata={NS: {
                "entry": {"tool_kwargs": {}}, "entry_index": 1, "in_blocks": False}}),
        ],
    )
    assert roundtrip(trace) == dumps(trace)


def test_calls_in_both_places_are_reconciled_by_id() -> None:
    trace = [
        user(),
        ai_with(
            ToolCallBlock(tool_call_id="a", tool_name="f", tool_kwargs={"x": 1}),
            tool_calls=[openai_entry("a", "f", '{"x":1}')],
        ),
        result("a"),
    ]
    (call,) = llama_index.to_messages(trace)[1].tool_calls  # type: ignore[union-attr]
    assert (call.name, call.args, call.id) == ("f", {"x": 1}, "a")
    assert roundtrip(trace) == dumps(trace)


@pytest.mark.parametrize(
    "entry", [openai_entry("a", "f", '{"x": 2}'), openai_entry("a", "other", '{"x": 1}')]
)
def test_calls_that_disagree_are_conflicting_fields(entry: dict[str, Any]) -> None:
    trace = [
        user(),
        ai_with(ToolCallBlock(tool_call_id="a", tool_name="f", tool_kwargs={"x": 1}),
                tool_calls=[entry]),
        result("a"),
    ]
    error = raises(trace)
    assert (error.code, error.index, error.path) == (
        "conflicting_fields", 1, "messages[1].additional_kwargs.tool_calls[0]"
    )


def test_a_tool_result_may_name_its_call_by_call_id() -> None:
    trace = [user(), ai_with(ToolCallBlock(tool_call_id="a", tool_name="f")),
             result("a", key="call_id")]
    assert llama_index.to_messages(trace)[2] == ToolMessage(
        content="ok", tool_call_id="a", metadata={NS: {"tool_call_id_key": "call_id"}}
    )
    assert roundtrip(trace) == dumps(trace)


def test_an_unanswered_call_is_reported_at_the_message_that_made_it() -> None:
    trace = [user(), ai_with(ToolCallBlock(tool_call_id="a", tool_name="f")), user("again")]
    error = raises(trace)
    assert (error.code, error.index) == ("unanswered_tool_call", 1)
    assert llama_index.to_messages(trace[:2], allow_pending=True)[1].tool_calls[0].id == "a"  # type: ignore[union-attr]


def test_blocks_before_calls_keep_their_order() -> None:
    trace = [user(), ai_with(ToolCallBlock(tool_call_id="a", tool_name="f"),
                             TextBlock(text="calling f")), result("a")]
    ai = llama_index.to_messages(trace)[1]
    assert ai.content == "calling f"
    assert ai.metadata == {NS: {"layout": ["call", "part"]}}
    assert roundtrip(trace) == dumps(trace)


def test_name_and_other_kwargs_are_kept() -> None:
    trace = [ChatMessage(role="user", content="hi",
                         additional_kwargs={"name": "ann", "trace_id": "t-1"})]
    assert llama_index.to_messages(trace) == [
        HumanMessage(content="hi", name="ann",
                     metadata={NS: {"additional_kwargs": {"trace_id": "t-1"}}})
    ]
    assert roundtrip(trace) == dumps(trace)


# --- from_messages -----------------------------------------------------------------------


def test_from_messages_gives_chat_message_objects() -> None:
    messages = [
        SystemMessage(content="be brief"),
        HumanMessage(content="2+2?"),
        AIMessage(content="", tool_calls=[ToolCall(name="add", args={"a": 2}, id="c")],
                  name="calc"),
        ToolMessage(content="4", tool_call_id="c", name="add"),
    ]
    built = llama_index.from_messages(messages)
    assert all(type(m) is ChatMessage for m in built)
    assert dumps(built) == [
        {"role": "system", "additional_kwargs": {},
         "blocks": [{"block_type": "text", "text": "be brief"}]},
        {"role": "user", "additional_kwargs": {},
         "blocks": [{"block_type": "text", "text": "2+2?"}]},
        {"role": "assistant", "additional_kwargs": {"name": "calc"},
         "blocks": [{"block_type": "text", "text": ""},
                    {"block_type": "tool_call", "tool_call_id": "c", "tool_name": "add",
                     "tool_kwargs": {"a": 2}}]},
        {"role": "tool", "additional_kwargs": {"tool_call_id": "c", "name": "add"},
         "blocks": [{"block_type": "text", "text": "4"}]},
    ]
    assert llama_index.to_messages(built) == messages


def test_error_flags_are_left_out_only_when_asked() -> None:
    messages = [HumanMessage(content="q"),
                AIMessage(tool_calls=[ToolCall(name="f", id="c")]),
                ToolMessage(content="boom", tool_call_id="c", is_error=True)]
    error = raises(messages, llama_index.from_messages)
    assert (error.code, error.index, error.path) == (
        "not_representable", 2, "messages[2].is_error"
    )
    built = llama_index.from_messages(messages, drop={"is_error"})
    assert llama_index.to_messages(built)[2] == ToolMessage(content="boom", tool_call_id="c")
    with pytest.raises(ValueError, match="names nothing droppable"):
        llama_index.from_messages(messages, drop={"name"})


def test_message_ids_are_provenance_and_not_written() -> None:
    messages = [HumanMessage(content="q", id="m1"), AIMessage(content="a", id="m2")]
    assert dumps(llama_index.from_messages(messages)) == dumps(
        llama_index.from_messages([m.model_copy(update={"id": None}) for m in messages])
    )


# --- detection ---------------------------------------------------------------------------


def test_detect_recognises_objects_and_dumps_only() -> None:
    assert llama_index.detect([user()])
    assert llama_index.detect([user().model_dump(mode="json")])
    assert not llama_index.detect([])
    assert not llama_index.detect([{"role": "user", "content": "hi"}])
    assert not llama_index.detect({"role": "user", "blocks": []})


def test_detect_and_import_do_not_import_llama_index() -> None:
    code = (
        "import sys\n"
        "from tracebridge.adapters import llama_index\n"
        "assert llama_index.detect([{'role': 'user', 'blocks': []}])\n"
        "assert not any(m.split('.')[0] == 'llama_index' for m in sys.modules), 'imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- events ------------------------------------------------------------------------------


def test_every_event_type_says_what_it_contributes() -> None:
    assert sorted(llama_index.EVENT_TYPES) == sorted([
        "AgentInput", "AgentOutput", "ToolCallResult", "AgentSetup", "AgentStream",
        "AgentStreamStructuredOutput", "ToolCall", "StartEvent", "AgentWorkflowStartEvent",
        "StopEvent", "WorkflowFailedEvent", "WorkflowCancelledEvent", "WorkflowTimedOutEvent",
        "InputRequiredEvent", "HumanResponseEvent",
    ])


def tool_result_event(call_id: str, text: str, *, error: bool = False,
                      direct: bool = False) -> ToolCallResult:
    output = ToolOutput(tool_name="f", content=text, is_error=error, raw_input={})
    return ToolCallResult(tool_name="f", tool_kwargs={}, tool_id=call_id, tool_output=output,
                          return_direct=direct)


def test_a_user_message_right_after_a_tool_result_is_kept_exactly_once() -> None:
    call_msg = ai_with(ToolCallBlock(tool_call_id="a", tool_name="f"))
    tool_msg = result("a", "42")
    events = [
        AgentInput(input=[user("q1")], current_agent_name="bot"),
        AgentOutput(response=call_msg, current_agent_name="bot"),
        tool_result_event("a", "42", error=True, direct=True),
        AgentInput(input=[user("q1"), call_msg, tool_msg, user("q2")], current_agent_name="bot"),
        AgentOutput(response=ChatMessage(role="assistant", content="done"),
                    current_agent_name="bot"),
    ]
    assert llama_index.events_to_messages(events) == [
        HumanMessage(content="q1"),
        AIMessage(content=[], tool_calls=[ToolCall(name="f", id="a")], name="bot"),
        ToolMessage(content="42", tool_call_id="a", name="f", is_error=True,
                    metadata={NS: {"event": {"return_direct": True}}}),
        HumanMessage(content="q2"),
        AIMessage(content="done", name="bot"),
    ]


def test_unknown_events_are_rejected_with_their_position() -> None:
    class Pause(Event):
        reason: str

    start = AgentInput(input=[user()], current_agent_name="bot")
    error = raises([start, Pause(reason="x")], llama_index.events_to_messages)
    assert (error.code, error.index) == ("unknown_role", 1)
    error = raises([{"event": "ApprovalRequested", "data": {}}], llama_index.events_to_messages)
    assert (error.code, error.index, error.path) == ("unknown_role", 0, "events[0].event")
    error = raises([{"event": "AgentInput", "data": {"input": "hi"}}],
                   llama_index.events_to_messages)
    assert (error.code, error.index, error.path) == ("malformed_event", 0, "events[0].data.input")


def test_an_agent_output_must_be_an_assistant_message() -> None:
    events = [AgentOutput(response=user(), current_agent_name="bot")]
    error = raises(events, llama_index.events_to_messages)
    assert (error.code, error.index) == ("malformed_event", 0)


def test_auto_detection_picks_llama_index_for_objects_and_dumps() -> None:
    trace = [user(), ChatMessage(role="assistant", content="hello")]
    assert detect_format(trace) == "llama_index"
    assert detect_format(dumps(trace)) == "llama_index"


# --- what is not a history ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("trace", "code", "index", "path"),
    [
        ({"role": "user", "blocks": []}, "malformed_event", None, None),
        ([{"role": "user"}], "malformed_event", 0, "messages[0].blocks"),
        ([{"role": "user", "blocks": [], "content": "hi"}], "malformed_event", 0,
         "messages[0].content"),
        ([{"role": "user", "blocks": [{"block_type": "sticker"}]}], "malformed_event", 0,
         "messages[0].blocks[0].block_type"),
        ([{"role": "user", "blocks": [{"block_type": "text", "text": 3}]}], "malformed_event", 0,
         "messages[0].blocks[0].text"),
        ([{"role": "user", "blocks": [], "additional_kwargs": {"seen": {1, 2}}}],
         "unserializable_value", 0, "messages[0].additional_kwargs.seen"),
        ([user().model_dump(mode="json"),
          {"role": "assistant", "blocks": [{"block_type": "tool_call", "tool_name": "f",
                                            "tool_call_id": "a"}]},
          {"role": "tool", "blocks": [], "additional_kwargs": {"tool_call_id": 7}}],
         "malformed_event", 2, "messages[2].additional_kwargs.tool_call_id"),
        ([user().model_dump(mode="json"),
          {"role": "assistant", "blocks": [{"block_type": "tool_call", "tool_name": "f",
                                            "tool_call_id": "a"}]},
          {"role": "tool", "blocks": [],
           "additional_kwargs": {"tool_call_id": "a", "call_id": "b"}}],
         "conflicting_fields", 2, "messages[2].additional_kwargs.call_id"),
        ([user().model_dump(mode="json"),
          {"role": "assistant", "blocks": [],
           "additional_kwargs": {"tool_calls": [{"id": "a", "name": "f"}]}}],
         "malformed_event", 1, "messages[1].additional_kwargs.tool_calls[0]"),
    ],
)
def test_broken_histories_are_rejected_where_they_break(
    trace: Any, code: str, index: int | None, path: str | None
) -> None:
    error = raises(trace)
    assert (error.code, error.index, error.path) == (code, index, path)
