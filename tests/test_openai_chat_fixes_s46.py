"""openai_chat and swarm: a text, refusal or legacy function-call stream stored as the
``exclude_unset=True`` dumps of its deltas is ``streaming_chunk`` at its first role-less
delta, as the same stream stored as SDK objects or as tool-call deltas is; a role-less dict
that is no delta of a stream stays ``malformed_event`` (no ``role``)."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionChunk
from scripted_openai import Scripted, scripted_server

from tracebridge import TraceError
from tracebridge.adapters import openai_chat, otel, swarm

USER = {"role": "user", "content": "q"}
ADAPTERS = [openai_chat, swarm]


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` as the API sends it, carrying ``delta``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-x",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


def event_stream(deltas: list[dict[str, Any]], finish: str) -> Scripted:
    """A streamed reply of ``deltas``, then an empty delta with ``finish``, then ``[DONE]``."""
    chunks = [chunk(delta) for delta in deltas] + [chunk({}, finish)]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return Scripted(200, body, content_type="text/event-stream")


TEXT = [{"role": "assistant", "content": ""}, {"content": "Hel"}, {"content": "lo"}]
TEXT_AS_OPENAI_SENDS = [
    {"role": "assistant", "content": "", "refusal": None},
    {"content": "Hel"},
    {"content": "lo"},
]
REFUSAL = [{"role": "assistant", "content": None, "refusal": ""}, {"refusal": "No"}]
FUNCTION_CALL = [
    {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": ""}},
    {"function_call": {"arguments": '{"a": 1}'}},
]
STREAMS = {
    "text": (TEXT, "stop"),
    "text-as-openai-sends": (TEXT_AS_OPENAI_SENDS, "stop"),
    "refusal": (REFUSAL, "stop"),
    "function-call": (FUNCTION_CALL, "function_call"),
}


def streamed_dumps(deltas: list[dict[str, Any]], finish: str) -> list[dict[str, Any]]:
    """The deltas the openai client reads from a local server streaming ``deltas``, each
    stored as ``delta.model_dump(mode="json", exclude_unset=True)``."""
    with scripted_server() as server:
        server.script.append(event_stream(deltas, finish))
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=10)
        stream = client.chat.completions.create(model="gpt-x", messages=[USER], stream=True)
        dumps = []
        for received in stream:
            assert len(dumps) <= len(deltas)  # the server sends one chunk per delta and a last
            dumps.append(received.choices[0].delta.model_dump(mode="json", exclude_unset=True))
    return dumps


def refused(adapter: Any, trace: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        adapter.to_messages(trace, allow_pending=True)
    return caught.value


def delta_detail(keys: list[str]) -> str:
    return (
        f"a streaming delta (no 'role', only a delta's keys {keys}, among other deltas): "
        "aggregate the deltas into one message first"
    )


def needs_role(keys: list[str]) -> str:
    return (
        "a message needs 'role' (one of system, developer, user, assistant, tool, function); "
        f"found keys {keys}"
    )


EMPTY = "an empty streaming delta (a stream's last, among other deltas): aggregate first"


# --- a stream read by the openai client from a local server -------------------------------


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_the_client_stores_the_deltas_as_the_server_sent_them(name: str) -> None:
    deltas, finish = STREAMS[name]
    assert streamed_dumps(deltas, finish) == [*deltas, {}]


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    ("name", "keys"),
    [
        ("text", ["content"]),
        ("text-as-openai-sends", ["content"]),
        ("refusal", ["refusal"]),
        ("function-call", ["function_call"]),
    ],
)
def test_a_streamed_reply_stored_as_delta_dumps_is_a_streaming_chunk(
    adapter: Any, name: str, keys: list[str]
) -> None:
    dumps = streamed_dumps(*STREAMS[name])
    error = refused(adapter, [USER, *dumps])
    assert (error.code, error.index, error.path, error.detail) == (
        "streaming_chunk", 2, "messages[2]", delta_detail(keys)
    )
    assert error.source == adapter.NAME


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_the_same_stream_as_objects_or_dumps_is_a_streaming_chunk_either_way(
    adapter: Any,
) -> None:
    with scripted_server() as server:
        server.script.append(event_stream(TEXT, "stop"))
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=10)
        stream = client.chat.completions.create(model="gpt-x", messages=[USER], stream=True)
        objects = [received.choices[0].delta for received in stream]
    dumps = [delta.model_dump(mode="json", exclude_unset=True) for delta in objects]
    assert refused(adapter, [USER, *objects]).code == "streaming_chunk"
    assert refused(adapter, [USER, *dumps]).code == "streaming_chunk"


# --- the same as plain dicts ----------------------------------------------------------------

FIRST = {"role": "assistant", "content": ""}


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    ("trace", "index", "keys"),
    [
        ([USER, FIRST, {"content": "Hel"}, {"content": "lo"}, {}], 2, ["content"]),
        ([USER, FIRST, {"content": "Hello"}, {}], 2, ["content"]),
        ([USER, FIRST, {"content": "Hel"}, {"content": "lo"}], 2, ["content"]),  # no last {}
        (
            [USER, {"role": "assistant", "content": None, "refusal": ""}, {"refusal": "No"}, {}],
            2,
            ["refusal"],
        ),
        (
            [USER, {"role": "assistant", "reasoning_content": ""}, {"reasoning_content": "Hm"},
             {"content": "A"}, {}],
            2,
            ["reasoning_content"],
        ),
        ([USER, FIRST, {"content": "Hel", "refusal": None}, {}], 2, ["content", "refusal"]),
        (
            [USER, FIRST, {"content": "Hi"}, {"audio": {"transcript": "Hi"}}, {}],
            2,
            ["content"],
        ),
        # a conversation that goes on after the stream
        ([USER, FIRST, {"content": "Hel"}, {}, USER, {"role": "assistant", "content": "a"}],
         2, ["content"]),
        # no first delta, but another element is plainly a piece of a stream
        ([USER, {"content": "Hel"}, {"role": None, "content": "lo"}], 1, ["content"]),
    ],
)
def test_role_less_deltas_of_a_stream_are_streaming_chunks(
    adapter: Any, trace: list[Any], index: int, keys: list[str]
) -> None:
    error = refused(adapter, trace)
    assert (error.code, error.index, error.path, error.detail) == (
        "streaming_chunk", index, f"messages[{index}]", delta_detail(keys)
    )


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_content_delta_beside_a_chunk_object_is_a_streaming_chunk(adapter: Any) -> None:
    later = ChatCompletionChunk.model_validate(chunk({"content": "lo"})).choices[0].delta
    error = refused(adapter, [USER, {"content": "Hel"}, later])
    assert (error.code, error.index, error.path, error.detail) == (
        "streaming_chunk", 1, "messages[1]", delta_detail(["content"])
    )


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_empty_dict_in_a_run_of_deltas_after_the_first_is_a_streaming_chunk(
    adapter: Any,
) -> None:
    error = refused(adapter, [USER, FIRST, {}, {"content": "lo"}])
    assert (error.code, error.index, error.path, error.detail) == (
        "streaming_chunk", 2, "messages[2]", EMPTY
    )


# --- role-less dicts that are no delta of a stream stay malformed ---------------------------


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize(
    ("trace", "index", "keys"),
    [
        ([{"content": "hi"}], 0, ["content"]),
        ([USER, {"content": "hi"}, {"role": "assistant", "content": "a"}], 1, ["content"]),
        # one role-less dict after an assistant message: a user message whose role was lost
        # looks the same as a stream of one delta stored without its last
        ([USER, FIRST, {"content": "hi"}], 2, ["content"]),
        ([USER, FIRST, {"content": "hi"}, USER], 2, ["content"]),
        ([USER, FIRST, {}], 2, []),
        # several, but no assistant message before them: a conversation without roles
        ([{"content": "q"}, {"content": "a"}], 0, ["content"]),
        ([USER, {"content": "a"}, {"content": "b"}, {}], 1, ["content"]),
        # keys or values no delta has
        ([{"system": "system", "content": "You are a pirate."}, {"content": "a"}], 0,
         ["content", "system"]),
        ([USER, FIRST, {"content": "a", "name": "n"}, {}], 2, ["content", "name"]),
        ([USER, FIRST, {"content": [{"type": "text", "text": "a"}]}, {}], 2, ["content"]),
        ([USER, FIRST, {"content": 3}, {}], 2, ["content"]),
        ([USER, FIRST, {"refusal": ["No"]}, {}], 2, ["refusal"]),
        (
            [USER, FIRST, {"tool_calls": [{"id": "c1", "type": "function",
                                           "function": {"name": "f", "arguments": "{}"}}]},
             {}],
            2,
            ["tool_calls"],
        ),
        ([USER, FIRST, {"function_call": "f"}, {}], 2, ["function_call"]),
        # after a message of another role
        ([USER, {"role": "user", "content": ""}, {"content": "a"}, {}], 2, ["content"]),
    ],
)
def test_a_role_less_dict_that_is_no_delta_of_a_stream_stays_malformed(
    adapter: Any, trace: list[Any], index: int, keys: list[str]
) -> None:
    error = refused(adapter, trace)
    assert (error.code, error.index, error.path, error.detail) == (
        "malformed_event", index, f"messages[{index}]", needs_role(keys)
    )


def test_a_flat_otel_message_without_role_is_read_alone_and_stays_malformed() -> None:
    # otel reads each flat message by itself, with no list around it to show a stream
    prompt = {"0.role": "user", "0.content": "q", "1.role": "assistant", "1.content": "",
              "2.content": "Hel", "3.content": "lo"}
    attributes = [
        {"key": f"gen_ai.prompt.{key}", "value": {"stringValue": text}}
        for key, text in prompt.items()
    ]
    span = {"traceId": f"{1:032x}", "spanId": f"{1:016x}", "name": "span",
            "startTimeUnixNano": "1", "endTimeUnixNano": "1", "attributes": attributes,
            "status": {}}
    document = {"resourceSpans": [{"resource": {}, "scopeSpans": [
        {"scope": {"name": "test"}, "spans": [span]}
    ]}]}
    with pytest.raises(TraceError) as caught:
        otel.to_messages(document)
    error = caught.value
    assert (error.code, error.index, error.path, error.detail) == (
        "malformed_event",
        0,
        "resourceSpans[0].scopeSpans[0].spans[0].attributes['gen_ai.prompt.2']",
        needs_role(["content"]),
    )
