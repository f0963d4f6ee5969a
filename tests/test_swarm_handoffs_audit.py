"""swarm.handoffs(): the handoffs Swarm's run loop really made, as its histories record them.

Swarm is not on PyPI, so these histories are written out here, each exactly as Swarm's own run
loop wrote it (``Swarm.run`` and ``Swarm.run(stream=True)`` from the openai/swarm source,
driven by a scripted chat-completions client; the builders below were checked key for key,
order included, against those runs). What Swarm does, from its ``core.py``:

* a function returning an ``Agent`` gives the result ``{"assistant": "<agent>"}``;
* one returning ``Result(value=..., agent=...)`` gives ``value`` as the result (free text);
* one returning ``Result(value=...)`` or a string hands nothing off;
* a call of a function the agent lacks gives ``Error: Tool <name> not found.``;
* after all the calls of one message ran, the *last* agent returned takes over;
* non-streaming, each assistant message's ``sender`` is the agent that spoke; streaming, it is
  the agent the run started with.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tracebridge.adapters.swarm import Handoff, handoffs, to_messages

SHAPES = ["nonstreaming", "streaming"]
TRIAGE, SALES, BILLING, MANAGER = "Triage", "Sales", "Billing Agent", "Manager"
USER = {"role": "user", "content": "hi"}
TO_BILLING = json.dumps({"assistant": BILLING})
TO_SALES = json.dumps({"assistant": SALES})


def said(
    shape: str, speaker: str, run_started_with: str, *calls: tuple[str, str], content: str | None
) -> dict[str, Any]:
    """An assistant message as the run loop appends it (``calls`` are ``(id, name)``)."""
    tool_calls: list[dict[str, Any]] | None
    if shape == "streaming":
        tool_calls = [
            {"function": {"arguments": "{}", "name": name}, "id": call_id, "type": "function"}
            for call_id, name in calls
        ] or None
        return {
            "content": content or "",
            "sender": run_started_with,
            "role": "assistant",
            "function_call": None,
            "tool_calls": tool_calls,
        }
    tool_calls = [
        {"id": call_id, "function": {"arguments": "{}", "name": name}, "type": "function"}
        for call_id, name in calls
    ] or None
    return {
        "content": content,
        "refusal": None,
        "role": "assistant",
        "annotations": None,
        "audio": None,
        "function_call": None,
        "tool_calls": tool_calls,
        "sender": speaker,
    }


def result(call_id: str, name: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "tool_name": name, "content": content}


def result_handoff_then_transfer(shape: str) -> list[dict[str, Any]]:
    """talk_to_sales returns Result(value="Done", agent=sales); Sales then transfers to Billing."""
    return [
        USER,
        said(shape, TRIAGE, TRIAGE, ("c1", "talk_to_sales"), content=None),
        result("c1", "talk_to_sales", "Done"),
        said(shape, SALES, TRIAGE, ("c2", "transfer_to_billing"), content=None),
        result("c2", "transfer_to_billing", TO_BILLING),
        said(shape, BILLING, TRIAGE, content="Your balance is 120.50 EUR."),
    ]


def test_a_result_with_an_agent_is_the_handoff_the_next_sender_shows() -> None:
    history = result_handoff_then_transfer("nonstreaming")
    assert [m.get("sender") for m in history] == [None, TRIAGE, None, SALES, None, BILLING]
    assert handoffs(history) == [
        Handoff(index=2, from_agent=TRIAGE, to_agent=SALES),
        Handoff(index=4, from_agent=SALES, to_agent=BILLING),
    ]
    assert handoffs(to_messages(history)) == handoffs(history)


def test_a_result_with_an_agent_cannot_be_seen_in_the_streaming_shape() -> None:
    # Documented limit: "Done" and the stale sender are all the history holds, so the
    # transfer that follows names the agent before the unseen handoff.
    assert handoffs(result_handoff_then_transfer("streaming")) == [
        Handoff(index=4, from_agent=TRIAGE, to_agent=BILLING),
    ]


@pytest.mark.parametrize("shape", SHAPES)
def test_of_two_transfers_in_one_message_only_the_last_takes_effect(shape: str) -> None:
    history = [
        USER,
        said(
            shape,
            TRIAGE,
            TRIAGE,
            ("c1", "transfer_to_sales"),
            ("c2", "transfer_to_billing"),
            content=None,
        ),
        result("c1", "transfer_to_sales", TO_SALES),
        result("c2", "transfer_to_billing", TO_BILLING),
        said(shape, BILLING, TRIAGE, content="Billing here."),
    ]
    assert handoffs(history) == [Handoff(index=3, from_agent=TRIAGE, to_agent=BILLING)]
    assert handoffs(to_messages(history)) == handoffs(history)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_result_with_only_a_value_hands_nothing_off(shape: str) -> None:
    history = [
        USER,
        said(shape, TRIAGE, TRIAGE, ("c1", "note"), content=None),
        result("c1", "note", "Noted."),
        said(shape, TRIAGE, TRIAGE, ("c2", "lookup"), ("c3", "transfer_to_billing"), content=None),
        result("c2", "lookup", "ACC-77"),
        result("c3", "transfer_to_billing", TO_BILLING),
        said(shape, BILLING, TRIAGE, content="Billing here."),
    ]
    assert handoffs(history) == [Handoff(index=5, from_agent=TRIAGE, to_agent=BILLING)]


def transfer_then_result(shape: str) -> list[dict[str, Any]]:
    """transfer_to_billing returns billing, then escalate returns Result(agent=manager)."""
    return [
        USER,
        said(
            shape,
            TRIAGE,
            TRIAGE,
            ("c1", "transfer_to_billing"),
            ("c2", "escalate"),
            ("c3", "lookup"),
            content=None,
        ),
        result("c1", "transfer_to_billing", TO_BILLING),
        result("c2", "escalate", "Escalated."),
        result("c3", "lookup", "ACC-77"),
        said(shape, MANAGER, TRIAGE, content="Manager here."),
    ]


def test_a_result_with_an_agent_after_a_transfer_overrides_it() -> None:
    # Either escalate or lookup returned Manager; handoffs() names the first that could have.
    assert handoffs(transfer_then_result("nonstreaming")) == [
        Handoff(index=3, from_agent=TRIAGE, to_agent=MANAGER),
    ]


def test_streaming_the_transfer_is_listed_though_a_result_overrode_it() -> None:
    # Documented limit: Swarm went on with Manager, which the streaming history never names.
    assert handoffs(transfer_then_result("streaming")) == [
        Handoff(index=2, from_agent=TRIAGE, to_agent=BILLING),
    ]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_transfer_after_a_result_with_an_agent_overrides_it(shape: str) -> None:
    history = [
        USER,
        said(
            shape, TRIAGE, TRIAGE, ("c1", "escalate"), ("c2", "transfer_to_billing"), content=None
        ),
        result("c1", "escalate", "Escalated."),
        result("c2", "transfer_to_billing", TO_BILLING),
        said(shape, BILLING, TRIAGE, content="Billing here."),
    ]
    assert handoffs(history) == [Handoff(index=3, from_agent=TRIAGE, to_agent=BILLING)]


def missing_tool_then_result(shape: str) -> list[dict[str, Any]]:
    return [
        USER,
        said(shape, TRIAGE, TRIAGE, ("c1", "no_such_tool"), ("c2", "escalate"), content=None),
        result("c1", "no_such_tool", "Error: Tool no_such_tool not found."),
        result("c2", "escalate", "Escalated."),
        said(shape, MANAGER, TRIAGE, content="Manager here."),
    ]


def test_a_call_of_a_missing_tool_is_not_the_handoff() -> None:
    assert handoffs(missing_tool_then_result("nonstreaming")) == [
        Handoff(index=3, from_agent=TRIAGE, to_agent=MANAGER),
    ]
    assert handoffs(missing_tool_then_result("streaming")) == []


def two_runs(shape: str) -> list[dict[str, Any]]:
    """Run 1 starts with Triage (a Result hands off to Sales); run 2 with response.agent."""
    return [
        USER,
        said(shape, TRIAGE, TRIAGE, ("c1", "talk_to_sales"), content=None),
        result("c1", "talk_to_sales", "Done"),
        said(shape, SALES, TRIAGE, content="Sales here. What do you need?"),
        {"role": "user", "content": "my bill"},
        said(shape, SALES, SALES, ("c2", "transfer_to_billing"), content=None),
        result("c2", "transfer_to_billing", TO_BILLING),
        said(shape, BILLING, SALES, content="Billing here."),
    ]


def test_a_run_started_with_another_agent_is_followed() -> None:
    assert handoffs(two_runs("nonstreaming")) == [
        Handoff(index=2, from_agent=TRIAGE, to_agent=SALES),
        Handoff(index=6, from_agent=SALES, to_agent=BILLING),
    ]
    # Streaming, the first run's handoff is unseen, but the second run's sender names Sales.
    assert handoffs(two_runs("streaming")) == [
        Handoff(index=6, from_agent=SALES, to_agent=BILLING),
    ]


def restarted_with_the_same_agent(shape: str) -> list[dict[str, Any]]:
    """``client.run(agent=triage, ...)`` every turn: Triage hands off to Billing in the first
    run and to Sales in the second."""
    return [
        USER,
        said(shape, TRIAGE, TRIAGE, ("c1", "transfer_to_billing"), content=None),
        result("c1", "transfer_to_billing", TO_BILLING),
        said(shape, BILLING, TRIAGE, content="Billing here, done."),
        {"role": "user", "content": "now sales please"},
        said(shape, TRIAGE, TRIAGE, ("c2", "transfer_to_sales"), content=None),
        result("c2", "transfer_to_sales", TO_SALES),
        said(shape, SALES, TRIAGE, content="Sales here."),
    ]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_run_started_again_with_the_same_agent_is_that_agents(shape: str) -> None:
    # Streaming, every sender is Triage, so the second run's sender does not change; it
    # still names the agent the run started with, not Billing, whom the first run reached.
    assert handoffs(restarted_with_the_same_agent(shape)) == [
        Handoff(index=2, from_agent=TRIAGE, to_agent=BILLING),
        Handoff(index=6, from_agent=TRIAGE, to_agent=SALES),
    ]


def test_a_run_restarted_with_the_agent_it_hands_off_to_lists_no_self_handoff() -> None:
    # Run 1 starts with Sales and hands off to Triage; run 2 starts with Sales again and
    # hands off to Triage again: Sales -> Triage both times (not Triage -> Triage).
    history = [
        USER,
        said("streaming", SALES, SALES, ("c1", "transfer_to_triage"), content=None),
        result("c1", "transfer_to_triage", json.dumps({"assistant": TRIAGE})),
        said("streaming", TRIAGE, SALES, content="Triage here."),
        {"role": "user", "content": "again"},
        said("streaming", SALES, SALES, ("c2", "transfer_to_triage"), content=None),
        result("c2", "transfer_to_triage", json.dumps({"assistant": TRIAGE})),
    ]
    assert handoffs(history) == [
        Handoff(index=2, from_agent=SALES, to_agent=TRIAGE),
        Handoff(index=6, from_agent=SALES, to_agent=TRIAGE),
    ]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_history_cut_after_its_results_lists_its_last_transfer(shape: str) -> None:
    # Swarm.run(max_turns=2): Swarm's final agent is Manager (escalate's Result came last),
    # but no assistant message follows to show it (documented limit).
    history = [
        USER,
        said(
            shape, TRIAGE, TRIAGE, ("c1", "transfer_to_billing"), ("c2", "escalate"), content=None
        ),
        result("c1", "transfer_to_billing", TO_BILLING),
        result("c2", "escalate", "Escalated."),
    ]
    assert handoffs(history) == [Handoff(index=2, from_agent=TRIAGE, to_agent=BILLING)]


@pytest.mark.parametrize(
    ("build", "final_agent"),
    [
        (result_handoff_then_transfer, BILLING),
        (transfer_then_result, MANAGER),
        (missing_tool_then_result, MANAGER),
        (two_runs, BILLING),
    ],
)
def test_non_streaming_handoffs_chain_to_swarms_final_agent(build: Any, final_agent: str) -> None:
    found = handoffs(build("nonstreaming"))
    assert [h.from_agent for h in found[1:]] == [h.to_agent for h in found[:-1]]
    assert found[-1].to_agent == final_agent
