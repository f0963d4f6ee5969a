"""Evaluation runs: a RUN_DIR in use is refused; each invocation's requests keep the price they
were sent at; an error reply (a 429) is one request with no tokens, not an unknown cost; the
gate's Markdown and JUnit list what an unfinished run has not settled; the controls' verdict
does not depend on --continue-on-control-failure; the report's time and calibration on an
unfinished run; the refusal names --allow-partial; a run directory whose cases.jsonl gives
values results.jsonl does not hold is refused as damaged."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
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
from local_server import serving

from tracebridge.evaluation.budget import Budget, BudgetedJudge
from tracebridge.evaluation.rundir import read_run
from tracebridge.messages import AIMessage, HumanMessage
from tracebridge.metrics import AgentGoalAccuracyWithReference, OpenAIJudge
from tracebridge.metrics.base import Usage
from tracebridge.sample import MultiTurnSample

PRICED = ("--price", "judge-model=1000,1000")
"""100 + 20 tokens (the fake server's usage) cost $0.12 at this price."""
USAGE = {"requests": 1, "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
         "requests_without_usage": 0}
PRICE = {"input_per_million": 1000.0, "output_per_million": 1000.0}
ALL_SLICES = ('[slices.a]\nmax_failures = 0\n[slices.tickets]\nmax_failures = 0\n'
              '[slices.refunds]\nmax_failures = 0\n[slices.""]\nmax_failures = 0\n')


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}


def start_run(path: Path, out: Path, base_url: str) -> subprocess.Popen[str]:
    """``tracebridge run`` in another process, one job at a time."""
    return subprocess.Popen(
        [sys.executable, "-m", "tracebridge", "run", str(path), "--out", str(out), "--metric",
         WITH_REFERENCE, "--model", "judge-model", "--base-url", base_url, *PRICED,
         "--retries", "0", "--concurrency", "1", "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_for_requests(server: FakeOpenAI, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(server.requests) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(server.requests) == count
    time.sleep(0.3)  # the request is at the server, its job in flight


# --- 1. a RUN_DIR in use is refused ----------------------------------------------------------


def test_a_second_run_on_a_run_dir_in_use_is_refused_and_a_killed_one_resumes(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(Reply(content=goal(True), sleep=30.0))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    first = start_run(path, out, server.base_url)
    try:
        wait_for_requests(server, 1)
        code, stdout, err = run_cases(path, out, server.base_url, *PRICED)
        assert (code, stdout) == (2, "")
        assert err == (f"tracebridge run: {out} is in use by another run (it holds "
                       f"{out / '.lock'}): wait for that run to end, or use another --out\n")
        assert len(server.requests) == 1  # the second run sent nothing
        assert summary(out)["status"] == "running"
    finally:
        first.kill()  # the system lets go of the lock of a killed process
        first.communicate(timeout=60)
    server.add(goal(True))
    code, _, err = run_cases(path, out, server.base_url, *PRICED)
    assert (code, err) == (0, "")
    assert (summary(out)["status"], len(server.requests)) == ("complete", 2)


def test_the_lock_is_let_go_when_a_run_ends_or_is_refused(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url)[0] == 0
    other = write_cases(tmp_path, [case("c2")], "other.jsonl")
    code, _, err = run_cases(other, out, server.base_url)
    assert (code, err) == (2, f"tracebridge run: {out} holds a run with another manifest hash; "
                              "resuming would mix two runs: use a new --out\n")
    with open(out / ".lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: no BlockingIOError


def test_a_run_dir_locked_by_another_process_is_refused_before_anything_is_written(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    out.mkdir()
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, _, err = run_cases(path, out, server.base_url)
    assert code == 2
    assert err.endswith(" is in use by another run (it holds "
                        f"{out / '.lock'}): wait for that run to end, or use another --out\n")
    assert sorted(os.listdir(out)) == [".lock"]
    assert server.requests == []


# --- 2. each invocation's requests keep their price ------------------------------------------


def test_a_resume_with_another_price_or_none_does_not_price_earlier_requests_again(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), goal(True))
    path = write_cases(tmp_path, [case("c1"), case("c2")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0
    assert (summary(out)["cost"], summary(out)["cost_note"]) == (0.24, None)
    assert [(row["price"], row["refused_requests"]) for row in rows(out, "results.jsonl")] == [
        (PRICE, 0), (PRICE, 0)]
    code, stdout, _ = run_cases(path, out, server.base_url, "--price", "judge-model=0,0")
    assert (code, stdout) == (0, f"complete: 2 passed; judge: 2 request(s), 200 + 40 tokens, "
                                 f"$0.2400; {out}/summary.json\n")
    code, _, _ = run_cases(path, out, server.base_url)  # no --price at all
    assert code == 0
    found = summary(out)
    assert (found["cost"], found["cost_note"], found["unpriced_requests"]) == (0.24, None, 0)
    assert gate(out, policy(tmp_path, "max_cost = 0.1\n[slices.tickets]\nmax_failures = 0\n"))[
        :2] == (2, ["cost_over_limit: run: $0.24 spent, over the limit of $0.1"])


def test_requests_sent_without_a_price_leave_the_cost_unknown_after_a_priced_resume(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), Reply(status=429), goal(True))
    path = write_cases(tmp_path, [case("c1"), case("c2")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url)[0] == 3  # c2 errored, asked again below
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0
    found = summary(out)
    assert found["usage"] == {"requests": 3, "prompt_tokens": 200, "completion_tokens": 40,
                              "total_tokens": 240, "requests_without_usage": 0}
    assert (found["cost"], found["unpriced_requests"], found["refused_requests"]) == (None, 1, 1)
    assert found["cost_note"] == ("1 request(s) were sent without a --price for the judge "
                                  "model: cost unknown (the priced requests that reported it "
                                  "cost $0.1200)")
    assert gate(out, policy(tmp_path, "max_cost = 1.0\n[slices.tickets]\nmax_failures = 0\n"))[
        :2] == (2, ["cost_unknown: run: the policy limits the cost and the run does not know "
                    "its cost (1 judge request(s) were sent without a --price for the judge "
                    "model (an invocation without one; a resume does not price them "
                    "afterwards))"])


# --- 3. an error reply is one request with no tokens, not an unknown cost --------------------


def test_a_rate_limited_request_retried_leaves_the_cost_known(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(Reply(status=429), goal(True))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    code, stdout, err = run_cases(path, out, server.base_url, *PRICED, "--retries", "1")
    assert (code, err) == (0, "")
    assert stdout == (f"complete: 1 passed; judge: 2 request(s), 100 + 20 tokens, $0.1200; "
                      f"{out}/summary.json\n")
    found = summary(out)
    assert found["usage"] == {**USAGE, "requests": 2}
    assert (found["cost"], found["cost_note"], found["refused_requests"]) == (0.12, None, 1)
    assert [(row["usage"], row["refused_requests"]) for row in rows(out, "results.jsonl")] == [
        ({**USAGE, "requests": 2}, 1)]
    code, blockers, gate_err = gate(out, policy(
        tmp_path, "max_cost = 1.0\n[slices.tickets]\nmax_failures = 0\n"))
    assert (code, blockers, gate_err) == (0, [], "tracebridge gate: passed (exit 0): 0 "
                                                 "blocker(s)\n")


def test_a_refused_request_asked_again_on_resume_leaves_the_cost_known(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(Reply(status=429))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 3
    found = summary(out)
    assert found["usage"] == {"requests": 1, "prompt_tokens": 0, "completion_tokens": 0,
                              "total_tokens": 0, "requests_without_usage": 0}
    assert (found["cost"], found["refused_requests"]) == (0.0, 1)
    server.add(goal(True))
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0
    found = summary(out)
    assert found["usage"] == {**USAGE, "requests": 2}
    assert (found["cost"], found["cost_note"], found["refused_requests"]) == (0.12, None, 1)


def test_a_server_error_leaves_the_cost_unknown(tmp_path: Path, server: FakeOpenAI) -> None:
    # a 5xx may come after the model worked on the request (a gateway's 504): not known free
    server.add(Reply(status=500))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 3
    found = summary(out)
    assert found["usage"] == {"requests": 1, "prompt_tokens": 0, "completion_tokens": 0,
                              "total_tokens": 0, "requests_without_usage": 1}
    assert (found["cost"], found["refused_requests"]) == (None, 0)


SAMPLE = MultiTurnSample(messages=[HumanMessage(content="open a ticket"),
                                   AIMessage(content="done")], reference="a ticket")


class ErrorReplies:
    """A server answering every request with ``status`` and ``body``."""

    def __init__(self, status: int, body: dict[str, Any] | bytes) -> None:
        self.status, self.body, self.requests = status, body, 0

    def handler(self) -> type[BaseHTTPRequestHandler]:
        state = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                state.requests += 1
                body = state.body
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(state.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


@pytest.fixture
def error_400() -> Iterator[tuple[ErrorReplies, str]]:
    replies = ErrorReplies(400, {"error": {"message": "bad request"}})
    with serving(replies.handler()) as base_url:
        yield replies, f"{base_url}/v1"


async def score_against(base_url: str, gated: bool) -> Any:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="-", max_retries=2)
    judge = OpenAIJudge(client, "judge-model", max_retries=0)
    try:
        asked = BudgetedJudge(judge, Budget()) if gated else judge
        return await AgentGoalAccuracyWithReference(asked).ascore(SAMPLE)
    finally:
        await judge.aclose()


@pytest.mark.parametrize("gated", [True, False])
async def test_an_error_reply_without_usage_is_one_request_with_no_tokens(
    error_400: tuple[ErrorReplies, str], gated: bool
) -> None:
    replies, base_url = error_400
    result = await score_against(base_url, gated)
    assert result.value is None
    assert result.error == ("the judge request failed: BadRequestError: Error code: 400 - "
                            "bad request")
    assert result.usage == Usage(requests=1)
    assert replies.requests == 1


async def test_an_error_reply_that_reports_usage_is_charged_it() -> None:
    replies = ErrorReplies(400, {"error": {"message": "too long"}, "usage": {
        "prompt_tokens": 50, "completion_tokens": 0, "total_tokens": 50}})
    with serving(replies.handler()) as base_url:
        result = await score_against(f"{base_url}/v1", gated=True)
    assert result.usage == Usage(requests=1, prompt_tokens=50, total_tokens=50)


# --- 4. the gate's Markdown and JUnit on an unfinished run -----------------------------------


def unfinished_cases() -> list[dict[str, Any]]:
    return [
        control("pos", "positive", slice="a"),
        control("neg", "negative_false_claim", slice="a", reference="No ticket is created."),
        case("t1"),
        case("r1", slice="refunds"),
        case("n1", slice=None),
    ]


def stop_run(tmp_path: Path, server: FakeOpenAI, how: signal.Signals) -> Path:
    """A run stopped by ``how`` while the second control is in flight: only ``pos`` settled."""
    server.add(goal(True), Reply(content=goal(False), sleep=30.0))
    path = write_cases(tmp_path, unfinished_cases())
    out = tmp_path / "run"
    process = start_run(path, out, server.base_url)
    try:
        wait_for_requests(server, 2)
        process.send_signal(how)
        process.communicate(timeout=60)
    finally:
        process.kill()
    assert [row["case_id"] for row in rows(out, "cases.jsonl")] == ["pos"]
    return out


def test_the_markdown_of_an_interrupted_run_lists_every_slice_and_control(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    out = stop_run(tmp_path, server, signal.SIGINT)
    assert summary(out)["unsettled"] == ["neg", "t1", "r1", "n1"]
    page = tmp_path / "gate.md"
    assert run("gate", str(out), "--policy", str(policy(tmp_path, ALL_SLICES)), "--markdown",
               str(page))[0] == 2
    text = page.read_text()
    assert ": 5 case(s), 4 unsettled (the run has not finished), status running, " in text
    tables = text.split("### Slices\n\n", 1)[1]
    assert tables == (
        "| slice | passed | failed | blocked | errored | unrun | review | unsettled | failure "
        "limit |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
        "| (no slice) | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 0 |\n"
        "| a | 1 | 0 | 0 | 0 | 0 | 0 | 1 | 0 |\n"
        "| refunds | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 0 |\n"
        "| tickets | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 0 |\n"
        "\n### Controls\n\n"
        "| case | role | expected | came out | as expected |\n"
        "|---|---|---|---|---|\n"
        "| pos | positive | achieved | achieved | yes |\n"
        "| (unsettled) | negative_false_claim | - | - | not known (unsettled) |\n")


def junit_tests(out: Path, tmp_path: Path) -> list[tuple[str, str, str, str | None]]:
    """(suite, classname, name, skipped message) of each testcase of the gate's JUnit."""
    xml = tmp_path / "gate.xml"
    assert run("gate", str(out), "--policy", str(policy(tmp_path, ALL_SLICES)), "--junit",
               str(xml))[0] == 2
    root = ET.parse(xml).getroot()
    found = []
    for suite in root:
        for test in suite:
            skipped = test.find("skipped")
            found.append((suite.get("name", ""), test.get("classname", ""),
                          test.get("name", ""), None if skipped is None else skipped.get(
                              "message")))
    assert root.get("tests") == str(len(found))
    return found


def test_the_junit_of_an_interrupted_run_skips_each_unsettled_case(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    out = stop_run(tmp_path, server, signal.SIGINT)
    why = "the run has not finished: no state yet (resume it)"
    assert junit_tests(out, tmp_path) == [
        ("a", "pos", WITH_REFERENCE, None),
        ("(unsettled)", "neg", "unsettled", why),
        ("(unsettled)", "t1", "unsettled", why),
        ("(unsettled)", "r1", "unsettled", why),
        ("(unsettled)", "n1", "unsettled", why),
        ("gate", "gate", "decision", None),
    ]


def test_the_junit_of_a_killed_run_says_how_many_cases_are_unsettled(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    out = stop_run(tmp_path, server, signal.SIGKILL)
    assert "unsettled" not in summary(out)
    assert junit_tests(out, tmp_path) == [
        ("a", "pos", WITH_REFERENCE, None),
        ("(unsettled)", "run", "unsettled",
         "the run has not finished: 4 case(s) have no state yet (resume it)"),
        ("gate", "gate", "decision", None),
    ]


# --- 5. the controls' verdict does not depend on --continue-on-control-failure ---------------


def test_a_wrong_control_fails_the_run_with_or_without_the_flag(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(False), goal(True))
    path = write_cases(tmp_path, [control("pos", "positive"), case("c1")])
    out = tmp_path / "run"
    code, stdout, err = run_cases(path, out, server.base_url, "--continue-on-control-failure")
    assert (code, err) == (4, "")
    assert stdout.startswith("controls_failed: 1 passed, 1 failed; ")
    found = summary(out)
    assert (found["status"], found["stopped"]) == ("controls_failed", None)
    assert states(out) == {"pos": "failed", "c1": "passed"}
    code, _, err = run_cases(path, out, server.base_url)  # resumed without the flag
    assert code == 4
    found = summary(out)
    assert found["status"] == "controls_failed"
    assert found["counts"] == {"passed": 1, "failed": 1, "blocked": 0, "errored": 0,
                               "unrun": 0, "review": 0}
    assert len(server.requests) == 2


# --- 6, 7. the report on an unfinished run; the refusal names the flag -----------------------


def test_the_report_of_an_interrupted_run_says_it_has_not_finished(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    out = stop_run(tmp_path, server, signal.SIGINT)
    page = tmp_path / "report.html"
    assert run("report", str(out), "-o", str(page))[0] == 0
    text = page.read_text()
    started = summary(out)["started_at"]
    assert f'<dd id="fact-time">{started} to not finished</dd>' in text
    assert ('<p id="calibration-unfinished">the run has not finished: 1 of 5 case(s) settled, '
            '4 unsettled (0 of them labelled); these figures are of the settled cases only, '
            "not the run&#x27;s (resume it).</p>") in text


def test_a_refused_run_names_the_flag_that_starts_it_anyway(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [case("c1"), case("c2")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--max-requests", "1")
    assert code == 3
    assert err == ("tracebridge run: stopped: refused: the estimate does not fit the budget: "
                   "the planned work needs 2 judge requests; 1 of the limit of 1 are left "
                   "(--allow-partial starts it anyway)\n")


# --- smaller: a policy's metric typo, a file given as RUN_DIR, a case file moved --------------


def test_a_binary_metric_that_is_no_metric_is_a_policy_error(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True))
    out = tmp_path / "run"
    assert run_cases(write_cases(tmp_path, [case("c1")]), out, server.base_url)[0] == 0
    path = policy(tmp_path, 'binary_metrics = ["tool_call_F1"]\n[slices.tickets]\n'
                            "max_failures = 0\n")
    code, stdout, err = run("gate", str(out), "--policy", str(path))
    assert (code, stdout) == (4, "")
    assert err == (f"tracebridge gate: {path}: binary_metrics: Value error, 'tool_call_F1' is "
                   "no metric; known: tool_call_accuracy, tool_call_accuracy_unordered, "
                   "tool_call_f1, agent_goal_accuracy_with_reference, "
                   "agent_goal_accuracy_without_reference, topic_adherence_precision, "
                   "topic_adherence_recall, topic_adherence_f1, role_adherence, "
                   "knowledge_retention, conversation_completeness, conversation_relevancy\n")


def test_a_file_given_as_run_dir_is_said_to_be_no_directory(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    path = policy(tmp_path, "[slices.tickets]\nmax_failures = 0\n")
    code, _, err = run("gate", str(tmp_path / "afile"), "--policy", str(path))
    assert (code, err) == (4, f"tracebridge gate: {tmp_path / 'afile'} is not a run directory "
                              "(not a directory)\n")


# --- leftovers: exit 2 for a RUN_DIR in use, an early interrupt, a list's elements, started_at --


def test_run_help_names_a_run_dir_in_use_under_exit_2() -> None:
    from tracebridge.evaluation import cli as evaluation_cli

    parser = argparse.ArgumentParser()
    evaluation_cli.configure(parser)
    out = next(action for action in parser._actions if "--out" in action.option_strings)
    assert out.help == ("the run directory (created; an existing one is resumed; one in use by "
                        "another run is refused, exit 2)")
    doc = " ".join((evaluation_cli.__doc__ or "").split())
    assert ("2 the request or the input is unusable (a flag, an unreadable file, a RUN_DIR of "
            "another run, in use by another run, or one that cannot be read back, a damaged "
            "cache, a --checks that cannot be loaded, a cost limit without the model's price, a "
            "result that cannot be written); ") in doc


def test_an_interrupt_before_the_run_started_says_nothing_was_written(tmp_path: Path) -> None:
    (tmp_path / "slowcheck.py").write_text(
        "import pathlib, time\n"
        "pathlib.Path(__file__).with_name('importing').write_text('')\n"
        "time.sleep(30)\n"
        "def check(case):\n    return []\n")
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "tracebridge", "run", str(path), "--out", str(out), "--metric",
         "tool_call_f1", "--checks", "slowcheck:check", "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**environment(), "PYTHONPATH": str(tmp_path)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "importing").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)  # the check module is being imported
        stdout, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert (process.returncode, stdout) == (130, "")
    assert err == ("tracebridge run: interrupted before the run started; nothing was written "
                   f"to {out}\n")
    assert not out.exists()


def test_an_unfinished_run_over_a_one_line_list_keeps_its_cases_in_file_order(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """t2 is critical: it settles before t1; t3 is in flight when the run is interrupted."""
    server.add(goal(True), goal(False), Reply(content=goal(True), sleep=30.0))
    path = tmp_path / "cases.json"
    path.write_text(json.dumps([case("t1"), case("t2", critical=True), case("t3")]) + "\n")
    out = tmp_path / "run"
    process = start_run(path, out, server.base_url)
    try:
        wait_for_requests(server, 3)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    finally:
        process.kill()
    assert [row["case_id"] for row in rows(out, "cases.jsonl")] == ["t2", "t1"]
    found = read_run(out).cases
    assert [(row.case_id, row.line, row.element, row.place()) for row in found] == [
        ("t1", 1, 1, "element 1 (line 1)"), ("t2", 1, 2, "element 2 (line 1)")]
    page = tmp_path / "report.html"
    assert run("report", str(out), "-o", str(page))[0] == 0
    assert ('<h3>t1 <span class="badge s-failed">failed</span></h3><p>slice tickets; '
            "element 1 (line 1)</p>") in page.read_text()


def test_the_report_of_a_jsonl_case_says_its_line(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(goal(True), goal(False))
    out = tmp_path / "run"
    path = write_cases(tmp_path, [case("t1"), case("t2")])
    assert run_cases(path, out, server.base_url)[0] == 0
    assert [(row.case_id, row.element, row.place()) for row in read_run(out).cases] == [
        ("t1", None, "line 1"), ("t2", None, "line 2")]
    page = tmp_path / "report.html"
    assert run("report", str(out), "-o", str(page))[0] == 0
    assert ('<h3>t2 <span class="badge s-failed">failed</span></h3><p>slice tickets; '
            "line 2</p>") in page.read_text()


def test_a_resumed_run_keeps_the_time_it_first_started(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), goal(True))
    path = write_cases(tmp_path, [case("c1"), case("c2")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url, "--max-requests", "1", "--allow-partial")
    assert (code, summary(out)["status"]) == (3, "incomplete")
    first = summary(out)
    time.sleep(1.1)  # the times are to the second
    assert run_cases(path, out, server.base_url)[0] == 0
    resumed = summary(out)
    assert (resumed["status"], resumed["started_at"]) == ("complete", first["started_at"])
    assert resumed["finished_at"] > first["finished_at"]


# --- from the review of fd17ad6 --------------------------------------------------------------


def test_a_run_written_before_prices_were_kept_keeps_its_cost_on_a_priced_resume(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0
    # the rows as a version that kept no price wrote them
    older = [{k: v for k, v in row.items() if k not in ("price", "refused_requests")}
             for row in rows(out, "results.jsonl")]
    (out / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in older))
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0  # nothing left to send
    found = summary(out)
    assert (found["cost"], found["cost_note"], found["unpriced_requests"]) == (0.12, None, 0)
    assert run_cases(path, out, server.base_url)[0] == 0  # without --price: not known
    assert (summary(out)["cost"], summary(out)["unpriced_requests"]) == (None, 1)


@pytest.mark.parametrize("gated", [True, False])
async def test_a_refusal_whose_body_nests_too_deep_is_one_request_with_no_tokens(
    gated: bool
) -> None:
    replies = ErrorReplies(400, b"[" * 200_000 + b"]" * 200_000)  # RecursionError to read
    with serving(replies.handler()) as base_url:
        result = await score_against(f"{base_url}/v1", gated)
    assert (result.value, result.usage, replies.requests) == (None, Usage(requests=1), 1)
    assert result.error is not None
    assert result.error.startswith("the judge request failed: BadRequestError: Error code: 400")


def test_a_run_dir_that_cannot_be_locked_is_run_and_said_so(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracebridge.evaluation import record

    def no_locks(file: Any, operation: int) -> None:
        raise OSError(37, "No locks available")

    monkeypatch.setattr(record, "_flock", no_locks)
    server.add(goal(True))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, *PRICED)
    assert (code, err) == (0, f"tracebridge run: {out}/.lock cannot be locked ([Errno 37] No "
                              f"locks available): the run goes on, but another run on {out} at "
                              "the same time is not refused\n")
    assert summary(out)["status"] == "complete"


def test_a_refused_request_sent_without_a_price_leaves_the_cost_known(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(Reply(status=429))
    path = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url)[0] == 3  # no --price: refused, asked again
    server.add(goal(True))
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0
    found = summary(out)
    assert (found["cost"], found["cost_note"], found["unpriced_requests"],
            found["refused_requests"]) == (0.12, None, 0, 1)


# --- 8. a run directory whose files contradict each other is refused -------------------------

CRITICAL_POLICY = "[slices.tickets]\nmax_failures = 0\n"
DAMAGED = ("the run directory is damaged (a file deleted, cut short or replaced); run again on "
           "it to redo what is missing, or use a new --out")


def passed_run(tmp_path: Path, server: FakeOpenAI) -> tuple[Path, Path]:
    """(the case file, RUN_DIR) of a complete run whose critical c1 and c2 passed."""
    server.add(goal(True), goal(True))
    path = write_cases(tmp_path, [case("c1", critical=True), case("c2", critical=True)])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0
    return path, out


def refusals(out: Path, tmp_path: Path) -> list[tuple[int, str, str]]:
    """(exit status, stdout, stderr) of the gate, ``calibrate`` and ``report`` on ``out``."""
    return [
        run("gate", str(out), "--policy", str(policy(tmp_path, CRITICAL_POLICY))),
        run("calibrate", str(out)),
        run("report", str(out), "-o", str(tmp_path / "report.html")),
    ]


def refused(command: str, line: str) -> tuple[int, str, str]:
    return 4, "", f"tracebridge {command}: {line}\n"


def test_a_run_whose_results_were_deleted_is_refused_not_gated(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    _, out = passed_run(tmp_path, server)
    (out / "results.jsonl").unlink()
    line = (f"{out}/results.jsonl has no result for case 'c1' and {WITH_REFERENCE}, which "
            f"cases.jsonl (line 1) gives the value 1.0: {DAMAGED}")
    assert refusals(out, tmp_path) == [
        refused("gate", line), refused("calibrate", line), refused("report", line)]
    assert not (tmp_path / "report.html").exists()


def test_a_run_whose_results_were_cut_short_is_refused(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    _, out = passed_run(tmp_path, server)
    results = out / "results.jsonl"
    results.write_text(results.read_text().splitlines(keepends=True)[0])
    line = (f"{out}/results.jsonl has no result for case 'c2' and {WITH_REFERENCE}, which "
            f"cases.jsonl (line 2) gives the value 1.0: {DAMAGED}")
    assert refusals(out, tmp_path)[0] == refused("gate", line)


def test_a_run_whose_failed_request_lost_its_result_is_refused(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(Reply(status=500))
    path = write_cases(tmp_path, [case("c1", critical=True)])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 3
    (out / "results.jsonl").write_text("")
    line = (f"{out}/results.jsonl has no result for case 'c1' and {WITH_REFERENCE}, which "
            f"cases.jsonl (line 1) gives the value null: {DAMAGED}")
    assert refusals(out, tmp_path)[1] == refused("calibrate", line)


def test_a_finished_run_whose_cases_were_deleted_is_unfinished_not_damaged(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    _, out = passed_run(tmp_path, server)
    (out / "cases.jsonl").unlink()
    assert gate(out, policy(tmp_path, CRITICAL_POLICY)) == (
        2, ["run_not_finished: run: cases.jsonl holds 0 of the run's 2 cases"],
        "tracebridge gate: incomplete (exit 2): 1 blocker(s)\n")


def test_a_damaged_run_run_again_gates_as_before(tmp_path: Path, server: FakeOpenAI) -> None:
    path, out = passed_run(tmp_path, server)
    (out / "results.jsonl").unlink()
    server.add(goal(True), goal(True))
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0
    assert gate(out, policy(tmp_path, CRITICAL_POLICY)) == (
        0, [], "tracebridge gate: passed (exit 0): 0 blocker(s)\n")


def test_an_interrupted_run_resumed_gates_as_before(tmp_path: Path, server: FakeOpenAI) -> None:
    out = stop_run(tmp_path, server, signal.SIGINT)
    server.add(goal(False), goal(True), goal(True), goal(True))
    assert run_cases(tmp_path / "cases.jsonl", out, server.base_url, *PRICED)[0] == 0
    assert gate(out, policy(tmp_path, ALL_SLICES)) == (
        0, [], "tracebridge gate: passed (exit 0): 0 blocker(s)\n")


def test_a_damaged_run_names_the_line_of_cases_jsonl_not_of_the_case_file(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), goal(True))
    path = tmp_path / "cases.json"  # a list on one line, after three blank lines
    path.write_text("\n\n\n" + json.dumps([case("c1", critical=True),
                                            case("c2", critical=True)]) + "\n")
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0
    results = out / "results.jsonl"
    results.write_text(results.read_text().splitlines(keepends=True)[0])
    line = (f"{out}/results.jsonl has no result for case 'c2' and {WITH_REFERENCE}, which "
            f"cases.jsonl (line 2) gives the value 1.0: {DAMAGED}")
    assert refusals(out, tmp_path)[0] == refused("gate", line)
