"""Every golden trace and every generated conversation, converted to every format: the
conversation arrives whole, or the conversion says what it cannot carry. Nothing the transcript
hash covers is lost on the way."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
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
    convert,
    transcript_hash,
)
from tracebridge.cli import to_json
from tracebridge.registry import ADAPTER_NAMES, FORMATS, get_adapter

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted(
    path
    for name in ADAPTER_NAMES
    for path in (ROOT / "golden_traces" / name).glob("*.json")
    if "trace" in json.loads(path.read_text(encoding="utf-8"))
)


def read(path: Path) -> tuple[list[Any], dict[str, Any]]:
    """The golden trace's typed messages, and the options it is read with."""
    case = json.loads(path.read_text(encoding="utf-8"))
    options = case.get("to_options", {})
    return get_adapter(path.parent.name).to_messages(case["trace"], **options), options


def write(target: str, messages: list[Any]) -> tuple[Any, TraceError | None]:
    try:
        return get_adapter(target).from_messages(messages), None
    except TraceError as error:
        return None, error


@pytest.mark.parametrize("target", FORMATS)
@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_conversion_carries_the_whole_conversation_or_refuses(path: Path, target: str) -> None:
    messages, options = read(path)
    written, refused = write(target, messages)
    if refused is not None:
        assert (refused.code, refused.index is not None) == ("not_representable", True), refused
        assert target not in ("tracebridge", path.parent.name)
        return
    # Through JSON, as a file would carry it, and back.
    stored = json.loads(json.dumps(to_json(target, written)))
    again = get_adapter(target).to_messages(stored, **options)
    assert transcript_hash(again) == transcript_hash(messages)


def convert_or_refuse(stored: Any, source: str, target: str,
                      options: dict[str, Any]) -> tuple[Any, TraceError | None]:
    try:
        return convert(stored, source=source, target=target, source_options=options or None), None
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


@pytest.mark.parametrize("target", FORMATS)
@pytest.mark.parametrize("source", FORMATS)
def test_a_plain_conversation_converts_between_any_two_formats(source: str, target: str) -> None:
    plain = CHAT if "galtea" in (source, target) else ASKED_AND_ANSWERED
    stored = json.loads(json.dumps(to_json(source, get_adapter(source).from_messages(plain))))
    written, refused = convert_or_refuse(stored, source, target, {})
    assert refused is None
    again = get_adapter(target).to_messages(json.loads(json.dumps(to_json(target, written))))
    assert transcript_hash(again) == transcript_hash(plain)


@pytest.mark.parametrize("target", FORMATS)
@pytest.mark.parametrize("source", FORMATS)
@settings(max_examples=15)
@given(data=st.data())
def test_convert_between_any_two_formats_carries_or_refuses(
    source: str, target: str, data: st.DataObject
) -> None:
    # A conversation the source format can hold, stored as that format stores it (through
    # JSON), then converted the way users convert: convert(trace, source=..., target=...).
    kit = importlib.import_module(f"law_kits.{source}").KIT
    messages = data.draw(kit.conversations, label="conversation")
    stored = json.loads(json.dumps(to_json(source, get_adapter(source).from_messages(
        messages, **kit.from_options))))
    written, refused = convert_or_refuse(stored, source, target, kit.to_options)
    if refused is not None:
        assert (refused.code, refused.source) == ("not_representable", target), refused
        assert refused.index is not None
        assert target != source
        return
    again = get_adapter(target).to_messages(json.loads(json.dumps(to_json(target, written))))
    assert transcript_hash(again) == transcript_hash(messages)
