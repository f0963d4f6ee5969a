"""Agents SDK: a stored RunItem dict without its ``raw_item`` is that RunItem's fault, named
where it is (``malformed_event`` at ``.raw_item``), not an unknown input item."""

from __future__ import annotations

import json

import pytest

from tracebridge import TraceError
from tracebridge.adapters import openai_agents
from tracebridge.registry import detect_format

OUTPUT = {"type": "tool_call_output_item", "agent": {"name": "W"}, "output": "found a",
          "raw_item": {"type": "function_call_output", "call_id": "c1", "output": "found a"}}


@pytest.mark.parametrize("kind", ["tool_call_item", "message_output_item",
                                  "tool_approval_item", "handoff_call_item"])
def test_a_run_item_without_its_raw_item_is_malformed_there(kind: str) -> None:
    items = [{"type": kind, "agent": {"name": "W"}}, OUTPUT]
    assert detect_format(items) == "openai_agents"
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(json.loads(json.dumps(items)), input="go")
    error = caught.value
    assert (error.code, error.index, error.path, error.source) == (
        "malformed_event", 0, "items[0].raw_item", "openai_agents")
    assert error.detail == (
        f"a {kind} RunItem needs its 'raw_item' (the Responses item it wraps)")


def test_a_run_item_with_a_raw_item_of_no_dict_is_refused_as_before() -> None:
    items = [{"type": "tool_call_item", "agent": {"name": "W"}, "raw_item": None}, OUTPUT]
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(items, input="go")
    assert (caught.value.code, caught.value.path) == ("malformed_event", "items[0].raw_item")
