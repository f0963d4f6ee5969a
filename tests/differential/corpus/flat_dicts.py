"""LangChain messages stored flat, as ``message.model_dump()`` gives them (and as many apps
keep them), in full and with only the keys an app bothered to keep."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from .case import PNG_B64, case


def _dumped(*messages: Any) -> list[dict[str, Any]]:
    return [message.model_dump() for message in messages]


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


@case("flat", "model_dump of human and AI messages")
def flat_plain() -> list[Any]:
    return _dumped(HumanMessage("hi"), AIMessage("hello"))


@case("flat", "model_dump of a tool round")
def flat_tool_round() -> list[Any]:
    return _dumped(
        HumanMessage("Weather?"),
        AIMessage("", tool_calls=[_call("weather", {"city": "Oslo"}, "call_f1")]),
        ToolMessage("-2C", tool_call_id="call_f1", name="weather"),
        AIMessage("Cold."),
    )


@case("flat", "model_dump of an error result with an artifact")
def flat_tool_error_artifact() -> list[Any]:
    return _dumped(
        HumanMessage("Run"),
        AIMessage("", tool_calls=[_call("run", {}, "call_f2")]),
        ToolMessage("failed", tool_call_id="call_f2", status="error", artifact={"code": 2}),
    )


@case("flat", "model_dump of an invalid call")
def flat_invalid_call() -> list[Any]:
    invalid = {"name": "find", "args": "{oops", "id": "call_f3", "error": "bad JSON"}
    return _dumped(HumanMessage("find"), AIMessage("", invalid_tool_calls=[invalid]))


@case("flat", "model_dump of a refusal")
def flat_refusal() -> list[Any]:
    return _dumped(HumanMessage("Pick a lock"), AIMessage("", additional_kwargs={"refusal": "No."}))


@case("flat", "model_dump of a developer prompt")
def flat_developer() -> list[Any]:
    system = SystemMessage("Be exact.", additional_kwargs={"__openai_role__": "developer"})
    return _dumped(system, HumanMessage("go"))


@case("flat", "model_dump with ids, response_metadata and usage")
def flat_metadata() -> list[Any]:
    usage = {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4}
    return _dumped(
        HumanMessage("hi", id="h-1"),
        AIMessage("yo", id="a-1", response_metadata={"model_name": "m"}, usage_metadata=usage),
    )


@case("flat", "model_dump of an image with detail")
def flat_image_detail() -> list[Any]:
    image = {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG_B64}", "detail": "low"},
    }
    return _dumped(HumanMessage([image]), AIMessage("a pixel"))


@case("flat", "model_dump of an aggregated AIMessageChunk")
def flat_chunk() -> list[Any]:
    chunk = AIMessageChunk("Hel") + AIMessageChunk("lo", chunk_position="last")
    return _dumped(HumanMessage("hi"), chunk)


@case("flat", "model_dump of an Anthropic-shaped history")
def flat_anthropic() -> list[Any]:
    tool_use = {"type": "tool_use", "id": "toolu_f", "name": "calc", "input": {"x": 2}}
    result = {"type": "tool_result", "tool_use_id": "toolu_f", "content": "4"}
    return _dumped(
        HumanMessage("double 2"),
        AIMessage([{"type": "text", "text": "Doubling."}, tool_use]),
        HumanMessage([result]),
        AIMessage("4"),
    )


@case("flat", "only the keys an app kept: type, content and what it needs")
def flat_minimal() -> list[Any]:
    return [
        {"type": "human", "content": "hi"},
        {"type": "ai", "content": "", "tool_calls": [_call("ping", {}, "call_f4")]},
        {"type": "tool", "content": "pong", "tool_call_id": "call_f4"},
        {"type": "ai", "content": "pong!"},
    ]
