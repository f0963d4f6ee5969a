"""Regressions from a mutation hunt over the LlamaIndex golden traces: what LlamaIndex would
drop, change or refuse in a block is refused by the reader where it is, what the reader
accepts is read as LlamaIndex holds it and written back exactly, and the writer refuses
(``not_representable``, naming the ``drop=`` option when there is one) a part that would not
read back as itself.

One test (or table) per bug: unknown keys in tool-call and opaque blocks; a block with
neither data nor a URL, whose missing fields LlamaIndex fills in; document titles ``""`` and
``"input_document"``; empty mimetypes; data that is not base64 text; paths LlamaIndex refuses.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from llama_index.core.base.llms.types import ChatMessage

from tracebridge import (
    AIMessage,
    AudioPart,
    AudioReference,
    FilePart,
    HumanMessage,
    ImagePart,
    OpaquePart,
    TextPart,
    TraceError,
    convert,
    transcript_hash,
)
from tracebridge.adapters import llama_index

NS = "llama_index"
ROOT = Path(__file__).resolve().parents[1]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


def golden(name: str) -> list[Any]:
    trace: list[Any] = json.loads((ROOT / f"golden_traces/{name}.json").read_text())["trace"]
    return trace


def read_refused(trace: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        llama_index.to_messages(trace)
    assert caught.value.source == "llama_index"
    return caught.value


def write_refused(messages: list[Any], **options: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(messages, **options)
    assert (caught.value.code, caught.value.source) == ("not_representable", "llama_index")
    return caught.value


def user_blocks(*blocks: dict[str, Any]) -> list[Any]:
    return [{"role": "user", "additional_kwargs": {}, "blocks": list(blocks)}]


def dumps(messages: list[Any]) -> list[Any]:
    return [m.model_dump(mode="json") for m in messages]


def llama_index_dump(trace: list[Any]) -> list[Any]:
    """What LlamaIndex itself makes of a dumped trace: rebuilt and dumped again."""
    return [ChatMessage.model_validate(copy.deepcopy(m)).model_dump(mode="json") for m in trace]


def faithful(messages: list[Any], **options: Any) -> list[Any]:
    """The messages written and read back (asserted the same), and what was written."""
    written = llama_index.from_messages(messages, **options)
    assert llama_index.to_messages(written) == messages
    return dumps(written)


# --- 1. keys LlamaIndex drops: tool-call blocks and the opaque block kinds ---------------


def test_an_unknown_key_in_an_assistant_tool_call_block_is_refused() -> None:
    trace = golden("llama_index/function_agent_two_turns")
    trace[1]["blocks"][0]["zz_extra"] = 5
    error = read_refused(trace)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "messages[1].blocks[0].zz_extra"
    )
    assert "LlamaIndex would drop it" in error.detail


CITATION = {"block_type": "citation", "cited_content": {"block_type": "text", "text": "q"},
            "source": "s", "title": "T", "additional_location_info": {"page": 2}}
CITABLE = {"block_type": "citable", "title": "T", "source": "s",
           "content": [{"block_type": "text", "text": "c"}]}
CACHE = {"block_type": "cache", "cache_control": {"type": "ephemeral", "ttl": "5m"}}


def _with(block: dict[str, Any], *at: Any, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(block)
    inner = changed
    for key in at[:-1]:
        inner = inner[key]
    inner[at[-1]] = value
    return changed


@pytest.mark.parametrize(
    ("block", "path", "said"),
    [
        (_with(CACHE, "zz", value=1), "blocks[0].zz", "would drop it"),
        (_with(CACHE, "cache_control", "zz", value=1), "blocks[0].cache_control.zz",
         "would drop it"),
        (_with(CITATION, "zz", value=1), "blocks[0].zz", "would drop it"),
        (_with(CITATION, "cited_content", "zz", value=1), "blocks[0].cited_content.zz",
         "would drop it"),
        (_with(CITABLE, "content", 0, "zz", value=1), "blocks[0].content[0].zz",
         "would drop it"),
        (_with(CITATION, "additional_location_info", "page", value=2.0),
         "blocks[0].additional_location_info.page", "would hold 2.0 as 2"),
        (_with(CITATION, "additional_location_info", "page", value=True),
         "blocks[0].additional_location_info.page", "would hold True as 1"),
        (_with(CITABLE, "content", value="c"), "blocks[0].content", "would hold 'c' as"),
        (_with(CITATION, "cited_content", value=["q"]), "blocks[0].cited_content",
         "would hold ['q'] as"),
        (_with(CACHE, "cache_control", value={"ttl": "5m"}), "blocks[0].cache_control.type",
         "Field required"),
        ({"block_type": "tool_call", "tool_name": "f", "zz": 1}, "blocks[0].zz",
         "would drop it"),
        (_with(CITABLE, "content", 0, value={"block_type": "image", "path": ""}),
         "blocks[0].content[0].path", "Path does not point to a file"),
    ],
)
def test_what_llama_index_would_drop_or_change_in_an_opaque_block_is_refused_where_it_is(
    block: dict[str, Any], path: str, said: str
) -> None:
    error = read_refused(user_blocks(block))
    assert (error.code, error.index, error.path) == ("malformed_event", 0, f"messages[0].{path}")
    assert said in error.detail


@pytest.mark.parametrize(
    ("block", "held"),
    [
        (CACHE, CACHE),
        ({"block_type": "cache", "cache_control": {"type": "ephemeral"}}, CACHE),
        (CITATION, CITATION),
        (CITABLE, CITABLE),
        ({"block_type": "tool_call", "tool_name": "f"},
         {"block_type": "tool_call", "tool_call_id": None, "tool_name": "f", "tool_kwargs": {}}),
        (_with(CITABLE, "content", 0, value={"block_type": "image",
                                             "url": "https://example.com/a.png"}),
         _with(CITABLE, "content", 0, value={
             "block_type": "image", "image": None, "path": None,
             "url": "https://example.com/a.png", "image_mimetype": "image/png",
             "detail": None})),
    ],
)
def test_an_opaque_block_reads_as_llama_index_holds_it_and_is_written_back_exactly(
    block: dict[str, Any], held: dict[str, Any]
) -> None:
    trace = user_blocks(block, {"block_type": "text", "text": "?"})
    messages = llama_index.to_messages(trace)
    assert messages[0].content == [OpaquePart(kind=block["block_type"], value=held),
                                   TextPart(text="?")]
    assert faithful(messages) == llama_index_dump(trace)


# --- 2. a media block with neither data nor a URL (an OpaquePart) -------------------------


def test_a_media_block_without_data_or_url_reads_with_the_fields_llama_index_fills_in() -> None:
    trace = golden("llama_index/developer_prompt_and_media")
    del trace[1]["blocks"][1]["url"]
    messages = llama_index.to_messages(trace)
    assert messages[1].content[1] == OpaquePart(kind="image", value={  # type: ignore[index]
        "block_type": "image", "image": None, "path": None, "url": None,
        "image_mimetype": "image/png", "detail": "high"})
    back = llama_index.from_messages(messages)
    assert llama_index.to_messages(back) == messages
    assert dumps(back) == llama_index_dump(trace)


@pytest.mark.parametrize(
    "value",
    [
        {"block_type": "image", "image": None, "path": None},  # LlamaIndex fills in the rest
        {"block_type": "audio", "audio": None, "path": None, "url": None, "format": None,
         "zz": 1},
        {"block_type": "document", "data": None, "path": "/srv/a.pdf", "url": None,
         "title": "", "document_mimetype": "application/pdf"},
    ],
)
def test_an_opaque_part_that_would_not_read_back_as_itself_is_refused(
    value: dict[str, Any]
) -> None:
    part = OpaquePart(kind=value["block_type"], value=value)
    error = write_refused([HumanMessage(content=[TextPart(text="?"), part])])
    assert (error.index, error.path) == (0, "messages[0].content[1]")
    assert "drop=['opaque_parts']" in error.detail
    (message,) = llama_index.from_messages([HumanMessage(content=[TextPart(text="?"), part])],
                                           drop=["opaque_parts"])
    assert dumps([message])[0]["blocks"] == [{"block_type": "text", "text": "?"}]


def test_an_opaque_part_holding_a_block_as_llama_index_holds_it_is_written() -> None:
    value = {"block_type": "document", "data": None, "path": "/srv/a.pdf", "url": None,
             "title": "input_document", "document_mimetype": "application/pdf"}
    faithful([HumanMessage(content=[OpaquePart(kind="document", value=value)])])


# --- 3. document titles LlamaIndex replaces, or reads back as none ------------------------


def test_a_galtea_file_named_empty_is_refused_on_the_way_to_llama_index() -> None:
    trace = golden("galtea/generate_agent_class")
    trace[0]["input_files"][0]["filename"] = ""
    with pytest.raises(TraceError) as caught:
        convert(trace, source="galtea", target="llama_index")
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 0, "messages[0].content[1].filename"
    )
    assert "drop=['filenames']" in caught.value.detail
    written = convert(trace, source="galtea", target="llama_index",
                      target_options={"drop": ["filenames"]})
    assert written[0].blocks[1].title == "input_document"


@pytest.mark.parametrize("filename", ["", "input_document"])
def test_a_filename_a_document_block_cannot_hold_is_refused_by_name(filename: str) -> None:
    part = FilePart(data="JVBERi0=", mime_type="application/pdf", filename=filename)
    error = write_refused([HumanMessage(content=[TextPart(text="?"), part])])
    assert (error.index, error.path) == (0, "messages[0].content[1].filename")
    assert "drop=['filenames']" in error.detail
    written = llama_index.from_messages([HumanMessage(content=[part])], drop=["filenames"])
    assert llama_index.to_messages(written)[0].content == [
        part.model_copy(update={"filename": None})
    ]


def test_a_video_part_with_a_filename_is_refused_by_name() -> None:
    part = FilePart(url="https://example.com/v.mp4", filename="v.mp4",
                    metadata={NS: {"block_type": "video"}})
    error = write_refused([HumanMessage(content=[part])])
    assert (error.index, error.path) == (0, "messages[0].content[0].filename")
    assert "drop=['filenames']" in error.detail
    written = llama_index.from_messages([HumanMessage(content=[part])], drop=["filenames"])
    assert llama_index.to_messages(written)[0].content == [
        part.model_copy(update={"filename": None})
    ]


def test_filenames_is_droppable() -> None:
    assert llama_index.DROPPABLE == (
        "is_error", "refusals", "mime_types", "citations", "opaque_parts", "file_ids",
        "filenames", "event_extras",
    )


def test_an_empty_document_title_is_refused_and_a_missing_one_is_filled() -> None:
    block = {"block_type": "document", "data": "JVBERi0=", "title": ""}
    error = read_refused(user_blocks(block))
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, "messages[0].blocks[0].title"
    )
    for untitled in ({"block_type": "document", "data": "JVBERi0="},
                     {"block_type": "document", "data": "JVBERi0=", "title": None}):
        assert llama_index.to_messages(user_blocks(untitled))[0].content == [
            FilePart(data="JVBERi0=")
        ]


# --- 4. empty mimetypes -------------------------------------------------------------------


def test_an_empty_image_mimetype_beside_data_is_refused() -> None:
    trace = golden("llama_index/function_agent_two_turns")
    trace[5]["blocks"][1]["image_mimetype"] = ""
    error = read_refused(trace)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 5, "messages[5].blocks[1].image_mimetype"
    )
    assert "as 'image/png'" in error.detail


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"block_type": "image", "url": "https://example.com/a.png", "image_mimetype": ""},
         "image_mimetype"),
        ({"block_type": "image", "image": "eA==", "image_mimetype": ""}, "image_mimetype"),
        ({"block_type": "audio", "audio": "UklGRg==", "format": ""}, "format"),
        ({"block_type": "audio", "url": "https://example.com/a.wav", "format": ""}, "format"),
        ({"block_type": "video", "url": "https://example.com/v.mp4", "video_mimetype": ""},
         "video_mimetype"),
        ({"block_type": "document", "data": "JVBERi0=", "document_mimetype": ""},
         "document_mimetype"),
        ({"block_type": "document", "path": "/srv/a", "document_mimetype": ""},
         "document_mimetype"),
    ],
)
def test_an_empty_mimetype_llama_index_would_replace_is_refused(
    block: dict[str, Any], field: str
) -> None:
    error = read_refused(user_blocks(block))
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, f"messages[0].blocks[0].{field}"
    )


@pytest.mark.parametrize(
    ("block", "part"),
    [
        ({"block_type": "image", "url": "https://example.com/a", "image_mimetype": ""},
         ImagePart(url="https://example.com/a", mime_type="")),
        ({"block_type": "audio", "url": "https://example.com/a", "format": ""},
         AudioPart(url="https://example.com/a", metadata={NS: {"format": ""}})),
        ({"block_type": "video", "video": "AAAA", "video_mimetype": ""},
         FilePart(data="AAAA", mime_type="", metadata={NS: {"block_type": "video"}})),
    ],
)
def test_an_empty_mimetype_llama_index_keeps_is_read_and_written_back(
    block: dict[str, Any], part: Any
) -> None:
    trace = user_blocks(block)
    messages = llama_index.to_messages(trace)
    assert messages[0].content == [part]
    assert faithful(messages) == llama_index_dump(trace)


@pytest.mark.parametrize(
    "part",
    [
        ImagePart(data=PNG, mime_type=""),
        ImagePart(url="https://example.com/a.png", mime_type=""),
        FilePart(data="JVBERi0=", mime_type=""),
        AudioPart(data="UklGRg==", metadata={NS: {"format": ""}}),
    ],
)
def test_an_empty_mime_type_llama_index_would_replace_is_not_written(part: Any) -> None:
    error = write_refused([HumanMessage(content=[TextPart(text="?"), part])])
    assert (error.index, error.path) == (0, "messages[0].content[1].mime_type")
    assert "drop=['mime_types']" in error.detail
    written = llama_index.from_messages([HumanMessage(content=[part])], drop=["mime_types"])
    (read,) = llama_index.to_messages(written)[0].content  # type: ignore[misc]
    assert (read.mime_type, read.metadata.get(NS, {}).get("format")) == (None, None)


# --- 5. data that is not base64 text ----------------------------------------------------


@pytest.mark.parametrize("data", ["x", "eB==", "aGVsbG8", "aGVs\nbG8="])
def test_data_llama_index_would_encode_again_is_not_written(data: str) -> None:
    parts = [ImagePart(data=data, mime_type="image/png"), AudioPart(data=data),
             FilePart(data=data, mime_type="application/pdf")]
    for part in parts:
        error = write_refused([HumanMessage(content=[TextPart(text="?"), part])])
        assert (error.index, error.path) == (0, "messages[0].content[1].data")
        assert "base64" in error.detail
    reply = AIMessage(content="", audio=AudioReference(id="a1", data=data))
    error = write_refused([HumanMessage(content="?"), reply])
    assert (error.index, error.path) == (1, "messages[1].audio.data")


def test_data_that_is_not_base64_text_is_refused_where_it_is_read() -> None:
    trace = golden("llama_index/function_agent_two_turns")
    trace[5]["blocks"][1]["image"] = "x"
    error = read_refused(trace)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 5, "messages[5].blocks[1].image"
    )
    assert "'eA=='" in error.detail
    reply = golden("llama_index/refusal_and_audio_reply")
    reply[3]["blocks"][0]["audio"] = "x"
    error = read_refused(reply)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 3, "messages[3].blocks[0].audio"
    )


def test_an_unknown_key_in_a_reply_audio_block_is_refused() -> None:
    trace = golden("llama_index/refusal_and_audio_reply")
    trace[3]["blocks"][0]["zz_extra"] = 1
    error = read_refused(trace)
    assert (error.code, error.index, error.path) == (
        "malformed_event", 3, "messages[3].blocks[0].zz_extra"
    )


# --- 6. what LlamaIndex refuses ---------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message", "block", "key", "value"),
    [
        ("function_agent_two_turns", 5, 1, "path", ""),
        ("developer_prompt_and_media", 1, 2, "path", "x"),
        ("refusal_and_audio_reply", 3, 0, "path", "x"),
        ("developer_prompt_and_media", 1, 1, "url", ""),
        ("developer_prompt_and_media", 1, 1, "image", "\ud800"),
    ],
)
def test_a_media_block_llama_index_refuses_is_refused(
    name: str, message: int, block: int, key: str, value: str
) -> None:
    trace = golden(f"llama_index/{name}")
    trace[message]["blocks"][block][key] = value
    error = read_refused(trace)
    assert (error.code, error.index, error.path) == (
        "malformed_event", message, f"messages[{message}].blocks[{block}].{key}"
    )
    assert "LlamaIndex refuses this block" in error.detail


def test_a_path_llama_index_refuses_is_not_written() -> None:
    part = ImagePart(data=PNG, metadata={NS: {"path": ""}})
    error = write_refused([HumanMessage(content=[TextPart(text="?"), part])])
    assert (error.index, error.path) == (0, "messages[0].content[1]")
    assert "Path does not point to a file" in error.detail


def test_a_url_llama_index_would_rewrite_is_refused_where_it_is_read() -> None:
    error = read_refused(user_blocks({"block_type": "image", "url": "https://example.com"}))
    assert (error.code, error.index, error.path) == (
        "malformed_event", 0, "messages[0].blocks[0].url"
    )
    assert "'https://example.com/'" in error.detail


def test_a_document_path_that_names_no_file_is_kept() -> None:
    # DocumentBlock.path is FilePath | str: LlamaIndex keeps any text there.
    trace = user_blocks({"block_type": "document", "path": ""})
    messages = llama_index.to_messages(trace)
    assert faithful(messages) == llama_index_dump(trace)


# --- written whole or refused, for media parts of every shape ---------------------------

_DATA = st.sampled_from([None, "", "x", "eB==", PNG, "UklGRg==", "JVBERi0=", "aGVs\nbG8="])
_URLS = st.sampled_from([None, "https://example.com/a.png", "https://example.com/a",
                         "https://example.com"])
_MIMES = st.sampled_from([None, "", "image/png", "application/pdf"])
_AUDIO_MIMES = st.sampled_from([None, "audio/wav", "audio/mpeg"])
_FILENAMES = st.sampled_from([None, "", "input_document", "a.pdf"])
_PATHS = st.sampled_from([{}, {NS: {"path": ""}}, {NS: {"path": __file__}}])


def _part(cls: Any, **fields: Any) -> Any:
    """The part, or None for fields no part takes (a part needs data, a URL or a file id)."""
    try:
        return cls(**fields)
    except ValueError:
        return None


@st.composite
def media_parts(draw: st.DrawFn) -> Any:
    """An image, audio or file part with awkward values, and only such metadata of this
    adapter as the reader makes for it (a path; a missing image mimetype, only without data;
    an empty audio format, only without a mime type)."""
    kind = draw(st.sampled_from([ImagePart, AudioPart, FilePart]))
    url, data, metadata = draw(_URLS), draw(_DATA), draw(_PATHS)
    if kind is ImagePart:
        mime_type = draw(_MIMES)
        if data is None and mime_type is None and draw(st.booleans()):
            metadata = {NS: {**metadata.get(NS, {}), "image_mimetype": None}}
        return _part(ImagePart, url=url, data=data, mime_type=mime_type, metadata=metadata)
    if kind is AudioPart:
        mime_type = draw(_AUDIO_MIMES)
        if mime_type is None and draw(st.booleans()):
            metadata = {NS: {**metadata.get(NS, {}), "format": ""}}
        return _part(AudioPart, url=url, data=data, mime_type=mime_type, metadata=metadata)
    return _part(FilePart, url=url, data=data, mime_type=draw(_MIMES),
                 filename=draw(_FILENAMES), metadata=metadata)


@given(st.lists(media_parts().filter(lambda part: part is not None), min_size=1,
                max_size=3))
@example([ImagePart(url="https://example.com/a", metadata={NS: {"image_mimetype": None}})])
@example([ImagePart(data="x")])
@example([FilePart(data="JVBERi0=", filename="")])
@example([ImagePart(url="https://example.com/a.png", mime_type="")])
def test_media_parts_are_written_to_read_back_as_themselves_or_refused(parts: list[Any]) -> None:
    messages = [HumanMessage(content=[TextPart(text="?"), *parts])]
    written = _written_or_refused(messages)
    if isinstance(written, TraceError):
        at_a_part = (written.path or "").startswith("messages[0].content[")
        assert (written.code, written.index, at_a_part) == ("not_representable", 0, True)
        return
    again = llama_index.to_messages(written)
    assert again == messages
    assert transcript_hash(again) == transcript_hash(messages)


def _written_or_refused(messages: list[Any]) -> Any:
    """The ChatMessages written, or the error they were refused with."""
    try:
        return llama_index.from_messages(messages)
    except TraceError as error:
        return error


# --- event wrappers -------------------------------------------------------------------------


def _events(name: str) -> list[Any]:
    document = json.loads((ROOT / "golden_traces" / "llama_index" / f"{name}.json")
                          .read_text(encoding="utf-8"))
    events: list[Any] = document["events"]
    return events


def test_an_event_dict_with_a_key_beside_event_and_data_is_refused() -> None:
    events = copy.deepcopy(_events("function_agent_two_turns"))
    assert llama_index.events_to_messages(events)  # as dump_events writes them: read
    events[1]["received_at"] = "2026-12-02T12:00:00Z"  # would be dropped without a word
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 1, "events[1].received_at"
    )


@pytest.mark.parametrize(("key", "value"), [("received_at", "now"), ("__is_pydantic", False)])
def test_a_serialized_event_with_another_key_or_not_pydantic_is_refused(
    key: str, value: Any
) -> None:
    events: list[Any] = [
        {"__is_pydantic": True, "value": e["data"],
         "qualified_name": f"llama_index.core.agent.workflow.workflow_events.{e['event']}"}
        for e in _events("function_agent_two_turns")
    ]
    assert llama_index.events_to_messages(events) == llama_index.events_to_messages(
        _events("function_agent_two_turns")
    )
    events[2][key] = value
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages(events)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 2, f"events[2].{key}"
    )
