"""Golden traces of the openai_agents adapter: one test per file in the folder.

Each valid file was made by running the real Agents SDK (``scripts/golden/openai_agents.py``)
and holds the run's input list (``trace``, or ``input_list`` for a run interrupted with a call
unanswered), its ``new_items`` as ``RunState.to_json()`` stores them with its ``input``, and the
typed messages each reads as: ``expected`` (no agent names: input items have none) and
``expected_named``. An invalid file holds a broken trace and the ``{code, index}`` it must be
rejected with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from tracebridge import AIMessage, Message, TraceError
from tracebridge.adapters import openai_agents

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "golden_traces" / "openai_agents"
VALID = sorted(GOLDEN.glob("*.json"))
INVALID = sorted((GOLDEN / "invalid").glob("*.json"))
WRITABLE = [path for path in VALID if "trace" in json.loads(path.read_text(encoding="utf-8"))]
MESSAGES = TypeAdapter(list[Message])


def load(path: Path) -> dict[str, Any]:
    content: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return content


def input_list(case: dict[str, Any]) -> list[Any]:
    listed: list[Any] = case["trace"] if "trace" in case else case["input_list"]
    return listed


def test_the_folder_has_the_cases_the_issue_asks_for() -> None:
    assert [p.stem for p in VALID] == [
        "approval_after_other_call",
        "approval_granted",
        "approval_pending",
        "handoff",
        "parallel_tool_calls",
        "refusal",
        "session_resumed",
        "tool_calling",
        "tool_calling_streamed",
        "tool_raises",
    ]
    assert [p.stem for p in INVALID] == [
        "approval_before_its_call",
        "approval_unanswered",
        "duplicate_call_ids",
        "handoff_output_removed",
        "output_before_its_call",
        "run_item_without_agent",
        "unknown_item_type",
        "unknown_run_item_type",
    ]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_input_list_reads_as_expected(path: Path) -> None:
    case = load(path)
    messages = openai_agents.to_messages(input_list(case), **case.get("to_options", {}))
    assert messages == MESSAGES.validate_python(case["expected"])
    assert all(m.name is None for m in messages if isinstance(m, AIMessage))


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_run_items_read_with_the_agent_names(path: Path) -> None:
    case = load(path)
    messages = openai_agents.to_messages(
        case["new_items"], input=case["input"], **case.get("to_options", {})
    )
    assert messages == MESSAGES.validate_python(case["expected_named"])
    assert messages[-1].name == case["final_agent"]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_the_named_reading_is_the_input_list_reading_plus_agents(path: Path) -> None:
    # RunItems add the agent names and their wrappers (under run_items), nothing else.
    case = load(path)
    plain = MESSAGES.validate_python(case["expected"])
    named = MESSAGES.validate_python(case["expected_named"])
    assert len(plain) == len(named)
    for before, after in zip(plain, named, strict=True):
        space = dict(after.metadata.get("openai_agents", {}))
        wrappers = space.pop("run_items", None)
        metadata = {**after.metadata, "openai_agents": space}
        if not space:
            del metadata["openai_agents"]
        stripped = after.model_copy(update={"metadata": metadata})
        if isinstance(stripped, AIMessage):
            assert stripped.name is not None or wrappers is None
            stripped = stripped.model_copy(update={"name": None})
        assert stripped == before


@pytest.mark.parametrize("path", WRITABLE, ids=lambda p: p.stem)
def test_golden_lossless_roundtrip(path: Path) -> None:
    case = load(path)
    assert openai_agents.from_messages(openai_agents.to_messages(case["trace"])) == case["trace"]


@pytest.mark.parametrize("path", WRITABLE, ids=lambda p: p.stem)
def test_a_named_run_writes_back_as_its_input_list_when_names_may_go(path: Path) -> None:
    case = load(path)
    named = openai_agents.to_messages(case["new_items"], input=case["input"])
    assert openai_agents.from_messages(named, drop_names=True) == case["trace"]
    with pytest.raises(TraceError) as caught:
        openai_agents.from_messages(named)
    first = next(i for i, m in enumerate(named) if isinstance(m, AIMessage) and m.name)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", first, f"messages[{first}].name"
    )


def test_an_interrupted_run_writes_back_only_without_its_unanswered_call() -> None:
    case = load(GOLDEN / "approval_pending.json")
    messages = openai_agents.to_messages(case["input_list"], allow_pending=True)
    with pytest.raises(TraceError) as caught:
        openai_agents.from_messages(messages)
    assert (caught.value.code, caught.value.index, caught.value.source) == (
        "not_representable", 1, "openai_agents"
    )
    written = openai_agents.from_messages(messages, drop=["unanswered_calls"])
    assert written == case["input_list"][:2]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_golden_handoffs(path: Path) -> None:
    case = load(path)
    options = case.get("to_options", {})
    named = openai_agents.to_messages(case["new_items"], input=case["input"], **options)
    assert [vars(h) for h in openai_agents.handoffs(named)] == case["handoffs"]
    # The input list has no names: the handoff is found all the same, from an unknown agent.
    plain = openai_agents.handoffs(openai_agents.to_messages(input_list(case), **options))
    assert [(h.index, h.to_agent) for h in plain] == [
        (h["index"], h["to_agent"]) for h in case["handoffs"]
    ]


def test_the_handoff_case_hands_front_desk_over_to_billing() -> None:
    case = load(GOLDEN / "handoff.json")
    assert case["handoffs"] == [
        {"index": 2, "from_agent": "Front Desk", "to_agent": "Billing Agent"}
    ]
    assert [m.name for m in MESSAGES.validate_python(case["expected_named"])] == [
        None, "Front Desk", None, "Billing Agent", None, "Billing Agent"
    ]
    wrappers = case["expected_named"][2]["metadata"]["openai_agents"]["run_items"]
    assert wrappers == [{
        "type": "handoff_output_item",
        "agent": {"name": "Front Desk"},
        "source_agent": {"name": "Front Desk"},
        "target_agent": {"name": "Billing Agent"},
    }]


def test_the_raising_tool_is_recorded_as_the_sdk_default_error_text() -> None:
    case = load(GOLDEN / "tool_raises.json")
    result = MESSAGES.validate_python(case["expected"])[2]
    assert (result.type, result.content) == (
        "tool", "An error occurred while running the tool. Please try again."
    )


def test_the_session_stores_the_input_list_of_the_resumed_run() -> None:
    case = load(GOLDEN / "session_resumed.json")
    assert case["session_items"] == case["trace"]
    # The second run's input is the stored history plus its new user message.
    assert case["input"] == case["trace"][:-1]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_run_items_are_detected_and_input_lists_left_to_openai_responses(path: Path) -> None:
    case = load(path)
    assert openai_agents.detect(case["new_items"]) is True
    assert openai_agents.detect(input_list(case)) is False


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_golden_invalid_trace_is_rejected_with_code_and_index(path: Path) -> None:
    case = load(path)
    with pytest.raises(TraceError) as caught:
        openai_agents.to_messages(case["trace"], input=case.get("input"))
    assert (caught.value.code, caught.value.index, caught.value.source) == (
        case["error"]["code"], case["error"]["index"], "openai_agents"
    )
