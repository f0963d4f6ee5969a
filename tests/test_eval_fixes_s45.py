"""Evaluation fixes: a judge reply nested too deep to read is a failed request, counted; a judged
metric that crashes keeps the requests it sent and is asked again on resume; reference topics
that are all blank are no reference; a check that calls ``sys.exit`` is a reason (at import, a
``CheckError``); a signal is acted on while a locked cache is waited for; the gate and the report
leave out an earlier result of a case that is now blocked."""

from __future__ import annotations

import signal
import sqlite3
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
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
    summary,
    write_cases,
)
from fake_openai_server import FakeOpenAI, Reply
from gate_helpers import gate, policy
from judge_requests import REQUEST, OpenGate
from scripted_openai import Scripted, Server, scripted_server

from tracebridge.evaluation.cache import ResultCache
from tracebridge.evaluation.cases import load_cases
from tracebridge.evaluation.checks import CheckError, UserCheck, check_case, load_check
from tracebridge.metrics import (
    AgentGoalAccuracyWithReference,
    JudgeError,
    OpenAIJudge,
    Usage,
)
from tracebridge.metrics.base import MetricResult
from tracebridge.sample import MultiTurnSample

DEEP = '{"id": "x", "choices": ' + "[" * 100_000
"""A 200 body nested deeper than Python's recursion limit (a broken proxy or gateway)."""
TOO_DEEP = ("the judge request failed: RecursionError: maximum recursion depth exceeded while "
            "decoding a JSON array from a unicode string")
WITHOUT_USAGE = Usage(requests=1, requests_without_usage=1)




@pytest.fixture
def scripted() -> Iterator[Server]:
    with scripted_server() as state:
        yield state


# --- 1. a reply nested too deep ---------------------------------------------------------------

@pytest.mark.parametrize("gated", [False, True], ids=["ungated", "gated"])
async def test_a_reply_nested_too_deep_is_a_failed_request_of_unknown_usage(
    scripted: Server, gated: bool
) -> None:
    scripted.script.append(Scripted(200, DEEP))
    client = openai.AsyncOpenAI(base_url=scripted.base_url, api_key="test", max_retries=0,
                                timeout=10.0)
    judge = OpenAIJudge(client=client, model="judge-model", max_retries=0)
    gate_ = OpenGate()
    try:
        with pytest.raises(JudgeError) as caught:
            await judge.ask(REQUEST, gate=gate_ if gated else None)
    finally:
        await judge.aclose()
    assert str(caught.value) == TOO_DEEP
    assert caught.value.usage == WITHOUT_USAGE
    assert scripted.requests == 1
    assert gate_.costs == ([WITHOUT_USAGE] if gated else [])


def test_a_run_counts_a_reply_nested_too_deep_as_an_errored_request_of_unknown_cost(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(Reply(body=DEEP))
    path = write_cases(tmp_path, [case("a")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--price", "judge-model=1,1")
    assert code == 3, err
    assert [(row["case_id"], row["state"]) for row in rows(out, "cases.jsonl")] == [
        ("a", "errored")]
    [result] = rows(out, "results.jsonl")
    assert result["error"] == TOO_DEEP
    assert result["usage"] == {"requests": 1, "requests_without_usage": 1, "prompt_tokens": 0,
                               "completion_tokens": 0, "total_tokens": 0}
    written = summary(out)
    assert written["usage"]["requests"] == 1
    assert written["cost"] is None


# --- 1. a judged metric that crashes ------------------------------------------------------------

def test_a_judged_metric_that_crashes_keeps_its_requests_and_is_asked_again_on_resume(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged = AgentGoalAccuracyWithReference.judged

    async def crashing(self: Any, sample: MultiTurnSample) -> MetricResult:
        result = await judged(self, sample)
        if server.requests:  # one request sent and charged (not the run's planning): a crash
            raise RuntimeError("boom")
        return result

    monkeypatch.setattr(AgentGoalAccuracyWithReference, "judged", crashing)
    server.add(goal(True))
    path = write_cases(tmp_path, [case("a")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 3, err
    [result] = rows(out, "results.jsonl")
    assert (result["error"], result["usage"]) == ("RuntimeError: boom", {
        "requests": 1, "requests_without_usage": 0, "prompt_tokens": 100,
        "completion_tokens": 20, "total_tokens": 120})
    assert rows(out, "cases.jsonl")[-1]["state"] == "errored"
    assert summary(out)["usage"]["requests"] == 1

    monkeypatch.setattr(AgentGoalAccuracyWithReference, "judged", judged)
    server.add(goal(True))
    code, _, err = run_cases(path, out, server.base_url)  # resumed: asked again
    assert code == 0, err
    assert len(server.requests) == 2
    assert rows(out, "cases.jsonl")[-1]["values"] == {WITH_REFERENCE: 1.0}


# --- 2. reference topics all blank -------------------------------------------------------------

def test_reference_topics_all_blank_block_the_case_as_missing(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [case("a", reference_topics=["   ", "\n"])])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, metrics=("topic_adherence_f1",))
    assert code == 0, err
    assert [(row["state"], row["reasons"]) for row in rows(out, "cases.jsonl")] == [
        ("blocked", ["reference: topic_adherence_f1 needs reference_topics, and the case has "
                     "none"])]
    assert server.requests == []


def test_reference_topics_with_one_topic_pass_the_reference_check(tmp_path: Path) -> None:
    [loaded] = load_cases(str(write_cases(tmp_path, [case("a", reference_topics=[" ", "x"])]))
                          ).cases
    assert check_case(loaded, ["topic_adherence_f1"]) == []


# --- 3. SystemExit from a user check ------------------------------------------------------------

def exits(case: Any) -> list[str]:
    sys.exit(3)


@pytest.mark.parametrize(("function", "told"), [
    (exits, "3"), (lambda c: sys.exit("usage: check CASE"), "usage: check CASE")])
def test_a_check_that_exits_is_a_reason(tmp_path: Path, function: Any, told: str) -> None:
    [loaded] = load_cases(str(write_cases(tmp_path, [case("a")]))).cases
    reasons = check_case(loaded, [], [UserCheck("mychk:exits", function)])
    assert reasons == [f"check mychk:exits raised SystemExit: {told}"]


def test_a_module_that_exits_at_import_is_a_check_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "exits_at_import_s45.py").write_text('import sys\nsys.exit("bye from import")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(CheckError) as caught:
        load_check("exits_at_import_s45:f")
    assert str(caught.value) == (
        "--checks exits_at_import_s45:f: cannot import exits_at_import_s45: SystemExit: bye "
        "from import")


def test_a_run_whose_check_module_exits_at_import_stops_in_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: FakeOpenAI
) -> None:
    (tmp_path / "exits_at_import_run_s45.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write_cases(tmp_path, [case("a")])
    code, out, err = run_cases(path, tmp_path / "run", server.base_url,
                               "--checks", "exits_at_import_run_s45:f")
    assert (code, out) == (2, "")
    assert err == ("tracebridge run: --checks exits_at_import_run_s45:f: cannot import "
                   "exits_at_import_run_s45: SystemExit: 0\n")


# --- 4. a signal while a locked cache is waited for --------------------------------------------

class Alarm(Exception):
    pass


@pytest.fixture
def alarm_soon() -> Iterator[None]:
    """SIGALRM 0.3 s from now, its handler raising ``Alarm`` (as Ctrl-C raises)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Alarm

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """A cache file another connection holds the write lock of."""
    path = tmp_path / "cache.sqlite"
    ResultCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield path
    finally:
        holder.close()


def test_a_signal_is_acted_on_while_opening_a_locked_cache(held: Path, alarm_soon: None) -> None:
    started = time.monotonic()
    with pytest.raises(Alarm):
        ResultCache(held, timeout=20.0)
    assert time.monotonic() - started < 2.0


def test_a_signal_handler_runs_while_a_write_waits_on_a_locked_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    cache = ResultCache(path, timeout=20.0)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    sample = load_cases(str(write_cases(tmp_path, [case("a")]))).cases[0].sample()
    result = MetricResult(name="m", value=1.0, metric_version="1",
                          transcript_hash=sample.transcript_hash())

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Alarm

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.3)
    started = time.monotonic()
    try:
        with pytest.raises(Alarm):
            cache.put("0" * 64, result)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        holder.close()
        cache.close()
    assert time.monotonic() - started < 2.0


# --- 5. an earlier result of a case now blocked -------------------------------------------------

def run_with_check(path: Path, out: Path, server: FakeOpenAI, module: Path,
                   source: str) -> int:
    """``tracebridge run`` with ``--checks`` from ``module``, its source now ``source`` (the
    module is imported afresh, as a new process would)."""
    module.write_text(source)
    sys.modules.pop(module.stem, None)
    code, _, err = run_cases(path, out, server.base_url, "--checks", f"{module.stem}:c")
    assert code in (0, 3, 4), err
    return code


BLOCKING = "def c(case):\n    return ['ticket not found'] if case.case_id == 'a1' else []\n"
"""The check changed in place: it blocks a1."""


def blocked_after_error(tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                        first: dict[str, Any]) -> tuple[Path, list[int]]:
    """A run of ``first`` (a1, the judge answering it 500) and a2, resumed after its check
    changed in place to block a1: RUN_DIR and the two exit statuses. a1's earlier result
    stays in results.jsonl."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    module = tmp_path / "check_in_place_s45.py"
    monkeypatch.delitem(sys.modules, module.stem, raising=False)
    path = write_cases(tmp_path, [first, case("a2")])
    out = tmp_path / "run"
    server.add(Reply(status=500), goal(True))
    codes = [run_with_check(path, out, server, module, "def c(case):\n    return []\n"),
             run_with_check(path, out, server, module, BLOCKING)]
    earlier = rows(out, "results.jsonl")[0]
    assert (earlier["case_id"], earlier["error"]) == (
        "a1", "the judge request failed: InternalServerError: Error code: 500 - scripted failure")
    return out, codes


@pytest.fixture
def now_blocked(tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run whose case a1 errored, then is blocked by its changed check; a2 is in review."""
    out, codes = blocked_after_error(tmp_path, server, monkeypatch, case("a1"))
    assert codes == [3, 0]
    return out


def test_the_gate_leaves_out_an_earlier_result_of_a_case_now_blocked(
    tmp_path: Path, now_blocked: Path
) -> None:
    code, lines, err = gate(now_blocked, policy(tmp_path, "max_evaluator_errors = 0\n"))
    assert (code, err) == (1, "tracebridge gate: quality failed (exit 1): 2 blocker(s)\n")
    assert lines == [  # no evaluator_errors (exit 2): a1 is blocked, not errored
        "receipt_not_verified: a1: check check_in_place_s45:c: ticket not found",
        "slice_no_policy: tickets: 2 case(s) and no [slices.tickets] in the policy"]


def test_the_report_shows_no_earlier_result_of_a_case_now_blocked(
    tmp_path: Path, now_blocked: Path
) -> None:
    report = tmp_path / "report.html"
    code, _, err = run("report", str(now_blocked), "-o", str(report))
    assert code == 0, err
    page = report.read_text()
    assert "the judge request failed" not in page
    section = page.split('id="case-a1"', 1)[1].split("</section>", 1)[0]
    assert f"<tr><td>{WITH_REFERENCE}</td><td>no result</td><td></td></tr>" in section


def test_junit_reports_a_control_now_blocked_by_its_check_not_its_earlier_result(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, codes = blocked_after_error(tmp_path, server, monkeypatch, control("a1", "positive"))
    assert codes == [3, 4]  # the control errored, then came out blocked: a2 is never run
    junit = tmp_path / "gate.xml"
    gate(out, policy(tmp_path, "max_evaluator_errors = 0\n"), "--junit", str(junit))
    [test] = [test for test in ET.parse(junit).getroot().iter("testcase")
              if test.get("classname") == "a1"]
    [(kind, kind_type)] = [(child.tag, child.get("type")) for child in test
                           if child.tag != "system-out"]
    assert (kind, kind_type) == ("failure", "control_failed")
