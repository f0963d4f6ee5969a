"""openai_chat against objects the real openai SDK builds (client over httpx.MockTransport)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import (
    ChatCompletionMessage,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)

from tracebridge import AIMessage, HumanMessage, RefusalPart, ToolCall, ToolMessage, TraceError
from tracebridge.adapters.openai_chat import detect, from_messages, to_messages

MODEL = "gpt-4o-2024-08-06"


def client_answering(body: dict[str, Any] | str, stream: bool = False) -> openai.OpenAI:
    def handle(request: httpx.Request) -> httpx.Response:
        if stream:
            return httpx.Response(
                200, text=str(body), headers={"content-type": "text/event-stream"}
            )
        return httpx.Response(200, json=body)

    return openai.OpenAI(
        api_key="sk-test",
        base_url="http://127.0.0.1:9/v1",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handle)),
    )


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1767225600,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
    }


def reply(message: dict[str, Any]) -> ChatCompletionMessage:
    client = client_answering(completion(message))
    created = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )
    return created.choices[0].message


CALLING = {
    "role": "assistant",
    "content": None,
    "refusal": None,
    "annotations": [],
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        }
    ],
}


def test_a_chat_completion_message_object_converts_like_the_keys_the_server_sent() -> None:
    user = ChatCompletionUserMessageParam(role="user", content="Weather in Paris?")
    result = ChatCompletionToolMessageParam(role="tool", tool_call_id="call_1", content="18 C")
    message = reply(CALLING)
    assert to_messages([user, message, result]) == [
        HumanMessage(content="Weather in Paris?"),
        AIMessage(
            content="",
            tool_calls=[
                ToolCall(
                    name="get_weather",
                    args={"city": "Paris"},
                    id="call_1",
                    metadata={"openai_chat": {"arguments": '{"city":"Paris"}'}},
                )
            ],
            metadata={
                "openai_chat": {"content": "null", "annotations": [], "fields": {"refusal": None}}
            },
        ),
        ToolMessage(content="18 C", tool_call_id="call_1"),
    ]


def test_object_form_is_lossless_by_the_sdks_own_serialization() -> None:
    message = reply(CALLING)
    trace = [
        {"role": "user", "content": "Weather in Paris?"},
        message,
        {"role": "tool", "tool_call_id": "call_1", "content": "18 C"},
    ]
    back = from_messages(to_messages(trace))
    assert back[1] == message.model_dump(mode="json", exclude_unset=True)
    assert back[1] == json.loads(json.dumps(CALLING))  # exactly what the server sent


def test_full_dump_and_object_give_the_same_typed_message_except_the_unsent_nulls() -> None:
    message = reply({"role": "assistant", "content": "Hi.", "refusal": None, "annotations": []})
    from_object = to_messages([message])[0]
    from_dump = to_messages([message.model_dump(mode="json")])[0]
    assert from_object == AIMessage(
        content="Hi.", metadata={"openai_chat": {"annotations": [], "fields": {"refusal": None}}}
    )
    assert from_dump == AIMessage(
        content="Hi.",
        metadata={
            "openai_chat": {
                "annotations": [],
                "fields": {
                    "refusal": None,
                    "audio": None,
                    "function_call": None,
                    "tool_calls": None,
                }
            }
        },
    )


def test_a_refusal_from_the_sdk_is_the_content() -> None:
    message = reply({"role": "assistant", "content": None, "refusal": "I can't help with that."})
    assert to_messages([message]) == [
        AIMessage(content=[RefusalPart(text="I can't help with that.")])
    ]
    assert from_messages(to_messages([message])) == [
        {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    ]


def test_detect_accepts_sdk_message_objects() -> None:
    assert detect([{"role": "user", "content": "hi"}, reply(CALLING)]) is True


def stream_chunks() -> list[Any]:
    chunks = [
        {
            "id": "chatcmpl-s",
            "object": "chat.completion.chunk",
            "created": 1767225600,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        }
        for delta in ({"role": "assistant", "content": ""}, {"content": "Hello"})
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    client = client_answering(body, stream=True)
    return list(
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
        )
    )


def test_streaming_chunk_objects_are_rejected() -> None:
    chunk = stream_chunks()[1]
    for element in (chunk, chunk.choices[0].delta, chunk.model_dump(mode="json")):
        with pytest.raises(TraceError) as caught:
            to_messages([{"role": "user", "content": "hi"}, element])
        assert (caught.value.code, caught.value.index) == ("streaming_chunk", 1)


def test_a_whole_chat_completion_is_not_a_message() -> None:
    client = client_answering(completion(CALLING))
    created = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )
    with pytest.raises(TraceError) as caught:
        to_messages([created])
    assert (caught.value.code, caught.value.index) == ("malformed_event", 0)
    assert "pass completion.choices[0].message" in str(caught.value)
