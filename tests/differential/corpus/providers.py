"""Message-like shorthand and provider-shaped dicts that ``convert_to_messages`` coerces:
strings, ``(role, content)`` tuples, LangChain-style dicts, the serialized constructor form,
Anthropic Messages dicts, Bedrock Converse and Vertex blocks with raw bytes."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from .case import PNG_B64, PNG_BYTES, case


@case("messages", "plain strings")
def short_strings() -> list[Any]:
    return ["Hi there", "Anyone?"]


@case("messages", "(role, text) tuples of every role alias")
def short_tuples() -> list[Any]:
    return [
        ("system", "Rules"),
        ("human", "one"),
        ("ai", "two"),
        ("user", "three"),
        ("assistant", "four"),
    ]


@case("messages", "a (developer, text) tuple")
def short_tuple_developer() -> list[Any]:
    return [("developer", "Prefer tools."), ("user", "go")]


@case("messages", "a tuple whose content is blocks")
def short_tuple_blocks() -> list[Any]:
    image = {"type": "image_url", "image_url": {"url": "https://ex.org/x.png"}}
    return [("human", [{"type": "text", "text": "look"}, image]), ("ai", "a cat")]


@case("messages", "LangChain-style dicts with tool_calls in LangChain form")
def short_langchain_dicts() -> list[Any]:
    return [
        {"role": "human", "content": "sum 1 2"},
        {
            "role": "ai",
            "content": [{"type": "text", "text": "summing"}],
            "tool_calls": [{"args": {"a": 1, "b": 2}, "name": "add", "id": "call_add"}],
            "name": "mathbot",
        },
        {"role": "tool", "content": "3", "tool_call_id": "call_add"},
    ]


@case("messages", "the serialized constructor form (dumpd)")
def short_constructor_form() -> list[Any]:
    return [
        {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "messages", "HumanMessage"],
            "kwargs": {"content": "hello"},
        },
        {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "messages", "AIMessage"],
            "kwargs": {"content": "hi", "name": "bot"},
        },
    ]


def _tool_use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


@case("messages", "Anthropic history: tool_use, then tool_result in a user message")
def anth_tool_round() -> list[Any]:
    return [
        {"role": "user", "content": "Weather in Nice?"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                _tool_use("toolu_w", "weather", {"city": "Nice"}),
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_w", "content": "21C"}],
        },
        {"role": "assistant", "content": "21C in Nice."},
    ]


@case("messages", "Anthropic tool_result with is_error")
def anth_tool_result_error() -> list[Any]:
    result = {"type": "tool_result", "tool_use_id": "toolu_e", "content": "boom", "is_error": True}
    return [
        {"role": "user", "content": "run"},
        {"role": "assistant", "content": [_tool_use("toolu_e", "run", {})]},
        {"role": "user", "content": [result]},
    ]


@case("messages", "Anthropic tool_result holding text blocks")
def anth_tool_result_blocks() -> list[Any]:
    content = [{"type": "text", "text": "part a"}, {"type": "text", "text": "part b"}]
    return [
        {"role": "user", "content": "read"},
        {"role": "assistant", "content": [_tool_use("toolu_r", "read", {"f": "x"})]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_r", "content": content}],
        },
    ]


@case("messages", "Anthropic tool_result holding an image")
def anth_tool_result_image() -> list[Any]:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
    }
    return [
        {"role": "user", "content": "screenshot"},
        {"role": "assistant", "content": [_tool_use("toolu_i", "screenshot", {})]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_i", "content": [image]}],
        },
    ]


@case("messages", "Anthropic: two tool_results in one user message")
def anth_two_results() -> list[Any]:
    return [
        {"role": "user", "content": "both"},
        {
            "role": "assistant",
            "content": [_tool_use("toolu_1", "a", {}), _tool_use("toolu_2", "b", {})],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "B"},
            ],
        },
        {"role": "assistant", "content": "A and B."},
    ]


@case("messages", "Anthropic: a tool_result followed by the user's text")
def anth_result_then_text() -> list[Any]:
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [_tool_use("toolu_t", "go", {})]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_t", "content": "went"},
                {"type": "text", "text": "And now stop."},
            ],
        },
    ]


@case("messages", "Anthropic image with cache_control on the text")
def anth_image_cache_control() -> list[Any]:
    source = {"type": "base64", "media_type": "image/jpeg", "data": PNG_B64}
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Here:", "cache_control": {"type": "ephemeral"}},
                {"type": "image", "source": source},
            ],
        },
        {"role": "assistant", "content": "A pixel."},
    ]


@case("messages", "Anthropic thinking then text, as a dict")
def anth_thinking() -> list[Any]:
    return [
        {"role": "user", "content": "why?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Because.", "signature": "c2ln"},
                {"type": "text", "text": "Because."},
            ],
        },
    ]


@case("messages", "Anthropic document block (PDF by URL)")
def anth_document() -> list[Any]:
    document = {"type": "document", "source": {"type": "url", "url": "https://ex.org/a.pdf"}}
    return [{"role": "user", "content": [document, {"type": "text", "text": "sum up"}]}]


@case("messages", "Bedrock Converse image with raw bytes, no type key")
def bedrock_image_bytes() -> list[Any]:
    image = {"image": {"format": "png", "source": {"bytes": PNG_BYTES}}}
    return [HumanMessage([{"type": "text", "text": "Here's an image:"}, image]), AIMessage("ok")]


@case("messages", "Bedrock Converse image with raw bytes and type 'image'")
def bedrock_image_bytes_typed() -> list[Any]:
    image = {"type": "image", "image": {"format": "png", "source": {"bytes": PNG_BYTES}}}
    return [HumanMessage([image]), AIMessage("ok")]


@case("messages", "Bedrock Converse document with raw bytes")
def bedrock_document_bytes() -> list[Any]:
    document = {"document": {"format": "pdf", "name": "a", "source": {"bytes": b"%PDF-1.4"}}}
    return [HumanMessage([document]), AIMessage("ok")]


@case("messages", "Vertex media block with raw image bytes")
def vertex_media_image() -> list[Any]:
    media = {"type": "media", "mime_type": "image/png", "data": PNG_BYTES}
    return [HumanMessage([{"type": "text", "text": "see"}, media]), AIMessage("ok")]


@case("messages", "Vertex media block with raw audio bytes")
def vertex_media_audio() -> list[Any]:
    media = {"type": "media", "mime_type": "audio/wav", "data": b"RIFF"}
    return [HumanMessage([media]), AIMessage("ok")]
