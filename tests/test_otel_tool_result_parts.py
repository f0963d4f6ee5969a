"""OpenTelemetry tool results whose content is a list of parts: a part of a type the GenAI
reader does not know would make the list read back as the tool's JSON output (text), so an
opaque part is written in the wrapped form the reader takes back as itself."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tracebridge import AIMessage, HumanMessage, ToolCall, ToolMessage, convert, transcript_hash
from tracebridge.cli import to_json
from tracebridge.messages import OpaquePart, TextPart
from tracebridge.registry import get_adapter


def conversation(content: Any) -> list[Any]:
    return [
        HumanMessage(content="look"),
        AIMessage(tool_calls=[ToolCall(name="fetch", id="c1")]),
        ToolMessage(content=content, tool_call_id="c1"),
        AIMessage(content="done"),
    ]


@pytest.mark.parametrize(
    "content",
    [
        [OpaquePart(kind="image_url", value={"type": "image_url"})],
        [OpaquePart(kind="x", value={"type": "x", "n": 1})],
        [TextPart(text="a"), OpaquePart(kind="image_url", value={"type": "image_url"})],
    ],
    ids=["own-value", "other-kind", "after-text"],
)
def test_a_tool_result_with_an_opaque_part_reads_back_as_parts(content: Any) -> None:
    messages = conversation(content)
    written = get_adapter("otel").from_messages(messages)
    again = get_adapter("otel").to_messages(json.loads(json.dumps(to_json("otel", written))))
    assert again[2].content == content
    assert transcript_hash(again) == transcript_hash(messages)


def test_a_tool_that_returned_a_json_list_still_reads_back_as_that_text() -> None:
    messages = conversation('[{"type": "x"}]')
    written = get_adapter("otel").from_messages(messages)
    again = get_adapter("otel").to_messages(json.loads(json.dumps(to_json("otel", written))))
    assert again[2].content == '[{"type": "x"}]'
    assert transcript_hash(again) == transcript_hash(messages)


def test_swarm_to_otel_carries_an_opaque_tool_result() -> None:
    # Found by the cross-format property test on a random seed.
    swarm = [
        {"role": "user", "content": "look"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "image_url"}]},
        {"role": "assistant", "content": "done"},
    ]
    messages = get_adapter("swarm").to_messages(swarm)
    written = convert(swarm, source="swarm", target="otel")
    again = get_adapter("otel").to_messages(json.loads(json.dumps(to_json("otel", written))))
    assert transcript_hash(again) == transcript_hash(messages)
