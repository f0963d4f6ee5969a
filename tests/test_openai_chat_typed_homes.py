"""openai_chat: what Chat Completions shares with other formats lands in its typed home, and
comes back exactly as it was spelled (refusals, arguments "", developer, image detail, audio
formats, audio replies, citations, custom calls)."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    HumanMessage,
    ImagePart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
    transcript_hash,
)
from tracebridge.adapters.openai_chat import from_messages, to_messages

USER = {"role": "user", "content": "Help me pick a lock."}
NO = "I can't help with that."


def roundtrip(trace: list[Any]) -> list[Any]:
    return from_messages(to_messages(trace))


def refused(messages: list[Any], **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        from_messages(messages, **options)
    assert (caught.value.code, caught.value.source) == ("not_representable", "openai_chat")
    return caught.value


def malformed(trace: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        to_messages(trace)
    assert caught.value.code == "malformed_event"
    return caught.value


# --- 1. refusals ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("assistant", "content", "namespace"),
    [
        ({"content": None, "refusal": NO}, [RefusalPart(text=NO)], {}),
        ({"refusal": NO}, [RefusalPart(text=NO)], {"refusal": "absent"}),
        ({"content": "", "refusal": NO}, [RefusalPart(text=NO)], {"refusal": "empty"}),
        (
            {"content": "Let me explain.", "refusal": NO},
            [TextPart(text="Let me explain."), RefusalPart(text=NO)],
            {"refusal": "after_text"},
        ),
        (
            {"content": [{"type": "text", "text": "Hm."}], "refusal": NO},
            [TextPart(text="Hm."), RefusalPart(text=NO)],
            {"refusal": "after_parts"},
        ),
        (
            {"content": [{"type": "refusal", "refusal": NO}]},
            [RefusalPart(text=NO)],
            {"refusal": "part"},
        ),
        (
            {"content": [{"type": "text", "text": "Hm."}, {"type": "refusal", "refusal": NO}]},
            [TextPart(text="Hm."), RefusalPart(text=NO)],
            {},
        ),
    ],
    ids=[
        "content-null",
        "content-absent",
        "content-empty",
        "text-and-refusal",
        "parts-and-refusal",
        "refusal-part",
        "text-and-refusal-parts",
    ],
)
def test_every_spelling_of_a_refusal_is_a_refusal_part_and_comes_back_as_spelled(
    assistant: dict[str, Any], content: list[Any], namespace: dict[str, Any]
) -> None:
    trace = [USER, {"role": "assistant", **assistant}]
    metadata = {"openai_chat": namespace} if namespace else {}
    assert to_messages(trace)[1] == AIMessage(content=content, metadata=metadata)
    assert roundtrip(trace) == trace


def test_text_and_a_refusal_together_lose_neither() -> None:
    trace = [USER, {"role": "assistant", "content": "Let me explain.", "refusal": NO}]
    (_, ai) = to_messages(trace)
    assert ai.text == "Let me explain."
    assert ai.pretty_repr() == f"ai: Let me explain.\n    [refusal] {NO}"


def test_a_refusal_part_keeps_its_unknown_keys() -> None:
    part = {"type": "refusal", "refusal": NO, "x_reason": "policy"}
    trace = [USER, {"role": "assistant", "content": [part]}]
    assert to_messages(trace)[1].content == [
        RefusalPart(text=NO, metadata={"openai_chat": {"fields": {"x_reason": "policy"}}})
    ]
    assert roundtrip(trace) == trace


def test_a_typed_refusal_is_written_as_the_refusal_key_or_as_a_part_among_parts() -> None:
    messages = [
        HumanMessage(content="Pick a lock?"),
        AIMessage(content=[RefusalPart(text=NO)]),
        HumanMessage(content="Why?"),
        AIMessage(content=[TextPart(text="Because."), RefusalPart(text=NO)]),
    ]
    assert from_messages(messages)[1:] == [
        {"role": "assistant", "content": None, "refusal": NO},
        {"role": "user", "content": "Why?"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Because."}, {"type": "refusal", "refusal": NO}],
        },
    ]
    assert to_messages(from_messages(messages)) == messages


@pytest.mark.parametrize(
    "message",
    [
        HumanMessage(content=[TextPart(text="hi"), RefusalPart(text=NO)]),
        SystemMessage(content=[TextPart(text="hi"), RefusalPart(text=NO)]),
        ToolMessage(content=[TextPart(text="hi"), RefusalPart(text=NO)], tool_call_id="c1"),
    ],
    ids=["user", "system", "tool"],
)
def test_a_refusal_where_the_role_holds_none_is_refused_by_name(message: Any) -> None:
    messages = [
        HumanMessage(content="Go."),
        AIMessage(tool_calls=[ToolCall(name="f", id="c1")]),
        message,
    ]
    if not isinstance(message, ToolMessage):
        messages = [message]
    index = len(messages) - 1
    error = refused(messages)
    assert (error.index, error.path) == (index, f"messages[{index}].content[1]")
    assert "pass drop=['refusals']" in str(error)
    assert from_messages(messages, drop=["refusals"])[index]["content"] == [
        {"type": "text", "text": "hi"}
    ]


@pytest.mark.parametrize("value", [3, ["no"], {"text": "no"}], ids=["int", "list", "dict"])
def test_a_refusal_that_is_not_text_is_malformed(value: Any) -> None:
    error = malformed([USER, {"role": "assistant", "content": None, "refusal": value}])
    assert (error.index, error.path) == (1, "messages[1].refusal")


def test_a_refused_reply_does_not_hash_like_an_empty_one() -> None:
    refusal = to_messages([USER, {"role": "assistant", "content": None, "refusal": NO}])
    empty = to_messages([USER, {"role": "assistant", "content": None}])
    assert transcript_hash(refusal) != transcript_hash(empty)


# --- 2. arguments "" -----------------------------------------------------------------------


def test_empty_arguments_are_no_arguments_and_come_back_empty() -> None:
    trace = [
        {"role": "user", "content": "Where am I?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_current_location", "arguments": ""},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Oslo"},
    ]
    assert to_messages(trace)[1].tool_calls == [  # type: ignore[union-attr]
        ToolCall(
            name="get_current_location",
            args={},
            id="c1",
            metadata={"openai_chat": {"arguments": ""}},
        )
    ]
    assert roundtrip(trace) == trace


def test_empty_arguments_of_a_legacy_function_call_too() -> None:
    trace = [
        USER,
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": ""}},
        {"role": "function", "name": "f", "content": "ok"},
    ]
    assert to_messages(trace)[1].tool_calls == [  # type: ignore[union-attr]
        ToolCall(name="f", args={}, metadata={"openai_chat": {"arguments": ""}})
    ]
    assert roundtrip(trace) == trace


def test_a_typed_call_without_arguments_is_written_as_an_empty_object() -> None:
    messages = [
        HumanMessage(content="Where am I?"),
        AIMessage(tool_calls=[ToolCall(name="where", id="c1")]),
        ToolMessage(content="Oslo", tool_call_id="c1"),
    ]
    assert from_messages(messages)[1]["tool_calls"][0]["function"]["arguments"] == "{}"


# --- 3. developer --------------------------------------------------------------------------


def test_developer_is_the_system_message_role_both_ways() -> None:
    trace = [{"role": "developer", "content": "Use metric units."}, USER]
    assert to_messages(trace)[0] == SystemMessage(content="Use metric units.", role="developer")
    assert from_messages([SystemMessage(content="Be brief.", role="developer")]) == [
        {"role": "developer", "content": "Be brief."}
    ]
    assert roundtrip(trace) == trace


def test_the_old_role_key_in_metadata_no_longer_makes_a_developer() -> None:
    # The typed role replaced metadata["openai_chat"]["role"]; a stale key is not read, and
    # (no key the reader keeps, so nothing writes it) it is refused rather than lost.
    message = SystemMessage(content="Be brief.", metadata={"openai_chat": {"role": "developer"}})
    error = refused([message])
    assert (error.index, error.path) == (0, "messages[0].metadata.openai_chat.role")
    assert SystemMessage(content="Be brief.").role == "system"
    assert from_messages([SystemMessage(content="Be brief.")]) == [
        {"role": "system", "content": "Be brief."}
    ]


# --- 4. image detail -----------------------------------------------------------------------


def test_image_detail_is_typed_both_ways() -> None:
    parts = [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "original"},
        },
    ]
    trace = [{"role": "user", "content": parts}]
    assert to_messages(trace)[0].content == [
        ImagePart(url="https://example.com/a.png", detail="low"),
        ImagePart(data="iVBORw0KGgo=", mime_type="image/png", detail="original"),
    ]
    assert roundtrip(trace) == trace


def test_a_null_detail_is_no_detail_and_is_kept_as_it_was() -> None:
    part = {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": None}}
    trace = [{"role": "user", "content": [part]}]
    assert to_messages(trace)[0].content == [
        ImagePart(
            url="https://example.com/a.png", metadata={"openai_chat": {"inner": {"detail": None}}}
        )
    ]
    assert roundtrip(trace) == trace


# --- 5. audio formats ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelled", "mime_type", "kept"),
    [
        ("wav", "audio/wav", False),
        ("mp3", "audio/mpeg", False),
        ("mpeg", "audio/mpeg", True),
        ("pcm16", "audio/pcm", True),
        ("pcm", "audio/pcm", True),
        ("flac", "audio/flac", True),
        ("ogg", "audio/ogg", True),
    ],
)
def test_an_audio_format_reads_through_the_table_and_comes_back_as_spelled(
    spelled: str, mime_type: str, kept: bool
) -> None:
    part = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": spelled}}
    trace = [{"role": "user", "content": [part]}]
    metadata = {"openai_chat": {"format": spelled}} if kept else {}
    assert to_messages(trace)[0].content == [
        AudioPart(data="UklGRg==", mime_type=mime_type, metadata=metadata)
    ]
    assert roundtrip(trace) == trace


@pytest.mark.parametrize(
    ("mime_type", "written"),
    [
        ("audio/wav", "wav"),
        ("audio/x-wav", "wav"),
        ("audio/mpeg", "mp3"),
        ("audio/mp3", "mp3"),
    ],
)
def test_an_audio_mime_type_is_written_as_the_tables_format(mime_type: str, written: str) -> None:
    messages = [HumanMessage(content=[AudioPart(data="UklGRg==", mime_type=mime_type)])]
    assert from_messages(messages)[0]["content"] == [
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": written}}
    ]


def test_a_kept_format_that_no_longer_names_the_mime_type_is_refused() -> None:
    # written in "wav", the part would read back without it: the kept one would be lost
    edited = AudioPart(
        data="UklGRg==", mime_type="audio/wav", metadata={"openai_chat": {"format": "mpeg"}}
    )
    error = refused([HumanMessage(content=[edited])])
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].content[0].metadata.openai_chat.format"
    )
    assert error.detail == (
        "the kept format 'mpeg' does not name the part's mime type ('audio/wav'): the part is "
        "written in 'wav', so the kept one would be lost"
    )


@pytest.mark.parametrize(
    "part",
    [AudioPart(data="UklGRg==", mime_type="image/png"), AudioPart(data="UklGRg==")],
    ids=["not-audio", "no-mime-type"],
)
def test_audio_without_an_audio_mime_type_has_no_format(part: AudioPart) -> None:
    error = refused([HumanMessage(content=[part])])
    assert (error.index, error.path) == (0, "messages[0].content[0]")
    assert "drop=" not in str(error)


# --- 6. audio replies and citations --------------------------------------------------------

SPOKEN = {
    "id": "audio_1",
    "data": "UklGRg==",
    "expires_at": 1767229200,
    "transcript": "Yes, they are.",
}


def test_an_audio_reply_and_the_id_sent_back_are_the_audio_reference() -> None:
    trace = [
        USER,
        {"role": "assistant", "content": None, "audio": SPOKEN},
        {"role": "user", "content": "Again?"},
        {"role": "assistant", "audio": {"id": "audio_1"}},
    ]
    typed = to_messages(trace)
    assert typed[1] == AIMessage(
        audio=AudioReference(
            id="audio_1", transcript="Yes, they are.", data="UklGRg==", expires_at=1767229200
        ),
        metadata={"openai_chat": {"content": "null"}},
    )
    assert typed[3] == AIMessage(
        audio=AudioReference(id="audio_1"), metadata={"openai_chat": {"content": "absent"}}
    )
    assert roundtrip(trace) == trace


def test_null_and_unknown_keys_of_an_audio_reply_are_kept() -> None:
    audio = {"id": "audio_1", "transcript": None, "x_voice": "alloy"}
    trace = [USER, {"role": "assistant", "content": "", "audio": audio}]
    assert to_messages(trace)[1].audio == AudioReference(  # type: ignore[union-attr]
        id="audio_1", metadata={"openai_chat": {"fields": {"transcript": None, "x_voice": "alloy"}}}
    )
    assert roundtrip(trace) == trace


@pytest.mark.parametrize(
    ("audio", "path"),
    [
        ({"transcript": "hi"}, "messages[1].audio.id"),
        ({"id": "a", "expires_at": "soon"}, "messages[1].audio.expires_at"),
        ({"id": "a", "expires_at": True}, "messages[1].audio.expires_at"),
        ("audio_1", "messages[1].audio"),
    ],
    ids=["no-id", "expiry-text", "expiry-bool", "not-an-object"],
)
def test_a_malformed_audio_reply_is_rejected_where_it_is(audio: Any, path: str) -> None:
    error = malformed([USER, {"role": "assistant", "content": "", "audio": audio}])
    assert (error.index, error.path) == (1, path)


CITED = {
    "type": "url_citation",
    "url_citation": {
        "start_index": 0,
        "end_index": 5,
        "title": "Oslo library",
        "url": "https://news.example.com/oslo",
    },
}
FILE_CITED = {"type": "file_citation", "file_citation": {"file_id": "file-1"}, "index": 3}


def test_url_citations_are_citations_and_other_annotations_stay_in_place() -> None:
    trace = [USER, {"role": "assistant", "content": "Oslo.", "annotations": [FILE_CITED, CITED]}]
    assert to_messages(trace)[1] == AIMessage(
        content="Oslo.",
        citations=[
            Citation(
                url="https://news.example.com/oslo",
                title="Oslo library",
                start_index=0,
                end_index=5,
            )
        ],
        metadata={"openai_chat": {"annotations": [FILE_CITED, None]}},
    )
    assert roundtrip(trace) == trace


@pytest.mark.parametrize(
    "annotations", [[], None, [CITED, CITED]], ids=["empty", "null", "two-citations"]
)
def test_annotations_come_back_exactly(annotations: Any) -> None:
    trace = [USER, {"role": "assistant", "content": "Oslo.", "annotations": annotations}]
    assert roundtrip(trace) == trace


def test_unknown_keys_and_nulls_of_a_url_citation_are_kept_on_the_citation() -> None:
    annotation = {
        "type": "url_citation",
        "url_citation": {"url": "https://a.example", "title": None, "x_rank": 1},
        "x_source": "search",
    }
    trace = [USER, {"role": "assistant", "content": "A.", "annotations": [annotation]}]
    assert to_messages(trace)[1].citations == [  # type: ignore[union-attr]
        Citation(
            url="https://a.example",
            metadata={
                "openai_chat": {
                    "absent": ["start_index", "end_index"],
                    "inner": {"title": None, "x_rank": 1},
                    "fields": {"x_source": "search"},
                }
            },
        )
    ]
    assert roundtrip(trace) == trace


@pytest.mark.parametrize(
    ("annotations", "path"),
    [
        ({"type": "url_citation"}, "messages[1].annotations"),
        (["https://a.example"], "messages[1].annotations[0]"),
        ([{"type": "url_citation"}], "messages[1].annotations[0].url_citation"),
        (
            [{"type": "url_citation", "url_citation": {"start_index": "0"}}],
            "messages[1].annotations[0].url_citation.start_index",
        ),
    ],
    ids=["not-a-list", "not-an-object", "no-url-citation", "index-text"],
)
def test_malformed_annotations_are_rejected_where_they_are(annotations: Any, path: str) -> None:
    error = malformed([USER, {"role": "assistant", "content": "A.", "annotations": annotations}])
    assert (error.index, error.path) == (1, path)


def test_typed_citations_are_written_as_url_citations() -> None:
    message = AIMessage(
        content="Oslo.",
        citations=[Citation(url="https://news.example.com/oslo", title="Oslo library",
                            start_index=0, end_index=5)],
    )
    assert from_messages([message]) == [
        {
            "role": "assistant",
            "content": "Oslo.",
            "annotations": [
                {
                    "type": "url_citation",
                    "url_citation": {
                        "url": "https://news.example.com/oslo",
                        "title": "Oslo library",
                        "start_index": 0,
                        "end_index": 5,
                    },
                }
            ],
        }
    ]


def test_cited_text_has_no_place_and_is_refused_by_name() -> None:
    message = AIMessage(
        content="Oslo.",
        citations=[
            Citation(url="https://a.example", title="A", start_index=0, end_index=5,
                     cited_text="Oslo opened a library."),
            Citation(cited_text="only words"),
        ],
    )
    error = refused([message])
    assert (error.index, error.path) == (0, "messages[0].citations[0].cited_text")
    assert "pass drop=['citations']" in str(error)
    # Dropped: the cited text is left out, and a citation that said nothing else with it.
    assert from_messages([message], drop=["citations"])[0]["annotations"] == [
        {"type": "url_citation", "url_citation": {"url": "https://a.example", "title": "A",
                                                  "start_index": 0, "end_index": 5}}
    ]


def test_edited_citations_come_first_and_the_other_annotations_after_them() -> None:
    trace = [USER, {"role": "assistant", "content": "Oslo.", "annotations": [FILE_CITED, CITED]}]
    ai = to_messages(trace)[1]
    whole = {"url": "https://b.example", "title": "B", "start_index": 0, "end_index": 1}
    edited = ai.model_copy(update={"citations": [Citation(**whole)] * 2})
    assert from_messages([edited])[0]["annotations"] == [
        {"type": "url_citation", "url_citation": whole},
        {"type": "url_citation", "url_citation": whole},
        FILE_CITED,
    ]


# --- 7. custom calls -----------------------------------------------------------------------


def test_a_custom_call_is_a_custom_kind_both_ways() -> None:
    messages = [
        HumanMessage(content="Count users."),
        AIMessage(
            tool_calls=[
                ToolCall(name="run_sql", args={"input": "SELECT 1"}, id="c1", kind="custom")
            ]
        ),
        ToolMessage(content="1", tool_call_id="c1"),
    ]
    assert from_messages(messages)[1]["tool_calls"] == [
        {"id": "c1", "type": "custom", "custom": {"name": "run_sql", "input": "SELECT 1"}}
    ]
    assert to_messages(from_messages(messages)) == messages


def test_an_id_less_custom_call_is_refused_unless_written_as_a_function_call() -> None:
    messages = [
        HumanMessage(content="Count users."),
        AIMessage(tool_calls=[ToolCall(name="run_sql", args={"input": "SELECT 1"}, kind="custom")]),
        ToolMessage(content="1", name="run_sql"),
    ]
    error = refused(messages)
    assert (error.index, error.path) == (1, "messages[1].tool_calls[0].id")
    assert "pass drop=['custom_calls']" in str(error)
    assert from_messages(messages, drop=["custom_calls"])[1] == {
        "role": "assistant",
        "content": "",
        "function_call": {"name": "run_sql", "arguments": '{"input": "SELECT 1"}'},
    }
