"""Legacy LlamaIndex shapes: ``additional_kwargs["images"]`` and OpenAI's deprecated
``function_call`` answered by a ``function`` message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.schema import ImageDocument

from tracebridge import (
    AIMessage,
    HumanMessage,
    ImagePart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    transcript_hash,
)
from tracebridge.adapters import llama_index, openai_chat
from tracebridge.hashing import hashed_messages

NS = "llama_index"
ROOT = Path(__file__).resolve().parents[1]
PIXEL_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


def dumps(messages: list[Any]) -> list[Any]:
    return [m.model_dump(mode="json") for m in messages]


def rejected(trace: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(trace, allow_pending=True)
    assert caught.value.source == "llama_index"
    return caught.value.code, caught.value.index, caught.value.path


# --- additional_kwargs["images"] ---------------------------------------------------------


def with_legacy_image() -> ChatMessage:
    return ChatMessage(role="user", content="What is this?",
                       additional_kwargs={"images": [ImageDocument(image=PIXEL_PNG)]})


def test_legacy_images_are_the_image_blocks_llama_index_appended() -> None:
    message = with_legacy_image()
    (human,) = llama_index.to_messages([message])
    assert human.content == [TextPart(text="What is this?"),
                             ImagePart(data=PIXEL_PNG, mime_type="image/png")]
    kept = human.metadata[NS]["additional_kwargs"]["images"]
    assert kept == message.model_dump(mode="json")["additional_kwargs"]["images"]


@pytest.mark.parametrize("as_dump", [False, True])
def test_legacy_images_are_written_back_without_a_crash_or_a_second_copy(as_dump: bool) -> None:
    message = with_legacy_image()
    trace = [message.model_dump(mode="json") if as_dump else message]
    (back,) = llama_index.from_messages(llama_index.to_messages(trace))
    assert back.model_dump(mode="json") == message.model_dump(mode="json")
    assert [type(b).__name__ for b in back.blocks] == ["TextBlock", "ImageBlock"]
    (document,) = back.additional_kwargs["images"]
    assert isinstance(document, ImageDocument)


def test_empty_legacy_images_are_kept_verbatim() -> None:
    trace = [ChatMessage(role="user", content="hi", additional_kwargs={"images": []})]
    assert llama_index.to_messages(trace) == [
        HumanMessage(content="hi", metadata={NS: {"additional_kwargs": {"images": []}}})
    ]
    assert dumps(llama_index.from_messages(llama_index.to_messages(trace))) == dumps(trace)


@pytest.mark.parametrize(
    ("images", "path"),
    [
        (["iVBORw0KGgo="], "messages[0].additional_kwargs.images[0]"),
        ([{"image_resource": 7}], "messages[0].additional_kwargs.images[0]"),
        # Valid for ImageDocument, but not its dump: it would be written back as another.
        ([{}], "messages[0].additional_kwargs.images[0]"),
        ("iVBORw0KGgo=", "messages[0].additional_kwargs.images"),
    ],
)
def test_legacy_images_llama_index_could_not_build_are_malformed(images: Any, path: str) -> None:
    trace = [{"role": "user", "blocks": [], "additional_kwargs": {"images": images}}]
    assert rejected(trace) == ("malformed_event", 0, path)


# --- function_call and the function message ----------------------------------------------


def function_flow(arguments: str = '{"city": "Rome"}') -> list[ChatMessage]:
    """What from_openai_message_dicts makes of the legacy flow (golden openai_chat case)."""
    return [
        ChatMessage(role="user", content="Weather in Rome?"),
        ChatMessage(role="assistant", content=None, additional_kwargs={
            "refusal": None, "audio": None, "annotations": [], "tool_calls": None,
            "function_call": {"name": "get_weather", "arguments": arguments}}),
        ChatMessage(role="function", content="24 C, clear",
                    additional_kwargs={"name": "get_weather"}),
        ChatMessage(role="assistant", content="It is 24 C and clear in Rome."),
    ]


def test_a_function_call_is_an_id_less_call_paired_with_the_function_message() -> None:
    messages = llama_index.to_messages(function_flow())
    assert messages[1:3] == [
        AIMessage(
            content=[],
            tool_calls=[ToolCall(name="get_weather", args={"city": "Rome"}, metadata={
                NS: {"function_call": {"arguments": '{"city": "Rome"}'}}})],
            metadata={NS: {"additional_kwargs": {"refusal": None, "audio": None,
                                                 "annotations": [], "tool_calls": None}}},
        ),
        ToolMessage(content="24 C, clear", name="get_weather",
                    metadata={NS: {"role": "function"}}),
    ]


@pytest.mark.parametrize("arguments", ['{"city": "Rome"}', '{"city":"Rome"}', '{"city": '])
def test_a_function_call_flow_is_lossless(arguments: str) -> None:
    trace = function_flow(arguments)
    assert dumps(llama_index.from_messages(llama_index.to_messages(trace))) == dumps(trace)


def test_malformed_function_call_arguments_are_invalid_args() -> None:
    (call,) = llama_index.to_messages(function_flow('{"city": '))[1].tool_calls  # type: ignore[union-attr]
    assert (call.args, call.invalid_args) == ({}, '{"city": ')


def said(messages: list[Any]) -> list[Any]:
    """What the hash covers, with no content (OpenAI's null, LlamaIndex's no blocks) as ""."""
    return [{**fields, "content": fields["content"] or ""} for fields in hashed_messages(messages)]


def test_the_function_call_flow_agrees_with_openai_chat() -> None:
    case = json.loads((ROOT / "golden_traces/openai_chat/legacy_function_call.json").read_text())
    from_openai = openai_chat.to_messages(case["trace"])
    assert said(llama_index.to_messages(function_flow())) == said(from_openai)
    again = llama_index.to_messages(convert(case["trace"], source="openai_chat",
                                            target="llama_index"))
    assert transcript_hash(again) == transcript_hash(from_openai)


def test_a_function_result_without_its_call_is_still_an_orphan() -> None:
    trace = function_flow()
    del trace[1]
    assert rejected(trace) == ("orphan_tool_result", 1, "messages[1].tool_call_id")


@pytest.mark.parametrize(
    ("function_call", "path"),
    [
        ({"arguments": "{}"}, "messages[1].additional_kwargs.function_call.name"),
        ({"name": "f"}, "messages[1].additional_kwargs.function_call.arguments"),
        ({"name": "f", "arguments": 3}, "messages[1].additional_kwargs.function_call.arguments"),
    ],
)
def test_a_malformed_function_call_is_rejected_where_it_breaks(
    function_call: dict[str, Any], path: str
) -> None:
    trace = [{"role": "user", "blocks": []},
             {"role": "assistant", "blocks": [],
              "additional_kwargs": {"function_call": function_call}}]
    assert rejected(trace) == ("malformed_event", 1, path)


def test_a_written_function_call_stays_one_when_it_is_the_last_call() -> None:
    messages = llama_index.to_messages(function_flow())
    call = messages[1].tool_calls[0]  # type: ignore[union-attr]
    ai = AIMessage(content=[], tool_calls=[ToolCall(name="lookup", id=None), call])
    trace = [messages[0], ai, ToolMessage(content="a"), messages[2]]
    (_, written, *_) = dumps(llama_index.from_messages(trace))
    assert written["additional_kwargs"]["function_call"] == {
        "name": "get_weather", "arguments": '{"city": "Rome"}'}
    assert [b["tool_name"] for b in written["blocks"] if b["block_type"] == "tool_call"] == [
        "lookup"]
    assert llama_index.to_messages(llama_index.from_messages(trace)) == trace

