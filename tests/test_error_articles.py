"""Error messages name what they found with the right article: ``an image part``, not
``a image part``; ``a 110``, ``an 11``, ``a one``, ``an hour``, ``an MCP``
(``tracebridge.errors.with_article``)."""

from __future__ import annotations

import pytest

from tracebridge import TraceError
from tracebridge.adapters import openai_chat, openai_responses
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
        ("LLM", "an LLM"),
        ("MCP", "an MCP"),
        ("SDK", "an SDK"),
        ("FAQ", "an FAQ"),
        ("URL", "a URL"),
        ("mcp_call", "an mcp_call"),
        ("str", "a str"),
        ("one", "a one"),
        ("one_of", "a one_of"),
        ("use", "a use"),
        ("euro", "a euro"),
        ("hour", "an hour"),
        ("honest", "an honest"),
        ("unexpected", "an unexpected"),
        ("unimplemented", "an unimplemented"),
        (8, "an 8"),
        (11, "an 11"),
        (16, "a 16"),
        (18, "an 18"),
        (80, "an 80"),
        (800, "an 800"),
        (8000, "an 8000"),
        ("11,000", "an 11,000"),
        (11000, "an 11000"),
        (18000, "an 18000"),
        (1, "a 1"),
        (100, "a 100"),
        (110, "a 110"),
        (180, "a 180"),
        (1800, "a 1800"),
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



def test_a_hosted_call_kind_is_named_with_an() -> None:
    items = [{"role": "user", "content": "draw"},
             {"id": "ig_1", "type": "image_generation_call", "status": "completed",
              "result": "aGk="}]
    read = openai_responses.to_messages(items)
    renamed = [*read[:2], read[2].model_copy(update={"name": "other"})]
    with pytest.raises(TraceError) as caught:
        openai_responses.from_messages(renamed)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 2, "messages[2].name",
    )
    assert caught.value.detail == (
        "the result of an image_generation_call item is named for its call "
        "('image_generation'), not 'other'"
    )
