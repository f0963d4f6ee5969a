"""The LlamaIndex writer refuses what it would not write of its own metadata namespace.

``from_messages`` reads ``metadata["llama_index"]`` on a message, its parts, calls, citations
and spoken reply. A key there that no reader keeps (on that kind of element), or a known key's
value that the writer does not act on, used to be left out without a word; it is now
``not_representable`` at the key. Every key the readers (``to_messages`` and
``events_to_messages``) keep is still written: the known-key sets are held to the readers
over the golden traces, the law kit's histories, generated event streams, and natives made to
keep each key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core.base.llms.types import (
    AudioBlock,
    CacheControl,
    CachePoint,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    VideoBlock,
)
from llama_index.core.llms import ChatMessage
from test_llama_index_events import agent_runs, stream

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    Citation,
    FilePart,
    HumanMessage,
    ImagePart,
    Message,
    OpaquePart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    TraceError,
)
from tracebridge.adapters import llama_index
from tracebridge.adapters.llama_index import _kept

from law_kits.llama_index import chat_histories

NS = "llama_index"
ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted((ROOT / "golden_traces" / "llama_index").glob("*.json"))
HERE = str(Path(__file__).resolve())  # a block's path must name a file that exists
PNG = "iVBORw0KGgo="
WAV = "UklGRg=="

H = HumanMessage(content="q")
CALL = ToolCall(name="f", args={"a": 1}, id="c1")
A = AIMessage(content="", tool_calls=[CALL])
R = ToolMessage(content="r", tool_call_id="c1")


def refusal(messages: list[Message], **options: Any) -> tuple[str, int | None, str | None, str]:
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(messages, **options)
    error = caught.value
    return error.code, error.index, error.path, error.detail


def lost(key: str, what: str, keeps: str) -> str:
    return (f"metadata.llama_index.{key} is no key the llama_index reader keeps on {what} (it "
            f"keeps {keeps}): nothing writes it, so it would be lost")


MESSAGE_KEYS = "additional_kwargs, event, role"


# --- the finding: an unknown key on a message ---------------------------------------------


def test_an_unknown_key_on_a_message_is_refused_as_the_finding_shows() -> None:
    assert refusal([HumanMessage(content="hi", metadata={"llama_index": {"bogus": 1}})]) == (
        "not_representable", 0, "messages[0].metadata.llama_index.bogus",
        lost("bogus", "a user message", MESSAGE_KEYS),
    )


@pytest.mark.parametrize(("messages", "index", "what", "keeps"), [
    ([SystemMessage(content="s", metadata={NS: {"bogus": 1}})], 0, "a system message",
     MESSAGE_KEYS),
    ([H, AIMessage(content="a", metadata={NS: {"bogus": 1}})], 1, "an assistant message",
     "additional_kwargs, event, layout, role"),
    ([H, A, ToolMessage(content="r", tool_call_id="c1", metadata={NS: {"bogus": 1}})], 2,
     "a tool result", "additional_kwargs, event, role, tool_call_id_key"),
])
def test_an_unknown_key_on_each_message_kind_is_refused(
    messages: list[Message], index: int, what: str, keeps: str
) -> None:
    assert refusal(messages) == ("not_representable", index,
                                 f"messages[{index}].metadata.llama_index.bogus",
                                 lost("bogus", what, keeps))


@pytest.mark.parametrize(("messages", "index", "key", "what", "keeps"), [
    ([HumanMessage(content="q", metadata={NS: {"layout": ["part"]}})], 0, "layout",
     "a user message", MESSAGE_KEYS),
    ([H, AIMessage(content="a", metadata={NS: {"tool_call_id_key": "call_id"}})], 1,
     "tool_call_id_key", "an assistant message", "additional_kwargs, event, layout, role"),
])
def test_a_known_key_on_a_kind_no_writer_reads_it_on_is_refused(
    messages: list[Message], index: int, key: str, what: str, keeps: str
) -> None:
    assert refusal(messages) == ("not_representable", index,
                                 f"messages[{index}].metadata.llama_index.{key}",
                                 lost(key, what, keeps))


def test_a_key_that_is_no_identifier_is_named_in_brackets() -> None:
    code, index, path, detail = refusal([HumanMessage(content="q",
                                                      metadata={NS: {"a.b": 1}})])
    assert (code, index, path) == ("not_representable", 0,
                                   "messages[0].metadata.llama_index['a.b']")
    assert detail.startswith("metadata.llama_index['a.b'] is no key the llama_index reader")


def test_event_facts_stay_as_documented() -> None:
    # docs/adapters/llama_index.md: `event` is refused unless drop=["event_extras"] leaves it
    # out, on any message.
    facts = HumanMessage(content="q", metadata={NS: {"event": {"return_direct": True}}})
    assert refusal([facts])[:3] == ("not_representable", 0,
                                    "messages[0].metadata.llama_index.event")
    (written,) = llama_index.from_messages([facts], drop=["event_extras"])
    assert written.model_dump(mode="json") == ChatMessage(role="user", content="q").model_dump(
        mode="json")


# --- content parts --------------------------------------------------------------------------


@pytest.mark.parametrize(("part", "key", "what", "keeps"), [
    # a text part with anything kept goes the general way (it used to take the fast path)
    (TextPart(text="t", metadata={NS: {"bogus": 1}}), "bogus", "a text part", "nothing there"),
    (ImagePart(data=PNG, mime_type="image/png", metadata={NS: {"fps": 24}}), "fps",
     "an image part", "data_url, image_mimetype, path"),
    (AudioPart(data=WAV, mime_type="audio/wav", metadata={NS: {"detail": "high"}}), "detail",
     "an audio part", "data_url, format, path"),
    (FilePart(data="JVBERi0=", mime_type="application/pdf", metadata={NS: {"fps": 24}}), "fps",
     "a file part (a document)", "data_url, document_mimetype, path"),
    (FilePart(url="https://a.com/v.mp4", metadata={NS: {"block_type": "video", "title": "v"}}),
     "title", "a file part of a video",
     "block_type, data_url, detail, fps, path, video_mimetype"),
    (ReasoningPart(text="t", metadata={NS: {"signature": "x"}}), "signature",
     "a reasoning part", "additional_information, also, content_is_null, from, num_tokens"),
    (OpaquePart(kind="cache", value=CachePoint(cache_control=CacheControl(type="ephemeral"))
                .model_dump(mode="json"), metadata={NS: {"bogus": 1}}), "bogus",
     "an opaque part", "nothing there"),
])
def test_an_unknown_key_on_a_part_is_refused(part: Any, key: str, what: str, keeps: str) -> None:
    message = HumanMessage(content=[TextPart(text="first"), part])
    assert refusal([message]) == ("not_representable", 0,
                                  f"messages[0].content[1].metadata.llama_index.{key}",
                                  lost(key, what, keeps))


def test_an_unknown_key_on_a_written_refusal_is_refused() -> None:
    reply = AIMessage(content=[TextPart(text="t"),
                               RefusalPart(text="No.", metadata={NS: {"bogus": 1}})])
    assert refusal([H, reply]) == ("not_representable", 1,
                                   "messages[1].content[1].metadata.llama_index.bogus",
                                   lost("bogus", "a refusal part", "nothing there"))


def test_a_refusal_namespace_that_is_no_dict_is_refused() -> None:
    reply = AIMessage(content=[RefusalPart(text="No.", metadata={NS: 5})])
    assert refusal([H, reply])[:3] == ("not_representable", 1,
                                       "messages[1].content[0].metadata.llama_index")


def test_a_part_left_out_whole_is_not_looked_at() -> None:
    odd = OpaquePart(kind="x", value=1, metadata={NS: {"bogus": 1}})
    refused = RefusalPart(text="No.", metadata={NS: {"bogus": 1}})
    written = llama_index.from_messages(
        [HumanMessage(content=[TextPart(text="t"), odd, refused])],
        drop=["opaque_parts", "refusals"])
    assert [b.model_dump(mode="json") for b in written[0].blocks] == [
        {"block_type": "text", "text": "t"}]


def not_written(key: str, detail: str) -> str:
    return f"metadata['llama_index']['{key}'] {detail}: nothing writes it, so it would be lost"


@pytest.mark.parametrize(("part", "key", "detail"), [
    (ImagePart(data=PNG, mime_type="image/png", metadata={NS: {"data_url": False}}),
     "data_url", "is true when to_messages keeps it (the block gave its data as a base64 data: "
     "URL); found False"),
    (ImagePart(url="https://a.com/x.png", metadata={NS: {"path": None}}), "path",
     "is kept only when the block has one; found null, which is no block's"),
    (FilePart(url="https://a.com/v.mp4", metadata={NS: {"block_type": "video", "fps": None}}),
     "fps", "is kept only when the block has one; found null, which is no block's"),
    (ImagePart(url="https://a.com/x.png", metadata={NS: {"path": 5}}), "path",
     "is the block's local path, text; found 5"),
    (FilePart(data="JVBERi0=", metadata={NS: {"block_type": "document"}}), "block_type",
     "is 'video' when to_messages keeps it (a VideoBlock); found 'document'"),
    (FilePart(data="JVBERi0=", mime_type="application/pdf",
              metadata={NS: {"document_mimetype": "text/plain"}}), "document_mimetype",
     "is kept only beside data_url: true (the type a block says besides its data: URL); the "
     "part's mime_type says the type here"),
    (ImagePart(data=PNG, mime_type="image/png", metadata={NS: {"image_mimetype": None}}),
     "image_mimetype", "is null when to_messages keeps it without data_url (an image without "
     "data or a mime type); found None on a part with data set: True, mime_type='image/png'"),
    (ImagePart(url="https://a.com/x.png", metadata={NS: {"image_mimetype": "image/jpeg"}}),
     "image_mimetype", "is null when to_messages keeps it without data_url (an image without "
     "data or a mime type); found 'image/jpeg' on a part with data set: False, mime_type=None"),
    (AudioPart(data=WAV, mime_type="audio/wav", metadata={NS: {"format": "mpeg"}}), "format",
     "is the AudioBlock's spelling of the part's mime type (or '' beside none); found 'mpeg' "
     "beside mime_type='audio/wav'"),
    (AudioPart(data=WAV, metadata={NS: {"format": None}}), "format",
     "is the AudioBlock's spelling of the part's mime type (or '' beside none); found None "
     "beside mime_type=None"),
    (ReasoningPart(text="", metadata={NS: {"content_is_null": False}}), "content_is_null",
     "is true when to_messages keeps it (the ThinkingBlock had no content); found False"),
    (ReasoningPart(text="t", metadata={NS: {"num_tokens": "5"}}), "num_tokens",
     "is the ThinkingBlock's token count, an int; found '5'"),
    (ReasoningPart(text="t", metadata={NS: {"additional_information": {}}}),
     "additional_information", "keeps the ThinkingBlock's additional_information when it holds "
     "something, a dict; found {}"),
])
def test_a_part_value_no_writer_writes_is_refused(part: Any, key: str, detail: str) -> None:
    message = HumanMessage(content=[TextPart(text="first"), part])
    assert refusal([message]) == ("not_representable", 0,
                                  f"messages[0].content[1].metadata.llama_index.{key}",
                                  not_written(key, detail))


# --- calls, results, citations, spoken replies ---------------------------------------------


def test_an_unknown_key_on_a_call_is_refused() -> None:
    call = CALL.model_copy(update={"metadata": {NS: {"bogus": 1}}})
    assert refusal([H, AIMessage(content="", tool_calls=[call]), R]) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.llama_index.bogus",
        lost("bogus", "a tool call",
             "entry, entry_index, function_call, in_blocks, kwargs_text, tool_call_id"))


@pytest.mark.parametrize(("kept", "key", "detail"), [
    ({"kwargs_text": 5}, "kwargs_text",
     "keeps the ToolCallBlock's arguments as JSON text; found 5"),
    ({"kwargs_text": None}, "kwargs_text",
     "keeps the ToolCallBlock's arguments as JSON text; found None"),
    ({"entry": 5}, "entry", "keeps the call's additional_kwargs['tool_calls'] entry, a dict; "
     "found 5"),
    ({"entry_index": 0}, "entry_index",
     "says where the call's kept entry goes, but the call keeps no entry"),
    ({"in_blocks": False}, "in_blocks",
     "says where the call's kept entry goes, but the call keeps no entry"),
    ({"entry": {"type": "function", "function": {}}, "entry_index": "0"}, "entry_index",
     "is the entry's position, an int; found '0'"),
    ({"entry": {"type": "function", "function": {}}, "in_blocks": 0}, "in_blocks",
     "says whether the call has a ToolCallBlock, a bool; found 0"),
    ({"function_call": {}}, "function_call", "keeps the legacy additional_kwargs"
     "['function_call'] dict of the call; only the message's last call, a function call "
     "without an id, is written as one"),
    ({"function_call": 5}, "function_call", "keeps the legacy additional_kwargs"
     "['function_call'] dict of the call; found 5"),
])
def test_a_call_value_no_writer_writes_is_refused(
    kept: dict[str, Any], key: str, detail: str
) -> None:
    call = CALL.model_copy(update={"metadata": {NS: kept}})
    assert refusal([H, AIMessage(content="", tool_calls=[call]), R]) == (
        "not_representable", 1, f"messages[1].tool_calls[0].metadata.llama_index.{key}",
        not_written(key, detail))


def test_a_legacy_function_call_beside_an_entry_is_refused() -> None:
    call = ToolCall(name="f", args={}, metadata={NS: {"entry": {"type": "function"},
                                                      "function_call": {}}})
    assert refusal([H, AIMessage(content="", tool_calls=[call]), ToolMessage(content="r")]) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.llama_index.function_call",
        not_written("function_call", "keeps the legacy additional_kwargs['function_call'] "
                    "dict of the call; the call keeps an entry too, and is written as that"))


def test_a_call_id_key_on_a_result_without_a_call_id_is_refused() -> None:
    legacy = ToolCall(name="f", args={})
    result = ToolMessage(content="r", metadata={NS: {"tool_call_id_key": "call_id"}})
    assert refusal([H, AIMessage(content="", tool_calls=[legacy]), result]) == (
        "not_representable", 2, "messages[2].metadata.llama_index.tool_call_id_key",
        not_written("tool_call_id_key", "names the key the call id is written under "
                    "('call_id'), but the result has no call id"))


def cited(metadata: dict[str, Any]) -> AIMessage:
    return AIMessage(content="see", citations=[Citation(url="https://a.com", metadata=metadata)])


def test_an_unknown_key_on_a_citation_is_refused() -> None:
    assert refusal([H, cited({NS: {"bogus": 1}})]) == (
        "not_representable", 1, "messages[1].citations[0].metadata.llama_index.bogus",
        lost("bogus", "a citation", "absent, annotation"))


def test_a_kept_annotation_that_is_no_dict_is_refused() -> None:
    assert refusal([H, cited({NS: {"annotation": 5}})]) == (
        "not_representable", 1, "messages[1].citations[0].metadata.llama_index.annotation",
        not_written("annotation", "keeps the null and other keys of the url_citation entry, a "
                    "dict; found 5"))


def test_citations_left_out_whole_are_not_looked_at() -> None:
    # (only a citation with cited text is left out: one without has a place, and is written)
    reply = AIMessage(content="see", citations=[
        Citation(url="https://a.com", cited_text="x", metadata={NS: {"bogus": 1}})])
    (_, written) = llama_index.from_messages([H, reply], drop=["citations"])
    assert written.additional_kwargs == {}


def spoken(data: str | None = WAV, **metadata: Any) -> AIMessage:
    return AIMessage(content="", audio=AudioReference(id="au_1", data=data,
                                                      metadata={NS: metadata}))


def test_an_unknown_key_on_a_spoken_reply_is_refused() -> None:
    assert refusal([H, spoken(bogus=1)]) == (
        "not_representable", 1, "messages[1].audio.metadata.llama_index.bogus",
        lost("bogus", "a spoken reply", "audio, format, reference_audio_id"))


@pytest.mark.parametrize(("message", "key", "detail"), [
    (spoken(audio=5), "audio",
     "keeps the null and other keys of OpenAI's audio dict, a dict; found 5"),
    (spoken(reference_audio_id=True), "reference_audio_id",
     "says the reply's id was also given beside OpenAI's audio dict, but this reply is written "
     "as reference_audio_id alone"),
    (spoken(audio={}, reference_audio_id=1), "reference_audio_id",
     "is true when to_messages keeps it (the reply's id given twice); found 1"),
    (spoken(audio={}, format="wav"), "format", "is the format of the reply's AudioBlock, but "
     "this reply is written as OpenAI's audio dict, which has none"),
    (spoken(None, format="wav"), "format", "is the format of the reply's AudioBlock, text or "
     "null, and the reply needs data for that block; found 'wav' beside data set: False"),
    (spoken(format=5), "format", "is the format of the reply's AudioBlock, text or null, and "
     "the reply needs data for that block; found 5 beside data set: True"),
])
def test_a_spoken_reply_value_no_writer_writes_is_refused(
    message: AIMessage, key: str, detail: str
) -> None:
    assert refusal([H, message]) == ("not_representable", 1,
                                     f"messages[1].audio.metadata.llama_index.{key}",
                                     not_written(key, detail))


# --- every key the readers keep is written: the known sets are held to the readers ---------


def kept_keys(messages: list[Message]) -> set[tuple[str, str, str]]:
    """``(level, kind, key)`` of everything kept under ``metadata["llama_index"]``."""
    found: set[tuple[str, str, str]] = set()

    def add(level: str, kind: str, metadata: dict[str, Any]) -> None:
        found.update((level, kind, key) for key in metadata.get(NS, {}))

    for message in messages:
        add("message", message.type, message.metadata)
        for part in message.content if isinstance(message.content, list) else []:
            kind = part.type
            if kind == "file":
                kind = "video" if part.metadata.get(NS, {}).get("block_type") else "document"
            add("part", kind, part.metadata)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                add("call", "", call.metadata)
            for citation in message.citations:
                add("citation", "", citation.metadata)
            if message.audio is not None:
                add("audio", "", message.audio.metadata)
    return found


def known_keys() -> set[tuple[str, str, str]]:
    known = {("message", kind, key) for kind, keys in _kept.MESSAGE_KEYS.items() for key in keys}
    known |= {("part", kind, key) for kind, keys in _kept.PART_KEYS.items() for key in keys}
    known |= {("part", "video", key) for key in _kept.VIDEO_KEYS}
    known |= {("part", "document", key) for key in _kept.DOCUMENT_KEYS}
    known |= {("call", "", key) for key in _kept.CALL_KEYS}
    known |= {("citation", "", key) for key in _kept.CITATION_KEYS}
    return known | {("audio", "", key) for key in _kept.AUDIO_KEYS}


DOCUMENTED_ONLY = {("message", kind, key) for kind in ("human", "system")
                   for key in ("role", "event")}
"""Known on every message kind as the docs say (a role of another kind is not written;
``event`` is left out by ``drop=["event_extras"]``), though no reader keeps them there."""

ALL_DROPS = ("is_error", "event_extras")


def written_whole(messages: list[Message]) -> set[tuple[str, str, str]]:
    """The kept keys of messages a reader gave, after checking the writer takes them all."""
    llama_index.from_messages(messages, drop=ALL_DROPS)
    return kept_keys(messages)


def test_the_golden_traces_keep_only_known_keys_and_are_written() -> None:
    found: set[tuple[str, str, str]] = set()
    for path in GOLDEN:
        case = json.loads(path.read_text())
        found |= written_whole(llama_index.to_messages(case["trace"]))
        found |= written_whole(llama_index.events_to_messages(case["events"]))
    assert found <= known_keys()
    assert ("message", "tool", "event") in found  # (the goldens hold event facts)


@settings(max_examples=150, deadline=None)
@given(chat_histories())
def test_histories_keep_only_known_keys_and_are_written(history: list[Any]) -> None:
    assert written_whole(llama_index.to_messages(history)) <= known_keys()


@settings(max_examples=60, deadline=None)
@given(agent_runs(), st.sampled_from(["Agent", "planner"]))
def test_event_streams_keep_only_known_keys_and_are_written(
    messages: list[Message], agent: str
) -> None:
    read = llama_index.events_to_messages(stream(messages, agent))
    assert written_whole(read) <= known_keys()


def keeping_every_key() -> list[Any]:
    """ChatMessages that make the reader keep each key it keeps (with the golden traces,
    which hold the event facts)."""
    kwargs_text = ToolCallBlock(tool_call_id="c2", tool_name="g", tool_kwargs='{"b": 2}')
    return [
        ChatMessage(role="developer", content="d", additional_kwargs={"x": 1}),
        ChatMessage(role="user", additional_kwargs={"x": 1}, blocks=[
            ImageBlock(url="data:image/png;base64,iVBORw0KGgo=", image_mimetype="image/jpeg"),
            ImageBlock(image=PNG.encode(), path=Path(HERE), image_mimetype="image/png"),
            AudioBlock(audio=WAV.encode(), format="mpeg", path=Path(HERE)),
            AudioBlock(url="data:audio/wav;base64,UklGRg=="),
            VideoBlock(url="https://a.com/v.mp4", fps=24, detail="high", path=Path(HERE)),
            VideoBlock(url="data:video/mp4;base64,AAAA", video_mimetype="video/webm"),
            DocumentBlock(url="data:application/pdf;base64,JVBERi0=", path="/srv/x.pdf",
                          document_mimetype="text/plain"),
            ThinkingBlock(content=None, num_tokens=3, additional_information={"a": 1}),
        ]),
        {"role": "user", "additional_kwargs": {},
         "blocks": [{"block_type": "image", "image": None, "path": None,
                     "url": "https://a.com/x.png", "image_mimetype": None, "detail": None}]},
        ChatMessage(role="chatbot", additional_kwargs={
            "x": 1,
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "g",
                                                              "arguments": '{"b": 2}'}},
                {"id": "c3", "type": "function", "function": {"name": "h", "arguments": "{}"}},
            ],
            "annotations": [{"type": "url_citation", "extra": 1, "url_citation": {
                "url": "https://a.com", "title": None}}],
            "audio": {"id": "au_1", "data": WAV, "transcript": "hi", "expires_at": None},
            "reference_audio_id": "au_1",
        }, blocks=[ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={}),
                   TextBlock(text="between"), kwargs_text]),
        ChatMessage(role="tool", content="r1", additional_kwargs={"call_id": "c1", "x": 1}),
        ChatMessage(role="tool", content="r2", additional_kwargs={"tool_call_id": "c2"}),
        ChatMessage(role="tool", content="r3", additional_kwargs={"tool_call_id": "c3"}),
        ChatMessage(role="model", additional_kwargs={"reference_audio_id": "au_2"},
                    blocks=[AudioBlock(audio=WAV.encode(), format="wav")]),
        ChatMessage(role="assistant", blocks=[], additional_kwargs={
            "function_call": {"name": "k", "arguments": "{}"},
            "reasoning_content": "r", "reasoning": "r"}),
        ChatMessage(role="function", content="r4", additional_kwargs={"name": "k"}),
        ChatMessage(role="assistant", blocks=[  # "": a call without an id, to LlamaIndex
            ToolCallBlock(tool_call_id="", tool_name="m", tool_kwargs={})]),
        ChatMessage(role="tool", content="r5", additional_kwargs={"tool_call_id": ""}),
    ]


def test_every_known_key_is_one_a_reader_keeps() -> None:
    found = written_whole(llama_index.to_messages(keeping_every_key()))
    for path in GOLDEN:
        found |= written_whole(llama_index.events_to_messages(
            json.loads(path.read_text())["events"]))
    assert found | DOCUMENTED_ONLY == known_keys()


def test_what_keeps_every_key_is_written_back_as_it_was() -> None:
    history = keeping_every_key()
    back = llama_index.from_messages(llama_index.to_messages(history))
    assert [m.model_dump(mode="json") for m in back] == [
        m if isinstance(m, dict) else m.model_dump(mode="json") for m in history]
