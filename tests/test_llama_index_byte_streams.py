"""LlamaIndex media blocks that hold a byte stream (``IOBase``) rather than bytes.

LlamaIndex writes such a stream's bytes as the block's text when it dumps it: a stream of
UTF-8 text dumps (and is read as that text, as LlamaIndex's own dump holds it); a stream of
other bytes makes LlamaIndex's own serializer fall. The readers and ``dump_events`` refuse
that as ``unserializable_value`` at the block's field, with the message's or event's index;
no decoding error escapes. The stream is rewound by LlamaIndex on every dump, so reading it
twice (the fast path, then the search for the faulty field) finds the same bytes.
"""

from __future__ import annotations

from io import BytesIO
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentInput, ToolCallResult
from llama_index.core.base.llms.types import (
    AudioBlock,
    ChatMessage,
    DocumentBlock,
    ImageBlock,
    MessageRole,
    TextBlock,
)
from llama_index.core.tools import ToolOutput

from tracebridge import ImagePart, TraceError
from tracebridge.adapters import llama_index

NOT_UTF8 = b"\xff\xfe\x00raw"

STREAM_BLOCKS = [
    pytest.param(lambda: ImageBlock(image=BytesIO(NOT_UTF8)), "image", "ImageBlock", id="image"),
    pytest.param(lambda: AudioBlock(audio=BytesIO(NOT_UTF8), format="wav"), "audio",
                 "AudioBlock", id="audio"),
    pytest.param(lambda: DocumentBlock(data=BytesIO(NOT_UTF8)), "data", "DocumentBlock",
                 id="document"),
]


def _user(*blocks: Any) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, blocks=list(blocks))


def _refused(call: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        call()
    return caught.value


@pytest.mark.parametrize(("make", "field", "cls"), STREAM_BLOCKS)
def test_a_message_with_a_stream_llama_index_cannot_dump_is_refused_at_its_field(
    make: Any, field: str, cls: str
) -> None:
    first = _user(TextBlock(text="hello"))
    second = _user(TextBlock(text="see this"), make())
    error = _refused(lambda: llama_index.to_messages([first, second]))
    assert (error.code, error.index, error.path, error.source) == (
        "unserializable_value", 1, f"messages[1].blocks[1].{field}", "llama_index")
    assert f"LlamaIndex cannot write this {cls} as JSON: UnicodeDecodeError" in error.detail


@pytest.mark.parametrize(("make", "field", "cls"), STREAM_BLOCKS)
def test_an_agent_input_with_such_a_stream_is_refused_at_its_field(
    make: Any, field: str, cls: str
) -> None:
    events = [AgentInput(input=[_user(make())], current_agent_name="Agent")]
    for read in (llama_index.events_to_messages, llama_index.dump_events):
        error = _refused(lambda read=read: read(events))
        assert (error.code, error.index, error.path) == (
            "unserializable_value", 0, f"events[0].data.input[0].blocks[0].{field}")


def test_a_tool_result_with_such_a_stream_is_refused_at_its_field() -> None:
    call = ChatMessage(role=MessageRole.ASSISTANT, blocks=[TextBlock(text="")],
                       additional_kwargs={"tool_calls": []})
    output = ToolOutput(tool_name="look", blocks=[ImageBlock(image=BytesIO(NOT_UTF8))],
                        raw_input={}, raw_output=None)
    events = [
        AgentInput(input=[_user(TextBlock(text="hi")), call], current_agent_name="Agent"),
        ToolCallResult(tool_name="look", tool_kwargs={}, tool_id="c1", tool_output=output,
                       return_direct=False),
    ]
    for read in (llama_index.events_to_messages, llama_index.dump_events):
        error = _refused(lambda read=read: read(events))
        assert (error.code, error.index, error.path) == (
            "unserializable_value", 1, "events[1].data.tool_output.blocks[0].image")


def test_a_stream_of_utf8_text_is_read_as_llama_index_dumps_it() -> None:
    message = _user(ImageBlock(image=BytesIO(b"aGVsbG8="), image_mimetype="image/png"))
    assert message.model_dump(mode="json")["blocks"][0]["image"] == "aGVsbG8="
    for _ in range(2):  # the stream is rewound: a second read finds the same bytes
        [read] = llama_index.to_messages([message])
        assert read.content == [ImagePart(data="aGVsbG8=", mime_type="image/png")]
