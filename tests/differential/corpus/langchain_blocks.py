"""LangChain messages whose content is blocks: OpenAI, v0 and v1 standard, provider blocks."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.content import create_file_block

from .case import PDF_B64, PNG_B64, WAV_B64, case

_URL = "https://img.example.org/cat.png"


def _ask(*blocks: Any) -> list[Any]:
    """A user message of ``blocks`` and a plain reply."""
    return [HumanMessage(list(blocks)), AIMessage("Got it.")]


def _reply(*blocks: Any) -> list[Any]:
    """A question and an AI reply of ``blocks``."""
    return [HumanMessage("Go on"), AIMessage(list(blocks))]


@case("messages", "image_url with detail")
def lc_image_url_detail() -> list[Any]:
    return _ask(
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": _URL, "detail": "high"}},
    )


@case("messages", "image_url given as a bare string")
def lc_image_url_string() -> list[Any]:
    return _ask({"type": "image_url", "image_url": _URL})


@case("messages", "image_url holding a data: URL")
def lc_image_data_url() -> list[Any]:
    return _ask({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}})


@case("messages", "v1 image block by URL")
def lc_image_v1_url() -> list[Any]:
    return _ask({"type": "text", "text": "see"}, {"type": "image", "url": _URL})


@case("messages", "v1 image block with base64 data")
def lc_image_v1_base64() -> list[Any]:
    return _ask({"type": "image", "base64": PNG_B64, "mime_type": "image/png"})


@case("messages", "v1 image block by provider file id")
def lc_image_v1_file_id() -> list[Any]:
    return _ask({"type": "image", "file_id": "file-img1"})


@case("messages", "v0 image block, source_type base64")
def lc_image_v0_base64() -> list[Any]:
    return _ask(
        {"type": "image", "source_type": "base64", "data": PNG_B64, "mime_type": "image/png"}
    )


@case("messages", "v0 image block, source_type url")
def lc_image_v0_url() -> list[Any]:
    return _ask({"type": "image", "source_type": "url", "url": _URL})


@case("messages", "Anthropic image block, base64 source")
def lc_image_anthropic_base64() -> list[Any]:
    source = {"type": "base64", "media_type": "image/jpeg", "data": PNG_B64}
    return _ask({"type": "text", "text": "Here:"}, {"type": "image", "source": source})


@case("messages", "Anthropic image block, url source")
def lc_image_anthropic_url() -> list[Any]:
    return _ask({"type": "image", "source": {"type": "url", "url": _URL}})


@case("messages", "an image in an AI reply (generated)")
def lc_image_in_ai_reply() -> list[Any]:
    return _reply({"type": "image", "base64": PNG_B64, "mime_type": "image/png"})


@case("messages", "an image in a system message")
def lc_image_in_system() -> list[Any]:
    return [
        SystemMessage([{"type": "text", "text": "Logo:"}, {"type": "image", "url": _URL}]),
        HumanMessage("ok"),
    ]


@case("messages", "an image in a tool result")
def lc_image_in_tool_result() -> list[Any]:
    call = {"name": "snap", "args": {}, "id": "call_img", "type": "tool_call"}
    return [
        HumanMessage("Take a picture"),
        AIMessage("", tool_calls=[call]),
        ToolMessage([{"type": "image", "url": _URL}], tool_call_id="call_img"),
    ]


@case("messages", "input_audio block (wav)")
def lc_audio_input_audio() -> list[Any]:
    return _ask({"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "wav"}})


@case("messages", "v1 audio block with base64 data")
def lc_audio_v1_base64() -> list[Any]:
    return _ask({"type": "audio", "base64": WAV_B64, "mime_type": "audio/wav"})


@case("messages", "v1 audio block by URL")
def lc_audio_v1_url() -> list[Any]:
    return _ask({"type": "audio", "url": "https://ex.org/a.wav", "mime_type": "audio/wav"})


@case("messages", "v0 audio block, source_type base64, audio/mpeg")
def lc_audio_v0_mpeg() -> list[Any]:
    return _ask(
        {"type": "audio", "source_type": "base64", "data": WAV_B64, "mime_type": "audio/mpeg"}
    )


@case("messages", "Chat Completions file block with a filename")
def lc_file_openai() -> list[Any]:
    file = {"filename": "report.pdf", "file_data": f"data:application/pdf;base64,{PDF_B64}"}
    return _ask({"type": "text", "text": "Summarize"}, {"type": "file", "file": file})


@case("messages", "Chat Completions file block without a filename")
def lc_file_openai_no_filename() -> list[Any]:
    return _ask({"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF_B64}"}})


@case("messages", "v1 file block with base64 and a filename")
def lc_file_v1_base64() -> list[Any]:
    block = {"type": "file", "base64": PDF_B64, "mime_type": "application/pdf"}
    return _ask({**block, "filename": "a.pdf"})


@case("messages", "v1 file block as create_file_block writes it, its filename in extras")
def lc_file_v1_extras_filename() -> list[Any]:
    # an id given: without one, the factory makes a new one each time it is called
    pdf = {"base64": PDF_B64, "mime_type": "application/pdf"}
    return _ask(create_file_block(**pdf, filename="a.pdf", id="lc_f1"))


@case("messages", "v0 file block, source_type base64, its filename in metadata")
def lc_file_v0_metadata_filename() -> list[Any]:
    block = {"type": "file", "source_type": "base64", "data": PDF_B64}
    return _ask({**block, "mime_type": "application/pdf", "metadata": {"filename": "b.pdf"}})


@case("messages", "v1 file block by provider file id")
def lc_file_v1_file_id() -> list[Any]:
    return _ask({"type": "file", "file_id": "file-abc123"})


@case("messages", "v0 file block, source_type id")
def lc_file_v0_id() -> list[Any]:
    return _ask({"type": "file", "source_type": "id", "id": "file-abc123"})


@case("messages", "v1 file block by URL")
def lc_file_v1_url() -> list[Any]:
    return _ask({"type": "file", "url": "https://ex.org/a.pdf", "mime_type": "application/pdf"})


@case("messages", "v1 text-plain block")
def lc_text_plain_block() -> list[Any]:
    return _ask({"type": "text-plain", "text": "notes", "mime_type": "text/plain"})


@case("messages", "v1 video block")
def lc_video_block() -> list[Any]:
    return _ask({"type": "video", "url": "https://ex.org/clip.mp4"})


@case("messages", "Anthropic thinking block with a signature, then text")
def lc_thinking_block() -> list[Any]:
    return _reply(
        {"type": "thinking", "thinking": "The user wants a number.", "signature": "sig=="},
        {"type": "text", "text": "42"},
    )


@case("messages", "v1 reasoning block, then text")
def lc_reasoning_v1() -> list[Any]:
    return _reply({"type": "reasoning", "reasoning": "Add them."}, {"type": "text", "text": "3"})


@case("messages", "Responses reasoning block with a summary")
def lc_reasoning_summary() -> list[Any]:
    summary = [{"type": "summary_text", "text": "Compared both."}]
    return _reply({"type": "reasoning", "id": "rs_1", "summary": summary}, "Oslo is colder.")


@case("messages", "Anthropic redacted_thinking block")
def lc_redacted_thinking() -> list[Any]:
    return _reply({"type": "redacted_thinking", "data": "EuYBCkQ="}, {"type": "text", "text": "ok"})


@case("messages", "v1 refusal block")
def lc_refusal_block() -> list[Any]:
    return _reply({"type": "refusal", "refusal": "I won't do that."})


@case("messages", "v1 refusal block with no text")
def lc_refusal_block_empty() -> list[Any]:
    return _reply({"type": "refusal", "refusal": ""}, {"type": "text", "text": "No."})


@case("messages", "v1 text block with a citation annotation")
def lc_text_citation() -> list[Any]:
    citation = {
        "type": "citation",
        "url": "https://ex.org/paper",
        "title": "Paper",
        "start_index": 0,
        "end_index": 5,
        "cited_text": "Water boils at 100C",
    }
    return _reply({"type": "text", "text": "Water boils.", "annotations": [citation]})


@case("messages", "Responses text block with a url_citation annotation")
def lc_text_url_citation() -> list[Any]:
    annotation = {
        "type": "url_citation",
        "url": "https://ex.org/b",
        "title": "B",
        "start_index": 3,
        "end_index": 9,
    }
    return _reply({"type": "text", "text": "See the source.", "annotations": [annotation]})


@case("messages", "v1 server tool call, its result and cited text")
def lc_server_tool_call() -> list[Any]:
    return _reply(
        {"type": "server_tool_call", "id": "srv_1", "name": "web_search", "args": {"q": "x"}},
        {"type": "server_tool_result", "tool_call_id": "srv_1", "status": "success"},
        {"type": "text", "text": "Found it."},
    )


@case("messages", "Responses function_call block with empty tool_calls")
def lc_responses_function_call() -> list[Any]:
    call = {
        "type": "function_call",
        "name": "multiply",
        "arguments": '{"x":5,"y":4}',
        "call_id": "call_m",
        "id": "fc_1",
        "status": "completed",
    }
    return [
        HumanMessage("5*4?"),
        AIMessage([{"type": "reasoning", "id": "rs_2"}, call]),
        ToolMessage("20", tool_call_id="call_m"),
    ]


@case("messages", "tool_use blocks mirrored in tool_calls")
def lc_tool_use_and_tool_calls() -> list[Any]:
    call = {"name": "calc", "args": {"a": "b"}, "id": "toolu_1", "type": "tool_call"}
    return [
        HumanMessage("compute"),
        AIMessage(
            [
                {"type": "text", "text": "Computing."},
                {"type": "tool_use", "id": "toolu_1", "name": "calc", "input": {"a": "b"}},
            ],
            tool_calls=[call],
        ),
        ToolMessage("done", tool_call_id="toolu_1"),
    ]


@case("messages", "Bedrock json block")
def lc_json_block() -> list[Any]:
    return _ask({"type": "json", "json": {"key": "value"}})


@case("messages", "Bedrock guard_content block")
def lc_guard_content() -> list[Any]:
    return _ask({"type": "guard_content", "guard_content": {"text": "Protected content"}})


@case("messages", "a block type nobody defines")
def lc_unknown_block() -> list[Any]:
    return _ask({"type": "text", "text": "hi"}, {"type": "widget", "foo": "bar"})


@case("messages", "a text block with Anthropic cache_control")
def lc_cache_control() -> list[Any]:
    return _ask({"type": "text", "text": "Long context", "cache_control": {"type": "ephemeral"}})


@case("messages", "bare strings mixed with blocks")
def lc_strings_in_list() -> list[Any]:
    return _ask(
        "plain",
        {"type": "text", "text": "block"},
        {"type": "image_url", "image_url": {"url": _URL}},
    )


@case("messages", "v1 output: tool_call blocks in content beside tool_calls")
def lc_v1_tool_call_blocks() -> list[Any]:
    call = {"type": "tool_call", "id": "call_v1", "name": "lookup", "args": {"k": 1}}
    return [
        HumanMessage("look up k"),
        AIMessage(
            [{"type": "text", "text": "Looking."}, call],
            tool_calls=[{**call, "type": "tool_call"}],
            response_metadata={"output_version": "v1"},
        ),
        ToolMessage("v", tool_call_id="call_v1"),
    ]


@case("messages", "v1 output: an invalid_tool_call block beside invalid_tool_calls")
def lc_v1_invalid_call_block() -> list[Any]:
    invalid = {"name": "lookup", "args": "{k:", "id": "call_v1bad", "error": "bad JSON"}
    return [
        HumanMessage("look up k"),
        AIMessage([{"type": "invalid_tool_call", **invalid}], invalid_tool_calls=[invalid]),
        HumanMessage("hm?"),
    ]


@case("messages", "v1 text block with a streaming index and an id")
def lc_text_block_index_id() -> list[Any]:
    return _reply({"type": "text", "text": "Hi", "index": 0, "id": "lc_txt_1"})


@case("messages", "v1 non_standard block")
def lc_non_standard_block() -> list[Any]:
    return _reply({"type": "non_standard", "value": {"kind": "vendor", "x": 1}}, "and text")


@case("messages", "v1 text block with a non_standard_annotation")
def lc_non_standard_annotation() -> list[Any]:
    annotation = {"type": "non_standard_annotation", "value": {"page": 3}}
    return _reply({"type": "text", "text": "p. 3", "annotations": [annotation]})
