"""Each deterministic check blocks its case before any judge request, and says why."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from evaluation_helpers import (
    TICKET,
    WITH_REFERENCE,
    WITHOUT_REFERENCE,
    case,
    goal,
    rows,
    run_cases,
    states,
    write_cases,
)
from fake_openai_server import FakeOpenAI

from tracebridge.evaluation.cases import Case, load_cases
from tracebridge.evaluation.checks import CheckError, check_case, load_check


def blocked_by(tmp_path: Path, server: FakeOpenAI, item: dict[str, Any], *extra: str,
               metrics: tuple[str, ...] = (WITH_REFERENCE,)) -> list[str]:
    """Run ``item`` beside a good case; the reasons it was blocked for (nothing sent for it)."""
    server.add(*[goal(True)] * len(metrics))
    path = write_cases(tmp_path, [item, case("good")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, *extra, metrics=metrics)
    assert (code, len(server.requests)) == (0, len(metrics)), err
    assert states(out) == {item["case_id"]: "blocked", "good": "passed"}
    assert {row["case_id"] for row in rows(out, "results.jsonl")} == {"good"}
    [row] = [r for r in rows(out, "cases.jsonl") if r["case_id"] == item["case_id"]]
    reasons: list[str] = row["reasons"]
    return reasons


def test_a_transcript_that_breaks_the_rules_is_blocked(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    reasons = blocked_by(tmp_path, server, case("cut", transcript=TICKET[:2]))
    assert reasons == ["conversation rules: roles: transcript[1].tool_calls[0]: tool call "
                       "'create_ticket' (call_id 'call-1') has no result before the conversation "
                       "ends [unanswered_tool_call]"]


def test_expect_present(tmp_path: Path, server: FakeOpenAI) -> None:
    item = case("no-ticket", domain_evidence={"ticket_id": None, "operation_id": "op-77"},
                expect={"ticket_id": {"present": True}, "operation_id": {"present": True},
                        "refund_id": {"present": True}, "error": {"present": False}})
    assert blocked_by(tmp_path, server, item) == [
        "expect ticket_id: expected present, but domain_evidence has null",
        "expect refund_id: expected present, but domain_evidence has no such field",
    ]


def test_expect_absent(tmp_path: Path, server: FakeOpenAI) -> None:
    item = case("error", domain_evidence={"error": "timeout"},
                expect={"error": {"present": False}})
    assert blocked_by(tmp_path, server, item) == [
        'expect error: expected absent or null, got "timeout"']


def test_expect_equals_compares_json_values(tmp_path: Path, server: FakeOpenAI) -> None:
    item = case("category", domain_evidence={"category": "billing", "priority": 1,
                                             "flag": True, "none": None},
                expect={"category": {"equals": "refund"}, "priority": {"equals": True},
                        "flag": {"equals": True}, "none": {"equals": None},
                        "absent": {"equals": 0}})
    assert blocked_by(tmp_path, server, item) == [
        'expect category: expected "refund", got "billing"',
        "expect priority: expected true, got 1",
        "expect absent: expected equals 0, but domain_evidence has no such field",
    ]


def test_expect_count(tmp_path: Path, server: FakeOpenAI) -> None:
    item = case("twice", domain_evidence={"ticket_ids": ["T-1", "T-2"], "one": "T-1"},
                expect={"ticket_ids": {"count": 1}, "one": {"count": 1}})
    assert blocked_by(tmp_path, server, item) == [
        'expect ticket_ids: expected 1 item(s), got 2: ["T-1","T-2"]',
        'expect one: expected a list of 1, got "T-1"',
    ]


def test_a_with_reference_metric_without_a_reference(tmp_path: Path, server: FakeOpenAI) -> None:
    item = case("no-reference", reference=None)
    assert blocked_by(tmp_path, server, item) == [
        f"reference: {WITH_REFERENCE} needs reference, and the case has none"]


def test_a_with_reference_metric_without_a_reference_version(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    item = case("no-version", reference_version=None)
    assert blocked_by(tmp_path, server, item) == [
        "reference: the case has no reference_version (a metric of this run reads its "
        "references)"]


def test_without_reference_metrics_need_neither(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(goal(True))
    path = write_cases(tmp_path, [case("bare", reference=None, reference_version=None)])
    code, _, _ = run_cases(path, tmp_path / "run", server.base_url,
                           metrics=(WITHOUT_REFERENCE,))
    assert (code, states(tmp_path / "run")) == (0, {"bare": "passed"})


def test_deterministic_metrics_need_their_reference_too(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    calls = [{"name": "create_ticket", "args": {"category": "billing"}}]
    path = write_cases(tmp_path, [case("no-calls"), case("good", reference_tool_calls=calls)])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url, metrics=("tool_call_f1",))
    assert (code, len(server.requests)) == (0, 0)
    assert states(out) == {"no-calls": "blocked", "good": "passed"}
    assert rows(out, "cases.jsonl")[0]["reasons"] == [
        "reference: tool_call_f1 needs reference_tool_calls, and the case has none"]


def no_refunds(case: Case) -> list[str]:
    """A user check: a case must not mention refunds."""
    return ["mentions a refund"] if "refund" in (case.reference or "") else []


def not_a_list(case: Case) -> Any:
    return "oops" if case.case_id == "refund" else []


def raises(case: Case) -> list[str]:
    if case.case_id == "refund":
        raise RuntimeError("the check broke")
    return []


def test_user_checks(tmp_path: Path, server: FakeOpenAI) -> None:
    module = __name__
    item = case("refund", reference="A refund ticket is created.")
    reasons = blocked_by(tmp_path, server, item, "--checks", f"{module}:no_refunds",
                         "--checks", f"{module}:not_a_list", "--checks", f"{module}:raises")
    assert reasons == [
        f"check {module}:no_refunds: mentions a refund",
        f"check {module}:not_a_list returned str; expected a list of problems (strings)",
        f"check {module}:raises raised RuntimeError: the check broke",
    ]


def test_every_reason_is_given_at_once(tmp_path: Path) -> None:
    item = case("all", transcript=TICKET[:2], reference=None, reference_version=None,
                domain_evidence={}, expect={"ticket_id": {"present": True}})
    [loaded] = load_cases(str(write_cases(tmp_path, [item]))).cases
    reasons = check_case(loaded, [WITH_REFERENCE], [load_check(f"{__name__}:no_refunds")])
    assert [reason.split(":")[0] for reason in reasons] == [
        "conversation rules", "expect ticket_id", "reference", "reference"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nocolon", "--checks nocolon: expected package.module:function"),
        ("no_such_module_xyz:f", "--checks no_such_module_xyz:f: cannot import "
         "no_such_module_xyz: No module named 'no_such_module_xyz'; the module must be "
         "importable: put its directory on the import path (PYTHONPATH=. for a module in the "
         "current directory) or install it"),
        (f"{__name__}:missing", f"--checks {__name__}:missing: {__name__} has no function "
         "missing"),
    ],
)
def test_a_check_that_cannot_be_loaded_is_a_one_line_error(spec: str, message: str) -> None:
    assert __name__ in sys.modules
    with pytest.raises(CheckError) as caught:
        load_check(spec)
    assert str(caught.value) == message
