"""Evaluation runs: the controls' verdict comes before a budget stop; a hold the jobs in flight
keep from a job is waited for, so the concurrency never changes which cases run; a Runner
prices its judge's own model; a refused run leaves every case unrun, the cache's answers
included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
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

from tracebridge.evaluation.budget import Budget, Price
from tracebridge.evaluation.cases import load_cases
from tracebridge.evaluation.record import RunRecord
from tracebridge.evaluation.runner import Runner, RunSettings
from tracebridge.metrics import OpenAIJudge

F1 = "tool_call_f1"
RELEVANCY = "conversation_relevancy"
TICKETS = "[slices.tickets]\nmax_failures = 0\n"
CREATE = [{"name": "create_ticket", "args": {"category": "billing"}}]
NOT_JSON = "not a JSON answer"
"""An answer the judge asks again for (one more request, with ``--retries 1``)."""
UNPROVEN = ("controls_incomplete: ctl unrun (the controls must come out as expected before "
            "other cases are scored)")


def warm_cache(tmp_path: Path, server: FakeOpenAI, items: list[dict[str, Any]],
               replies: list[str]) -> Path:
    """A cache holding the judged results of ``items`` (one run that asks ``replies``)."""
    cache = tmp_path / "cache.sqlite"
    server.add(*replies)
    path = write_cases(tmp_path, items, "warm.jsonl")
    code, _, err = run_cases(path, tmp_path / "warm", server.base_url, "--cache", str(cache))
    assert code == 0, err
    assert not server.script
    return cache


def normal_cases() -> list[dict[str, Any]]:
    """n1 comes out achieved, n2 not (their judged results come from the cache)."""
    return [case("n1"), case("n2", reference="Two tickets are created.")]


def reasons(out: Path) -> dict[str, tuple[str, list[str]]]:
    return {row["case_id"]: (row["state"], row["reasons"]) for row in rows(out, "cases.jsonl")}


# --- 1. the controls' verdict comes before a budget stop --------------------------------------


def test_a_control_the_budget_left_unrun_stops_the_run_as_controls_incomplete(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    cache = warm_cache(tmp_path, server, normal_cases(), [goal(True), goal(False)])
    path = write_cases(tmp_path, [control("ctl", "positive", reference="Ticket T-1 is open."),
                                  *normal_cases()])
    server.add(NOT_JSON)  # asked again: the limit of 1 request is reached
    out = tmp_path / "run"
    code, stdout, err = run_cases(path, out, server.base_url, "--cache", str(cache),
                                  "--retries", "1", "--max-requests", "1")
    budget = "budget: the limit of 1 judge requests is reached (1 sent, 0 in flight)"
    assert (code, len(server.requests)) == (3, 3)
    assert err == f"tracebridge run: stopped: {UNPROVEN}\n"
    assert stdout.startswith("controls_incomplete: 3 unrun; judge: 1 request(s)")
    assert reasons(out) == {
        "ctl": ("unrun", [f"{WITH_REFERENCE}: {budget}"]),
        "n1": ("unrun", [f"{WITH_REFERENCE}: {UNPROVEN}"]),
        "n2": ("unrun", [f"{WITH_REFERENCE}: {UNPROVEN}"]),
    }
    assert (out / "results.jsonl").read_text() == ""
    record = summary(out)
    assert (record["status"], record["stopped"]) == ("controls_incomplete", UNPROVEN)
    assert record["counts"] == {"passed": 0, "failed": 0, "blocked": 0, "errored": 0,
                                "unrun": 3, "review": 0}
    assert [json.loads(line)["case_id"] for line in
            (out / "spent.jsonl").read_text().splitlines()] == ["ctl"]
    code, blockers, gate_err = gate(out, policy(tmp_path, TICKETS))
    assert (code, blockers) == (2, [
        "cases_unrun: run: 2 case(s) unrun, over the limit of 0 (n1, n2)",
        f"control_unrun: ctl: the control unrun, so the judge is not proven: {WITH_REFERENCE}: "
        f"{budget}",
    ])
    assert gate_err == "tracebridge gate: incomplete (exit 2): 2 blocker(s)\n"


def test_a_wrong_control_beside_one_the_budget_left_unrun_fails_the_run(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    cache = warm_cache(tmp_path, server, normal_cases(), [goal(True), goal(False)])
    path = write_cases(tmp_path, [
        control("wrong", "negative_false_claim", reference="No ticket is created."),
        control("ctl", "positive", reference="Ticket T-1 is open."),
        *normal_cases(),
    ])
    server.add(goal(True), NOT_JSON)  # wrong: achieved; ctl: asked again past the limit
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--cache", str(cache),
                             "--retries", "1", "--max-requests", "2")
    stopped = ("controls_failed: wrong: control negative_false_claim: expected not_achieved, "
               "came out achieved")
    budget = "budget: the limit of 2 judge requests is reached (2 sent, 0 in flight)"
    assert (code, len(server.requests)) == (4, 4)
    assert err == f"tracebridge run: stopped: {stopped}\n"
    assert reasons(out) == {
        "wrong": ("failed", ["control negative_false_claim: expected not_achieved, came out "
                             "achieved"]),
        "ctl": ("unrun", [f"{WITH_REFERENCE}: {budget}"]),
        "n1": ("unrun", [f"{WITH_REFERENCE}: {stopped}"]),
        "n2": ("unrun", [f"{WITH_REFERENCE}: {stopped}"]),
    }
    assert [row["case_id"] for row in rows(out, "results.jsonl")] == ["wrong"]
    assert (summary(out)["status"], summary(out)["stopped"]) == ("controls_failed", stopped)


def test_a_control_the_budget_left_unrun_leaves_the_deterministic_metrics_unrun(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    wrong_tool = case("wrong-tool", reference_tool_calls=CREATE)
    wrong_tool["transcript"][1]["tool_calls"][0]["name"] = "delete_ticket"
    path = write_cases(tmp_path, [
        control("ctl", "positive", reference_tool_calls=CREATE), wrong_tool])
    server.add(NOT_JSON)
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--retries", "1", "--max-requests",
                             "1", "--allow-partial", metrics=(WITH_REFERENCE, F1))
    budget = "budget: the limit of 1 judge requests is reached (1 sent, 0 in flight)"
    assert (code, len(server.requests)) == (3, 1)
    assert err == f"tracebridge run: stopped: {UNPROVEN}\n"
    assert reasons(out) == {
        "ctl": ("unrun", [f"{WITH_REFERENCE}: {budget}"]),
        "wrong-tool": ("unrun", [f"{WITH_REFERENCE}: {UNPROVEN}", f"{F1}: {UNPROVEN}"]),
    }
    assert rows(out, "cases.jsonl")[1]["values"] == {}
    assert (out / "results.jsonl").read_text() == ""
    assert summary(out)["status"] == "controls_incomplete"


# --- 2. a hold refused while jobs are in flight waits for them --------------------------------

ESTIMATED_TOKENS = 1649
"""What one goal job on ``case()`` is estimated at (the fake judge really spends 120)."""
ESTIMATED_COST = "$0.02279"
"""The same at 10 and 20 dollars per million input and output tokens (it really costs
$0.0014)."""
PRICE = ("--price", "judge-model=10,20")


def six(tmp_path: Path) -> Path:
    return write_cases(tmp_path, [case(f"k{i}") for i in range(6)])


@pytest.mark.parametrize("concurrency", ["1", "4"])
@pytest.mark.parametrize(("limit", "spent", "remaining"), [
    (("--max-tokens", "4000"), "tokens", 4000 - 6 * 120),
    (("--max-cost", "0.05", *PRICE), "cost", 0.0416),
], ids=["tokens", "cost"])
def test_a_budget_with_room_runs_every_case_whatever_the_concurrency(
    tmp_path: Path, server: FakeOpenAI, concurrency: str, limit: tuple[str, ...], spent: str,
    remaining: float,
) -> None:
    server.add(*[goal(True)] * 6)
    out = tmp_path / "run"
    code, _, err = run_cases(six(tmp_path), out, server.base_url, *limit, "--allow-partial",
                             "--concurrency", concurrency)
    assert (code, err, len(server.requests)) == (0, "", 6)
    assert set(states(out).values()) == {"passed"}
    record = summary(out)
    assert (record["status"], record["stopped"]) == ("complete", None)
    assert record["budget"]["remaining"][spent] == remaining


@pytest.mark.parametrize("concurrency", ["1", "4"])
@pytest.mark.parametrize(("limit", "spent", "stop", "remaining"), [
    (("--max-tokens", "2000"), "tokens",
     f"the planned work needs an estimated {ESTIMATED_TOKENS:,} tokens; 1,640 of the limit of "
     "2,000 are left", 1640),
    (("--max-cost", "0.0264", *PRICE), "cost",
     f"the planned work costs an estimated {ESTIMATED_COST}; $0.0222 of the limit of $0.0264 "
     "is left", 0.0222),
], ids=["tokens", "cost"])
def test_the_budget_boundary_is_where_nothing_is_in_flight_whatever_the_concurrency(
    tmp_path: Path, server: FakeOpenAI, concurrency: str, limit: tuple[str, ...], spent: str,
    stop: str, remaining: float,
) -> None:
    """Three jobs fit one after another (each settles at far less than its estimate); the
    fourth does not fit what is left once nothing is in flight, which the summary says too."""
    server.add(*[goal(True)] * 3)
    out = tmp_path / "run"
    code, _, err = run_cases(six(tmp_path), out, server.base_url, *limit, "--allow-partial",
                             "--concurrency", concurrency)
    assert (code, err, len(server.requests)) == (3, f"tracebridge run: stopped: budget: {stop}\n",
                                                 3)
    assert reasons(out) == {
        **{f"k{i}": ("passed", []) for i in range(3)},
        **{f"k{i}": ("unrun", [f"{WITH_REFERENCE}: budget: {stop}"]) for i in range(3, 6)},
    }
    record = summary(out)
    assert (record["status"], record["stopped"]) == ("incomplete", f"budget: {stop}")
    assert record["budget"]["remaining"][spent] == remaining
    assert record["budget"]["spent_this_run"]["requests"] == 3


SIX_MESSAGES = [{"role": "human", "content": "q1"}, {"role": "ai", "content": "a1"},
                {"role": "human", "content": "q2"}, {"role": "ai", "content": "a2"},
                {"role": "human", "content": "q3"}, {"role": "ai", "content": "a3"}]
"""Three agent messages: conversation_relevancy plans three requests."""


@pytest.mark.parametrize("concurrency", ["1", "2"])
def test_requests_a_job_did_not_use_go_to_the_job_that_waited(
    tmp_path: Path, server: FakeOpenAI, concurrency: str
) -> None:
    """c1 holds 3 of the 4 requests and fails at its first; c2, refused while c1 is in
    flight, then holds the 3 left and runs."""
    server.add(Reply(status=500), *[json.dumps({"reason": "on topic", "relevant": True})] * 3)
    path = write_cases(tmp_path, [case("c1", transcript=SIX_MESSAGES),
                                  case("c2", transcript=SIX_MESSAGES)])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--max-requests", "4",
                             "--allow-partial", "--concurrency", concurrency,
                             metrics=(RELEVANCY,))
    assert (code, err, len(server.requests)) == (3, "", 4)
    assert states(out) == {"c1": "errored", "c2": "passed"}
    record = summary(out)
    assert (record["status"], record["stopped"]) == ("incomplete", None)
    assert record["budget"]["remaining"]["requests"] == 0


# --- 3. a Runner without model= prices its judge's model --------------------------------------


async def test_a_runner_without_a_model_prices_the_judges_model(
    tmp_path: Path, judge: OpenAIJudge, server: FakeOpenAI
) -> None:
    server.add(goal(True))
    cases = load_cases(str(write_cases(tmp_path, [case("a")])))
    budget = Budget(max_cost=1.0, prices={"judge-model": Price(10.0, 20.0)})
    runner = Runner(cases, [WITH_REFERENCE], RunRecord(tmp_path / "run"), judge=judge,
                    budget=budget, settings=RunSettings(concurrency=1))
    assert runner.model == "judge-model"
    result = await runner.run()
    assert (result["status"], result["cost"], result["cost_note"]) == ("complete", 0.0014, None)
    assert result["budget"]["spent_this_run"]["cost"] == 0.0014
    assert result["budget"]["remaining"]["cost"] == 0.9986


# --- 4. a refused run leaves every case unrun, the cache's answers included -------------------


def test_a_refused_run_leaves_the_cached_cases_unrun(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    ctl = control("ctl", "positive", reference="Ticket T-1 is open.",
                  reference_tool_calls=CREATE)
    cached = [ctl, *(dict(item, reference_tool_calls=CREATE) for item in normal_cases())]
    cache = warm_cache(tmp_path, server, cached, [goal(True), goal(True), goal(False)])
    path = write_cases(tmp_path, [
        *cached,
        case("n3", reference="Three tickets.", reference_tool_calls=CREATE),
        case("n4", reference="Four tickets.", reference_tool_calls=CREATE),
    ])
    out = tmp_path / "run"
    code, stdout, err = run_cases(path, out, server.base_url, "--cache", str(cache),
                                  "--max-requests", "1", metrics=(WITH_REFERENCE, F1))
    stopped = ("refused: the estimate does not fit the budget: the planned work needs 2 judge "
               "requests; 1 of the limit of 1 are left (--allow-partial starts it anyway)")
    assert (code, len(server.requests)) == (3, 3)
    assert err == f"tracebridge run: stopped: {stopped}\n"
    assert stdout.startswith("refused: 5 unrun; judge: 0 request(s)")
    both = ("unrun", [f"{WITH_REFERENCE}: {stopped}", f"{F1}: {stopped}"])
    assert reasons(out) == {"ctl": ("unrun", [f"{WITH_REFERENCE}: {stopped}"]),
                            "n1": both, "n2": both, "n3": both, "n4": both}
    assert (out / "results.jsonl").read_text() == ""
    assert [row["values"] for row in rows(out, "cases.jsonl")] == [{}] * 5
    assert summary(out)["status"] == "refused"
    code, blockers, _ = gate(out, policy(tmp_path, TICKETS))
    assert (code, blockers) == (2, [
        "cases_unrun: run: 4 case(s) unrun, over the limit of 0 (n1, n2, n3, n4)",
        f"control_unrun: ctl: the control unrun, so the judge is not proven: {WITH_REFERENCE}: "
        f"{stopped}",
    ])
