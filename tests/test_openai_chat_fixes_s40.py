"""openai_chat and swarm: SDK objects inside dict messages, Swarm's ``sender`` on SDK message
objects in detection, and the hint of the ``custom_calls`` option."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionMessage
from pydantic import BaseModel, ConfigDict

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError, convert
from tracebridge.adapters import openai_chat, swarm
from tracebridge.registry import detect_format

REPLY = ChatCompletionMessage.model_validate(
    {
        "role": "assistant",
        "content": "a",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
        ],
        "annotations": [
            {
                "type": "url_citation",
                "url_citation": {"url": "u", "title": "t", "start_index": 0, "end_index": 1},
            }
        ],
        "audio": {"id": "au", "data": "AAA=", "expires_at": 5, "transcript": "hi"},
    }
)
USER = {"role": "user", "content": "x"}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "r"}


def sent_by_sdk(history: list[Any]) -> list[dict[str, Any]]:
    """The messages ``chat.completions.create`` sends for ``history``."""
    sent: list[list[dict[str, Any]]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content)["messages"])
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "chat.completion",
                "created": 1,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "ok"},
                    }
                ],
            },
        )

    client = openai.OpenAI(
        api_key="sk-test",
        base_url="http://127.0.0.1:9/v1",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handle)),
    )
    client.chat.completions.create(model="m", messages=history)
    return sent[0]


# --- SDK sub-objects inside a dict message --------------------------------------------------


@pytest.mark.parametrize(
    "keys",
    [("tool_calls",), ("annotations",), ("audio",), ("tool_calls", "annotations", "audio")],
    ids=["tool-calls", "annotations", "audio", "all"],
)
def test_sdk_objects_in_a_dict_message_are_written_as_the_sdk_sends_them(
    keys: tuple[str, ...],
) -> None:
    turn = {"role": "assistant", "content": REPLY.content} | {k: getattr(REPLY, k) for k in keys}
    history = [USER, turn] + ([RESULT] if "tool_calls" in keys else [])
    assert openai_chat.from_messages(openai_chat.to_messages(history)) == sent_by_sdk(history)


def test_an_sdk_function_inside_a_dict_call_is_read_as_the_sdk_sends_it() -> None:
    assert REPLY.tool_calls is not None
    function = REPLY.tool_calls[0].function  # type: ignore[union-attr]
    turn = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }
    history = [USER, turn, RESULT]
    assert openai_chat.from_messages(openai_chat.to_messages(history)) == sent_by_sdk(history)
    assert openai_chat.to_messages(history)[1].tool_calls == [
        ToolCall(
            id="c1", name="f", args={"a": 1}, metadata={"openai_chat": {"arguments": '{"a":1}'}}
        )
    ]


def test_swarm_reads_sdk_tool_calls_inside_a_dict_message() -> None:
    history = [
        USER,
        {"role": "assistant", "content": None, "tool_calls": REPLY.tool_calls, "sender": "A"},
        RESULT | {"tool_name": "f"},
    ]
    assert swarm.from_messages(swarm.to_messages(history)) == [
        USER,
        {
            "role": "assistant",
            "content": None,
            "sender": "A",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a":1}'}}
            ],
        },
        RESULT | {"tool_name": "f"},
    ]


class LookAlike(BaseModel):
    """A model of the application's that is not the SDK's, shaped like a tool call."""

    model_config = ConfigDict(extra="allow")
    id: str
    type: str
    function: dict[str, str]


def test_a_model_not_of_the_sdk_is_still_refused() -> None:
    call = LookAlike(id="c1", type="function", function={"name": "f", "arguments": "{}"})
    history = [USER, {"role": "assistant", "content": None, "tool_calls": [call]}, RESULT]
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages(history)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event",
        1,
        "messages[1].tool_calls[0]",
    )


# --- detection of Swarm's sender on SDK objects ---------------------------------------------


def with_sender(sender: str) -> ChatCompletionMessage:
    message = ChatCompletionMessage.model_validate({"role": "assistant", "content": "hi"})
    message.sender = sender  # type: ignore[attr-defined]  # as Swarm's run loop does
    return message


def test_an_sdk_message_with_sender_is_swarm_not_openai_chat() -> None:
    history = [USER, with_sender("Agent A")]
    assert (openai_chat.detect(history), swarm.detect(history)) == (False, True)
    assert detect_format(history) == "swarm"


def test_an_sdk_message_with_tool_name_is_not_openai_chat() -> None:
    message = ChatCompletionMessage.model_validate({"role": "assistant", "content": "hi"})
    message.tool_name = "f"  # type: ignore[attr-defined]
    assert openai_chat.detect([USER, message]) is False


def test_auto_conversion_to_swarm_keeps_the_agent_name() -> None:
    assert convert([USER, with_sender("Agent A")], source="auto", target="swarm") == [
        USER,
        {"role": "assistant", "content": "hi", "sender": "Agent A"},
    ]


def test_sdk_messages_without_swarm_keys_stay_openai_chat() -> None:
    history = [USER, ChatCompletionMessage.model_validate({"role": "assistant", "content": "hi"})]
    assert (openai_chat.detect(history), swarm.detect(history)) == (True, False)


# --- the custom_calls hint ------------------------------------------------------------------


def test_the_custom_calls_hint_says_what_the_option_does() -> None:
    messages = [
        HumanMessage(content="q"),
        AIMessage(content="", tool_calls=[ToolCall(name="f", kind="custom", args={"input": "x"})]),
        ToolMessage(content="r", name="f"),
    ]
    with pytest.raises(TraceError) as caught:
        openai_chat.from_messages(messages)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "not_representable",
        1,
        "messages[1].tool_calls[0].id",
    )
    assert str(error) == (
        "openai_chat: messages[1].tool_calls[0].id: a custom tool call needs an id (only "
        "function calls have the id-less legacy function_call); pass drop=['custom_calls'] "
        "to write it as a function call with args {'input': text} [not_representable]"
    )
    assert openai_chat.from_messages(messages, drop=["custom_calls"])[1] == {
        "role": "assistant",
        "content": "",
        "function_call": {"name": "f", "arguments": '{"input": "x"}'},
    }
