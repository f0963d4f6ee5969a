"""The three adapter laws of DESIGN.md, checked for every registered format."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracebridge import (
    AIMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
    TraceError,
    transcript_hash,
    validate,
)
from tracebridge._json import same_json
from tracebridge.cli import to_json
from tracebridge.registry import ADAPTER_NAMES, FORMATS, get_adapter

from law_kits import RULE_KINDS, LawKit
from strategies import conversations


def kit_for(name: str) -> LawKit:
    kit = importlib.import_module(f"law_kits.{name}").KIT
    assert isinstance(kit, LawKit)
    return kit


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_has_a_law_kit(name: str) -> None:
    kit_for(name)


@pytest.mark.parametrize("name", FORMATS)
@given(data=st.data())
def test_lossless_roundtrip(name: str, data: st.DataObject) -> None:
    kit, adapter = kit_for(name), get_adapter(name)
    trace = data.draw(kit.traces, label="trace")
    back = adapter.from_messages(adapter.to_messages(trace, **kit.to_options), **kit.from_options)
    assert kit.canonical(back) == kit.canonical(trace)
    assert same_json(kit.canonical(back), kit.canonical(trace), zero_signs=True)  # 1 is not 1.0


@pytest.mark.parametrize("name", FORMATS)
@given(data=st.data())
def test_faithful_roundtrip(name: str, data: st.DataObject) -> None:
    kit, adapter = kit_for(name), get_adapter(name)
    messages = data.draw(kit.conversations, label="messages")
    trace = adapter.from_messages(messages, **kit.from_options)
    assert adapter.to_messages(trace, **kit.to_options) == messages  # == as JSON: 1 is not 1.0


@pytest.mark.parametrize("name", FORMATS)
@given(data=st.data())
def test_strict_rejects_broken_traces(name: str, data: st.DataObject) -> None:
    kit, adapter = kit_for(name), get_adapter(name)
    broken = data.draw(kit.broken, label="broken")
    with pytest.raises(TraceError) as caught:
        adapter.to_messages(broken.trace, **kit.to_options)
    assert (caught.value.code, caught.value.index) == (broken.code, broken.index)
    if broken.path is not None:
        assert caught.value.path == broken.path


@pytest.mark.parametrize("name", FORMATS)
def test_every_kit_says_how_it_breaks_each_named_rule(name: str) -> None:
    kit = kit_for(name)
    assert sorted([*kit.rules, *kit.no_rules]) == sorted(RULE_KINDS)
    assert not set(kit.rules) & set(kit.no_rules)


RULE_CASES = [(name, kind) for name in FORMATS for kind in RULE_KINDS
              if kind in kit_for(name).rules]
# Every example of these is its mutation: a few per case check it whatever the draws.
NAMED_EXAMPLES = max(10, settings.default.max_examples // 6)


@pytest.mark.parametrize(("name", "kind"), RULE_CASES)
@settings(max_examples=NAMED_EXAMPLES)
@given(data=st.data())
def test_strict_rejects_each_named_mutation(name: str, kind: str, data: st.DataObject) -> None:
    kit, adapter = kit_for(name), get_adapter(name)
    broken = data.draw(kit.rules[kind], label=kind)
    assert broken.code == kind
    assert broken.path is not None
    with pytest.raises(TraceError) as caught:
        adapter.to_messages(broken.trace, **kit.to_options)
    error = caught.value
    assert (error.code, error.index, error.path) == (broken.code, broken.index, broken.path)


# Keys that do mean something inside their own adapter's namespace.
PLAUSIBLE = {
    "role": "developer", "content": "null", "shape": "pairs", "retrieval_context": "ctx",
    "fields": {"refusal": "no", "audio": None}, "extra": {"k": 1}, "class": "AIMessageChunk",
    "status": "error", "artifact": [1], "return_direct": True, "layout": ["call", "text"],
}


def with_foreign_metadata(message: Any, own: str) -> Any:
    foreign = {other: PLAUSIBLE for other in ADAPTER_NAMES if other != own}
    return message.model_copy(update={"metadata": {**message.metadata, **foreign}})


@pytest.mark.parametrize("name", ADAPTER_NAMES)
@given(data=st.data())
def test_from_messages_reads_only_its_own_namespace(name: str, data: st.DataObject) -> None:
    kit, adapter = kit_for(name), get_adapter(name)
    messages = data.draw(kit.conversations, label="messages")
    foreign = [with_foreign_metadata(m, name) for m in messages]
    assert kit.canonical(adapter.from_messages(foreign, **kit.from_options)) == kit.canonical(
        adapter.from_messages(messages, **kit.from_options)
    )


# Trace-shaped noise: the keys and values real traces use, in the wrong places.
NOISE_KEYS = st.sampled_from([
    "role", "content", "type", "data", "tool_calls", "tool_call_id", "name", "id", "function",
    "arguments", "blocks", "block_type", "text", "input", "actual_output", "messages",
    "additional_kwargs", "sender", "tool_name", "refusal", "image_url", "url", "args",
    "tool_kwargs", "tool_id", "retrieval_context", "status", "artifact", "invalid_tool_calls",
])
NOISE_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([
        "user", "assistant", "tool", "system", "human", "ai", "text", "function", "", "c1", "{",
        "{}", "developer", "image_url", "tool_call",
    ]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NOISE_KEYS, inner, max_size=5),
    max_leaves=12,
)
NOISE = st.lists(st.dictionaries(NOISE_KEYS, NOISE_VALUES, max_size=6), min_size=1, max_size=4)


def read(name: str, trace: Any) -> tuple[Any, TraceError | None]:
    try:
        return get_adapter(name).to_messages(trace), None
    except TraceError as error:
        return None, error


@pytest.mark.parametrize("name", FORMATS)
@given(trace=NOISE | NOISE_VALUES)
def test_noise_is_rejected_with_a_trace_error_or_read_whole(name: str, trace: Any) -> None:
    # Never a KeyError, TypeError or pydantic ValidationError: a TraceError naming the
    # adapter and where, or messages that follow the rules.
    messages, error = read(name, trace)
    if error is None:
        validate(messages)
    else:
        assert error.source == name
        assert error.index is None or error.path is not None  # a position comes with a path


def write(name: str, messages: list[Any]) -> tuple[Any, TraceError | None]:
    try:
        return get_adapter(name).from_messages(messages), None
    except TraceError as error:
        return None, error


# A fixed conversation every writer carries whole (Galtea turns hold no tool calls: only its
# text), so that a writer refusing everything cannot pass the property below.
ASKED_AND_ANSWERED = [
    HumanMessage(content="Weather in Paris?"),
    AIMessage(tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}, id="call_1")]),
    ToolMessage(content="18 C", tool_call_id="call_1", name="get_weather"),
    AIMessage(content="18 C in Paris."),
]
CHAT = [HumanMessage(content="hi"), AIMessage(content="hello")]


@pytest.mark.parametrize("name", FORMATS)
def test_a_plain_conversation_is_written_whole(name: str) -> None:
    for messages in (CHAT, ASKED_AND_ANSWERED) if name != "galtea" else (CHAT,):
        written, error = write(name, messages)
        assert error is None
        again = get_adapter(name).to_messages(json.loads(json.dumps(to_json(name, written))))
        assert transcript_hash(again) == transcript_hash(messages)


@pytest.mark.parametrize("name", FORMATS)
@given(messages=conversations())
def test_any_conversation_is_written_whole_or_refused(name: str, messages: list[Any]) -> None:
    # Whatever the typed model holds, a writer either carries all that the transcript hash
    # covers or says what it cannot carry; it never fails another way.
    written, error = write(name, messages)
    if error is not None:
        assert (error.code, error.source) == ("not_representable", name)
        assert error.index is not None
        return
    again = get_adapter(name).to_messages(json.loads(json.dumps(to_json(name, written))))
    assert transcript_hash(again) == transcript_hash(messages)


@pytest.mark.parametrize("name", FORMATS)
@given(data=st.data())
def test_a_conversation_the_format_expresses_is_written_whole(
    name: str, data: st.DataObject
) -> None:
    # The property above takes the refusal branch for most of ``conversations()`` in several
    # formats (Galtea writes ~4 % of them, the Responses formats ~9 %, the Chat formats ~15 %):
    # over what the format can express (its kit's conversations) the written branch runs on
    # every example, so a writer that mis-writes what it accepts cannot hide behind refusals.
    kit = kit_for(name)
    messages = data.draw(kit.conversations, label="messages")
    try:
        written = get_adapter(name).from_messages(messages, **kit.from_options)
    except TraceError as error:
        raise AssertionError(f"{name} refused what its kit says it expresses: {error}") from error
    stored = json.loads(json.dumps(to_json(name, written)))
    again = get_adapter(name).to_messages(stored, **kit.to_options)
    assert transcript_hash(again) == transcript_hash(messages)
