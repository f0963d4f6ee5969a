"""Error messages name what they found with the right article: ``an image part``, not
``a image part`` (``tracebridge.errors.with_article``)."""

from __future__ import annotations

import pytest

from tracebridge import TraceError
from tracebridge.adapters import openai_chat
from tracebridge.errors import with_article


@pytest.mark.parametrize(
    ("noun", "expected"),
    [
        ("image", "an image"),
        ("assistant", "an assistant"),
        ("input_audio", "an input_audio"),
        ("output_text", "an output_text"),
        ("int", "an int"),
        ("unknown", "an unknown"),
        ("user", "a user"),
        ("url", "a url"),
        ("unique", "a unique"),
        ("tool", "a tool"),
        ("HumanMessage", "a HumanMessage"),
        ("UserMessage", "a UserMessage"),
        ("AIMessage", "an AIMessage"),
        ("HTTP", "an HTTP"),
        ("JSON", "a JSON"),
        (8, "an 8"),
        (16, "a 16"),
        (18, "an 18"),
    ],
)
def test_the_article_follows_the_sound_of_the_word(noun: object, expected: str) -> None:
    assert with_article(noun) == expected


def test_a_reader_names_an_unknown_value_type_with_an() -> None:
    with pytest.raises(TraceError) as caught:
        openai_chat.to_messages([{"role": "user", "content": [{"type": "image_url"}]}])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 0, "messages[0].content[0].image_url",
    )
    assert caught.value.detail == "an image_url part needs 'image_url'"

