"""The Chat Completions writers (``openai_chat`` and ``swarm``, one writer in two dialects)
add the source fields their reader kept, verbatim. A kept key the reader maps to the typed
message (a message's content, name, tool calls or refusal; a call's id or function; a
part's type or detail), or an empty-content form the reader never makes, can only come from
metadata edited by hand: written, it replaced what the typed message says or read back as
typed data the message never held (an invented tool call, refusal or name), without a word.
Each is refused, ``not_representable`` at the kept key. What the readers do keep (a null,
an empty list, a detail that is not a string) still reads back whole."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    HumanMessage,
    ImagePart,
    OpaquePart,
    RefusalPart,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import openai_chat, swarm

H = HumanMessage(content="hi")


def _refused(adapter: Any, messages: list[Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        adapter.from_messages(messages)
    return caught.value.code, caught.value.index, caught.value.path


def _answered(message: AIMessage, result: ToolMessage) -> list[Any]:
    return [H, message, result]


CALL = ToolCall(name="f", id="c1")
RESULT = ToolMessage(content="ok", tool_call_id="c1")


@pytest.mark.parametrize(
    ("adapter", "fields", "key"),
    [
        (openai_chat, {"content": "invented"}, "content"),
        (openai_chat, {"refusal": "no"}, "refusal"),
        (openai_chat, {"name": "Mallory"}, "name"),
        (openai_chat, {"tool_calls": [{"id": "z", "type": "function",
                                       "function": {"name": "f", "arguments": "{}"}}]},
         "tool_calls"),
        (openai_chat, {"function_call": {"name": "f", "arguments": "{}"}}, "function_call"),
        (openai_chat, {"audio": {"id": "a1"}}, "audio"),
        (openai_chat, {"annotations": []}, "annotations"),
        (openai_chat, {"role": "user"}, "role"),
        (swarm, {"sender": "Mallory"}, "sender"),
        (swarm, {"refusal": "no"}, "refusal"),
    ],
)
def test_a_kept_field_the_reader_maps_is_refused(
    adapter: Any, fields: dict[str, Any], key: str
) -> None:
    source = adapter.NAME
    message = AIMessage(content="a", metadata={source: {"fields": fields}})
    assert _refused(adapter, [H, message]) == (
        "not_representable", 1, f"messages[1].metadata.{source}.fields.{key}")


def test_a_kept_field_beside_the_typed_value_it_would_replace_is_refused() -> None:
    named = AIMessage(content="a", name="Alice", metadata={"openai_chat": {"fields": {
        "name": None}}})
    assert _refused(openai_chat, [H, named]) == (
        "not_representable", 1, "messages[1].metadata.openai_chat.fields.name")


@pytest.mark.parametrize(("adapter", "key"), [(openai_chat, "tool_call_id"), (swarm, "tool_name")])
def test_a_result_keeping_a_key_its_reader_maps_is_refused(adapter: Any, key: str) -> None:
    source = adapter.NAME
    result = ToolMessage(content="ok", tool_call_id="c1",
                         metadata={source: {"fields": {key: "g"}}})
    assert _refused(adapter, _answered(AIMessage(tool_calls=[CALL]), result)) == (
        "not_representable", 2, f"messages[2].metadata.{source}.fields.{key}")


@pytest.mark.parametrize(
    "fields",
    [{"tool_calls": None}, {"tool_calls": []}, {"refusal": None}, {"audio": None},
     {"function_call": None}, {"annotations": None}, {"name": None}, {"vendor": {"x": 1}}],
)
def test_the_fields_the_reader_keeps_read_back_whole(fields: dict[str, Any]) -> None:
    trace = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a", **fields}]
    typed = openai_chat.to_messages(trace)
    assert typed[1].metadata == {"openai_chat": {"fields": fields}}
    assert openai_chat.from_messages(typed) == trace


@pytest.mark.parametrize(
    ("message", "form"),
    [(HumanMessage(content="", metadata={"openai_chat": {"content": "null"}}), "null"),
     (HumanMessage(content="", metadata={"openai_chat": {"content": "absent"}}), "absent"),
     (AIMessage(content="x", metadata={"openai_chat": {"content": "null"}}), "null"),
     (AIMessage(content="", metadata={"openai_chat": {"content": "nothing"}}), "nothing")],
)
def test_an_empty_content_form_the_reader_never_makes_is_refused(message: Any, form: str) -> None:
    index = 0 if isinstance(message, HumanMessage) else 1
    trace = [message] if index == 0 else [H, message]
    assert _refused(openai_chat, trace) == (
        "not_representable", index, f"messages[{index}].metadata.openai_chat.content")


@pytest.mark.parametrize("form", ["null", "absent"])
def test_the_empty_content_forms_of_a_reply_read_back_whole(form: str) -> None:
    reply: dict[str, Any] = {"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}
    if form == "null":
        reply["content"] = None
    trace = [{"role": "user", "content": "hi"}, reply,
             {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    assert openai_chat.from_messages(openai_chat.to_messages(trace)) == trace


@pytest.mark.parametrize(
    ("metadata", "path"),
    [({"fields": {"id": "z"}}, "fields.id"),
     ({"fields": {"function": {"name": "g", "arguments": "{}"}}}, "fields.function"),
     ({"fields": {"type": "custom"}}, "fields.type"),
     ({"inner": {"name": "g"}}, "inner.name"),
     ({"inner": {"arguments": "{\"x\": 1}"}}, "inner.arguments")],
)
def test_a_call_keeping_a_key_its_reader_maps_is_refused(
    metadata: dict[str, Any], path: str
) -> None:
    call = ToolCall(name="f", id="c1", metadata={"openai_chat": metadata})
    assert _refused(openai_chat, _answered(AIMessage(tool_calls=[call]), RESULT)) == (
        "not_representable", 1, f"messages[1].tool_calls[0].metadata.openai_chat.{path}")


def test_a_call_keeping_what_the_reader_keeps_reads_back_whole() -> None:
    trace = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "index": 0,
             "function": {"name": "f", "arguments": "{}", "strict": True}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    assert openai_chat.from_messages(openai_chat.to_messages(trace)) == trace


URL = "https://example.com/a.png"


@pytest.mark.parametrize(
    ("part", "path"),
    [(ImagePart(url=URL, metadata={"openai_chat": {"inner": {"detail": "low"}}}),
      "inner.detail"),
     (ImagePart(url=URL, metadata={"openai_chat": {"inner": {"url": "https://other"}}}),
      "inner.url"),
     (ImagePart(url=URL, metadata={"openai_chat": {"fields": {"type": "text"}}}), "fields.type"),
     (TextPart(text="a", metadata={"openai_chat": {"fields": {"text": "b"}}}), "fields.text")],
)
def test_a_part_keeping_a_key_its_reader_maps_is_refused(part: Any, path: str) -> None:
    message = HumanMessage(content=[part])
    assert _refused(openai_chat, [message]) == (
        "not_representable", 0, f"messages[0].content[0].metadata.openai_chat.{path}")


def test_an_image_detail_that_is_not_text_stays_kept() -> None:
    trace = [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": URL, "detail": None}}]}]
    typed = openai_chat.to_messages(trace)
    assert typed[0].content[0].detail is None
    assert openai_chat.from_messages(typed) == trace


@pytest.mark.parametrize(
    ("part", "role_index"),
    [(OpaquePart(kind="image_url", value={"type": "image_url", "image_url": {"url": URL}},
                 metadata={"openai_chat": {"verbatim": True}}), 0),
     (OpaquePart(kind="refusal", value={"type": "refusal", "refusal": "no"},
                 metadata={"openai_chat": {"verbatim": True}}), 1)],
)
def test_a_verbatim_part_of_a_type_the_reader_maps_is_refused(part: Any, role_index: int) -> None:
    message: Any = HumanMessage(content=[part]) if role_index == 0 else AIMessage(content=[part])
    trace = [message] if role_index == 0 else [H, message]
    assert _refused(openai_chat, trace) == (
        "not_representable", role_index, f"messages[{role_index}].content[0]")


def test_a_verbatim_part_of_a_type_out_of_its_role_reads_back_whole() -> None:
    trace = [{"role": "user", "content": "hi"},
             {"role": "assistant", "content": [{"type": "image_url", "image_url": {"url": URL}},
                                               {"type": "text", "text": "a"}]}]
    typed = openai_chat.to_messages(trace)
    assert isinstance(typed[1].content[0], OpaquePart)
    assert openai_chat.from_messages(typed) == trace


def test_a_refusal_part_in_a_reply_is_still_written() -> None:
    reply = AIMessage(content=[RefusalPart(text="no")])
    assert openai_chat.from_messages([H, reply])[1] == {
        "role": "assistant", "content": None, "refusal": "no"}
