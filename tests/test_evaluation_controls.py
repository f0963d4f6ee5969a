"""Controls run first and must come out as their role expects, or the run stops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evaluation_helpers import (
    TICKET,
    WITH_REFERENCE,
    WITHOUT_REFERENCE,
    case,
    control,
    goal,
    rows,
    run_cases,
    states,
    summary,
    write_cases,
)
from fake_openai_server import FakeOpenAI


def said(text: str) -> list[dict[str, Any]]:
    """The ticket transcript with its first message saying ``text`` (to tell requests apart)."""
    return [{"role": "human", "content": text}, *TICKET[1:]]


def asked(server: FakeOpenAI) -> list[str]:
    """The first line the user said in each transcript the judge was sent, in order."""
    found = []
    for request in server.requests:
        prompt = request["messages"][1]["content"]
        found.append(prompt.split("[0] human: ", 1)[1].split("\n", 1)[0])
    return found


EXPECTATIONS = [
    ("positive", {}, True),
    ("negative_failed_tool", {}, False),
    ("negative_false_claim", {}, False),
    ("partial_goal", {}, False),
    ("goal_shift", {"human_adjudication": {"goal_achieved": True}}, True),
    ("goal_shift", {"human_adjudication": {"goal_achieved": False}}, False),
    ("cancellation", {"human_adjudication": {"goal_achieved": True}}, True),
    ("cancellation", {"human_adjudication": {"goal_achieved": False}}, False),
]


@pytest.mark.parametrize(("role", "fields", "achieved"), EXPECTATIONS)
def test_a_control_that_comes_out_as_expected_passes_and_the_run_goes_on(
    tmp_path: Path, server: FakeOpenAI, role: str, fields: dict[str, Any], achieved: bool
) -> None:
    server.add(goal(achieved), goal(True))
    path = write_cases(tmp_path, [case("later", transcript=said("later")),
                                  control("ctl", role, transcript=said("ctl"), **fields)])
    out = tmp_path / "run"
    code, stdout, _ = run_cases(path, out, server.base_url)
    assert code == 0
    assert asked(server) == ["ctl", "later"]  # the control first, though it is second
    assert states(out) == {"later": "passed", "ctl": "passed"}
    [row] = [r for r in rows(out, "cases.jsonl") if r["case_id"] == "ctl"]
    outcome = "achieved" if achieved else "not_achieved"
    assert row["control"] == {"role": role, "expected": outcome, "outcome": outcome,
                              "as_expected": True}
    assert row["reasons"] == []
    assert stdout.startswith("complete: 2 passed; judge: 2 request(s)")


@pytest.mark.parametrize(("role", "fields", "achieved"), EXPECTATIONS)
def test_a_control_that_comes_out_otherwise_stops_the_run(
    tmp_path: Path, server: FakeOpenAI, role: str, fields: dict[str, Any], achieved: bool
) -> None:
    server.add(goal(not achieved))
    path = write_cases(tmp_path, [control("ctl", role, **fields), case("later")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 4
    assert len(server.requests) == 1  # the other case costs nothing
    assert states(out) == {"ctl": "failed", "later": "unrun"}
    expected = "achieved" if achieved else "not_achieved"
    came = "not_achieved" if achieved else "achieved"
    reason = f"control {role}: expected {expected}, came out {came}"
    # the control's own reasons follow: what the judge and the human label said
    assert rows(out, "cases.jsonl")[0]["reasons"][0] == reason
    stopped = f"controls_failed: ctl: {reason}"
    assert rows(out, "cases.jsonl")[1]["reasons"] == [f"{WITH_REFERENCE}: {stopped}"]
    record = summary(out)
    assert (record["status"], record["stopped"]) == ("controls_failed", stopped)
    assert record["unrun"] == [{"case_id": "later", "reasons": [f"{WITH_REFERENCE}: {stopped}"]}]
    assert err == f"tracebridge run: stopped: {stopped}\n"


def test_continue_on_control_failure_scores_the_rest_and_still_fails_the_run(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), goal(True))
    path = write_cases(tmp_path, [control("ctl", "negative_false_claim"), case("later")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url, "--continue-on-control-failure")
    assert code == 4
    assert states(out) == {"ctl": "failed", "later": "passed"}
    record = summary(out)
    # the status is the controls' verdict, as without the flag; the run did not stop
    assert (record["status"], record["stopped"]) == ("controls_failed", None)
    assert [c["as_expected"] for c in record["controls"]] == [False]


DUPLICATE = {"domain_evidence": {"ticket_ids": ["T-1", "T-2"]},
             "expect": {"ticket_ids": {"count": 1}}}


def test_a_duplicate_side_effect_control_must_be_blocked_by_a_check(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True))
    path = write_cases(tmp_path, [control("dup", "duplicate_side_effect", **DUPLICATE),
                                  case("later")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url)
    assert (code, len(server.requests)) == (0, 1)
    [dup, _] = rows(out, "cases.jsonl")
    assert dup["state"] == "passed"
    assert dup["control"] == {"role": "duplicate_side_effect", "expected": "blocked_by_evidence",
                              "outcome": "blocked_by_evidence", "as_expected": True}
    assert dup["reasons"] == ['expect ticket_ids: expected 1 item(s), got 2: ["T-1","T-2"]']


def test_a_goal_score_is_not_enough_for_a_duplicate_side_effect_control(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [control("dup", "duplicate_side_effect"), case("later")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url)
    assert (code, len(server.requests)) == (4, 0)  # no judge is asked about it at all
    assert states(out) == {"dup": "failed", "later": "unrun"}
    assert rows(out, "cases.jsonl")[0]["reasons"] == [
        "control duplicate_side_effect: expected blocked_by_evidence, came out no "
        "deterministic check blocked it (a goal score is not enough)"]


def test_a_negative_control_blocked_by_its_evidence_came_out_not_achieved(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True))
    item = control("claim", "negative_false_claim", domain_evidence={"ticket_id": None},
                   expect={"ticket_id": {"present": True}})
    path = write_cases(tmp_path, [item, case("later")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url)
    assert (code, len(server.requests)) == (0, 1)
    [claim, _] = rows(out, "cases.jsonl")
    assert (claim["state"], claim["control"]["outcome"]) == ("passed", "blocked_by_evidence")


def test_a_control_blocked_for_a_broken_case_is_a_failed_control(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [control("ctl", "negative_failed_tool", reference_version=None),
                                  case("later")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url)
    assert (code, len(server.requests)) == (4, 0)
    [ctl, _] = rows(out, "cases.jsonl")
    assert ctl["control"]["outcome"] == "blocked"
    assert ctl["reasons"][0] == ("control negative_failed_tool: expected not_achieved, came out "
                                 "blocked")


def test_controls_then_critical_cases_then_the_rest(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(*[goal(True)] * 4)
    path = write_cases(tmp_path, [
        case("plain", transcript=said("plain")),
        case("critical", transcript=said("critical"), critical=True),
        control("ctl", "positive", transcript=said("ctl")),
        case("plain-2", transcript=said("plain-2")),
    ])
    code, _, _ = run_cases(path, tmp_path / "run", server.base_url)
    assert code == 0
    assert asked(server) == ["ctl", "critical", "plain", "plain-2"]
    # cases.jsonl keeps the file's order
    assert list(states(tmp_path / "run")) == ["plain", "critical", "ctl", "plain-2"]


def test_a_control_with_both_goal_metrics_needs_both_to_agree(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), goal(False))
    path = write_cases(tmp_path, [control("ctl", "positive"), case("later")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url,
                           metrics=(WITH_REFERENCE, WITHOUT_REFERENCE))
    assert code == 4
    assert rows(out, "cases.jsonl")[0]["reasons"][0] == (
        "control positive: expected achieved, came out the goal metrics disagree or gave no "
        "value")


def test_controls_need_a_goal_metric(tmp_path: Path, server: FakeOpenAI) -> None:
    path = write_cases(tmp_path, [control("ctl", "positive")])
    code, _, err = run_cases(path, tmp_path / "run", server.base_url,
                             metrics=("conversation_completeness",))
    assert code == 2
    assert err == (f"tracebridge run: the case file has controls (ctl...) and no goal metric "
                   f"scores them: add --metric {WITH_REFERENCE} or --metric "
                   f"{WITHOUT_REFERENCE}\n")


def test_the_bundled_ticket_controls_come_out_as_expected(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    # positive, failed tool, false claim, partial, goal shift (label: achieved),
    # cancellation (label: achieved); the duplicate is blocked by its expect
    server.add(goal(True), goal(False), goal(False), goal(False), goal(True), goal(True))
    example = Path(__file__).parent.parent / "examples" / "ticket_controls.jsonl"
    out = tmp_path / "run"
    code, stdout, _ = run_cases(example, out, server.base_url)
    assert code == 0, stdout
    assert len(server.requests) == 6
    record = summary(out)
    assert [c["role"] for c in record["controls"]] == [
        "positive", "negative_failed_tool", "negative_false_claim", "partial_goal",
        "goal_shift", "cancellation", "duplicate_side_effect"]
    assert all(c["as_expected"] for c in record["controls"])
    assert record["counts"]["passed"] == 7


def test_the_readme_command_runs_the_bundled_controls(tmp_path: Path, server: FakeOpenAI) -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    section = readme.split("## Evaluation runs", 1)[1]
    command = section.split("```sh\n", 1)[1].split("\n```", 1)[0].replace("\\\n", " ")
    words = command.split()
    assert words[:2] == ["tracebridge", "run"]
    words[words.index("--out") + 1] = str(tmp_path / "run")
    words[2] = str(Path(__file__).parent.parent / words[2])
    server.add(goal(True), goal(False), goal(False), goal(False), goal(True), goal(True))
    from cli_helpers import run

    # One request at a time: the fake server answers in the order it is asked, and the
    # controls are asked in file order only when they do not overlap.
    code, stdout, err = run(
        *words[1:], "--base-url", server.base_url, "--no-cache", "--concurrency", "1"
    )
    assert code == 0, err
    assert stdout.startswith("complete: 7 passed; judge: 6 request(s), 600 + 120 tokens, $")
    record = summary(tmp_path / "run")
    assert record["budget"]["max_requests"] == 20
    assert record["cost"] == 600 * 0.15 / 1e6 + 120 * 0.60 / 1e6
