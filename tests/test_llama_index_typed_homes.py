"""What LlamaIndex shares with other formats arrives in its typed home, both ways.

Developer role, refusals, image detail, audio formats, images by URL (the mimetype LlamaIndex
derives), spoken replies, citations and custom tool calls: each read from the shape LlamaIndex
(or its OpenAI integration) stores, written back there, and refused by name where a
ChatMessage has no place.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import (
    AudioBlock,
    ChatMessage,
    ImageBlock,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    FilePart,
    HumanMessage,
    ImagePart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    convert,
    transcript_hash,
)
from tracebridge.adapters import llama_index, openai_chat

NS = "llama_index"
ROOT = Path(__file__).resolve().parents[1]
QUESTION = ChatMessage(role="user", content="What does the forecast say?")


def dumps(messages: list[Any]) -> list[Any]:
    return [m.model_dump(mode="json") for m in messages]


def roundtrip(trace: list[Any]) -> list[Any]:
    return dumps(llama_index.from_messages(llama_index.to_messages(trace)))


def written(messages: list[Any], **options: Any) -> list[Any]:
    return dumps(llama_index.from_messages(messages, **options))


def refused(messages: list[Any], **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(messages, **options)
    assert (caught.value.code, caught.value.source) == ("not_representable", "llama_index")
    return caught.value


def assistant(*blocks: Any, **kwargs: Any) -> ChatMessage:
    return ChatMessage(role="assistant", blocks=list(blocks), additional_kwargs=kwargs)


# --- the developer role ------------------------------------------------------------------


def test_the_developer_role_is_the_system_message_role_both_ways() -> None:
    trace = [ChatMessage(role=MessageRole.DEVELOPER, content="Answer in French."), QUESTION]
    assert llama_index.to_messages(trace)[0] == SystemMessage(
        content="Answer in French.", role="developer"
    )
    assert roundtrip(trace) == dumps(trace)
    assert written([SystemMessage(content="x", role="developer")])[0]["role"] == "developer"


def test_a_system_role_in_old_metadata_does_not_override_the_typed_role() -> None:
    # Nor is it left out without a word (DESIGN.md: nothing is silently dropped): the typed
    # role is written, so a kept role that is not it is refused where it is.
    old = SystemMessage(content="x", metadata={NS: {"role": "developer"}})
    error = refused([old])
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].metadata.llama_index.role")
    assert written([SystemMessage(content="x", metadata={NS: {"role": "system"}})])[0][
        "role"] == "system"


# --- refusals ----------------------------------------------------------------------------


def test_a_refusal_in_additional_kwargs_is_the_last_part_of_the_reply() -> None:
    # What from_openai_message_dict makes of {"content": null, "refusal": ...}.
    trace = [QUESTION, assistant(refusal="I can't help with that.", audio=None,
                                 annotations=[], function_call=None, tool_calls=None)]
    assert llama_index.to_messages(trace)[1] == AIMessage(
        content=[RefusalPart(text="I can't help with that.")],
        metadata={NS: {"additional_kwargs": {"audio": None, "annotations": [],
                                             "function_call": None, "tool_calls": None}}},
    )
    assert roundtrip(trace) == dumps(trace)


def test_a_refusal_beside_text_and_calls() -> None:
    trace = [
        QUESTION,
        assistant(TextBlock(text=""), ToolCallBlock(tool_call_id="c", tool_name="f"),
                  refusal="no"),
        ChatMessage(role="tool", content="ok", additional_kwargs={"tool_call_id": "c"}),
    ]
    ai = llama_index.to_messages(trace)[1]
    assert ai == AIMessage(content=[TextPart(text=""), RefusalPart(text="no")],
                           tool_calls=[ToolCall(name="f", id="c")])
    assert roundtrip(trace) == dumps(trace)


def test_a_refusal_is_read_only_on_assistant_side_messages() -> None:
    trace = [ChatMessage(role="user", content="hi", additional_kwargs={"refusal": "no"})]
    assert llama_index.to_messages(trace) == [
        HumanMessage(content="hi", metadata={NS: {"additional_kwargs": {"refusal": "no"}}})
    ]


def test_a_refusal_is_written_where_from_openai_message_dict_keeps_it() -> None:
    reply = AIMessage(content=[TextPart(text="Sorry."), RefusalPart(text="unsafe")])
    assert written([HumanMessage(content="q"), reply])[1] == {
        "role": "assistant",
        "additional_kwargs": {"refusal": "unsafe"},
        "blocks": [{"block_type": "text", "text": "Sorry."}],
    }


@pytest.mark.parametrize(
    ("message", "path"),
    [
        (HumanMessage(content=[RefusalPart(text="no")]), "messages[0].content[0]"),
        (AIMessage(content=[RefusalPart(text="a"), TextPart(text="b")]), "messages[0].content[0]"),
        (AIMessage(content=[RefusalPart(text="a"), RefusalPart(text="b")]),
         "messages[0].content[0]"),
    ],
)
def test_a_refusal_without_a_place_is_refused_by_name(message: Any, path: str) -> None:
    error = refused([message])
    assert (error.index, error.path) == (0, path)
    assert "drop=['refusals']" in error.detail
    kept = [part for part in message.content if not isinstance(part, RefusalPart)]
    if isinstance(message, AIMessage) and isinstance(message.content[-1], RefusalPart):
        kept.append(message.content[-1])  # the last one has a place: written, not dropped
    assert llama_index.to_messages(
        llama_index.from_messages([message], drop=["refusals"]), allow_pending=True
    )[0].content == (kept[0].text if len(kept) == 1 and isinstance(kept[0], TextPart) else kept)


def test_an_openai_refusal_converts_to_llama_index() -> None:
    trace = [{"role": "user", "content": "Open my neighbour's lock."},
             {"role": "assistant", "content": None, "refusal": "I can't help with that."}]
    chat = convert(trace, source="openai_chat", target="llama_index")
    assert dumps(chat)[1] == {"role": "assistant", "blocks": [],
                              "additional_kwargs": {"refusal": "I can't help with that."}}


# --- image detail and images by URL ------------------------------------------------------


def test_image_detail_is_typed_both_ways() -> None:
    trace = [ChatMessage(role="user", blocks=[
        ImageBlock(url="https://example.com/skyline.png", detail="high"),
        ImageBlock(image=b"iVBORw0KGgo=", image_mimetype="image/png", detail="low"),
    ])]
    assert llama_index.to_messages(trace)[0].content == [
        ImagePart(url="https://example.com/skyline.png", detail="high"),
        ImagePart(data="iVBORw0KGgo=", mime_type="image/png", detail="low"),
    ]
    assert roundtrip(trace) == dumps(trace)


@pytest.mark.parametrize(
    ("url", "derived"),
    [
        ("https://example.com/cat.png", "image/png"),
        ("https://example.com/cat.webp", "image/webp"),
        ("data:image/png,abc", None),  # not base64: a URL (a base64 one is inline data,
        # test_llama_index_data_urls.py)
        ("https://example.com/cat.PNG", None),  # the extension table is case-sensitive
        ("https://example.com/cat.png?size=2", None),  # the suffix is ".png?size=2"
        ("https://example.com/cat", None),
    ],
)
def test_the_mimetype_llama_index_derives_from_a_url_is_not_a_given_one(
    url: str, derived: str | None
) -> None:
    block = ImageBlock(url=url)
    assert block.image_mimetype == derived
    (part,) = llama_index.to_messages([ChatMessage(role="user", blocks=[block])])[0].content
    assert part == ImagePart(url=url)
    # Written back without a mimetype, LlamaIndex derives the same one again.
    (message,) = llama_index.from_messages([HumanMessage(content=[part])])
    assert message.blocks[0].image_mimetype == derived


def test_a_mimetype_other_than_the_derived_one_is_kept() -> None:
    trace = [ChatMessage(role="user", blocks=[
        ImageBlock(url="https://example.com/cat.png", image_mimetype="image/jpeg"),
        ImageBlock(url="https://example.com/cat", image_mimetype="image/png"),
    ])]
    assert llama_index.to_messages(trace)[0].content == [
        ImagePart(url="https://example.com/cat.png", mime_type="image/jpeg"),
        ImagePart(url="https://example.com/cat", mime_type="image/png"),
    ]
    assert roundtrip(trace) == dumps(trace)


def test_a_block_without_the_mimetype_llama_index_would_derive_keeps_saying_so() -> None:
    trace = [{"role": "user", "additional_kwargs": {}, "blocks": [
        {"block_type": "image", "image": None, "path": None,
         "url": "https://example.com/cat.png", "image_mimetype": None, "detail": None}]}]
    (part,) = llama_index.to_messages(trace)[0].content  # type: ignore[misc]
    assert part == ImagePart(url="https://example.com/cat.png",
                             metadata={NS: {"image_mimetype": None}})
    assert roundtrip(trace) == trace


def test_a_given_mimetype_equal_to_the_derived_one_is_refused_by_name() -> None:
    image = ImagePart(url="https://example.com/cat.png", mime_type="image/png")
    error = refused([HumanMessage(content=[image, TextPart(text="?")])])
    assert (error.index, error.path) == (0, "messages[0].content[0].mime_type")
    assert "drop=['mime_types']" in error.detail
    chat = llama_index.from_messages([HumanMessage(content=[image])], drop=["mime_types"])
    assert chat[0].blocks[0].image_mimetype == "image/png"
    assert llama_index.to_messages(chat)[0].content == [ImagePart(url=image.url)]


def test_an_image_by_url_converts_to_openai_chat_without_a_mime_type_loss() -> None:
    trace = [ChatMessage(role="user", blocks=[ImageBlock(url="https://example.com/cat.png")]),
             ChatMessage(role="assistant", content="A cat.")]
    openai = convert(trace, source="llama_index", target="openai_chat")
    assert openai[0]["content"] == [
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    ]


def test_a_url_llama_index_would_rewrite_is_refused() -> None:
    error = refused([HumanMessage(content=[ImagePart(url="https://example.com")])])
    assert (error.index, error.path) == (0, "messages[0].content[0].url")
    assert "'https://example.com/'" in error.detail


# --- audio formats -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "mime_type", "kept"),
    [
        ("wav", "audio/wav", {}),
        ("mp3", "audio/mpeg", {}),
        ("flac", "audio/flac", {}),
        ("ogg", "audio/ogg", {}),
        ("mpeg", "audio/mpeg", {NS: {"format": "mpeg"}}),
        ("x-wav", "audio/x-wav", {NS: {"format": "x-wav"}}),
        (None, None, {}),
    ],
)
def test_audio_format_is_the_mime_type_through_the_media_table(
    name: str | None, mime_type: str | None, kept: dict[str, Any]
) -> None:
    trace = [{"role": "user", "additional_kwargs": {}, "blocks": [
        {"block_type": "audio", "audio": "UklGRg==", "path": None, "url": None, "format": name}]}]
    (part,) = llama_index.to_messages(trace)[0].content  # type: ignore[misc]
    assert part == AudioPart(data="UklGRg==", mime_type=mime_type, metadata=kept)
    assert roundtrip(trace) == trace


@pytest.mark.parametrize(
    ("mime_type", "name"),
    [("audio/wav", "wav"), ("audio/mpeg", "mp3"), ("audio/mp3", "mp3"), ("audio/x-wav", "wav"),
     ("audio/ogg", "ogg"), (None, None)],
)
def test_an_audio_mime_type_is_written_as_its_format(mime_type: str | None, name: str) -> None:
    part = AudioPart(data="UklGRg==", mime_type=mime_type)
    (message,) = llama_index.from_messages([HumanMessage(content=[part])])
    block = message.blocks[0]
    assert isinstance(block, AudioBlock)
    assert block.format == name
    again = llama_index.to_messages([message])
    assert transcript_hash(again) == transcript_hash([HumanMessage(content=[part])])


def test_an_audio_mime_type_that_names_no_format_is_refused_by_name() -> None:
    part = AudioPart(data="UklGRg==", mime_type="image/png")
    error = refused([HumanMessage(content=[TextPart(text="?"), part])])
    assert (error.index, error.path) == (0, "messages[0].content[1].mime_type")
    assert "drop=['mime_types']" in error.detail
    (message,) = llama_index.from_messages([HumanMessage(content=[part])], drop=["mime_types"])
    assert message.blocks[0].format is None


def test_the_openai_attachments_golden_goes_to_llama_index_but_for_its_file_id() -> None:
    case = json.loads((ROOT / "golden_traces/openai_chat/attachments.json").read_text())
    with pytest.raises(TraceError) as caught:
        convert(case["trace"], source="openai_chat", target="llama_index")
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 0, "messages[0].content[3].file_id"
    )
    assert "drop=['file_ids']" in caught.value.detail
    chat = convert(case["trace"], source="openai_chat", target="llama_index",
                   target_options={"drop": ["file_ids"]})
    assert dumps(chat)[0]["blocks"][1] == {
        "block_type": "audio", "audio": "UklGRiQAAABXQVZF", "path": None, "url": None,
        "format": "wav",
    }
    assert llama_index.to_messages(chat)[0].content == [
        TextPart(text="Summarise the recording and the report."),
        AudioPart(data="UklGRiQAAABXQVZF", mime_type="audio/wav"),
        FilePart(data="JVBERi0xLjQ=", filename="report.pdf", mime_type="application/pdf"),
    ]


# --- spoken replies ----------------------------------------------------------------------


def test_a_reply_from_the_openai_llm_is_its_reference_id_and_data_block() -> None:
    # What OpenAI.chat makes of an audio response (from_openai_message, modalities audio).
    trace = [QUESTION, assistant(AudioBlock(audio=b"UklGRg==", format="mp3"),
                                 reference_audio_id="audio_abc123")]
    assert llama_index.to_messages(trace)[1] == AIMessage(
        content=[], audio=AudioReference(id="audio_abc123", data="UklGRg==")
    )
    assert roundtrip(trace) == dumps(trace)


def test_a_reply_by_id_alone_and_one_whose_data_block_says_another_format() -> None:
    by_id = assistant(TextBlock(text=""), reference_audio_id="audio_1")
    wav = assistant(AudioBlock(audio=b"UklGRg==", format="wav"), reference_audio_id="audio_2")
    trace = [QUESTION, by_id, ChatMessage(role="user", content="again"), wav]
    messages = llama_index.to_messages(trace)
    assert messages[1] == AIMessage(content="", audio=AudioReference(id="audio_1"))
    assert messages[3] == AIMessage(content=[], audio=AudioReference(
        id="audio_2", data="UklGRg==", metadata={NS: {"format": "wav"}}))
    assert roundtrip(trace) == dumps(trace)


def test_a_reply_as_an_openai_audio_dict_holds_transcript_and_expiry() -> None:
    # What from_openai_message_dict keeps of an assistant dict with "audio".
    audio = {"id": "audio_1", "data": "UklGRg==", "expires_at": 1729234747,
             "transcript": "Sunny, 18 C."}
    trace = [QUESTION, assistant(audio=audio)]
    assert llama_index.to_messages(trace)[1] == AIMessage(
        content=[], audio=AudioReference(id="audio_1", data="UklGRg==", expires_at=1729234747,
                                         transcript="Sunny, 18 C.")
    )
    assert roundtrip(trace) == dumps(trace)


def test_each_reply_is_written_in_the_form_that_holds_it() -> None:
    by_id = AIMessage(content="", audio=AudioReference(id="a1"))
    with_data = AIMessage(content="", audio=AudioReference(id="a2", data="UklGRg=="))
    full = AIMessage(content="", audio=AudioReference(id="a3", transcript="Hi."))
    # An audio part last, and a reply without data: the openai form, or it would read as data.
    beside = AIMessage(content=[AudioPart(data="UklGRg==", mime_type="audio/wav")],
                       audio=AudioReference(id="a4"))
    out = written([HumanMessage(content="q"), by_id, with_data, full, beside])
    assert [m["additional_kwargs"] for m in out[1:]] == [
        {"reference_audio_id": "a1"},
        {"reference_audio_id": "a2"},
        {"audio": {"id": "a3", "transcript": "Hi."}},
        {"audio": {"id": "a4"}},
    ]
    assert out[2]["blocks"][-1] == {"block_type": "audio", "audio": "UklGRg==", "path": None,
                                    "url": None, "format": "mp3"}
    assert llama_index.to_messages(
        llama_index.from_messages([HumanMessage(content="q"), by_id, with_data, full, beside])
    )[1:] == [by_id, with_data, full, beside]


def test_both_reply_forms_must_name_the_same_reply() -> None:
    trace = [QUESTION.model_dump(mode="json"), {
        "role": "assistant", "blocks": [],
        "additional_kwargs": {"audio": {"id": "a1"}, "reference_audio_id": "a2"}}]
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(trace)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "conflicting_fields", 1, "messages[1].additional_kwargs.reference_audio_id"
    )
    trace[1]["additional_kwargs"]["reference_audio_id"] = "a1"
    assert llama_index.to_messages(trace)[1].audio == AudioReference(  # type: ignore[union-attr]
        id="a1", metadata={NS: {"audio": {}, "reference_audio_id": True}})
    assert roundtrip(trace) == trace


# --- citations ---------------------------------------------------------------------------


def test_annotations_are_citations_both_ways() -> None:
    annotation = {"type": "url_citation", "url_citation": {
        "url": "https://meteo.example.com/paris", "title": "Paris forecast",
        "start_index": 0, "end_index": 12}}
    trace = [QUESTION, assistant(TextBlock(text="Sunny, 18 C."), annotations=[annotation])]
    assert llama_index.to_messages(trace)[1] == AIMessage(content="Sunny, 18 C.", citations=[
        Citation(url="https://meteo.example.com/paris", title="Paris forecast", start_index=0,
                 end_index=12)])
    assert roundtrip(trace) == dumps(trace)


def test_an_annotation_that_is_not_a_url_citation_is_malformed() -> None:
    trace = [QUESTION, assistant(annotations=[{"type": "file_citation", "file_id": "f"}])]
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(trace)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 1, "messages[1].additional_kwargs.annotations[0]"
    )


def test_cited_text_has_no_place_and_is_refused_by_name() -> None:
    reply = AIMessage(content="Sunny.", citations=[
        Citation(url="https://a.example", cited_text="sunny all day")])
    error = refused([HumanMessage(content="q"), reply])
    assert (error.index, error.path) == (1, "messages[1].citations[0].cited_text")
    assert "drop=['citations']" in error.detail
    out = written([HumanMessage(content="q"), reply], drop=["citations"])
    assert out[1]["additional_kwargs"] == {}


# --- custom tool calls -------------------------------------------------------------------


def custom_entry(call_id: str, name: str, text: str) -> dict[str, Any]:
    return {"id": call_id, "type": "custom", "custom": {"name": name, "input": text}}


def test_a_custom_call_is_a_custom_entry_both_ways() -> None:
    call = ToolCall(name="run_sql", args={"input": "select 1"}, id="c1", kind="custom")
    messages = [HumanMessage(content="q"), AIMessage(tool_calls=[call]),
                ToolMessage(content="1", tool_call_id="c1")]
    out = written(messages)
    assert out[1] == {"role": "assistant", "blocks": [{"block_type": "text", "text": ""}],
                      "additional_kwargs": {"tool_calls": [custom_entry("c1", "run_sql",
                                                                        "select 1")]}}
    assert llama_index.to_messages(out) == messages


def test_a_message_with_a_custom_call_writes_every_call_as_an_entry_in_order() -> None:
    calls = [ToolCall(name="run_sql", args={"input": "select 1"}, id="c1", kind="custom"),
             ToolCall(name="add", args={"a": 1}, id="c2")]
    messages = [HumanMessage(content="q"), AIMessage(tool_calls=calls),
                ToolMessage(content="1", tool_call_id="c1"),
                ToolMessage(content="2", tool_call_id="c2")]
    out = written(messages)
    assert out[1]["blocks"] == [{"block_type": "text", "text": ""}]
    assert out[1]["additional_kwargs"]["tool_calls"] == [
        custom_entry("c1", "run_sql", "select 1"),
        {"id": "c2", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}},
    ]
    assert llama_index.to_messages(out) == messages


def test_a_custom_entry_beside_a_block_is_read_after_the_block_calls() -> None:
    trace = [QUESTION, assistant(ToolCallBlock(tool_call_id="c1", tool_name="add"),
                                 tool_calls=[custom_entry("c2", "run_sql", "select 2")]),
             ChatMessage(role="tool", content="1", additional_kwargs={"tool_call_id": "c1"}),
             ChatMessage(role="tool", content="2", additional_kwargs={"tool_call_id": "c2"})]
    ai = llama_index.to_messages(trace)[1]
    assert ai.tool_calls == [  # type: ignore[union-attr]
        ToolCall(name="add", id="c1"),
        ToolCall(name="run_sql", args={"input": "select 2"}, id="c2", kind="custom"),
    ]
    assert roundtrip(trace) == dumps(trace)


def test_an_openai_custom_call_converts_to_llama_index_and_back() -> None:
    case = json.loads((ROOT / "golden_traces/openai_chat/custom_tool.json").read_text())
    chat = convert(case["trace"], source="openai_chat", target="llama_index")
    assert dumps(chat)[1]["additional_kwargs"]["tool_calls"] == [
        custom_entry("call_ct1", "run_sql", "SELECT id, name FROM users LIMIT 3")
    ]
    again = llama_index.to_messages(chat)
    assert transcript_hash(again) == transcript_hash(openai_chat.to_messages(case["trace"]))


@pytest.mark.parametrize(
    ("entry", "path"),
    [
        ({"id": "c", "type": "custom", "custom": {"input": "x"}},
         "messages[1].additional_kwargs.tool_calls[0].custom"),
        ({"id": "c", "type": "custom", "custom": {"name": "f", "input": 3}},
         "messages[1].additional_kwargs.tool_calls[0].custom.input"),
    ],
)
def test_a_malformed_custom_entry_is_rejected_where_it_breaks(
    entry: dict[str, Any], path: str
) -> None:
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages([QUESTION, assistant(tool_calls=[entry])], allow_pending=True)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 1, path
    )
