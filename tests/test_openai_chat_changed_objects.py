"""OpenAI SDK message objects whose fields were changed after they were made.

The SDK's pydantic models do not check assignments, so a ``ChatCompletionMessage`` can hold
what the SDK never builds. Reading one gives the conversation or a ``TraceError`` at the
field, never another exception; the dicts beside it read the same with or without the fast
reader.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest
from changed_objects import VALUES, change_one, outcome
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionMessage
from openai.types.chat.parsed_chat_completion import ParsedChatCompletionMessage
from pydantic import BaseModel

from tracebridge import TraceError
from tracebridge.adapters import openai_chat
from tracebridge.adapters.openai_chat import _read


def conversation() -> list[Any]:
    calling = ChatCompletionMessage.model_validate({
        "role": "assistant", "content": None, "refusal": None,
        "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "s", "arguments": '{"q": 1}'}},
            {"id": "c2", "type": "function", "function": {"name": "t", "arguments": "{}"}},
        ],
    })
    cited = ChatCompletionMessage.model_validate({
        "role": "assistant", "content": "see", "refusal": None,
        "annotations": [{"type": "url_citation", "url_citation": {
            "start_index": 0, "end_index": 3, "url": "https://x.test", "title": "X"}}],
    })
    spoken = ChatCompletionMessage.model_validate({
        "role": "assistant", "content": None, "refusal": None,
        "audio": {"id": "a1", "data": "AAAA", "expires_at": 1, "transcript": "hi"},
    })
    refused = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": None, "refusal": "no"})
    parsed = ParsedChatCompletionMessage[None].model_validate(
        {"role": "assistant", "content": "done", "refusal": None, "parsed": None})
    return [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "find q"},
        calling,
        {"role": "tool", "tool_call_id": "c1", "content": "found"},
        {"role": "tool", "tool_call_id": "c2", "content": "none"},
        cited,
        {"role": "user", "content": "say"},
        spoken,
        {"role": "user", "content": "more"},
        refused,
        {"role": "user", "content": "ok"},
        parsed,
    ]


def both(trace: list[Any]) -> Any:
    """What ``to_messages`` gives, once the general reader alone is seen to give the same."""
    fast = outcome(openai_chat.to_messages, trace)
    with mock.patch.object(_read._FastReader, "message", return_value=None):
        assert outcome(openai_chat.to_messages, trace) == fast
    return fast


_CHANGED = "holds what the OpenAI SDK does not make (was a field changed after it was made?)"


@pytest.mark.parametrize(
    ("change", "index", "path", "said"),
    [
        (lambda t: setattr(t[2], "content", object()), 2, "messages[2].content",
         f"this ChatCompletionMessage {_CHANGED}: Input should be a valid string"),
        (lambda t: setattr(t[2], "tool_calls", object()), 2, "messages[2].tool_calls",
         "Input should be a valid list"),
        (lambda t: t[2].tool_calls.__setitem__(0, object()), 2, "messages[2].tool_calls[0]",
         "Input should be a valid dictionary or instance of"),
        (lambda t: setattr(t[2].tool_calls[0].function, "arguments", object()), 2,
         "messages[2].tool_calls[0].function.arguments",
         f"this Function {_CHANGED}: Input should be a valid string"),
        (lambda t: setattr(t[5].annotations[0].url_citation, "url", object()), 5,
         "messages[5].annotations[0].url_citation.url", f"this AnnotationURLCitation {_CHANGED}"),
        (lambda t: setattr(t[7].audio, "data", object()), 7, "messages[7].audio.data",
         f"this ChatCompletionAudio {_CHANGED}"),
        # a role the class does not allow would read as another kind of message
        (lambda t: setattr(t[2], "role", "user"), 2, "messages[2].role",
         f"this ChatCompletionMessage {_CHANGED}: Input should be 'assistant'"),
        (lambda t: setattr(t[5], "role", "tool"), 5, "messages[5].role",
         f"this ChatCompletionMessage {_CHANGED}: Input should be 'assistant'"),
        (lambda t: setattr(t[5], "role", None), 5, "messages[5].role",
         f"this ChatCompletionMessage {_CHANGED}: Input should be 'assistant'"),
        # what the SDK dumps as it is: refused by the reader, as the same dict would be
        (lambda t: setattr(t[2], "content", 5), 2, "messages[2].content",
         "expected a string, None or a list of parts, got int 5"),
        (lambda t: setattr(t[9], "refusal", 5), 9, "messages[9].refusal",
         "expected a string or null, got int 5"),
        (lambda t: setattr(t[2].tool_calls[0], "function", None), 2,
         "messages[2].tool_calls[0].function", "expected 'function' (an object), got NoneType"),
    ],
)
@pytest.mark.filterwarnings("ignore")  # pydantic warns when dumping a changed field
def test_a_changed_message_object_is_refused_where_it_is(
    change: Callable[[list[Any]], None], index: int, path: str, said: str
) -> None:
    trace = conversation()
    change(trace)
    assert both(trace) == ("malformed_event", index, path)
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages(trace)
    assert said in str(caught.value)


@pytest.mark.filterwarnings("ignore")
def test_a_value_the_sdk_takes_but_cannot_write_as_json_is_refused_where_it_is() -> None:
    """The SDK keeps unknown fields of any value; one that is not JSON is refused there."""
    trace = conversation()
    trace[2].seen = object()
    assert both(trace) == ("unserializable_value", 2, "messages[2].seen")
    trace = conversation()
    trace[11].parsed = object()  # the parsed value of a ParsedChatCompletionMessage[None]
    assert both(trace) == ("malformed_event", 11, "messages[11].parsed")
    with pytest.raises(TraceError, match="Input should be None"):
        openai_chat.to_messages(trace)


def test_unchanged_objects_read() -> None:
    """A ``ParsedChatCompletionMessage[T]`` (what ``parse()`` returns) is a message too."""
    read = both(conversation())
    assert len(read) == 12
    assert read[11].metadata == {"openai_chat": {"fields": {"refusal": None, "parsed": None}}}
    assert openai_chat.detect(conversation()[11:])


@settings(max_examples=200)
@given(st.data(), VALUES, st.booleans())
def test_any_changed_message_object_reads_or_is_refused(
    data: st.DataObject, value: Any, remove: bool
) -> None:
    trace = conversation()
    change_one(data, trace, value, remove)
    both(trace)  # any exception but a TraceError fails here


# --- fields the SDK does not declare -----------------------------------------------------

ASK = {"role": "user", "content": "hi"}


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), (1, 2), {1, 2}, b"ab", {1: "a"}],
    ids=["nan", "inf", "tuple", "set", "bytes", "int-key"],
)
def test_a_vendor_field_json_cannot_hold_is_unserializable(value: Any) -> None:
    # the SDK keeps a field it does not declare as it is (a NaN json.loads read from a
    # vendor's response): a JSON dump wrote it as null, a list, text
    message = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": "x", "vendor_field": value})
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages([ASK, message])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unserializable_value", 1, "messages[1].vendor_field")


def test_a_vendor_field_of_a_call_is_checked_where_it_is() -> None:
    message = ChatCompletionMessage.model_validate({
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "score": float("nan"),
                        "function": {"name": "f", "arguments": "{}"}}]})
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages([ASK, message])
    assert (caught.value.code, caught.value.path) == (
        "unserializable_value", "messages[1].tool_calls[0].score")


def test_a_vendor_field_json_holds_is_kept_and_a_parsed_model_is_written_as_itself() -> None:
    class Meeting(BaseModel):
        at: datetime.date

    message = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": "x", "vendor_field": [1, {"a": None}]})
    assert openai_chat.to_messages([ASK, message])[1].metadata == {
        "openai_chat": {"fields": {"vendor_field": [1, {"a": None}]}}}
    parsed = ParsedChatCompletionMessage[Meeting].model_validate(
        {"role": "assistant", "content": '{"at": "2026-12-02"}', "refusal": None,
         "parsed": Meeting(at=datetime.date(2026, 12, 2))})
    fields = openai_chat.to_messages([ASK, parsed])[1].metadata["openai_chat"]["fields"]
    assert fields["parsed"] == {"at": "2026-12-02"}
