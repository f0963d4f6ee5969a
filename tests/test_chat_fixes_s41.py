"""openai_chat: the role-less deltas of a stream dumped with ``exclude_unset=True`` are
``streaming_chunk``; openai_responses: an openai SDK object anywhere in a dict item is read
as its dump, as one in an item or part position is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from openai.types.responses.response_function_web_search import ActionSearch
from openai.types.responses.response_output_text import Logprob, LogprobTopLogprob

from tracebridge import TraceError
from tracebridge.adapters import openai_chat, openai_responses, swarm
from tracebridge.registry import detect_format

USER = {"role": "user", "content": "x"}

# The deltas of one stream as the API sends them: the first names the role and the first
# call; the second call's first delta has its id and type but no role; the last is empty.
SENT = [
    {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "tool_calls": [
            {"index": 0, "id": "c1", "type": "function",
             "function": {"name": "f", "arguments": ""}}
        ],
    },
    {"tool_calls": [{"index": 0, "function": {"arguments": '{"a"'}}]},
    {"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]},
    {"tool_calls": [{"index": 1, "id": "c2", "type": "function",
                     "function": {"name": "g", "arguments": ""}}]},
    {"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]},
    {},
]


def streamed() -> tuple[list[dict[str, Any]], Any]:
    """The ``ChoiceDelta`` dumps (``exclude_unset=True``) of the stream ``SENT``, fed through
    the SDK's own ``ChatCompletionStreamState``, and the message it aggregates."""
    state = ChatCompletionStreamState()
    dumps = []
    for k, delta in enumerate(SENT):
        chunk = ChatCompletionChunk.model_validate(
            {
                "id": "x",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "delta": delta,
                        "finish_reason": "tool_calls" if k == len(SENT) - 1 else None,
                    }
                ],
            }
        )
        state.handle_chunk(chunk)
        dumps.append(chunk.choices[0].delta.model_dump(exclude_unset=True))
    return dumps, state.get_final_completion().choices[0].message


def refused(adapter: Any, trace: list[Any]) -> TraceError:
    with pytest.raises(TraceError) as caught:
        adapter.to_messages(trace, allow_pending=True)
    return caught.value


LATER_CALL = (
    "a streaming tool-call delta (has 'index', in a message without 'role'): aggregate first"
)
EMPTY = "an empty streaming delta (a stream's last, among other deltas): aggregate first"
CONTINUED = "a streaming tool-call delta (has 'index', lacks 'id'/'type'): aggregate first"


def test_the_sdk_dumps_of_the_stream_are_the_shapes_sent() -> None:
    dumps, _ = streamed()
    assert dumps[3] == {
        "tool_calls": [
            {"index": 1, "id": "c2", "function": {"arguments": "", "name": "g"},
             "type": "function"}
        ]
    }
    assert dumps[5] == {}


@pytest.mark.parametrize("adapter", [openai_chat, swarm])
def test_a_later_calls_first_delta_is_a_streaming_chunk(adapter: Any) -> None:
    dumps, _ = streamed()
    error = refused(adapter, [USER, dumps[3]])
    assert (error.code, error.index, error.path, error.detail) == (
        "streaming_chunk", 1, "messages[1].tool_calls[0]", LATER_CALL
    )


@pytest.mark.parametrize("adapter", [openai_chat, swarm])
def test_the_last_empty_delta_among_deltas_is_a_streaming_chunk(adapter: Any) -> None:
    dumps, _ = streamed()
    error = refused(adapter, [USER, dumps[5], dumps[4]])
    assert (error.code, error.index, error.path, error.detail) == (
        "streaming_chunk", 1, "messages[1]", EMPTY
    )


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_every_role_less_delta_of_the_stream_is_a_streaming_chunk(k: int) -> None:
    dumps, _ = streamed()
    others = [dump for j, dump in enumerate(dumps) if j not in (0, k)]
    error = refused(openai_chat, [USER, dumps[k], *others])
    expected = {1: CONTINUED, 2: CONTINUED, 3: LATER_CALL, 4: CONTINUED, 5: EMPTY}[k]
    assert (error.code, error.index, error.detail) == ("streaming_chunk", 1, expected)


@pytest.mark.parametrize(
    "other",
    [
        {"role": None, "content": "a"},  # a full dump of a later delta
        {"delta": {"content": "a"}},
        {"object": "chat.completion.chunk", "choices": []},
    ],
)
def test_an_empty_dict_among_other_stream_pieces_is_a_streaming_chunk(
    other: dict[str, Any],
) -> None:
    error = refused(openai_chat, [USER, {}, other])
    assert (error.code, error.index, error.path, error.detail) == (
        "streaming_chunk", 1, "messages[1]", EMPTY
    )


def test_an_empty_dict_among_chunk_objects_is_a_streaming_chunk() -> None:
    chunk = ChatCompletionChunk.model_validate(
        {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
         "choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": None}]}
    )
    error = refused(openai_chat, [USER, {}, chunk.choices[0].delta])
    assert (error.code, error.index, error.path, error.detail) == (
        "streaming_chunk", 1, "messages[1]", EMPTY
    )


def needs_role(keys: list[str]) -> str:
    return (
        "a message needs 'role' (one of system, developer, user, assistant, tool, function); "
        f"found keys {keys}"
    )


@pytest.mark.parametrize(
    ("trace", "keys"),
    [
        ([USER, {}], []),
        ([USER, {}, {"role": "assistant", "content": "a"}], []),
        ([USER, {}, {"role": "assistant", "content": "a", "tool_calls": [
            {"index": 0, "id": "c1", "type": "function",
             "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool",
            "tool_call_id": "c1", "content": "r"}], []),
        ([USER, {"content": "a"}], ["content"]),
        ([USER, {"tool_calls": [{"id": "c1", "type": "function",
                                 "function": {"name": "f", "arguments": "{}"}}]}],
         ["tool_calls"]),
    ],
)
def test_a_role_less_message_that_is_no_delta_stays_malformed(
    trace: list[Any], keys: list[str]
) -> None:
    error = refused(openai_chat, trace)
    assert (error.code, error.index, error.path, error.detail) == (
        "malformed_event", 1, "messages[1]", needs_role(keys)
    )


def test_the_aggregated_message_with_indexed_calls_still_reads() -> None:
    _, message = streamed()
    typed = openai_chat.to_messages([USER, message], allow_pending=True)
    assert [(call.id, call.name, call.args) for call in typed[1].tool_calls] == [
        ("c1", "f", {"a": 1}), ("c2", "g", {})
    ]


# --- openai_responses: SDK objects deeper than an item or a part ---------------------------

RESPONSE_USER = {"type": "message", "role": "user", "content": "x"}


def with_objects() -> tuple[list[Any], list[dict[str, Any]]]:
    """A history of dict items holding SDK objects below their parts (a web search call's
    ``action``, a text part's ``Logprob`` objects and, in a dict logprob, a
    ``LogprobTopLogprob``), and the same history as the dicts the SDK sends."""
    action = ActionSearch.model_validate({"type": "search", "query": "q"})
    top = LogprobTopLogprob.model_validate({"token": "b", "bytes": [98], "logprob": -2.0})
    logprob = Logprob.model_validate(
        {"token": "a", "bytes": [97], "logprob": -0.5, "top_logprobs": []}
    )
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    text = {"type": "output_text", "text": "ab", "annotations": []}
    reply = {"type": "message", "role": "assistant", "id": "m1", "status": "completed"}
    held = [
        RESPONSE_USER,
        {**search, "action": action},
        {**reply, "content": [{**text, "logprobs": [
            logprob, {"token": "b", "bytes": [98], "logprob": -0.1, "top_logprobs": [top]}
        ]}]},
    ]
    sent = [
        RESPONSE_USER,
        {**search, "action": {"type": "search", "query": "q"}},
        {**reply, "content": [{**text, "logprobs": [
            {"token": "a", "bytes": [97], "logprob": -0.5, "top_logprobs": []},
            {"token": "b", "bytes": [98], "logprob": -0.1,
             "top_logprobs": [{"token": "b", "bytes": [98], "logprob": -2.0}]},
        ]}]},
    ]
    return held, sent


def test_sdk_objects_deep_in_dict_items_read_as_their_dumps() -> None:
    held, sent = with_objects()
    assert openai_responses.to_messages(held) == openai_responses.to_messages(sent)


def test_sdk_objects_deep_in_dict_items_are_written_as_plain_dicts() -> None:
    held, sent = with_objects()
    written = openai_responses.from_messages(openai_responses.to_messages(held))
    assert written == sent
    assert json.loads(json.dumps(written)) == written
    assert openai_responses.to_messages(written) == openai_responses.to_messages(held)


def test_sdk_objects_deep_in_dict_items_are_detected() -> None:
    held, _ = with_objects()
    assert detect_format(held) == "openai_responses"


def test_a_deep_sdk_object_changed_after_it_was_made_is_refused_where_it_is() -> None:
    held, _ = with_objects()
    held[1]["action"].type = "other"
    with pytest.raises(TraceError) as caught:
        openai_responses.to_messages(held)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "malformed_event", 1, "items[1].action.type"
    )
    assert error.detail == (
        "this ActionSearch holds what the OpenAI SDK does not make (was a field changed "
        "after it was made?): Input should be 'search'"
    )


def test_a_value_inside_itself_in_a_dict_item_is_refused_at_once() -> None:
    loop: list[Any] = []
    loop.extend((loop, loop))  # walked down every branch, it would never end
    item = {"type": "web_search_call", "id": "ws_1", "status": "completed",
            "action": {"type": "search", "query": loop}}
    with pytest.raises(TraceError) as caught:
        openai_responses.to_messages([RESPONSE_USER, item])
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "unserializable_value", 1, "items[1].action"
    )


def test_the_dumps_of_galteas_conversation_messages_are_galtea_turns_only() -> None:
    import galtea as sdk

    from tracebridge import convert
    from tracebridge.adapters import galtea

    turns = [
        sdk.ConversationMessage(
            role="user", content="Summarise this.",
            input_files=[sdk.AttachedFile(uri="gs://f/deed.pdf", filename="deed.pdf")],
        ).model_dump(mode="json"),
        sdk.ConversationMessage(role="assistant", content="A deed.").model_dump(mode="json"),
    ]
    camel = [{"role": "user", "content": "q", "retrievalContext": "ctx"}]
    assert (openai_chat.detect(turns), galtea.detect(turns)) == (False, True)
    assert (openai_chat.detect(camel), galtea.detect(camel)) == (False, True)
    # auto-detection reads the files as files (openai_chat kept them as unknown fields)
    assert convert(turns, target="galtea") == galtea.from_messages(galtea.to_messages(turns))


@pytest.mark.parametrize("first", [
    {"role": "system", "content": "Answer from the documents."},
    {"role": "developer", "content": "Answer from the documents."},
    {"role": "user", "content": [{"type": "text", "text": "q"}]},
], ids=["system", "developer", "parts"])
def test_a_chat_history_keeping_a_galtea_key_is_still_a_chat_history(
        first: dict[str, Any]) -> None:
    from tracebridge.adapters import galtea
    from tracebridge.registry import detect_format

    history = [first, {"role": "user", "content": "q"},
               {"role": "assistant", "content": "a", "retrieval_context": ["doc"]}]
    with_tools = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
        {"role": "assistant", "content": "a", "retrieval_context": ["doc"]},
    ]
    for trace in (history, with_tools):
        assert (openai_chat.detect(trace), galtea.detect(trace)) == (True, False)
        assert detect_format(trace) == "openai_chat"
        assert openai_chat.to_messages(trace)[-1].metadata == {
            "openai_chat": {"fields": {"retrieval_context": ["doc"]}}}


# --- openai_responses: only a kept value that is not plain JSON is looked through ---------


def sdk_looks(monkeypatch: pytest.MonkeyPatch, items: list[Any]) -> int:
    """How many values the reader asks whether they are openai SDK objects, reading
    ``items`` (an item itself is asked once, elsewhere: not counted)."""
    from tracebridge.adapters.openai_responses import _items

    asked = 0
    is_sdk_model = _items.is_sdk_model

    def counted(value: Any) -> bool:
        nonlocal asked
        asked += 1
        return is_sdk_model(value)

    with monkeypatch.context() as patch:
        patch.setattr(_items, "is_sdk_model", counted)
        openai_responses.to_messages(items)
    return asked


def plain_history(n: int) -> list[Any]:
    """A reply with a text part of ``n`` logprobs and a web search of ``n`` sources: no SDK
    object anywhere."""
    logprob = {"token": "a", "bytes": [97], "logprob": -0.5,
               "top_logprobs": [{"token": "b", "bytes": [98], "logprob": -2.0}]}
    source = {"type": "url", "url": "https://example.com"}
    return [
        RESPONSE_USER,
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "q", "sources": [source] * n}},
        {"type": "message", "role": "assistant", "id": "m1", "status": "completed",
         "content": [{"type": "output_text", "text": "ab", "annotations": [],
                      "logprobs": [logprob] * n}]},
    ]


def test_values_of_plain_json_are_not_looked_through_for_sdk_objects(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A value kept as plain JSON is checked and copied in one walk: the reader looks for SDK
    objects among an item's parts and annotations alone, however much its parts and hosted
    calls hold (a part's 50 logprobs cost no more looks than none)."""
    assert sdk_looks(monkeypatch, plain_history(50)) == sdk_looks(monkeypatch, plain_history(0))
    # the user's content; the reply's content list, its one part and the part's annotations
    assert sdk_looks(monkeypatch, plain_history(0)) == 4


def test_an_sdk_object_beside_a_value_nested_too_deep_is_read_the_deep_value_refused() -> None:
    """Each value of a kept dict is looked through alone: the Logprob beside the deep value
    is read, and the error names the deep value (not the Logprob, as not JSON)."""
    held, _ = with_objects()
    deep: list[Any] = [1]
    for _ in range(200):
        deep = [deep]
    held[2]["content"][0]["nested"] = deep
    with pytest.raises(TraceError) as caught:
        openai_responses.to_messages(held)
    error = caught.value
    assert (error.code, error.index, error.path) == (
        "unserializable_value", 2, "items[2].content[0].nested"
    )
    assert error.detail == (
        "a value nested more than 128 levels deep, or one that holds itself (a dict or list "
        "inside its own contents): JSON readers stop before its end"
    )


def test_an_empty_responses_list_is_refused_without_a_path() -> None:
    with pytest.raises(TraceError) as caught:
        openai_responses.to_messages([])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "empty_conversation", None, None)
