"""Every writer refuses what is not a conversation with ``malformed_event``.

``from_messages`` takes typed messages (a list, any iterable of them, or a
``MultiTurnSample``). Given something else (None, a number, a string, a dict, a list holding
a dict or None) some writers let ``TypeError`` or ``AttributeError`` escape, since they read
each message's fields before checking what it is. Now each says where: ``messages`` for the
container, ``messages[i]`` for the first item that is not a message.
"""

from __future__ import annotations

from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, TraceError
from tracebridge.registry import get_adapter

WRITERS = ["tracebridge", "openai_chat", "swarm", "galtea", "langchain", "llama_index", "otel",
           "openai_responses", "openai_agents"]


def _refused(name: str, given: Any) -> TraceError:
    with pytest.raises(TraceError) as caught:
        get_adapter(name).from_messages(given)
    return caught.value


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("given", [None, 5, "hi", b"hi", {"type": "human", "content": "hi"}])
def test_what_is_not_a_list_of_messages_is_malformed(name: str, given: Any) -> None:
    error = _refused(name, given)
    assert (error.code, error.index, error.path, error.source) == (
        "malformed_event", None, "messages", name)


@pytest.mark.parametrize("name", WRITERS)
@pytest.mark.parametrize("item", [None, {"type": "ai", "content": "x", "name": "A"}, "hi"])
def test_an_item_that_is_not_a_message_is_malformed_where_it_is(name: str, item: Any) -> None:
    error = _refused(name, [HumanMessage(content="hi"), item])
    assert (error.code, error.index, error.path, error.source) == (
        "malformed_event", 1, "messages[1]", name)


@pytest.mark.parametrize("name", WRITERS)
def test_a_sample_and_an_iterator_are_written_as_their_messages(name: str) -> None:
    writer = get_adapter(name).from_messages
    messages = [HumanMessage(content="hi"), AIMessage(content="hello")]
    written = writer(messages)
    assert writer(MultiTurnSample(messages=messages)) == written
    assert writer(iter(messages)) == written
