"""Readers pause the cycle collector while they build a trace, and give it back as it was."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.errors import TraceError
from tracebridge.registry import get_adapter


def conversation(steps: int) -> list[Any]:
    messages: list[Any] = []
    for k in range(steps):
        messages += [
            HumanMessage(content=f"question {k}"),
            AIMessage(content="", tool_calls=[ToolCall(name="f", args={"k": k}, id=f"c{k}")]),
            ToolMessage(content=f"result {k}", tool_call_id=f"c{k}", name="f"),
            AIMessage(content=f"answer {k}"),
        ]
    return messages


def chat(steps: int) -> list[Any]:
    return [
        message
        for k in range(steps)
        for message in (HumanMessage(content=f"q {k}"), AIMessage(content=f"a {k}"))
    ]


READERS: dict[str, tuple[Callable[[Any], Any], Callable[[int], list[Any]], Any]] = {
    "openai_chat": (get_adapter("openai_chat").to_messages, conversation, [{"role": "x"}]),
    "swarm": (get_adapter("swarm").to_messages, conversation, [{"role": "x"}]),
    "langchain": (get_adapter("langchain").to_messages, conversation, [{"type": "x"}]),
    "llama_index": (get_adapter("llama_index").to_messages, conversation, [{"role": "x"}]),
    "galtea": (get_adapter("galtea").to_messages, chat, [{"role": "x", "content": "a"}]),
}
# what each reader refuses its broken trace with: (code, index, path)
REFUSED = {
    "openai_chat": ("unknown_role", 0, "messages[0].role"),
    "swarm": ("unknown_role", 0, "messages[0].role"),
    "langchain": ("unknown_role", 0, "messages[0].type"),
    "llama_index": ("malformed_event", 0, "messages[0].blocks"),
    "galtea": ("unknown_role", 0, "conversation_turns[0].role"),
}


@pytest.fixture
def collections() -> Iterator[list[str]]:
    """The collections that start from now on (a test clears it before what it watches)."""
    started: list[str] = []

    def note(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(f"generation {info['generation']}")

    gc.callbacks.append(note)
    try:
        yield started
    finally:
        gc.callbacks.remove(note)


@pytest.mark.parametrize("name", READERS)
def test_no_collection_runs_while_a_reader_builds_a_trace(
    name: str, collections: list[str]
) -> None:
    read, make, broken = READERS[name]
    trace = get_adapter(name).from_messages(make(1_500))
    assert gc.isenabled()
    gc.collect()  # the count starts at zero: what the test built before starts nothing
    collections.clear()
    typed = read(trace)
    # Thousands of allocations and no collection, the rules' check included: the one that
    # the count built up while paused starts at the first allocation after the reader
    # (len() allocates nothing; the assertion's own objects could start it).
    started = len(collections)
    assert started == 0
    assert gc.isenabled()
    assert len(typed) == len(make(1_500))
    with pytest.raises(TraceError) as caught:
        read(broken)
    assert (caught.value.code, caught.value.index, caught.value.path) == REFUSED[name]
    assert gc.isenabled()
    gc.disable()
    try:
        read(trace)
        assert not gc.isenabled()  # the application's choice stays
    finally:
        gc.enable()


def test_no_collection_runs_while_a_sample_is_validated(collections: list[str]) -> None:
    dumped = [message.model_dump() for message in conversation(1_500)]
    request = {"messages": dumped}
    gc.collect()  # the count starts at zero: what the test built before starts nothing
    collections.clear()
    sample = MultiTurnSample.model_validate(request)
    started = len(collections)  # (as above: len() allocates nothing)
    assert started == 0
    assert gc.isenabled()
    assert len(sample.messages) == 6_000
    with pytest.raises(TraceError) as caught:
        MultiTurnSample.model_validate({"messages": [{"type": "x"}]})
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unknown_role", 0, "messages[0].type")
    assert gc.isenabled()
