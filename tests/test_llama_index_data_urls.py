"""LlamaIndex media blocks whose URL is a base64 ``data:`` URL hold inline data.

LlamaIndex users pass inline images as ``ImageBlock(url="data:image/png;base64,...")`` (and
audio, video and documents the same way). Every other adapter reads inline media as the part's
``data`` and ``mime_type``, so this one does too: the URL splits as
``tracebridge.media.split_data_url`` splits it, ``metadata["llama_index"]["data_url"]`` says it
was spelled as a URL (so the block is written back as that URL), and the block's own type field
is kept beside it, verbatim, when it says another type than the URL. A data: URL that does not
split (not base64) stays a URL. Object, dict and event readers give the same parts.
"""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentInput, AgentOutput
from llama_index.core.base.llms.types import (
    AudioBlock,
    ChatMessage,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    VideoBlock,
)

from tracebridge import (
    AIMessage,
    AudioPart,
    FilePart,
    HumanMessage,
    ImagePart,
    TextPart,
    TraceError,
    transcript_hash,
)
from tracebridge.adapters import llama_index, openai_chat

NS = "llama_index"
PNG = "iVBORw0KGgo="
PNG_URL = f"data:image/png;base64,{PNG}"
MARK = {"data_url": True}


def ask(block: Any) -> ChatMessage:
    return ChatMessage(role="user", blocks=[TextBlock(text="what is this?"), block])


def dumps(messages: list[Any]) -> list[Any]:
    return [m.model_dump(mode="json") for m in messages]


def read_both(trace: list[ChatMessage]) -> list[Any]:
    """The typed messages of the objects, held equal to those of their dumps."""
    typed = llama_index.to_messages(trace)
    assert llama_index.to_messages(dumps(trace)) == typed
    return typed


BLOCKS = [
    pytest.param(
        ImageBlock(url=PNG_URL),
        ImagePart(data=PNG, mime_type="image/png", metadata={NS: MARK}),
        id="image",
    ),
    pytest.param(
        ImageBlock(url="data:image/jpeg;base64,/9j/4AAQ", detail="high"),
        ImagePart(data="/9j/4AAQ", mime_type="image/jpeg", detail="high", metadata={NS: MARK}),
        id="image-with-detail",
    ),
    pytest.param(
        AudioBlock(url="data:audio/mpeg;base64,SUQz"),  # LlamaIndex derives format "mp3"
        AudioPart(data="SUQz", mime_type="audio/mpeg", metadata={NS: MARK}),
        id="audio",
    ),
    pytest.param(
        VideoBlock(url="data:video/mp4;base64,AAAA", fps=24),
        FilePart(data="AAAA", mime_type="video/mp4",
                 metadata={NS: {"block_type": "video", "fps": 24, **MARK}}),
        id="video",
    ),
    pytest.param(
        DocumentBlock(url="data:application/pdf;base64,JVBERi0=", title="report.pdf",
                      document_mimetype="application/pdf"),
        FilePart(data="JVBERi0=", mime_type="application/pdf", filename="report.pdf",
                 metadata={NS: MARK}),
        id="document",
    ),
]


@pytest.mark.parametrize(("block", "part"), BLOCKS)
def test_a_block_by_data_url_reads_as_inline_data_and_is_written_back_as_that_url(
    block: Any, part: Any
) -> None:
    trace = [ask(block)]
    typed = read_both(trace)
    assert typed == [HumanMessage(content=[TextPart(text="what is this?"), part])]
    back = llama_index.from_messages(typed)
    assert back[0].blocks[1] == block
    assert dumps(back) == dumps(trace)


def test_the_repro_converts_to_chat_completions_and_back() -> None:
    trace = [ask(ImageBlock(url=PNG_URL, detail="low")), ChatMessage(role="assistant",
                                                                    content="A pixel.")]
    typed = read_both(trace)
    chat = openai_chat.from_messages(typed)
    assert chat[0]["content"][1] == {
        "type": "image_url", "image_url": {"url": PNG_URL, "detail": "low"}
    }
    from_chat = openai_chat.to_messages(chat)
    assert transcript_hash(from_chat) == transcript_hash(typed)
    # Back in LlamaIndex, without this adapter's metadata: inline data, as it always was.
    again = llama_index.from_messages(from_chat)
    assert again[0].blocks[1] == ImageBlock(image=PNG.encode(), image_mimetype="image/png",
                                            detail="low")
    assert transcript_hash(llama_index.to_messages(again)) == transcript_hash(typed)


@pytest.mark.parametrize(
    ("block", "part"),
    [
        pytest.param(
            AudioBlock(url="data:audio/wav;base64,UklGRg=="),  # LlamaIndex derives no format
            AudioPart(data="UklGRg==", mime_type="audio/wav",
                      metadata={NS: {**MARK, "format": None}}),
            id="audio-format-null",
        ),
        pytest.param(
            AudioBlock(url="data:audio/x-wav;base64,UklGRg=="),  # "wav": what the URL says
            AudioPart(data="UklGRg==", mime_type="audio/x-wav", metadata={NS: MARK}),
            id="audio-format-agrees",
        ),
    ],
)
def test_an_audio_clip_by_data_url_crosses_as_input_audio(block: Any, part: Any) -> None:
    typed = read_both([ask(block)])
    assert typed[0].content[1] == part
    assert dumps(llama_index.from_messages(typed)) == dumps([ask(block)])
    chat = openai_chat.from_messages(typed)
    assert chat[0]["content"][1] == {
        "type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}
    }
    assert transcript_hash(openai_chat.to_messages(chat)) == transcript_hash(typed)


@pytest.mark.parametrize(
    ("block", "mime_type", "kept"),
    [
        pytest.param(ImageBlock(url=PNG_URL, image_mimetype="image/jpeg"), "image/png",
                     {"image_mimetype": "image/jpeg"}, id="image-says-another-type"),
        pytest.param(ImageBlock(url="data:image/x-icon-like;base64,AAAA"), "image/x-icon-like",
                     {"image_mimetype": None}, id="image-says-none"),
        pytest.param(AudioBlock(url="data:audio/mpeg;base64,SUQz", format="wav"), "audio/mpeg",
                     {"format": "wav"}, id="audio-says-another-format"),
        pytest.param(DocumentBlock(url="data:application/pdf;base64,JVBERi0="),
                     "application/pdf", {"document_mimetype": None}, id="document-says-none"),
    ],
)
def test_a_block_type_other_than_the_urls_is_kept_beside_it(
    block: Any, mime_type: str, kept: dict[str, Any]
) -> None:
    trace = [ask(block)]
    (part,) = read_both(trace)[0].content[1:]  # type: ignore[misc]
    assert part.mime_type == mime_type  # the URL's type: the data's
    assert part.metadata == {NS: {**MARK, **kept}}
    assert dumps(llama_index.from_messages(read_both(trace))) == dumps(trace)


@pytest.mark.parametrize(
    "url",
    ["data:image/png,iVBORw0KGgo", "data:,hello", "https://example.com/cat.png"],
    ids=["not-base64", "no-type-not-base64", "https"],
)
def test_a_url_that_does_not_split_stays_a_url(url: str) -> None:
    trace = [ask(ImageBlock(url=url))]
    typed = read_both(trace)
    assert typed[0].content[1] == ImagePart(url=url)
    assert dumps(llama_index.from_messages(typed)) == dumps(trace)
    chat = openai_chat.from_messages(typed)
    assert chat[0]["content"][1] == {"type": "image_url", "image_url": {"url": url}}
    assert transcript_hash(openai_chat.to_messages(chat)) == transcript_hash(typed)


def test_a_data_url_with_an_empty_type_splits_as_chat_completions_splits_it() -> None:
    trace = [ask(ImageBlock(url="data:;base64,AAAA"))]
    typed = read_both(trace)
    assert typed[0].content[1] == ImagePart(
        data="AAAA", mime_type="", metadata={NS: {**MARK, "image_mimetype": None}}
    )
    assert dumps(llama_index.from_messages(typed)) == dumps(trace)
    chat = openai_chat.from_messages(typed)
    assert transcript_hash(openai_chat.to_messages(chat)) == transcript_hash(typed)


def test_inline_data_from_another_format_is_written_as_inline_data_still() -> None:
    part = ImagePart(data=PNG, mime_type="image/png", detail="auto")
    (message,) = llama_index.from_messages([HumanMessage(content=[part])])
    assert message.blocks == [ImageBlock(image=PNG.encode(), image_mimetype="image/png",
                                         detail="auto")]
    assert message.blocks[0].url is None
    assert llama_index.to_messages([message])[0].content == [part]


@pytest.mark.parametrize(
    "part",
    [
        ImagePart(url=PNG_URL),
        AudioPart(url="data:audio/wav;base64,UklGRg=="),
        FilePart(url="data:application/pdf;base64,JVBERi0="),
        FilePart(url="data:video/mp4;base64,AAAA", metadata={NS: {"block_type": "video"}}),
    ],
    ids=["image", "audio", "document", "video"],
)
def test_a_base64_data_url_held_as_a_url_is_refused_with_no_option(part: Any) -> None:
    # LlamaIndex's url field would read it back as inline data (another part), as
    # Chat Completions' image_url would.
    for drop in ((), llama_index.DROPPABLE):
        with pytest.raises(TraceError) as caught:
            llama_index.from_messages([HumanMessage(content=[part])], drop=drop)
        assert (caught.value.code, caught.value.index, caught.value.path) == (
            "not_representable", 0, "messages[0].content[0].url"
        )


@pytest.mark.parametrize(
    ("part", "path"),
    [
        (ImagePart(url="https://example.com/a.png", metadata={NS: MARK}),
         "metadata.llama_index.data_url"),
        (ImagePart(data=PNG, metadata={NS: MARK}), "metadata.llama_index.data_url"),
        (ImagePart(data=PNG, mime_type="image/png,x", metadata={NS: MARK}), "mime_type"),
        (ImagePart(data=PNG, mime_type="image/png",
                   metadata={NS: {**MARK, "image_mimetype": "image/png"}}),
         "metadata.llama_index.image_mimetype"),
        (ImagePart(data="iVBO\nRw0KGgo=", mime_type="image/png", metadata={NS: MARK}), "data"),
    ],
    ids=["with-a-url", "without-a-type", "comma-in-type", "kept-type-is-the-urls", "newline"],
)
def test_a_part_that_no_data_url_block_reads_back_as_is_refused(part: Any, path: str) -> None:
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages([HumanMessage(content=[part])])
    assert (caught.value.code, caught.value.path) == (
        "not_representable", f"messages[0].content[0].{path}"
    )


def test_an_event_stream_reads_a_data_url_as_the_history_does() -> None:
    question = ask(ImageBlock(url=PNG_URL))
    answer = ChatMessage(role="assistant", content="A pixel.")
    events = [
        AgentInput(input=[question], current_agent_name="Agent"),
        AgentOutput(response=answer, tool_calls=[], raw=None, current_agent_name="Agent"),
    ]
    expected = [
        HumanMessage(content=[TextPart(text="what is this?"),
                              ImagePart(data=PNG, mime_type="image/png", metadata={NS: MARK})]),
        AIMessage(content="A pixel.", name="Agent"),
    ]
    assert llama_index.events_to_messages(events) == expected
    assert llama_index.events_to_messages(llama_index.dump_events(events)) == expected


def test_a_dict_that_leaves_keys_out_reads_as_the_object_does() -> None:
    trace = [{"role": "user", "blocks": [{"block_type": "image", "url": PNG_URL}]}]
    typed = llama_index.to_messages(trace)
    assert typed == [HumanMessage(content=[
        ImagePart(data=PNG, mime_type="image/png", metadata={NS: MARK})
    ])]
    assert dumps(llama_index.from_messages(typed)) == [
        ChatMessage.model_validate(trace[0]).model_dump(mode="json")
    ]
