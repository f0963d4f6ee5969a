"""Evaluation runs: a judge reply counting more tokens than any request uses is an unusable
reply (the case errors, a resume finishes the run), a cost past what a float holds is
unknown, and a run directory holding such a count is refused; request and token limits are
whole numbers up to 2**53; calibration tables and the run's case lines write control
characters in case ids and slices as escapes."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest
from cli_helpers import run
from evaluation_helpers import case, goal, rows, run_cases, summary, write_cases
from fake_openai_server import FakeOpenAI, Reply
from pydantic import BaseModel

from tracebridge.evaluation.budget import Budget, Remaining
from tracebridge.metrics import OpenAIJudge
from tracebridge.metrics.base import Usage
from tracebridge.metrics.judge import JudgeError, JudgeRequest


class Verdict(BaseModel):
    """An answer the judge is asked for."""

    achieved: bool


HUGE = 10**400
"""A token count no request uses, as a JSON reply can carry it (a float cannot)."""
PRICED = ("--price", "judge-model=0.15,0.60")
TOO_LARGE = ("the judge request failed: ValueError: the reply's usage.prompt_tokens is a "
             "number of more than 30 digits, more than any request uses (at most "
             "9,007,199,254,740,992 tokens are counted)")


# --- 1. a reply counting more tokens than any request uses ----------------------------------


async def test_a_reply_counting_more_tokens_than_a_request_uses_is_a_failed_request(
    server: FakeOpenAI,
) -> None:
    server.add(Reply(content='{"achieved": true}', prompt_tokens=HUGE))
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    judge = OpenAIJudge(client, "judge-model")
    request = JudgeRequest("judge", "the transcript", Verdict)
    with pytest.raises(JudgeError) as raised:
        await judge.ask(request)
    await judge.aclose()
    assert str(raised.value) == TOO_LARGE
    assert raised.value.usage == Usage(requests=1, requests_without_usage=1)
    assert len(server.requests) == 1  # not asked again: the reply is unusable, not invalid


async def test_a_count_of_exactly_two_to_the_53_is_taken(server: FakeOpenAI) -> None:
    server.add(Reply(content='{"achieved": true}', prompt_tokens=2**53, completion_tokens=0))
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    judge = OpenAIJudge(client, "judge-model")
    reply = await judge.ask(JudgeRequest("judge", "the transcript", Verdict))
    await judge.aclose()
    assert reply.usage == Usage(requests=1, prompt_tokens=2**53, total_tokens=2**53)


@pytest.mark.parametrize("limit", [(), ("--max-tokens", "100000")], ids=["no limit", "max tokens"])
def test_a_run_whose_judge_counts_too_many_tokens_errors_the_case_and_resumes(
    tmp_path: Path, server: FakeOpenAI, limit: tuple[str, ...]
) -> None:
    cases = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    server.add(Reply(content=goal(True), prompt_tokens=HUGE))
    code, _, err = run_cases(cases, out, server.base_url, *PRICED, *limit)
    assert (code, err) == (3, "")
    first = summary(out)
    assert (first["status"], first["counts"]["errored"], first["cost"]) == ("incomplete", 1, None)
    assert first["usage"] == {"requests": 1, "prompt_tokens": 0, "completion_tokens": 0,
                              "total_tokens": 0, "requests_without_usage": 1}
    assert first["cost_note"] == ("1 request(s) reported no token usage: cost unknown (the "
                                  "requests that reported it cost $0.0000)")
    assert rows(out, "results.jsonl")[0]["error"] == TOO_LARGE
    server.add(Reply(content=goal(True)))
    code, _, err = run_cases(cases, out, server.base_url, *PRICED, *limit)
    assert (code, err) == (0, "")
    again = summary(out)
    assert (again["status"], again["counts"]["passed"]) == ("complete", 1)
    assert again["usage"]["prompt_tokens"] == 100


def test_a_cost_past_what_a_float_holds_is_unknown(tmp_path: Path, server: FakeOpenAI) -> None:
    cases = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    server.add(Reply(content=goal(True), prompt_tokens=2**53, completion_tokens=0))
    code, stdout, err = run_cases(cases, out, server.base_url, "--price", "judge-model=1e308,1e308")
    assert (code, err) == (0, "")
    written = summary(out)
    assert (written["status"], written["cost"]) == ("complete", None)
    assert written["cost_note"] == ("the cost is more dollars than a number here holds: cost "
                                    "unknown")
    assert written["budget"]["spent_this_run"] == {
        "requests": 1, "tokens": 2**53, "cost": None}
    assert stdout == (f"complete: 1 passed; judge: 1 request(s), {2**53} + 0 tokens; "
                      f"{out}/summary.json\n")


def _counted_too_many(path: Path) -> None:
    """Write ``path``'s first row back with a prompt token count no request reports (as a
    run of an earlier version wrote it)."""
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["usage"] = {**row["usage"], "prompt_tokens": HUGE, "total_tokens": HUGE}
    path.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")


def test_a_resume_on_a_result_counting_too_many_tokens_finishes_with_the_cost_unknown(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """A row of an earlier version (or of another judge) counting more tokens than a float
    holds is read back: the run finishes, its cost unknown (before: exit 70 on every resume)."""
    cases = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    server.add(Reply(content=goal(True)))
    assert run_cases(cases, out, server.base_url, "--price", "judge-model=0.15,0.60")[0] == 0
    _counted_too_many(out / "results.jsonl")
    code, stdout, err = run_cases(cases, out, server.base_url, "--price", "judge-model=0.15,0.60")
    assert (code, err) == (0, "")
    assert stdout.startswith("complete: 1 passed;")
    written = summary(out)
    assert (written["status"], written["cost"]) == ("complete", None)
    assert written["cost_note"] == ("the cost is more dollars than a number here holds: cost "
                                    "unknown")
    assert len(server.requests) == 1


def test_a_resume_on_a_spent_row_counting_too_many_tokens_finishes(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    cases = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    server.add(Reply(content=goal(True)))
    assert run_cases(cases, out, server.base_url)[0] == 0
    spent = {"case_id": "c1", "name": "agent_goal_accuracy_with_reference",
             "usage": Usage(requests=1, prompt_tokens=10, total_tokens=10).model_dump(),
             "price": None, "refused_requests": 0}
    (out / "spent.jsonl").write_text(json.dumps(spent) + "\n")
    _counted_too_many(out / "spent.jsonl")
    code, stdout, err = run_cases(cases, out, server.base_url)
    assert (code, err) == (0, "")
    assert stdout.startswith("complete: 1 passed;")
    assert summary(out)["status"] == "complete"


# --- 2. request and token limits ----------------------------------------------------------


@pytest.mark.parametrize("flag", ["--max-requests", "--max-tokens"])
def test_a_limit_flag_past_two_to_the_53_is_a_flag_error(tmp_path: Path, flag: str) -> None:
    cases = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    code, stdout, err = run("run", str(cases), "--out", str(out), "--metric", "tool_call_f1",
                            "--no-cache", flag, str(HUGE))
    assert (code, stdout, err) == (
        2, "", f"tracebridge run: {flag} must be at most 9,007,199,254,740,992, got a number "
        "of more than 30 digits\n")
    assert not out.exists()


def test_a_limit_flag_of_two_to_the_53_is_taken(tmp_path: Path) -> None:
    cases = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    code, _, err = run("run", str(cases), "--out", str(out), "--metric", "tool_call_f1",
                       "--no-cache", "--max-requests", str(2**53))
    assert (code, err) == (0, "")
    assert summary(out)["budget"]["max_requests"] == 2**53


@pytest.mark.parametrize(
    ("limits", "error", "message"),
    [
        ({"max_requests": 1.5}, TypeError,
         "max_requests must be a whole number (an int) or None, got 1.5"),
        ({"max_requests": True}, TypeError,
         "max_requests must be a whole number (an int) or None, got True"),
        ({"max_tokens": 100.0}, TypeError,
         "max_tokens must be a whole number (an int) or None, got 100.0"),
        ({"max_tokens": HUGE}, ValueError,
         "max_tokens must be at most 9,007,199,254,740,992, got a number of more than 30 "
         "digits"),
        ({"max_requests": 2**53 + 1}, ValueError,
         "max_requests must be at most 9,007,199,254,740,992, got 9,007,199,254,740,993"),
        ({"max_cost": HUGE}, ValueError,
         "max_cost must be a finite number, got a number of more than 30 digits"),
        ({"max_cost": True}, TypeError, "max_cost must be a number of dollars or None, got True"),
    ],
)
def test_a_budget_limit_out_of_its_kind_or_range_is_refused(
    limits: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        Budget(**limits)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_budget_limits_at_their_bounds_are_taken() -> None:
    budget = Budget(max_requests=2**53, max_tokens=0, max_cost=2)
    assert (budget.max_requests, budget.max_tokens, budget.max_cost) == (2**53, 0, 2)


# --- 3. control characters in case ids and slices -------------------------------------------


def test_calibrate_writes_a_slice_with_control_characters_as_escapes(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    labelled = case("k1", slice="evil\nslice\x1b[2J",
                    human_adjudication={"goal_achieved": True, "reason": "checked"})
    cases = write_cases(tmp_path, [labelled])
    out = tmp_path / "run"
    server.add(Reply(content=goal(True)))
    assert run_cases(cases, out, server.base_url)[0] == 0
    code, stdout, err = run("calibrate", str(out))
    assert (code, err) == (0, "")
    assert stdout.splitlines()[2:6] == [
        "agent_goal_accuracy_with_reference, per slice",
        "slice                 count  scored  agree   rate  false ach.  false fail.  "
        "eval. errors  kappa",
        "(all)                     1       1      1  1.000           0            0"
        "             0      -",
        "evil\\nslice\\u001b[2J      1       1      1  1.000           0            0"
        "             0      -",
    ]


def test_the_run_writes_a_case_id_with_control_characters_as_escapes(tmp_path: Path) -> None:
    evil = "k\nFAKE LINE\x1b[2J"
    cases = write_cases(tmp_path, [
        {"case_id": evil, "transcript": [{"role": "human", "content": "hi"},
                                         {"role": "ai", "content": "hello"}]},
        {"case_id": evil, "transcript": [{"role": "human", "content": "hi"}]},
    ])
    code, stdout, err = run("run", str(cases), "--out", str(tmp_path / "run"), "--metric",
                            "tool_call_f1", "--no-cache")
    assert (code, stdout) == (1, "")
    assert err == (f"tracebridge run: {cases}: line 2 (case k\\nFAKE LINE\\u001b[2J): "
                   "duplicate case_id (first on line 1)\n"
                   "tracebridge run: 1 bad case record(s); nothing ran\n")


def test_the_run_writes_a_key_with_control_characters_as_escapes(tmp_path: Path) -> None:
    """A bad record's line is escaped whole: the key it names may hold a newline too."""
    cases = write_cases(tmp_path, [
        {"case_id": "c1", "bogus\nFAKE": 1,
         "transcript": [{"role": "human", "content": "hi"}, {"role": "ai", "content": "hello"}]},
    ])
    code, stdout, err = run("run", str(cases), "--out", str(tmp_path / "run"), "--metric",
                            "tool_call_f1", "--no-cache")
    assert (code, stdout) == (1, "")
    lines = err.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"tracebridge run: {cases}: line 1 (case c1): ")
    assert "bogus\\nFAKE" in lines[0]
    assert lines[1] == "tracebridge run: 1 bad case record(s); nothing ran"


def test_the_run_writes_a_blocked_case_id_with_control_characters_as_escapes(
    tmp_path: Path,
) -> None:
    cases = write_cases(tmp_path, [{"case_id": "k\nFAKE LINE\x1b[2J", "transcript": [
        {"role": "human", "content": "hi"}, {"role": "wizard", "content": "hello"}]}])
    code, _, err = run("run", str(cases), "--out", str(tmp_path / "run"), "--metric",
                       "tool_call_f1", "--no-cache")
    assert code == 0
    assert err.startswith(f"tracebridge run: {cases}: line 1 (case k\\nFAKE LINE\\u001b[2J): "
                          "the transcript cannot be used: ")
    assert err.count("\n") == 1


def test_a_budget_takes_whole_numbers_of_other_integer_types_as_ints() -> None:
    """A numpy integer or an IntEnum is a whole number (before 0e55114 they were taken; it
    refused them), a numpy float a number of dollars (before: a raw ValueError later, from
    ``remaining``)."""
    import enum

    import numpy as np

    class Five(enum.IntEnum):
        FIVE = 5

    budget = Budget(max_requests=np.int64(5), max_tokens=Five.FIVE, max_cost=np.float64(1.5))
    assert (budget.max_requests, budget.max_tokens, budget.max_cost) == (5, 5, 1.5)
    assert (type(budget.max_requests), type(budget.max_tokens), type(budget.max_cost)) == (
        int, int, float)
    assert budget.remaining == Remaining(5, 5, 1.5)


def test_a_huge_negative_limit_is_told_in_short() -> None:
    with pytest.raises(ValueError, match=r"^max_tokens must be 0 or more, got a negative "
                                         r"number of more than 30 digits$"):
        Budget(max_tokens=-(10**400))
