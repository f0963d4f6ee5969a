"""A typed message is frozen: the JSON values it holds (arguments, metadata, an opaque part's
value) are taken in as copies, and what a writer gives out holds copies of them. Before, a
nested dict or list was shared: changing the source trace after it was read, or the items a
writer returned, changed the "frozen" message and its transcript hash."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import HumanMessage, MultiTurnSample, OpaquePart, ToolCall
from tracebridge.adapters import openai_chat, openai_responses, swarm
from tracebridge.registry import get_adapter


def test_the_model_takes_nested_values_as_copies() -> None:
    source: dict[str, Any] = {"a": {"b": [1, 2]}}
    call = ToolCall(name="f", args=source)
    message = HumanMessage(content="x", metadata={"k": source})
    part = OpaquePart(kind="k", value=source)
    source["a"]["b"].append(3)
    source["a"]["c"] = 1
    assert call.args == {"a": {"b": [1, 2]}}
    assert message.metadata == {"k": {"a": {"b": [1, 2]}}}
    assert part.value == {"a": {"b": [1, 2]}}


def _computer_items() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "click it"},
        {"type": "computer_call", "call_id": "c1", "id": "cu_1", "status": "completed",
         "action": {"type": "click", "x": 1, "y": 2, "button": "left"},
         "pending_safety_checks": []},
        {"type": "computer_call_output", "call_id": "c1",
         "output": {"type": "computer_screenshot", "image_url": "https://example.com/s.png"}},
    ]


def test_changing_a_responses_trace_after_reading_it_changes_nothing_read() -> None:
    items = _computer_items()
    messages = openai_responses.to_messages(items)
    before = MultiTurnSample(messages=messages).transcript_hash()
    items[1]["action"]["x"] = 99
    items[1]["pending_safety_checks"].append({"id": "s1"})
    assert MultiTurnSample(messages=messages).transcript_hash() == before
    assert messages == openai_responses.to_messages(_computer_items())


def test_changing_the_items_a_responses_writer_gave_changes_nothing_written() -> None:
    messages = openai_responses.to_messages(_computer_items())
    before = MultiTurnSample(messages=messages).transcript_hash()
    written = openai_responses.from_messages(messages)
    written[1]["action"]["x"] = -5
    written[1]["pending_safety_checks"].append({"id": "s1"})
    assert MultiTurnSample(messages=messages).transcript_hash() == before
    assert openai_responses.from_messages(messages) == _computer_items()


def _chat(vendor: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "hi", "vendor": vendor},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "vendor": {"trace": [1]},
             "function": {"name": "f", "arguments": "{}", "extra": {"x": [1]}}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [
            {"type": "text", "text": "ok", "vendor": {"n": [1]}}]},
    ]


def test_changing_a_chat_trace_after_reading_it_changes_nothing_read() -> None:
    for adapter in (openai_chat, swarm):
        trace = _chat({"tags": ["a"]})
        messages = adapter.to_messages(trace)
        trace[0]["vendor"]["tags"].append("b")
        trace[1]["tool_calls"][0]["vendor"]["trace"].append(2)
        trace[1]["tool_calls"][0]["function"]["extra"]["x"].append(2)
        trace[2]["content"][0]["vendor"]["n"].append(2)
        assert messages == adapter.to_messages(_chat({"tags": ["a"]}))


def test_changing_what_a_chat_writer_gave_changes_nothing_written() -> None:
    for adapter in (openai_chat, swarm):
        messages = adapter.to_messages(_chat({"tags": ["a"]}))
        written = adapter.from_messages(messages)
        written[0]["vendor"]["tags"].append("b")
        written[1]["tool_calls"][0]["vendor"]["trace"].append(2)
        written[1]["tool_calls"][0]["function"]["extra"]["x"].append(2)
        written[2]["content"][0]["vendor"]["n"].append(2)
        assert adapter.from_messages(messages) == _chat({"tags": ["a"]})


def test_a_verbatim_part_written_is_a_copy() -> None:
    trace = [{"role": "user", "content": "q"},
             {"role": "assistant", "content": [{"type": "vendor_block", "data": {"n": [1]}}]}]
    messages = openai_chat.to_messages(trace)
    written = openai_chat.from_messages(messages)
    written[1]["content"][0]["data"]["n"].append(2)
    assert messages[1].content[0].value == {"type": "vendor_block", "data": {"n": [1]}}
    assert openai_chat.from_messages(messages) == trace


GOLDEN = Path(__file__).resolve().parents[1] / "golden_traces"
PLAIN = ("galtea", "otel", "swarm", "openai_chat", "openai_responses", "openai_agents")
"""The formats whose golden traces are plain JSON, read as they are stored."""


def _golden_cases() -> list[Any]:
    cases = []
    for name in PLAIN:
        for path in sorted((GOLDEN / name).glob("*.json")):
            golden = json.loads(path.read_text(encoding="utf-8"))
            if "trace" in golden:  # the others are a run's records, read otherwise
                cases.append(pytest.param(name, golden, id=f"{name}/{path.stem}"))
    return cases


def _touch_every_container(value: Any) -> int:
    """Add to every dict and list in ``value``; how many were touched."""
    touched, stack = 0, [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            stack.extend(item.values())
            item["__touched__"] = True
        elif type(item) is list:
            stack.extend(item)
            item.append("__touched__")
        else:
            continue
        touched += 1
    return touched


@pytest.mark.parametrize(("name", "golden"), _golden_cases())
def test_changing_a_golden_trace_or_what_was_written_changes_nothing_read(
    name: str, golden: dict[str, Any]
) -> None:
    adapter = get_adapter(name)
    options = golden.get("to_options") if isinstance(golden.get("to_options"), dict) else {}
    source = copy.deepcopy(golden["trace"])
    messages = adapter.to_messages(source, **options)
    before = [m.model_dump() for m in messages]
    hashed = MultiTurnSample(messages=messages).transcript_hash()
    assert _touch_every_container(source) > 0 or type(source) is str  # JSON lines: text
    assert [m.model_dump() for m in messages] == before
    written = adapter.from_messages(messages)
    assert _touch_every_container(written) > 0
    assert [m.model_dump() for m in messages] == before
    assert MultiTurnSample(messages=messages).transcript_hash() == hashed
