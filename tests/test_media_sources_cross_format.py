"""Media parts across formats: a part's source (file id, URL, inline data) and its mime type
arrive whole or the writer refuses; nothing is picked and the rest left behind."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, TraceError, transcript_hash
from tracebridge.cli import to_json
from tracebridge.media import data_url, split_data_url
from tracebridge.messages import AudioPart, FilePart, ImagePart, TextPart
from tracebridge.registry import get_adapter

PNG = "iVBORw0KGgo="
PDF = "JVBERi0xLjQ="


def conversation(part: Any) -> list[Any]:
    return [HumanMessage(content=[TextPart(text="see"), part]), AIMessage(content="ok")]


def through(target: str, messages: list[Any]) -> list[Any]:
    """``messages`` written to ``target``, stored as JSON, read back."""
    written = get_adapter(target).from_messages(messages)
    return list(get_adapter(target).to_messages(json.loads(json.dumps(to_json(target, written)))))


@pytest.mark.parametrize(
    ("part", "given"),
    [
        (ImagePart(url="https://example.com/a.png", data=PNG, mime_type="image/png"),
         "url and data"),
        (AudioPart(url="https://example.com/a.wav", data="UklGRg==", mime_type="audio/wav"),
         "url and data"),
        (FilePart(url="https://example.com/a.pdf", data=PDF, mime_type="application/pdf"),
         "url and data"),
        (FilePart(file_id="file-1", data=PDF, mime_type="application/pdf"), "file_id and data"),
        (FilePart(file_id="file-1", url="https://example.com/a.pdf"), "file_id and url"),
    ],
)
def test_otel_refuses_a_media_part_with_two_sources(part: Any, given: str) -> None:
    # A GenAI part is a file id, a URI or a blob: writing one would leave the other behind.
    with pytest.raises(TraceError) as caught:
        get_adapter("otel").from_messages(conversation(part))
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].content[1]"
    )
    assert f"this {part.type} part has {given}" in str(error)


@pytest.mark.parametrize(
    "part",
    [
        ImagePart(url="https://example.com/a.png", mime_type="image/png"),
        ImagePart(data=PNG, mime_type="image/png"),
        FilePart(file_id="file-1"),
    ],
)
def test_otel_still_writes_a_media_part_with_one_source(part: Any) -> None:
    messages = conversation(part)
    assert transcript_hash(through("otel", messages)) == transcript_hash(messages)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("data:image/png;base64,AA==", ("image/png", "AA==")),
        ("data:;base64,AA==", ("", "AA==")),
        ("data:text/plain;charset=utf-8;base64,AA==", ("text/plain;charset=utf-8", "AA==")),
        ("data:image/png,AA==", None),  # not base64
        ("https://example.com/a.png", None),
    ],
)
def test_a_data_url_splits_at_its_base64_marker(url: str, expected: Any) -> None:
    assert split_data_url(url) == expected
    if expected is not None:
        assert data_url(*expected) == url


@pytest.mark.parametrize("target", ["openai_chat", "swarm", "openai_responses", "openai_agents",
                                    "langchain"])
@pytest.mark.parametrize(
    "part",
    [
        ImagePart(data=PNG, mime_type=""),
        ImagePart(data=PNG, mime_type="image/png;q=1"),
        FilePart(data=PDF, mime_type="", filename="a.pdf"),
        FilePart(data=PDF, mime_type="text/plain;charset=utf-8", filename="a.txt"),
    ],
    ids=["image-empty-mime", "image-mime-params", "file-empty-mime", "file-mime-params"],
)
def test_inline_data_keeps_an_empty_or_parameterised_mime_type(target: str, part: Any) -> None:
    # Written as a data: URL, it used to read back as a URL (or as data holding the whole
    # URL text) when the mime type was empty or had parameters.
    messages = conversation(part)
    again = through(target, messages)
    assert again[0].content[1].data == part.data
    assert again[0].content[1].mime_type == part.mime_type
    assert transcript_hash(again) == transcript_hash(messages)


def test_chat_completions_reads_a_data_url_without_a_mime_type_as_data() -> None:
    trace = [
        {"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:;base64,AA=="}},
        ]},
    ]
    messages = get_adapter("openai_chat").to_messages(trace)
    part = messages[0].content[0]
    assert (type(part), part.data, part.mime_type, part.url) == (ImagePart, "AA==", "", None)
    assert get_adapter("openai_chat").from_messages(messages) == trace


@pytest.mark.parametrize(
    "target", ["openai_chat", "swarm", "openai_responses", "openai_agents", "llama_index"]
)
@pytest.mark.parametrize(
    ("part", "field"),
    [
        (ImagePart(url="data:image/png;base64,AA=="), "url"),
        (ImagePart(url="data:;base64,AA=="), "url"),
        (FilePart(data="data:application/pdf;base64,AA==", filename="a.pdf"), "data"),
    ],
    ids=["image-url", "image-url-empty-mime", "file-data-without-mime"],
)
def test_a_data_url_held_as_a_url_or_as_bare_data_is_refused(
    target: str, part: Any, field: str
) -> None:
    # These formats spell inline data as a data: URL, so this text would read back as inline
    # data with a mime type: another part. (Galtea and OpenTelemetry parts keep a URL apart
    # from data, and read it back as the URL it is.)
    with pytest.raises(TraceError) as caught:
        get_adapter(target).from_messages(conversation(part))
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, f"messages[0].content[1].{field}"
    )


@pytest.mark.parametrize("target", ["otel"])
def test_a_data_url_held_as_a_url_reads_back_as_that_url(target: str) -> None:
    messages = conversation(ImagePart(url="data:image/png;base64,AA=="))
    assert transcript_hash(through(target, messages)) == transcript_hash(messages)


@pytest.mark.parametrize("target", ["openai_chat", "swarm", "openai_responses", "openai_agents"])
@pytest.mark.parametrize(
    "part",
    [ImagePart(data=PNG, mime_type="image/png,x"), FilePart(data=PDF, mime_type="a,b")],
    ids=["image", "file"],
)
def test_a_mime_type_with_a_comma_is_refused_where_data_is_a_data_url(
    target: str, part: Any
) -> None:
    # "data:a,b;base64,..." would read back as mime type "a" and other data.
    with pytest.raises(TraceError) as caught:
        get_adapter(target).from_messages(conversation(part))
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].content[1].mime_type"
    )


IMAGE_BLOCK = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
FILE_BLOCK = {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}",
                                       "filename": "a.pdf"}}


@pytest.mark.parametrize(
    ("block", "shape", "update", "path"),
    [(IMAGE_BLOCK, "image_url_data", {"mime_type": "image/png,x"}, "mime_type"),
     (FILE_BLOCK, "openai_file", {"mime_type": "a,b"}, "mime_type"),
     (FILE_BLOCK, "openai_file", {"mime_type": None, "data": "data:a/b;base64,AA=="}, "data")],
    ids=["image-comma-in-mime-type", "file-comma-in-mime-type", "file-data-that-is-a-data-url"],
)
def test_langchain_refuses_data_its_data_url_block_would_read_back_otherwise(
    block: dict[str, Any], shape: str, update: dict[str, Any], path: str
) -> None:
    # An OpenAI-style block read from LangChain, written back in its own layout after an edit.
    trace = [{"type": "human", "data": {"content": [{"type": "text", "text": "see"}, block]}},
             {"type": "ai", "data": {"content": "ok"}}]
    messages = list(get_adapter("langchain").to_messages(trace))
    part = messages[0].content[1]
    assert (part.data, part.metadata["langchain"]["shape"]) == (PNG if block is IMAGE_BLOCK
                                                                  else PDF, shape)
    assert get_adapter("langchain").from_messages(messages)[0].content[1] == block
    messages[0] = messages[0].model_copy(update={"content": [
        messages[0].content[0], part.model_copy(update=update)
    ]})
    with pytest.raises(TraceError) as caught:
        get_adapter("langchain").from_messages(messages)
    assert (caught.value.code, caught.value.path) == (
        "not_representable", f"messages[0].content[1].{path}"
    )


@pytest.mark.parametrize("detail", [None, "low"])
@pytest.mark.parametrize("url", ["data:image/png;base64,AA==", "data:;base64,AA=="])
def test_langchain_refuses_an_image_held_as_a_data_url(url: str, detail: str | None) -> None:
    # LangChain reads a base64 data: URL as inline data in every block that holds one (the v1
    # image block too, as LangChain sends it on as image_url), so a part holding one as a URL
    # (read from OpenTelemetry or Galtea) would come back as another part: refused, as the
    # OpenAI formats refuse it.
    with pytest.raises(TraceError) as caught:
        get_adapter("langchain").from_messages(conversation(ImagePart(url=url, detail=detail)))
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable", 0, "messages[0].content[1].url"
    )
