"""The LangChain writer refuses kept markers it cannot write, at the marker, and never hangs.

Regressions from a third audit of ``from_messages``:

* ``metadata.langchain.from_human`` on a message that is no tool result read from a
  ``tool_result`` block made the writer loop forever (growing memory);
* a tool result kept as a ``FunctionMessage`` class lost its ``tool_call_id``;
* kept keys on tool results read from ``tool_result`` blocks (and a result marker on the
  human message after them) were written without those keys;
* a kept value of the wrong type was reported at the first place holding metadata, not at
  the value;
* a user subclass of a LangChain class lost a field at its default, and the writer refused
  its own reading of one off its default.
"""

from __future__ import annotations

import signal
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langchain_core.messages import AIMessage as LangChainAI
from langchain_core.messages import HumanMessage as LangChainHuman
from langchain_core.messages import messages_to_dict
from langchain_core.messages.utils import convert_to_messages

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, TraceError
from tracebridge.adapters import langchain
from tracebridge.adapters.langchain import _write

ASK = HumanMessage(content="weather?")


def _kept(metadata: Any) -> dict[str, Any]:
    return {"langchain": metadata}


def _refused(messages: list[Any]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(messages)
    assert caught.value.source == "langchain"
    return caught.value.code, caught.value.index, caught.value.path


class _Hung(Exception):
    pass


@contextmanager
def _within(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging) when the block runs longer than ``seconds``."""

    def stop(signum: int, frame: Any) -> None:
        raise _Hung(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- from_human on a message that is no tool result read from a block ---------------------


@pytest.mark.parametrize(
    "messages",
    [
        [ASK, AIMessage(content="yo", metadata=_kept({"from_human": {}}))],
        [HumanMessage(content="hi", metadata=_kept({"from_human": {"id": "h1"}}))],
        [ASK, AIMessage(tool_calls=[ToolCall(name="f", id="c1")]),
         ToolMessage(content="r", tool_call_id="c1", metadata=_kept({"from_human": {}}))],
        [ASK, AIMessage(tool_calls=[ToolCall(name="f", id="c1")]),
         ToolMessage(content="r", tool_call_id="c1", metadata=_kept({"from_human": "rest"})),
         HumanMessage(content="more", metadata=_kept({"with_tool_results": True}))],
    ],
    ids=["ai", "human", "tool-without-tool_result", "tool-rest"],
)
def test_from_human_on_no_result_read_from_a_block_is_refused_at_once(
    messages: list[Any],
) -> None:
    i = next(i for i, m in enumerate(messages) if "from_human" in m.metadata.get("langchain", {}))
    with _within(5):
        refused = _refused(messages)
    assert refused == (
        "not_representable", i, f"messages[{i}].metadata.langchain.from_human")


def test_the_writer_loop_cannot_stall(monkeypatch: pytest.MonkeyPatch) -> None:
    # a group writer that consumed nothing would have the loop write the same place again
    monkeypatch.setattr(_write, "write_tool_results", lambda messages, i, native: (None, i))
    messages = [ASK, AIMessage(content="yo", metadata=_kept({"from_human": {}}))]
    with _within(5), pytest.raises(RuntimeError, match=r"no progress at messages\[1\]"):
        langchain.from_messages(messages)


# --- a FunctionMessage class on a result with a tool_call_id -------------------------------


@pytest.mark.parametrize("tag", ["function", "FunctionMessageChunk"])
@pytest.mark.parametrize("is_error", [False, True])
def test_a_function_class_on_a_result_with_a_tool_call_id_is_refused(
    tag: str, is_error: bool
) -> None:
    messages = [
        ASK,
        AIMessage(tool_calls=[ToolCall(name="get_weather", id="call_1")]),
        ToolMessage(content="18C", tool_call_id="call_1", name="get_weather",
                    is_error=is_error, metadata=_kept({"class": tag})),
    ]
    assert _refused(messages) == ("not_representable", 2, "messages[2].tool_call_id")


# --- kept keys on tool results read from tool_result blocks --------------------------------


def _anthropic_history(*results: str) -> list[Any]:
    """A real Anthropic-format history as ``convert_to_messages`` keeps it: the results are
    ``tool_result`` blocks of the user message, after which the user's text follows."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return convert_to_messages([
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": call_id, "name": "w", "input": {}}
                for call_id in results]},
            {"role": "user", "content": [
                *({"type": "tool_result", "tool_use_id": call_id, "content": "18C"}
                  for call_id in results),
                {"type": "text", "text": "thanks"}]},
        ])


def _with_kept(messages: list[Any], i: int, added: dict[str, Any]) -> list[Any]:
    kept = messages[i].metadata["langchain"]
    edited = messages[i].model_copy(update={"metadata": _kept({**kept, **added})})
    return [*messages[:i], edited, *messages[i + 1 :]]


def test_the_anthropic_history_reads_as_results_then_the_rest() -> None:
    read = langchain.to_messages(_anthropic_history("toolu_1"))
    assert [type(m).__name__ for m in read] == [
        "HumanMessage", "AIMessage", "ToolMessage", "HumanMessage"]
    assert read[2].metadata == _kept({"tool_result": {"at": 0, "block": {"type": "tool_result"}},
                                      "from_human": "rest"})
    assert read[3].metadata == _kept({"with_tool_results": True})
    assert messages_to_dict(langchain.from_messages(read)) == messages_to_dict(
        _anthropic_history("toolu_1"))


@pytest.mark.parametrize(
    "added",
    [{"artifact": {"rows": 3}}, {"response_metadata": {"x": 1}}, {"foo": 1},
     {"class": "ToolMessageChunk"}],
    ids=["artifact", "response_metadata", "unknown", "class"],
)
def test_a_key_kept_on_a_result_from_a_tool_result_block_is_refused(
    added: dict[str, Any],
) -> None:
    read = langchain.to_messages(_anthropic_history("toolu_1"))
    [key] = added
    assert _refused(_with_kept(read, 2, added)) == (
        "not_representable", 2, f"messages[2].metadata.langchain.{key}")


def test_a_key_kept_on_a_later_result_from_the_same_message_is_refused_there() -> None:
    read = langchain.to_messages(_anthropic_history("toolu_1", "toolu_2"))
    assert [type(m).__name__ for m in read[2:]] == ["ToolMessage", "ToolMessage", "HumanMessage"]
    assert _refused(_with_kept(read, 3, {"artifact": [1]})) == (
        "not_representable", 3, "messages[3].metadata.langchain.artifact")


@pytest.mark.parametrize("key", ["tool_result", "from_human"])
def test_a_result_marker_on_the_human_message_after_the_results_is_refused(key: str) -> None:
    read = langchain.to_messages(_anthropic_history("toolu_1"))
    marker = {"at": 0, "block": {"type": "tool_result"}} if key == "tool_result" else {}
    assert _refused(_with_kept(read, 3, {key: marker})) == (
        "not_representable", 3, f"messages[3].metadata.langchain.{key}")


def test_a_group_marker_among_the_kept_fields_of_the_human_message_is_refused() -> None:
    read = langchain.to_messages(_anthropic_history("toolu_1"))[:3]  # results only
    only = _with_kept(read, 2, {"from_human": {"id": "h1", "with_tool_results": True}})
    assert _refused(only) == (
        "not_representable", 2, "messages[2].metadata.langchain.from_human.with_tool_results")


# --- kept values of the wrong type are reported at the value -------------------------------


def _called(call_kept: dict[str, Any], message_kept: dict[str, Any] | None) -> list[Any]:
    call = ToolCall(name="w", id="c1", metadata=_kept(call_kept))
    return [
        ASK,
        AIMessage(tool_calls=[call], metadata=_kept(message_kept) if message_kept else {}),
        ToolMessage(content="r", tool_call_id="c1"),
    ]


@pytest.mark.parametrize(
    ("messages", "index", "path"),
    [
        (_called({"content_block": "x"}, {"response_metadata": {"m": 1}}), 1,
         "messages[1].tool_calls[0].metadata.langchain.content_block"),
        (_called({"content_block": "x"}, None), 1,
         "messages[1].tool_calls[0].metadata.langchain.content_block"),
        (_called({"invalid_tool_call": "last"}, {"response_metadata": {"m": 1}}), 1,
         "messages[1].tool_calls[0].metadata.langchain.invalid_tool_call"),
        ([HumanMessage(content="q", metadata=_kept({"extra": "function_call"}))], 0,
         "messages[0].metadata.langchain.extra"),
        ([HumanMessage(content="q", metadata=_kept({"class": [None]}))], 0,
         "messages[0].metadata.langchain.class"),
        ([HumanMessage(content="q", metadata=_kept({"class": 5}))], 0,
         "messages[0].metadata.langchain.class"),
    ],
    ids=["call-content_block", "call-content_block-alone", "call-invalid_tool_call",
         "message-extra", "message-class", "message-class-number"],
)
def test_a_kept_value_of_the_wrong_type_is_malformed_at_the_value(
    messages: list[Any], index: int, path: str
) -> None:
    assert _refused(messages) == ("malformed_event", index, path)


# --- a user subclass of a LangChain message class ------------------------------------------


class TaggedHuman(LangChainHuman):
    channel: str = "web"


@pytest.mark.parametrize("channel", [None, "sms"], ids=["default", "set"])
def test_a_subclass_reads_as_langchain_keeps_it_its_own_fields_as_extra_attributes(
    channel: str | None,
) -> None:
    source = TaggedHuman("hi") if channel is None else TaggedHuman("hi", channel=channel)
    trace = [source, LangChainAI("hello")]
    typed = langchain.to_messages(trace)
    assert typed[0] == HumanMessage(
        content="hi", metadata=_kept({"extra": {"channel": channel or "web"}}))
    # the same as its messages_to_dict form (the type tag and the fields) reads
    assert langchain.to_messages(messages_to_dict(trace)) == typed
    written = langchain.from_messages(typed)
    assert type(written[0]) is LangChainHuman
    assert messages_to_dict(written) == messages_to_dict(trace)
