"""A class may set ``__module__`` to anything, None included. Asking whether an object is a
framework's (``detect``, ``to_messages``) raised a raw AttributeError
(``'NoneType' object has no attribute 'startswith'``) for such an object; it is no
framework's object: ``detect`` is False and the readers refuse it where it is."""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import (
    galtea,
    langchain,
    llama_index,
    openai_chat,
    openai_responses,
    swarm,
)
from tracebridge.errors import FormatError
from tracebridge.registry import detect_format


class Odd:
    __module__ = None  # type: ignore[assignment]
    type = "human"


@pytest.mark.parametrize("adapter", [openai_chat, swarm, langchain, llama_index, galtea,
                                     openai_responses],
                         ids=lambda a: a.NAME)
def test_an_object_of_a_class_without_a_module_is_not_detected(adapter: Any) -> None:
    assert adapter.detect([Odd()]) is False


@pytest.mark.parametrize(
    ("adapter", "path"),
    [(openai_chat, "messages[0]"), (swarm, "messages[0]"), (langchain, "messages[0]"),
     (llama_index, "messages[0]")],
    ids=lambda a: getattr(a, "NAME", a),
)
def test_the_readers_refuse_it_where_it_is(adapter: Any, path: str) -> None:
    with pytest.raises(TraceError) as caught:
        adapter.to_messages([Odd()])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "malformed_event", 0, path)


def test_format_detection_says_no_format_matches() -> None:
    with pytest.raises(FormatError, match="it matches none of"):
        detect_format([Odd()])


def test_llama_index_events_refuse_it_where_it_is() -> None:
    with pytest.raises(TraceError) as caught:
        llama_index.events_to_messages([Odd()])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unknown_role", 0, "events[0]")
