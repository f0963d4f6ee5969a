"""A NaN or an infinity set on a field of an OpenAI SDK message after it was made: the SDK's
JSON dump writes null in its place, so the reader took the message as if the field were
empty (content "", a citation without its title). It is refused where it is, as the SDK
refuses it (``malformed_event``), like any other value of the wrong type set there."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from openai.types.chat import ChatCompletionMessage

from tracebridge import TraceError
from tracebridge.adapters import openai_chat

USER = {"role": "user", "content": "hi"}
CITED = {
    "role": "assistant",
    "content": "x",
    "annotations": [{"type": "url_citation", "url_citation": {
        "url": "https://example.com", "title": "t", "start_index": 0, "end_index": 1}}],
}
SPOKEN = {"role": "assistant", "content": None,
          "audio": {"id": "a1", "data": "", "expires_at": 5, "transcript": "t"}}


def _content(message: Any) -> None:
    message.content = float("nan")


def _content_list(message: Any) -> None:
    message.content = [float("inf")]


def _title(message: Any) -> None:
    message.annotations[0].url_citation.title = float("inf")


def _start(message: Any) -> None:
    message.annotations[0].url_citation.start_index = float("nan")


def _expires(message: Any) -> None:
    message.audio.expires_at = float("-inf")


CASES: list[tuple[dict[str, Any], Callable[[Any], None], str]] = [
    ({"role": "assistant", "content": "x"}, _content, "messages[1].content"),
    ({"role": "assistant", "content": "x"}, _content_list, "messages[1].content"),
    (CITED, _title, "messages[1].annotations[0].url_citation.title"),
    (CITED, _start, "messages[1].annotations[0].url_citation.start_index"),
    (SPOKEN, _expires, "messages[1].audio.expires_at"),
]


@pytest.mark.parametrize(("data", "change", "path"), CASES,
                         ids=["content", "content-list", "title", "start-index", "expires-at"])
def test_a_non_finite_number_set_on_an_sdk_field_is_refused_where_it_is(
    data: dict[str, Any], change: Callable[[Any], None], path: str
) -> None:
    message = ChatCompletionMessage.model_validate(data)
    change(message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns of the unexpected value it dumps
        with pytest.raises(TraceError) as caught:
            openai_chat.to_messages([USER, message])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 1, path)


@pytest.mark.parametrize("data", [CITED, SPOKEN], ids=["cited", "spoken"])
def test_the_same_messages_unchanged_are_read(data: dict[str, Any]) -> None:
    message = ChatCompletionMessage.model_validate(data)
    assert openai_chat.to_messages([USER, message]) == openai_chat.to_messages([USER, data])
