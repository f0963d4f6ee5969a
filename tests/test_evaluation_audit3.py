"""Audit 3 of the evaluation run, the gate and the judge: each test is a finding's regression.

A user check that raised is no evidence, even on a control; a known failure is not hidden by
another metric's open work; an unknown cost is never free; a reply's token counts are whole
numbers 0 or more or no usage at all; the pass threshold and the user checks are part of the
run; the controls come before the cache's answers; a job holds all its planned requests while it
runs; judge answers and case files take JSON's own types only.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import openai
import pytest
from cli_helpers import run
from evaluation_helpers import (
    WITH_REFERENCE,
    case,
    control,
    goal,
    rows,
    run_cases,
    states,
    summary,
    write_cases,
)
from fake_openai_server import FakeOpenAI, Reply
from gate_helpers import gate, policy

from tracebridge import AIMessage, HumanMessage, MultiTurnSample
from tracebridge.evaluation.budget import Budget, Estimate
from tracebridge.evaluation.cases import CaseFileError, load_cases
from tracebridge.metrics import (
    AgentGoalAccuracyWithReference,
    KnowledgeRetention,
    OpenAIJudge,
    Usage,
)

TOOL_CALLS = "tool_call_accuracy"
RELEVANCY = "conversation_relevancy"
TICKETS = "[slices.tickets]\nmax_failures = 0\n"


# --- user checks of this module (``--checks test_evaluation_audit3:NAME``) --------------------


def dedupe(case: Any) -> list[str]:
    """A check with a bug: it raises on the cases whose evidence has a ``writes`` list."""
    writes = case.domain_evidence.get("writes")
    return [] if writes is None else [write["id"] for write in writes]


def forgot_return(case: Any) -> Any:
    """A check that forgets to return its problems (returns None)."""
    ["duplicate write"] if case.control_role == "duplicate_side_effect" else []  # noqa: B018


def receipt_missing(case: Any) -> list[str]:
    return ["receipt missing in the ticket system"]


BLOCKING = {"on": False}
"""Whether ``toggled`` finds a problem: its code changes between two invocations."""


def toggled(case: Any) -> list[str]:
    return ["the ticket system has no receipt"] if BLOCKING["on"] else []


def checks(name: str) -> tuple[str, str]:
    return "--checks", f"{__name__}:{name}"


# --- 1. a user check that raised is no evidence, on a control either --------------------------


def test_a_check_that_raised_on_controls_fails_them_and_the_gate(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    writes = {"writes": [{"id_typo": 1}]}
    path = write_cases(tmp_path, [
        control("dup", "duplicate_side_effect", domain_evidence=writes),
        control("neg", "negative_false_claim", domain_evidence=writes),
        control("pos", "positive"),
        case("c1"),
    ])
    server.add(goal(True))  # pos
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, *checks("dedupe"))
    raised = "check test_evaluation_audit3:dedupe raised KeyError: 'id'"
    stopped = ("controls_failed: dup: control duplicate_side_effect: expected "
               "blocked_by_evidence, came out blocked; neg: control negative_false_claim: "
               "expected not_achieved, came out blocked")
    assert code == 4, err
    assert len(server.requests) == 1
    dup, neg, pos, c1 = rows(out, "cases.jsonl")
    assert (dup["state"], dup["control"], dup["reasons"]) == ("failed", {
        "role": "duplicate_side_effect", "expected": "blocked_by_evidence",
        "outcome": "blocked", "as_expected": False}, [
        "control duplicate_side_effect: expected blocked_by_evidence, came out blocked",
        raised])
    assert (neg["state"], neg["control"], neg["reasons"]) == ("failed", {
        "role": "negative_false_claim", "expected": "not_achieved", "outcome": "blocked",
        "as_expected": False}, [
        "control negative_false_claim: expected not_achieved, came out blocked", raised])
    assert (pos["state"], pos["control"]["outcome"]) == ("passed", "achieved")
    assert (c1["state"], c1["reasons"]) == ("unrun", [f"{WITH_REFERENCE}: {stopped}"])
    required = ('required_controls = ["positive", "negative_false_claim", '
                '"duplicate_side_effect"]\n')
    code, blockers, _ = gate(out, policy(tmp_path, required + TICKETS))
    assert (code, blockers) == (1, [
        "cases_unrun: run: 1 case(s) unrun, over the limit of 0 (c1)",
        "control_failed: dup: control duplicate_side_effect: expected blocked_by_evidence, "
        "came out blocked",
        "control_failed: neg: control negative_false_claim: expected not_achieved, came out "
        "blocked",
        f"missing_evidence: dup: {raised}",
        f"missing_evidence: neg: {raised}",
    ])


def test_a_check_that_returned_none_on_a_control_fails_it(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [control("dup", "duplicate_side_effect"), case("c1")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, *checks("forgot_return"))
    returned = ("check test_evaluation_audit3:forgot_return returned NoneType; expected a list "
                "of problems (strings)")
    assert code == 4, err
    assert server.requests == []
    dup, c1 = rows(out, "cases.jsonl")
    assert (dup["state"], dup["control"]["outcome"], dup["control"]["as_expected"]) == (
        "failed", "blocked", False)
    assert (c1["state"], c1["reasons"]) == ("blocked", [returned])
    code, blockers, _ = gate(out, policy(tmp_path, 'required_controls = '
                                         '["duplicate_side_effect"]\n' + TICKETS))
    assert (code, blockers) == (1, [
        "control_failed: dup: control duplicate_side_effect: expected blocked_by_evidence, "
        "came out blocked",
        f"missing_evidence: c1: {returned}",
        f"missing_evidence: dup: {returned}",
    ])


def test_a_control_an_earlier_version_passed_on_a_raised_check_is_missing_evidence(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """A run directory written before the fix holds the control as passed, blocked by its
    evidence, with the check's own failure as the reason: the gate does not take it."""
    path = write_cases(tmp_path, [control("dup", "duplicate_side_effect")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, *checks("receipt_missing"))
    assert code == 0, err
    [row] = rows(out, "cases.jsonl")
    assert (row["state"], row["control"]["outcome"], row["reasons"]) == (
        "passed", "blocked_by_evidence",
        ["check test_evaluation_audit3:receipt_missing: receipt missing in the ticket system"])
    clean = policy(tmp_path, 'required_controls = ["duplicate_side_effect"]\n' + TICKETS)
    assert gate(out, clean)[:2] == (0, [])
    raised = "check test_evaluation_audit3:receipt_missing raised KeyError: 'id'"
    (out / "cases.jsonl").write_text(json.dumps({**row, "reasons": [raised]}) + "\n")
    assert gate(out, clean)[:2] == (2, [f"missing_evidence: dup: {raised}"])


# --- 2. a known failure is not hidden by another metric's open work ---------------------------


BAD_CALLS = [{"name": "delete_account", "args": {}}]
"""The agent called create_ticket: tool_call_accuracy is 0.0, deterministic and final."""


def known_failure(tmp_path: Path, server: FakeOpenAI, replies: list[Reply | str],
                  **fields: Any) -> tuple[int, Path]:
    server.add(*replies)
    path = write_cases(tmp_path, [case("c1", reference_tool_calls=BAD_CALLS, **fields)])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url, metrics=(WITH_REFERENCE, TOOL_CALLS))
    return code, out


def test_a_failure_beside_an_evaluator_error_is_a_failure(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    code, out = known_failure(tmp_path, server, [Reply(status=400)])
    error = (f"{WITH_REFERENCE}: the judge request failed: BadRequestError: Error code: 400 - "
             "scripted failure")
    assert code == 3  # incomplete: the errored request is asked again on resume
    [row] = rows(out, "cases.jsonl")
    assert (row["state"], row["reasons"]) == ("failed", [
        f"{TOOL_CALLS} = 0.0 (below 1.0)", error])
    found = summary(out)
    assert (found["status"], found["counts"]["failed"], found["counts"]["errored"]) == (
        "incomplete", 1, 0)
    assert found["errored"] == [{"case_id": "c1", "reasons": row["reasons"]}]
    tolerant = policy(tmp_path, "max_evaluator_errors = 1\n" + TICKETS, "tolerant.toml")
    assert gate(out, tolerant)[:2] == (1, [
        "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (c1)"])
    assert gate(out, policy(tmp_path, TICKETS))[:2] == (1, [
        "evaluator_errors: run: 1 evaluator error(s), over the limit of 0 (c1 "
        f"{WITH_REFERENCE})",
        "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (c1)"])
    # the failure allowed, the open work still blocks
    allowed = policy(tmp_path, "[slices.tickets]\nmax_failures = 1\n", "allowed.toml")
    assert gate(out, allowed)[:2] == (2, [
        "evaluator_errors: run: 1 evaluator error(s), over the limit of 0 (c1 "
        f"{WITH_REFERENCE})"])


def test_a_failure_beside_a_review_is_a_failure(tmp_path: Path, server: FakeOpenAI) -> None:
    code, out = known_failure(tmp_path, server, [goal(True)],
                              human_adjudication={"goal_achieved": False, "reason": "none"})
    review = f"{WITH_REFERENCE} says achieved; the human label says not achieved"
    assert code == 0
    [row] = rows(out, "cases.jsonl")
    assert (row["state"], row["reasons"]) == ("failed", [f"{TOOL_CALLS} = 0.0 (below 1.0)",
                                                         review])
    lenient = policy(tmp_path, "review_blocks = false\n" + TICKETS, "lenient.toml")
    assert gate(out, lenient)[:2] == (1, [
        "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (c1)"])
    assert gate(out, policy(tmp_path, TICKETS))[:2] == (1, [
        f"review_required: c1: {review}",
        "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (c1)"])
    allowed = policy(tmp_path, "[slices.tickets]\nmax_failures = 1\n", "allowed.toml")
    junit = tmp_path / "gate.xml"
    assert gate(out, allowed, "--junit", str(junit))[:2] == (3, [
        f"review_required: c1: {review}"])
    xml = junit.read_text()
    assert (f'<testcase classname="c1" name="{WITH_REFERENCE}">\n      <failure '
            f'message="{review}" type="review_required">') in xml
    assert (f'<testcase classname="c1" name="{TOOL_CALLS}">\n      <failure '
            f'message="{TOOL_CALLS} = 0.0 (below 1.0)" type="failed">') in xml


GOOD_CALLS = [{"name": "create_ticket", "args": {"category": "billing"}}]


@pytest.mark.parametrize("critical", [True, False])
def test_a_failure_beside_an_unrun_metric_still_blocks_as_unrun_work(
    tmp_path: Path, server: FakeOpenAI, critical: bool
) -> None:
    server.add(goal(True))  # c0 (critical: first); c1's judged job is past the budget
    path = write_cases(tmp_path, [
        case("c0", critical=True, reference_tool_calls=GOOD_CALLS),
        case("c1", critical=critical, reference_tool_calls=BAD_CALLS)])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url, "--max-requests", "1",
                           "--allow-partial", metrics=(TOOL_CALLS, WITH_REFERENCE))
    stop = "budget: the planned work needs 1 judge requests; 0 of the limit of 1 are left"
    reasons = [f"{TOOL_CALLS} = 0.0 (below 1.0)", f"{WITH_REFERENCE}: {stop}"]
    assert code == 3
    assert {row["case_id"]: (row["state"], row["reasons"]) for row in rows(out, "cases.jsonl")
            } == {"c0": ("passed", []), "c1": ("failed", reasons)}
    assert (summary(out)["status"], summary(out)["unrun"]) == (
        "incomplete", [{"case_id": "c1", "reasons": reasons}])
    assert gate(out, policy(tmp_path, TICKETS))[:2] == (1, [
        "critical_unrun: c1: a critical case failed and is incomplete (unrun): "
        + "; ".join(reasons) if critical else
        "cases_unrun: run: 1 case(s) unrun, over the limit of 0 (c1)",
        "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (c1)"])
    allowed = policy(tmp_path, "[slices.tickets]\nmax_failures = 1\n", "allowed.toml")
    assert gate(out, allowed)[:2] == (2, [
        "critical_unrun: c1: a critical case failed and is incomplete (unrun): "
        + "; ".join(reasons) if critical else
        "cases_unrun: run: 1 case(s) unrun, over the limit of 0 (c1)"])


def test_a_goal_failure_is_not_final_while_the_other_goal_metric_is_open(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(False), Reply(status=400))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url, metrics=(
        WITH_REFERENCE, "agent_goal_accuracy_without_reference"))
    assert code == 3
    assert states(out) == {"c1": "errored"}


# --- 3. an unknown cost is never free -----------------------------------------------------------


def test_replies_without_usage_leave_the_cost_unknown(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(*[Reply(content=goal(True), usage=False)] * 2, goal(True))
    path = write_cases(tmp_path, [case(f"c{i}") for i in range(3)])
    out = tmp_path / "run"
    code, stdout, _ = run_cases(path, out, server.base_url, "--price", "judge-model=1000,1000")
    assert code == 0
    assert stdout == (f"complete: 3 passed; judge: 3 request(s), 100 + 20 tokens; "
                      f"{out}/summary.json\n")
    found = summary(out)
    assert (found["cost"], found["cost_note"]) == (None, (
        "2 request(s) reported no token usage: cost unknown (the requests that reported it "
        "cost $0.1200)"))
    unknown = ("cost_unknown: run: the policy limits the cost and the run does not know its "
               "cost (2 judge request(s) reported no token usage)")
    limited = policy(tmp_path, "max_cost = 100.0\n" + TICKETS)
    assert gate(out, limited)[:2] == (2, [unknown])
    page = tmp_path / "report.html"
    assert run("report", str(out), "-o", str(page))[0] == 0
    assert ('<dd id="fact-cost">unknown (2 judge request(s) reported no token usage)</dd>'
            in page.read_text())
    # a run directory of an earlier version wrote the others' cost alone
    (out / "summary.json").write_text(json.dumps({**found, "cost": 0.12, "cost_note": (
        "2 request(s) reported no token usage; the cost leaves them out")}))
    assert gate(out, limited)[:2] == (2, [unknown])


# --- 4. a token count is a whole number 0 or more, or no usage --------------------------------


SAMPLE = MultiTurnSample(messages=[HumanMessage(content="open a ticket"),
                                   AIMessage(content="done")], reference="a ticket")


async def goal_with(server: FakeOpenAI, *replies: Reply | str,
                    retries: int = 0) -> tuple[Any, OpenAIJudge]:
    server.add(*replies)
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="-", max_retries=0)
    judge = OpenAIJudge(client, "judge-model", max_retries=retries)
    try:
        return await AgentGoalAccuracyWithReference(judge).ascore(SAMPLE), judge
    finally:
        await judge.aclose()


@pytest.mark.parametrize(("prompt", "completion"), [(-100000, 20), (100, -1), (100.5, 20)])
async def test_a_count_that_is_not_a_whole_number_0_or_more_is_no_usage(
    server: FakeOpenAI, prompt: Any, completion: Any
) -> None:
    reply = Reply(content=goal(True), prompt_tokens=prompt, completion_tokens=completion)
    result, _ = await goal_with(server, reply)
    assert (result.value, result.usage) == (1.0, Usage(requests=1, requests_without_usage=1))


def test_usage_counts_are_0_or_more() -> None:
    with pytest.raises(ValueError, match="prompt_tokens\n  Input should be greater than or "
                                         "equal to 0"):
        Usage(prompt_tokens=-1)


def test_negative_tokens_do_not_grow_the_budget(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(Reply(content=goal(True), prompt_tokens=-100000, completion_tokens=20),
               *[Reply(content=goal(True), prompt_tokens=900, completion_tokens=100)] * 5)
    path = write_cases(tmp_path, [case(f"c{i}") for i in range(6)])
    out = tmp_path / "run"
    # room for two requests at the estimate (1578 tokens each since prompt version 2), not 3
    code, _, _ = run_cases(path, out, server.base_url, "--max-tokens", "3400", "--price",
                           "judge-model=1,1", "--allow-partial")
    assert (code, len(server.requests)) == (3, 2)
    found = summary(out)
    assert found["usage"] == {"requests": 2, "prompt_tokens": 900, "completion_tokens": 100,
                              "total_tokens": 1000, "requests_without_usage": 1}
    assert found["cost"] is None
    spent = found["budget"]["spent_this_run"]
    assert spent["requests"] == 2
    assert spent["tokens"] + found["budget"]["remaining"]["tokens"] == 3400
    assert spent["tokens"] > 1000  # the request without usage charged at its estimate
    assert found["counts"]["passed"] == 2


# --- 5. the pass threshold and the user checks are part of the run ----------------------------


def test_a_resume_with_another_pass_threshold_is_refused(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(False), goal(True))
    path = write_cases(tmp_path, [case("c1"), case("c2")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url)[0] == 0
    header = summary(out)
    assert (header["pass_threshold"], header["checks"]) == (1.0, [])
    before = (out / "cases.jsonl").read_text()
    assert run_cases(path, out, server.base_url, "--pass-threshold", "0") == (
        2, "", f"tracebridge run: {out} holds a run with another pass threshold "
        "(--pass-threshold); resuming would mix two runs: use a new --out\n")
    assert (out / "cases.jsonl").read_text() == before
    assert states(out) == {"c1": "failed", "c2": "passed"}
    assert run_cases(path, out, server.base_url, "--pass-threshold", "1")[0] == 0


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"pass_threshold": None}, "holds a run that did not record its pass threshold "
         "(--pass-threshold) (made by an earlier version): it cannot be told whether resuming "
         "would mix two runs; use a new --out"),
        ({"checks": None}, "holds a run that did not record its set of user checks (--checks) "
         "(made by an earlier version): it cannot be told whether resuming would mix two "
         "runs; use a new --out"),
        ({"pass_threshold": True}, "holds a run with another pass threshold (--pass-threshold); "
         "resuming would mix two runs: use a new --out"),
    ],
)
def test_a_run_that_did_not_record_its_settings_is_refused_for_what_it_is(
    tmp_path: Path, server: FakeOpenAI, edit: dict[str, Any], said: str
) -> None:
    """A run directory from before the threshold and checks were recorded (the key absent),
    or one whose threshold reads true (equal to 1.0 in Python, not as JSON)."""
    server.add(goal(True))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url)[0] == 0
    recorded = summary(out)
    for key, value in edit.items():
        if value is None:
            del recorded[key]
        else:
            recorded[key] = value
    (out / "summary.json").write_text(json.dumps(recorded))
    assert run_cases(path, out, server.base_url) == (2, "", f"tracebridge run: {out} {said}\n")


def test_a_resume_with_other_checks_is_refused(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(goal(True))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url)[0] == 0
    assert run_cases(path, out, server.base_url, *checks("receipt_missing")) == (
        2, "", f"tracebridge run: {out} holds a run with another set of user checks "
        "(--checks); resuming would mix two runs: use a new --out\n")
    assert states(out) == {"c1": "passed"}
    other = tmp_path / "checked"
    server.add(goal(True))
    assert run_cases(path, other, server.base_url, *checks("toggled"))[0] == 0
    assert summary(other)["checks"] == ["test_evaluation_audit3:toggled"]


def test_calibration_leaves_out_a_result_of_a_case_now_blocked(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """The checks' code is not fingerprinted: a check that now blocks a case leaves its
    earlier result in results.jsonl, which is no verdict of the run."""
    server.add(goal(True))
    path = write_cases(tmp_path, [case("c1", human_adjudication={"goal_achieved": True})])
    out = tmp_path / "run"
    BLOCKING["on"] = False
    try:
        assert run_cases(path, out, server.base_url, *checks("toggled"))[0] == 0
        BLOCKING["on"] = True
        assert run_cases(path, out, server.base_url, *checks("toggled"))[0] == 0
    finally:
        BLOCKING["on"] = False
    assert states(out) == {"c1": "blocked"}
    assert [row["case_id"] for row in rows(out, "results.jsonl")] == ["c1"]
    code, stdout, _ = run("calibrate", str(out), "--json")
    figures = json.loads(stdout)["metrics"][WITH_REFERENCE]["slices"]["(all)"]
    assert (code, figures["count"], figures["no_result"], figures["scored"],
            figures["both_achieved"], figures["agreement_rate"]) == (0, 1, 1, 0, 0, None)


# --- 6. the controls come before the cache's answers -----------------------------------------


def test_a_failed_control_leaves_the_cached_cases_unrun(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    cache = tmp_path / "cache.sqlite"
    first = write_cases(tmp_path, [case("c1"), case("c2", reference="Two tickets.")],
                        "first.jsonl")
    server.add(goal(True), goal(False))
    assert run_cases(first, tmp_path / "run1", server.base_url, "--cache", str(cache))[0] == 0
    second = write_cases(tmp_path, [control("ctl", "negative_false_claim",
                                            reference="No ticket."),
                                    case("c1"), case("c2", reference="Two tickets.")],
                         "second.jsonl")
    server.add(goal(True))  # the negative control comes out achieved: wrong
    out = tmp_path / "run2"
    code, _, _ = run_cases(second, out, server.base_url, "--cache", str(cache))
    stopped = ("controls_failed: ctl: control negative_false_claim: expected not_achieved, "
               "came out achieved")
    assert code == 4
    assert len(server.requests) == 3
    assert states(out) == {"ctl": "failed", "c1": "unrun", "c2": "unrun"}
    assert [row["case_id"] for row in rows(out, "results.jsonl")] == ["ctl"]
    assert summary(out)["unrun"] == [
        {"case_id": "c1", "reasons": [f"{WITH_REFERENCE}: {stopped}"]},
        {"case_id": "c2", "reasons": [f"{WITH_REFERENCE}: {stopped}"]}]
    # scored anyway when asked to: the cache answers all three, nothing more is sent
    anyway = tmp_path / "run3"
    code, _, _ = run_cases(second, anyway, server.base_url, "--cache", str(cache),
                           "--continue-on-control-failure")
    assert code == 4
    assert len(server.requests) == 3
    assert states(anyway) == {"ctl": "failed", "c1": "passed", "c2": "failed"}
    assert [row["cached"] is not None for row in rows(anyway, "results.jsonl")] == [
        True, True, True]


# --- 7. a job holds all its planned requests while it runs ------------------------------------


SIX = [{"role": "human", "content": "q1"}, {"role": "ai", "content": "a1"},
       {"role": "human", "content": "q2"}, {"role": "ai", "content": "a2"},
       {"role": "human", "content": "q3"}, {"role": "ai", "content": "a3"}]
"""Three agent messages: conversation_relevancy asks three requests."""


def test_jobs_in_flight_side_by_side_are_not_cut(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(*[json.dumps({"reason": "on topic", "relevant": True})] * 10)
    path = write_cases(tmp_path, [case("c1", transcript=SIX), case("c2", transcript=SIX)])
    out = tmp_path / "run"
    code, _, err = run("run", str(path), "--out", str(out), "--metric", RELEVANCY, "--model",
                       "judge-model", "--base-url", server.base_url, "--retries", "0",
                       "--no-cache", "--concurrency", "2", "--max-requests", "4",
                       "--allow-partial")
    stop = "budget: the planned work needs 3 judge requests; 1 of the limit of 4 are left"
    assert (code, len(server.requests)) == (3, 3)
    assert err == f"tracebridge run: stopped: {stop}\n"
    assert {row["case_id"]: (row["state"], row["reasons"]) for row in rows(out, "cases.jsonl")
            } == {"c1": ("passed", []), "c2": ("unrun", [f"{RELEVANCY}: {stop}"])}
    assert [row["value"] for row in rows(out, "results.jsonl")] == [1.0]
    assert (out / "spent.jsonl").read_text() == ""
    assert summary(out)["budget"]["remaining"]["requests"] == 1


def estimated(requests: int, tokens: int = 100) -> Estimate:
    return Estimate(requests, tokens * requests, 0, None)


async def test_a_hold_is_drawn_on_by_its_own_requests_and_released_at_the_end() -> None:
    budget = Budget(max_requests=4)
    hold = budget.hold([estimated(1)] * 3)
    assert not isinstance(hold, str)
    assert budget.remaining.requests == 1
    assert budget.hold([estimated(1)] * 3) == (
        "the planned work needs 3 judge requests; 1 of the limit of 4 are left")

    async def job() -> None:
        with budget.holding(hold):
            for _ in range(3):
                ticket = budget.reserve(estimated(1))
                assert ticket is not None
                assert budget.remaining.requests == 1  # the job's own, not the others'
                budget.settle(ticket, Usage(requests=1, prompt_tokens=50, total_tokens=50))
            retry = budget.reserve(estimated(1))  # past its plan: on what is left
            assert retry is not None
            assert budget.remaining.requests == 0
            budget.settle(retry, Usage(requests=1, prompt_tokens=50, total_tokens=50))

    await asyncio.create_task(job())
    assert (budget.spent.requests, budget.reserved.requests, budget.remaining.requests) == (
        4, 0, 0)
    other = Budget(max_requests=4)
    unused = other.hold([estimated(1)] * 3)
    assert not isinstance(unused, str)
    with other.holding(unused):
        pass
    assert (other.reserved.requests, other.remaining.requests) == (0, 4)
    other.release(unused)  # again: nothing
    assert other.remaining.requests == 4


# --- 8. judge answers and case files take JSON's own types -----------------------------------


GOAL_FIELDS = '"user_goal": "g", "end_state": "e", "reason": "r"'


def answer_with(rest: str) -> str:
    """A goal answer: the three strings, then ``rest``."""
    return "{" + GOAL_FIELDS + ", " + rest + "}"


@pytest.mark.parametrize(("answer", "problem"), [
    (answer_with('"achieved": "no"'), "achieved: Input should be a valid boolean"),
    (answer_with('"achieved": "off"'), "achieved: Input should be a valid boolean"),
    (answer_with('"achieved": 1'), "achieved: Input should be a valid boolean"),
    (answer_with('"achieved": false, "achieved": true'),
     "the answer has the key 'achieved' twice"),
    ('{"user_goal": "g", "end_state": "e", "reason": "r", "achieved": true, '
     '"x": {"k": 1, "k": 2}}', "the answer has the key 'k' twice"),
])
async def test_a_goal_answer_of_another_type_is_no_verdict(
    server: FakeOpenAI, answer: str, problem: str
) -> None:
    result, _ = await goal_with(server, answer)
    assert (result.value, result.error) == (
        None, f"the judge gave no valid answer in 1 attempts; last problem: {problem}")


async def test_a_repeated_key_is_asked_again(server: FakeOpenAI) -> None:
    result, _ = await goal_with(
        server, answer_with('"achieved": false, "achieved": true'), goal(False),
        retries=1)
    assert (result.value, result.error) == (0.0, None)
    assert server.requests[1]["messages"][3]["content"] == (
        "That answer is not valid: the answer has the key 'achieved' twice. Answer again "
        "with JSON that follows the schema exactly.")


async def test_a_message_index_of_true_is_no_index(server: FakeOpenAI) -> None:
    server.add('{"verdicts": [{"message_index": true, "reason": "r", "verdict": "t"}]}')
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="-", max_retries=0)
    judge = OpenAIJudge(client, "judge-model", max_retries=0)
    try:
        result = await KnowledgeRetention(judge).ascore(SAMPLE)
    finally:
        await judge.aclose()
    assert (result.value, result.error) == (None, (
        "the judge gave no valid answer in 1 attempts; last problem: verdicts.0.message_index: "
        "Input should be a valid integer; verdicts.0.verdict: Input should be a valid "
        "boolean"))


def test_case_switches_and_counts_take_json_booleans_and_numbers(tmp_path: Path) -> None:
    path = write_cases(tmp_path, [
        case("a", critical="false", human_adjudication={"goal_achieved": "no"},
             expect={"ticket_id": {"count": True}}, domain_evidence={"ticket_id": ["T-1"]}),
        case("b", critical=0, human_adjudication={"goal_achieved": 1},
             expect={"ticket_id": {"present": "yes"}}, domain_evidence={"ticket_id": "T-1"}),
    ])
    with pytest.raises(CaseFileError) as raised:
        load_cases(str(path))
    assert [str(problem) for problem in raised.value.problems] == [
        "line 1 (case a): critical: Input should be a valid boolean",
        "line 1 (case a): expect.ticket_id.count: Input should be a valid integer",
        "line 1 (case a): human_adjudication.goal_achieved: Input should be a valid boolean",
        "line 2 (case b): critical: Input should be a valid boolean",
        "line 2 (case b): expect.ticket_id.present: Input should be a valid boolean",
        "line 2 (case b): human_adjudication.goal_achieved: Input should be a valid boolean",
    ]
