"""``handoffs()`` reads a stored history with ``allow_pending`` as ``to_messages`` does: the
history ``Swarm.run(..., execute_tools=False)`` leaves (or an Agents SDK run paused for an
approval) ends on calls not run yet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tracebridge import TraceError
from tracebridge.adapters import openai_agents, swarm
from tracebridge.adapters.swarm import Handoff

GOLDEN = Path(__file__).parent.parent / "golden_traces"


def history(name: str) -> list[dict[str, Any]]:
    return json.loads((GOLDEN / "swarm" / f"{name}.json").read_text())["trace"]  # type: ignore[no-any-return]


def test_a_swarm_history_that_did_not_run_its_tools_is_read_with_allow_pending() -> None:
    full = history("billing_handoff_nonstreaming")
    cut = full[:2]  # what Swarm.run(..., execute_tools=False) returns: the calls, not run
    assert swarm.handoffs(cut, allow_pending=True) == []
    with pytest.raises(TraceError) as caught:
        swarm.handoffs(cut)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unanswered_tool_call", 1, "messages[1].tool_calls[0]",
    )


def test_allow_pending_changes_nothing_on_a_whole_history() -> None:
    full = history("billing_handoff_nonstreaming")
    assert swarm.handoffs(full, allow_pending=True) == swarm.handoffs(full)
    assert swarm.handoffs(full) == [Handoff(index=3, from_agent="Front Desk",
                                            to_agent="Billing Agent")]


def test_allow_pending_must_be_a_bool() -> None:
    with pytest.raises(ValueError, match="allow_pending must be True or False"):
        swarm.handoffs(history("billing_handoff_nonstreaming")[:2], allow_pending="yes")  # type: ignore[arg-type]


def test_agents_handoffs_take_allow_pending_for_items_ending_on_a_call() -> None:
    items = [
        {"role": "user", "content": "refund please"},
        {"type": "function_call", "call_id": "c1", "name": "transfer_to_billing",
         "arguments": "{}"},
    ]
    assert openai_agents.handoffs(items, allow_pending=True) == []
    with pytest.raises(TraceError) as caught:
        openai_agents.handoffs(items)
    assert caught.value.code == "unanswered_tool_call"
