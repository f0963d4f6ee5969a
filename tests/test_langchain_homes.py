"""The LangChain adapter and the typed homes formats share: each read from where LangChain
(and ChatOpenAI) keeps it, written back there, and carried to what langchain-core's own
``convert_to_openai_messages`` makes of it."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
    messages_to_dict,
)
from test_langchain import roundtrip

import tracebridge as tb
from tracebridge import TraceError
from tracebridge.adapters import langchain

LC = "langchain"


def refused(messages: list[Any], **options: Any) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(messages, **options)
    assert caught.value.source == LC
    return caught.value.code, caught.value.index, caught.value.path


# --- the developer role --------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        SystemMessage("be brief", additional_kwargs={"__openai_role__": "developer"}),
        convert_to_messages([("developer", "be brief")])[0],
        convert_to_messages([{"role": "developer", "content": "be brief"}])[0],
    ],
    ids=["marker", "tuple", "role-dict"],
)
def test_a_developer_message_is_the_developer_role(source: BaseMessage) -> None:
    assert langchain.to_messages([source]) == [
        tb.SystemMessage(content="be brief", role="developer")
    ]
    assert roundtrip([source]) == messages_to_dict([source])


def test_a_typed_developer_message_is_one_chatopenai_sends_as_developer() -> None:
    [written] = langchain.from_messages([tb.SystemMessage(content="x", role="developer")])
    assert written.additional_kwargs == {"__openai_role__": "developer"}
    assert convert_to_openai_messages([written]) == [{"role": "developer", "content": "x"}]
    [plain] = langchain.from_messages([tb.SystemMessage(content="x")])
    assert plain.additional_kwargs == {}


def test_another_openai_role_marker_stays_verbatim() -> None:
    trace = [SystemMessage("x", additional_kwargs={"__openai_role__": "system"})]
    assert langchain.to_messages(trace) == [
        tb.SystemMessage(
            content="x",
            metadata={LC: {"additional_kwargs": {"__openai_role__": "system"}}},
        )
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_chat_message_keeps_its_role_and_the_typed_role_must_agree() -> None:
    [typed] = langchain.to_messages([ChatMessage("x", role="developer")])
    assert typed.role == "developer"
    edited = typed.model_copy(update={"role": "system"})
    assert refused([edited]) == ("not_representable", 0, "messages[0].role")


def test_a_system_chat_message_with_the_developer_marker_is_a_system_message() -> None:
    # ChatOpenAI sends a ChatMessage as its role, marker or not (the marker is a
    # SystemMessage's). It was read as the developer role, then refused on the way back.
    trace = [ChatMessage("be brief", role="system",
                         additional_kwargs={"__openai_role__": "developer"})]
    assert convert_to_openai_messages(trace) == [{"role": "system", "content": "be brief"}]
    [typed] = langchain.to_messages(trace)
    assert typed.role == "system"
    assert typed.metadata[LC]["additional_kwargs"] == {"__openai_role__": "developer"}
    assert roundtrip(trace) == messages_to_dict(trace)


# --- refusals ------------------------------------------------------------------------------

ASK = HumanMessage("Help me pick a lock.")


@pytest.mark.parametrize(
    ("content", "typed"),
    [
        ("", [tb.RefusalPart(text="I can't help with that.")]),
        (
            "Sorry.",
            [
                tb.TextPart(text="Sorry."),
                tb.RefusalPart(
                    text="I can't help with that.", metadata={LC: {"content": "string"}}
                ),
            ],
        ),
        ([], [tb.RefusalPart(text="I can't help with that.", metadata={LC: {"content": "list"}})]),
        (
            [{"type": "text", "text": "Sorry."}],
            [tb.TextPart(text="Sorry."), tb.RefusalPart(text="I can't help with that.")],
        ),
    ],
    ids=["empty-string", "text", "empty-list", "blocks"],
)
def test_chatopenai_refusal_is_the_last_part(content: Any, typed: list[Any]) -> None:
    trace = [ASK, AIMessage(content, additional_kwargs={"refusal": "I can't help with that."})]
    assert langchain.to_messages(trace)[1] == tb.AIMessage(content=typed)
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_refusal_of_none_is_no_refusal_and_stays_where_chatopenai_put_it() -> None:
    trace = [ASK, AIMessage("Sure.", additional_kwargs={"refusal": None})]
    assert langchain.to_messages(trace)[1] == tb.AIMessage(
        content="Sure.", metadata={LC: {"additional_kwargs": {"refusal": None}}}
    )
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_typed_refusal_goes_where_chatopenai_and_convert_to_openai_messages_look() -> None:
    typed = [
        tb.HumanMessage(content="?"),
        tb.AIMessage(content=[tb.RefusalPart(text="No.")]),
    ]
    written = langchain.from_messages(typed)
    assert (written[1].content, written[1].additional_kwargs) == ("", {"refusal": "No."})
    assert convert_to_openai_messages(written)[1] == {
        "role": "assistant",
        "content": "",
        "refusal": "No.",
    }
    assert langchain.to_messages(written) == typed


def test_refusals_that_are_not_the_last_part_of_a_reply_are_refusal_blocks() -> None:
    typed = [
        tb.HumanMessage(content=[tb.TextPart(text="a"), tb.RefusalPart(text="user says no")]),
        tb.AIMessage(content=[tb.RefusalPart(text="first"), tb.RefusalPart(text="second")]),
    ]
    written = langchain.from_messages(typed)
    assert written[0].content == [
        {"type": "text", "text": "a"},
        {"type": "refusal", "refusal": "user says no"},
    ]
    assert written[1].content == [{"type": "refusal", "refusal": "first"}]
    assert written[1].additional_kwargs == {"refusal": "second"}
    assert langchain.to_messages(written) == typed


def test_a_refusal_block_last_in_a_reply_stays_a_block() -> None:
    trace = [ASK, AIMessage([{"type": "refusal", "refusal": "No."}])]
    assert langchain.to_messages(trace)[1] == tb.AIMessage(
        content=[
            tb.RefusalPart(
                text="No.", metadata={LC: {"shape": "refusal", "block": {"type": "refusal"}}}
            )
        ]
    )
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_refusal_block_without_text_stays_opaque() -> None:
    trace = [ASK, AIMessage([{"type": "refusal"}])]
    assert langchain.to_messages(trace)[1].content == [
        tb.OpaquePart(kind="refusal", value={"type": "refusal"})
    ]


def test_a_typed_refusal_and_a_kept_refusal_field_cannot_both_go_back() -> None:
    [_, kept] = langchain.to_messages([ASK, AIMessage("", additional_kwargs={"refusal": None})])
    edited = kept.model_copy(update={"content": [tb.RefusalPart(text="No.")]})
    assert refused([edited]) == ("not_representable", 0, "messages[0].additional_kwargs.refusal")


# --- image detail --------------------------------------------------------------------------

URL = "https://example.com/cat.png"


@pytest.mark.parametrize(
    ("block", "part"),
    [
        (
            {"type": "image_url", "image_url": {"url": URL, "detail": "high"}},
            tb.ImagePart(url=URL, detail="high"),
        ),
        (
            {"type": "image", "url": URL, "mime_type": "image/png", "extras": {"detail": "low"}},
            tb.ImagePart(url=URL, mime_type="image/png", detail="low"),
        ),
        (
            {"type": "image", "url": URL, "extras": {"detail": "low"}},
            tb.ImagePart(
                url=URL,
                detail="low",
                metadata={LC: {"shape": "image", "block": {"type": "image", "extras": {}}}},
            ),
        ),
    ],
    ids=["openai-image_url", "v1-extras", "v1-extras-not-the-default-block"],
)
def test_image_detail_is_imagepart_detail(block: dict[str, Any], part: tb.ImagePart) -> None:
    trace = [HumanMessage([block])]
    assert langchain.to_messages(trace) == [tb.HumanMessage(content=[part])]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_typed_image_with_detail_reaches_openai_with_its_detail() -> None:
    by_url = tb.ImagePart(url=URL, detail="low")
    inline = tb.ImagePart(data="iVBORw0KGgo=", mime_type="image/png", detail="high")
    [written] = langchain.from_messages([tb.HumanMessage(content=[by_url, inline])])
    assert written.content == [
        {"type": "image_url", "image_url": {"url": URL, "detail": "low"}},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "high"},
        },
    ]
    [sent] = convert_to_openai_messages([written], text_format="block")
    assert sent["content"] == written.content


def test_a_layout_without_detail_cannot_take_one() -> None:
    block = {"type": "image", "source": {"type": "url", "url": URL}}
    [typed] = langchain.to_messages([HumanMessage([block])])
    [part] = typed.content
    edited = typed.model_copy(update={"content": [part.model_copy(update={"detail": "low"})]})
    assert refused([edited]) == ("not_representable", 0, "messages[0].content[0].detail")


# --- audio ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("audio_format", "mime", "kept"),
    [
        ("wav", "audio/wav", {"type": "input_audio", "input_audio": {}}),
        ("mp3", "audio/mpeg", None),  # the block the way back writes for audio/mpeg
        ("mpeg", "audio/mpeg", {"type": "input_audio", "input_audio": {"format": "mpeg"}}),
        ("aiff", "audio/aiff", {"type": "input_audio", "input_audio": {}}),
    ],
)
def test_input_audio_format_is_a_mime_type_from_the_one_table(
    audio_format: str, mime: str, kept: dict[str, Any] | None
) -> None:
    trace = [
        HumanMessage(
            [{"type": "input_audio", "input_audio": {"data": "UklG", "format": audio_format}}]
        )
    ]
    [typed] = langchain.to_messages(trace)
    metadata = {} if kept is None else {LC: {"shape": "input_audio", "block": kept}}
    assert typed.content == [tb.AudioPart(data="UklG", mime_type=mime, metadata=metadata)]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_v1_audio_keeps_its_mime_type_and_a_typed_clip_is_a_v1_block() -> None:
    trace = [HumanMessage([{"type": "audio", "base64": "UklG", "mime_type": "audio/mp3"}])]
    assert langchain.to_messages(trace) == [
        tb.HumanMessage(content=[tb.AudioPart(data="UklG", mime_type="audio/mp3")])
    ]
    [written] = langchain.from_messages(
        [tb.HumanMessage(content=[tb.AudioPart(data="UklG", mime_type="audio/wav")])]
    )
    assert written.content == [{"type": "audio", "base64": "UklG", "mime_type": "audio/wav"}]
    [sent] = convert_to_openai_messages([written], text_format="block")
    assert sent["content"] == [
        {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}}
    ]


def test_input_audio_cannot_spell_a_mime_type_that_is_not_audio() -> None:
    block = {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}}
    [typed] = langchain.to_messages([HumanMessage([block])])
    [part] = typed.content
    edited = typed.model_copy(
        update={"content": [part.model_copy(update={"mime_type": "video/mp4"})]}
    )
    assert refused([edited]) == ("not_representable", 0, "messages[0].content[0].mime_type")


# --- the assistant's audio reply -----------------------------------------------------------

REPLY = {"id": "audio_1", "data": "UklG", "expires_at": 1729000000, "transcript": "Hi!"}


def test_chatopenai_audio_reply_is_the_typed_audio_reference() -> None:
    trace = [
        HumanMessage("Say hi"),
        AIMessage("", additional_kwargs={"audio": REPLY, "refusal": None}),
    ]
    assert langchain.to_messages(trace)[1] == tb.AIMessage(
        audio=tb.AudioReference(id="audio_1", data="UklG", expires_at=1729000000, transcript="Hi!"),
        metadata={LC: {"additional_kwargs": {"refusal": None}}},
    )
    assert roundtrip(trace) == messages_to_dict(trace)


def test_an_audio_reply_keeps_nulls_and_other_keys_on_the_reference() -> None:
    audio = {
        "id": "audio_2",
        "data": None,
        "expires_at": None,
        "transcript": "Hi!",
        "voice": "alloy",
    }
    trace = [HumanMessage("Say hi"), AIMessage("", additional_kwargs={"audio": audio})]
    assert langchain.to_messages(trace)[1].audio == tb.AudioReference(
        id="audio_2",
        transcript="Hi!",
        metadata={LC: {"data": None, "expires_at": None, "voice": "alloy"}},
    )
    assert roundtrip(trace) == messages_to_dict(trace)


@pytest.mark.parametrize(
    "audio", [{"data": "UklG"}, {"id": 7}, {"id": "a", "expires_at": "soon"}, "audio_3"]
)
def test_what_is_not_an_audio_reference_stays_in_additional_kwargs(audio: Any) -> None:
    trace = [HumanMessage("Say hi"), AIMessage("", additional_kwargs={"audio": audio})]
    [_, typed] = langchain.to_messages(trace)
    assert (typed.audio, typed.metadata) == (None, {LC: {"additional_kwargs": {"audio": audio}}})
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_typed_audio_reply_goes_into_additional_kwargs() -> None:
    typed = tb.AIMessage(audio=tb.AudioReference(id="audio_1", transcript="Hi!"))
    [written] = langchain.from_messages([typed])
    assert written.additional_kwargs == {"audio": {"id": "audio_1", "transcript": "Hi!"}}
    assert langchain.to_messages([HumanMessage("x"), written])[1] == typed


# --- citations -----------------------------------------------------------------------------

NESTED = {
    "type": "url_citation",
    "url_citation": {"url": "https://ex.org/1", "title": "One", "start_index": 0, "end_index": 3},
}
NESTED_CITED = tb.Citation(
    url="https://ex.org/1",
    title="One",
    start_index=0,
    end_index=3,
    metadata={LC: {"annotation": {"type": "url_citation", "url_citation": {}}}},
)


def test_annotations_lifted_into_additional_kwargs_are_citations() -> None:
    trace = [
        HumanMessage("news?"),
        AIMessage("Big news.", additional_kwargs={"annotations": [NESTED]}),
    ]
    assert langchain.to_messages(trace)[1] == tb.AIMessage(
        content="Big news.",
        citations=[NESTED_CITED],
    )
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_list_with_other_annotations_stays_whole_in_additional_kwargs() -> None:
    annotations = [NESTED, {"type": "file_citation", "file_id": "f1"}]
    trace = [
        HumanMessage("news?"),
        AIMessage("Big news.", additional_kwargs={"annotations": annotations}),
    ]
    [_, typed] = langchain.to_messages(trace)
    assert typed.citations == []
    assert roundtrip(trace) == messages_to_dict(trace)


def test_text_block_citations_come_out_and_other_annotations_stay_in_the_block() -> None:
    block = {
        "type": "text",
        "text": "Paris is big.",
        "annotations": [
            {"type": "file_citation", "file_id": "f1"},
            {"type": "citation", "url": "https://ex.org/p", "cited_text": "big", "start_index": 9},
            {"type": "url_citation", "url": "https://ex.org/q", "title": "Q", "index": 2},
        ],
    }
    trace = [HumanMessage("?"), AIMessage([block], additional_kwargs={"annotations": [NESTED]})]
    [_, typed] = langchain.to_messages(trace)
    assert typed.content == [
        tb.TextPart(
            text="Paris is big.",
            metadata={
                LC: {
                    "shape": "text",
                    "block": {
                        "type": "text",
                        "annotations": [{"type": "file_citation", "file_id": "f1"}],
                    },
                }
            },
        )
    ]
    assert typed.citations == [
        tb.Citation(
            url="https://ex.org/p",
            cited_text="big",
            start_index=9,
            metadata={LC: {"in_block": 0, "at": 1}},
        ),
        tb.Citation(
            url="https://ex.org/q",
            title="Q",
            metadata={
                LC: {"in_block": 0, "at": 2, "annotation": {"type": "url_citation", "index": 2}}
            },
        ),
        NESTED_CITED,
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_typed_citations_are_standard_citation_annotations_in_additional_kwargs() -> None:
    cited = tb.Citation(
        url="https://ex.org/1", title="One", start_index=0, end_index=3, cited_text="Big"
    )
    typed = tb.AIMessage(content="Big news.", citations=[cited])
    [written] = langchain.from_messages([typed])
    assert written.additional_kwargs == {
        "annotations": [
            {
                "type": "citation",
                "url": "https://ex.org/1",
                "title": "One",
                "start_index": 0,
                "end_index": 3,
                "cited_text": "Big",
            }
        ]
    }
    assert langchain.to_messages([HumanMessage("?"), written])[1] == typed


def test_citations_out_of_their_read_order_are_refused_unless_dropped() -> None:
    block = {"type": "text", "text": "x", "annotations": [{"type": "citation", "url": "https://a"}]}
    [_, typed] = langchain.to_messages([HumanMessage("?"), AIMessage([block])])
    edited = typed.model_copy(
        update={"citations": [tb.Citation(url="https://b"), *typed.citations]}
    )
    assert refused([edited]) == ("not_representable", 0, "messages[0].citations")
    [written] = langchain.from_messages([edited], drop=["citations"])
    assert (written.content, written.additional_kwargs) == (
        [{"type": "text", "text": "x", "annotations": []}],
        {},
    )


# --- custom (free-text) tool calls ---------------------------------------------------------

CUSTOM_BLOCK = {
    "type": "custom_tool_call",
    "id": "ctc_1",
    "call_id": "call_sh",
    "name": "shell",
    "input": "ls -la",
    "status": "completed",
}
SHELL = {"name": "shell", "args": {"__arg1": "ls -la"}, "id": "call_sh"}


def test_a_responses_custom_call_is_a_custom_tool_call() -> None:
    """langchain-openai keeps a custom call as a custom_tool_call block in the content and a
    tool call whose args are {"__arg1": input}."""
    trace = [
        HumanMessage("list files"),
        AIMessage([CUSTOM_BLOCK], tool_calls=[SHELL]),
        ToolMessage("a.txt", tool_call_id="call_sh"),
    ]
    [_, ai, _] = langchain.to_messages(trace)
    assert ai == tb.AIMessage(
        tool_calls=[
            tb.ToolCall(
                name="shell",
                args={"input": "ls -la"},
                id="call_sh",
                kind="custom",
                metadata={
                    LC: {
                        "content_block": {
                            "at": 0,
                            "block": {
                                "type": "custom_tool_call",
                                "id": "ctc_1",
                                "status": "completed",
                            },
                        }
                    }
                },
            )
        ]
    )
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_typed_custom_call_is_written_as_langchain_openai_writes_it() -> None:
    typed = [
        tb.HumanMessage(content="list files"),
        tb.AIMessage(
            content=[tb.TextPart(text="Listing.")],
            tool_calls=[tb.ToolCall(name="shell", args={"input": "ls"}, id="c1", kind="custom")],
        ),
        tb.ToolMessage(content="a.txt", tool_call_id="c1"),
    ]
    written = langchain.from_messages(typed)
    assert written[1].content == [
        {"type": "text", "text": "Listing."},
        {"type": "custom_tool_call", "call_id": "c1", "name": "shell", "input": "ls"},
    ]
    assert written[1].tool_calls == [
        {"name": "shell", "args": {"__arg1": "ls"}, "id": "c1", "type": "tool_call"}
    ]
    assert langchain.to_messages(written) == typed


def test_a_custom_call_alone_in_the_content_is_the_call() -> None:
    block = {"type": "custom_tool_call", "call_id": "c1", "name": "shell", "input": "pwd"}
    trace = [HumanMessage("where?"), AIMessage([block]), ToolMessage("/", tool_call_id="c1")]
    [_, ai, _] = langchain.to_messages(trace)
    assert ai.content == ""
    assert ai.tool_calls == [
        tb.ToolCall(
            name="shell",
            args={"input": "pwd"},
            id="c1",
            kind="custom",
            metadata={
                LC: {
                    "in_content": True,
                    "content_block": {"at": 0, "block": {"type": "custom_tool_call"}},
                }
            },
        )
    ]
    assert roundtrip(trace) == messages_to_dict(trace)


def test_a_custom_block_that_disagrees_with_its_tool_call_is_conflicting() -> None:
    trace = [
        HumanMessage("list files"),
        AIMessage([CUSTOM_BLOCK], tool_calls=[{**SHELL, "args": {"__arg1": "rm -rf /"}}]),
        ToolMessage("a.txt", tool_call_id="call_sh"),
    ]
    with pytest.raises(TraceError) as caught:
        langchain.to_messages(trace)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "conflicting_fields",
        1,
        "messages[1].content[0].input",
    )


@pytest.mark.parametrize(
    ("message", "path"),
    [
        (
            tb.AIMessage(
                tool_calls=[tb.ToolCall(name="shell", args={"input": "ls"}, kind="custom")]
            ),
            "messages[0].tool_calls[0]",
        ),
        (
            tb.AIMessage(
                content=[],
                tool_calls=[
                    tb.ToolCall(name="shell", args={"input": "ls"}, id="c1", kind="custom")
                ],
            ),
            "messages[0].tool_calls[0]",
        ),
    ],
    ids=["no-id", "empty-content-list"],
)
def test_a_custom_call_langchain_cannot_hold_is_refused_unless_dropped(
    message: tb.AIMessage, path: str
) -> None:
    code, index, where = refused([message])
    assert (code, index, where) == ("not_representable", 0, path)
    with pytest.raises(TraceError) as caught:
        langchain.from_messages([message])
    assert "drop=['custom_calls']" in str(caught.value)
    [written] = langchain.from_messages([message], drop=["custom_calls"])
    assert written.tool_calls == [
        {
            "name": "shell",
            "args": {"input": "ls"},
            "id": message.tool_calls[0].id,
            "type": "tool_call",
        }
    ]


def test_drop_names_only_what_langchain_may_leave_out() -> None:
    assert langchain.DROPPABLE == ("custom_calls", "citations")
    with pytest.raises(ValueError, match="names nothing droppable"):
        langchain.from_messages([tb.HumanMessage(content="x")], drop=["refusals"])
