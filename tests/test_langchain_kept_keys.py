"""The LangChain writer writes every kept key of its namespace or refuses it, at the key.

Regressions from a metadata fuzzer over ``from_messages``, which wrote these without them and
without an error:

* a key the reader never keeps on a call's or a part's ``metadata.langchain`` (a refusal
  read from ``additional_kwargs`` too), and a call mark of another value than the reader's;
* ``artifact_dropped`` on a message whose class has no artifact;
* a kept value the reader never keeps because it is the default (``usage_metadata: None``,
  an empty ``response_metadata``, ``additional_kwargs`` or ``extra``, the plain class);
* ``with_tool_results`` of another value than ``true``.

The known keys are held to the reader: every key it keeps, over the golden traces and the
law kit's traces, is one the writer knows at that place.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from langchain_core.messages import AIMessage as LangChainAI
from langchain_core.messages import FunctionMessage
from langchain_core.messages import HumanMessage as LangChainHuman
from langchain_core.messages import ToolMessage as LangChainTool
from langchain_core.messages.utils import convert_to_messages

from tracebridge import Message, OpaquePart, ReasoningPart, RefusalPart, TextPart, TraceError
from tracebridge.adapters import langchain
from tracebridge.adapters.langchain._blocks import STRING_SHAPE
from tracebridge.adapters.langchain._classes import (
    CLASSES,
    PLAIN_CLASS,
    langchain_core_messages,
)
from tracebridge.adapters.langchain._kept_places import (
    CALL_KEYS,
    MESSAGE_KEYS,
    OPAQUE_PART_KEYS,
    PART_KEYS,
    STRING_PART_KEYS,
)
from tracebridge.adapters.langchain._write import _MARKER_KEYS, _REFUSAL_KEYS

from law_kits.langchain import KIT

GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces" / "langchain"
NS = "langchain"


def _refused(messages: list[Message]) -> tuple[str, int | None, str | None]:
    with pytest.raises(TraceError) as caught:
        langchain.from_messages(messages)
    assert caught.value.source == "langchain"
    return caught.value.code, caught.value.index, caught.value.path


def _with(model: Any, added: dict[str, Any]) -> Any:
    kept = model.metadata.get(NS, {})
    return model.model_copy(update={"metadata": {**model.metadata, NS: {**kept, **added}}})


def _call_edited(messages: list[Message], i: int, k: int, added: dict[str, Any]) -> list[Message]:
    calls = list(messages[i].tool_calls)  # type: ignore[union-attr]
    calls[k] = _with(calls[k], added)
    return [*messages[:i], messages[i].model_copy(update={"tool_calls": calls}),
            *messages[i + 1 :]]


def _part_edited(messages: list[Message], i: int, j: int, added: dict[str, Any]) -> list[Message]:
    parts = list(messages[i].content)
    parts[j] = _with(parts[j], added)
    return [*messages[:i], messages[i].model_copy(update={"content": parts}), *messages[i + 1 :]]


def _message_edited(messages: list[Message], i: int, added: dict[str, Any]) -> list[Message]:
    return [*messages[:i], _with(messages[i], added), *messages[i + 1 :]]


def _read(native: list[Any]) -> list[Message]:
    messages = langchain.to_messages(native)
    assert langchain.to_messages(langchain.from_messages(messages)) == messages
    return messages


def _calls() -> list[Message]:
    return _read([
        LangChainHuman("weather?"),
        LangChainAI("", tool_calls=[{"name": "w", "args": {"city": "Rome"}, "id": "c1"}]),
        LangChainTool("18C", tool_call_id="c1"),
    ])


def _legacy_call() -> list[Message]:
    return _read([
        LangChainHuman("weather?"),
        LangChainAI("", additional_kwargs={
            "function_call": {"name": "w", "arguments": '{"city": "Rome"}'}}),
        FunctionMessage(name="w", content="18C"),
    ])


def _parts() -> list[Message]:
    return _read([LangChainHuman([
        {"type": "text", "text": "look"},
        "bare",
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "x_vendor", "payload": [1]},
    ])])


def _refusal(content: Any) -> list[Message]:
    return _read([
        LangChainHuman("hi"),
        LangChainAI(content, additional_kwargs={"refusal": "I can't"}),
    ])


def _anthropic_history() -> list[Message]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        native = convert_to_messages([
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "w", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                {"type": "text", "text": "thanks"}]},
        ])
    return _read(native)


# --- calls -------------------------------------------------------------------------------


def test_the_call_cases_read_as_expected() -> None:
    assert _calls()[1].tool_calls[0].metadata == {}  # type: ignore[union-attr]
    assert _legacy_call()[1].tool_calls[0].metadata == {  # type: ignore[union-attr]
        NS: {"from": "function_call"}}


@pytest.mark.parametrize("key", ["foo", "class", "shape", "artifact", "tool_result"])
def test_an_unknown_key_on_a_call_is_refused_at_it(key: str) -> None:
    messages = _call_edited(_calls(), 1, 0, {key: "x"})
    assert _refused(messages) == (
        "not_representable", 1, f"messages[1].tool_calls[0].metadata.langchain.{key}")


def test_an_unknown_key_beside_a_calls_known_mark_is_refused_at_it() -> None:
    messages = _call_edited(_legacy_call(), 1, 0, {"foo": 1})
    assert _refused(messages) == (
        "not_representable", 1, "messages[1].tool_calls[0].metadata.langchain.foo")


@pytest.mark.parametrize(("key", "value"), [("in_content", False), ("from", "tool_calls")])
def test_a_call_mark_of_another_value_than_the_readers_is_refused_at_it(
    key: str, value: Any
) -> None:
    messages = _call_edited(_calls(), 1, 0, {key: value})
    assert _refused(messages) == (
        "not_representable", 1, f"messages[1].tool_calls[0].metadata.langchain.{key}")


@pytest.mark.parametrize(("key", "value"), [
    ("content_block", None), ("from", None), ("in_content", "yes"), ("invalid_tool_call", [])])
def test_a_call_key_of_another_type_than_the_readers_is_malformed_at_it(
    key: str, value: Any
) -> None:
    messages = _call_edited(_calls(), 1, 0, {key: value})
    assert _refused(messages) == (
        "malformed_event", 1, f"messages[1].tool_calls[0].metadata.langchain.{key}")


# --- parts -------------------------------------------------------------------------------


def test_the_part_cases_read_as_expected() -> None:
    parts = _parts()[0].content
    assert isinstance(parts, list)
    assert parts[0].metadata == {}
    assert parts[1].metadata == {NS: {"shape": STRING_SHAPE}}
    assert set(parts[2].metadata[NS]) == {"shape", "block"}
    assert isinstance(parts[3], OpaquePart)
    assert parts[3].metadata == {}


@pytest.mark.parametrize(("j", "key"), [
    (0, "foo"), (0, "from"), (0, "content"), (1, "block"), (1, "foo"), (2, "foo"),
    (2, "in_content"), (3, "shape"), (3, "foo"),
])
def test_an_unknown_key_on_a_part_is_refused_at_it(j: int, key: str) -> None:
    messages = _part_edited(_parts(), 0, j, {key: "x"})
    assert _refused(messages) == (
        "not_representable", 0, f"messages[0].content[{j}].metadata.langchain.{key}")


def test_an_unknown_key_on_a_part_of_the_rest_of_a_tool_result_message_is_refused() -> None:
    messages = _part_edited(_anthropic_history(), 3, 0, {"foo": 1})
    assert _refused(messages) == (
        "not_representable", 3, "messages[3].content[0].metadata.langchain.foo")


def test_an_unknown_key_on_a_refusal_from_additional_kwargs_is_refused_at_it() -> None:
    messages = _refusal("")
    assert messages[1].content == [RefusalPart(text="I can't")]
    edited = _part_edited(messages, 1, 0, {"foo": 1})
    assert _refused(edited) == (
        "not_representable", 1, "messages[1].content[0].metadata.langchain.foo")
    marked = _refusal("Sorry.")
    assert marked[1].content[1].metadata == {NS: {"content": "string"}}  # type: ignore[index]
    edited = _part_edited(marked, 1, 1, {"foo": 1})
    assert _refused(edited) == (
        "not_representable", 1, "messages[1].content[1].metadata.langchain.foo")


@pytest.mark.parametrize("layout", ["other", None, ["string"]])
def test_a_refusal_layout_the_reader_never_keeps_is_refused_at_it(layout: Any) -> None:
    edited = _part_edited(_refusal("Sorry."), 1, 1, {"content": layout})
    assert _refused(edited) == (
        "not_representable", 1, "messages[1].content[1].metadata.langchain.content")


# --- messages ----------------------------------------------------------------------------


@pytest.mark.parametrize("i", [0, 1])
def test_artifact_dropped_on_a_message_without_an_artifact_is_refused_at_it(i: int) -> None:
    messages = _message_edited(_calls(), i, {"artifact_dropped": "Figure"})
    assert _refused(messages) == (
        "not_representable", i, f"messages[{i}].metadata.langchain.artifact_dropped")


def test_artifact_dropped_beside_a_kept_artifact_is_refused_at_it() -> None:
    messages = _message_edited(_calls(), 2, {"artifact_dropped": "Figure", "artifact": [1]})
    assert _refused(messages) == (
        "not_representable", 2, "messages[2].metadata.langchain.artifact_dropped")


def test_artifact_dropped_of_another_type_is_malformed_at_it() -> None:
    messages = _message_edited(_calls(), 2, {"artifact_dropped": 5})
    assert _refused(messages) == (
        "malformed_event", 2, "messages[2].metadata.langchain.artifact_dropped")


def test_artifact_dropped_on_a_tool_result_is_written_as_no_artifact() -> None:
    class Figure:
        pass

    messages = langchain.to_messages([
        LangChainHuman("plot"),
        LangChainAI("", tool_calls=[{"name": "p", "args": {}, "id": "c1"}]),
        LangChainTool("done", tool_call_id="c1", artifact=Figure()),
    ], drop_artifacts=True)
    assert messages[2].metadata == {NS: {"artifact_dropped": "Figure"}}
    assert langchain.from_messages(messages)[2].artifact is None


@pytest.mark.parametrize(("i", "key", "value"), [
    (1, "usage_metadata", None),
    (1, "response_metadata", {}),
    (0, "additional_kwargs", {}),
    (2, "artifact", None),
    (1, "tool_call_chunks", []),
])
def test_a_kept_default_value_is_refused_at_it(i: int, key: str, value: Any) -> None:
    messages = _calls()
    if key == "tool_call_chunks":
        messages = _message_edited(messages, i, {"class": "AIMessageChunk"})
    edited = _message_edited(messages, i, {key: value})
    assert _refused(edited) == (
        "not_representable", i, f"messages[{i}].metadata.langchain.{key}")


@pytest.mark.parametrize(("i", "key", "value"), [
    (0, "extra", {}), (0, "class", "human"), (1, "class", "ai"), (2, "class", "tool")])
def test_what_the_reader_keeps_only_when_not_plain_is_refused_when_plain(
    i: int, key: str, value: Any
) -> None:
    edited = _message_edited(_calls(), i, {key: value})
    assert _refused(edited) == (
        "not_representable", i, f"messages[{i}].metadata.langchain.{key}")


def test_a_legacy_function_result_keeps_no_class() -> None:
    """An id-less result with a name goes back as a FunctionMessage without being told."""
    messages = _read([
        LangChainHuman("weather?"),
        LangChainAI("", additional_kwargs={"function_call": {"name": "w", "arguments": "{}"}}),
        FunctionMessage(name="w", content="18C"),
    ])
    assert messages[2].metadata == {}


@pytest.mark.parametrize("value", [False, "yes", 1, {"data": [0]}])
def test_with_tool_results_of_another_value_than_true_is_refused_at_it(value: Any) -> None:
    messages = _anthropic_history()
    assert messages[3].metadata == {NS: {"with_tool_results": True}}
    edited = _message_edited(messages, 3, {"with_tool_results": value})
    assert _refused(edited) == (
        "not_representable", 3, "messages[3].metadata.langchain.with_tool_results")


# --- the known keys are the reader's -------------------------------------------------------


def _unknown_to_the_writer(messages: list[Message]) -> set[tuple[str, str]]:
    """Each (place, key) the reader kept in ``messages`` that the writer does not know."""
    lc = langchain_core_messages()
    unknown: set[tuple[str, str]] = set()
    for i, message in enumerate(messages):
        kept = message.metadata.get(NS, {})
        tag = kept.get("class", PLAIN_CLASS[message.type])
        fields = set(getattr(lc, CLASSES[tag][0]).model_fields)
        unknown |= {(f"messages[{i}]", key) for key in kept
                    if key not in MESSAGE_KEYS and key not in fields}
        for j, part in enumerate([] if isinstance(message.content, str) else message.content):
            own = part.metadata.get(NS, {})
            if isinstance(part, OpaquePart):
                known = OPAQUE_PART_KEYS
            elif isinstance(part, ReasoningPart) and own.get("from") is not None:
                known = _MARKER_KEYS
            elif isinstance(part, RefusalPart) and "shape" not in own:
                known = _REFUSAL_KEYS
            elif isinstance(part, TextPart) and own.get("shape") == STRING_SHAPE:
                known = STRING_PART_KEYS
            else:
                known = PART_KEYS
            unknown |= {(f"messages[{i}].content[{j}]", key) for key in own if key not in known}
        for k, call in enumerate(getattr(message, "tool_calls", [])):
            unknown |= {(f"messages[{i}].tool_calls[{k}]", key)
                        for key in call.metadata.get(NS, {}) if key not in CALL_KEYS}
    return unknown


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda path: path.stem)
def test_every_key_the_reader_keeps_in_a_golden_trace_is_known(path: Path) -> None:
    trace = json.loads(path.read_text(encoding="utf-8"))["trace"]
    typed = langchain.to_messages(trace, allow_pending=True)
    assert _unknown_to_the_writer(typed) == set()
    assert langchain.to_messages(langchain.from_messages(typed), allow_pending=True) == typed


@given(trace=KIT.traces)
def test_every_key_the_reader_keeps_in_a_generated_trace_is_known(trace: Any) -> None:
    typed = langchain.to_messages(trace, **KIT.to_options)
    assert _unknown_to_the_writer(typed) == set()
    assert KIT.canonical(langchain.from_messages(typed, **KIT.from_options)) == KIT.canonical(
        trace)
