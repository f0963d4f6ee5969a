"""Evaluation runs: SIGTERM stops a run the way Ctrl-C does (what was in flight is recorded, exit
143); the dollar amounts of a budget refusal or a gate blocker never read as the limit they
differ from, and the limit reads as given; a cache hit that answers another question than the
job's is a damaged cache, never a result."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path
from types import FrameType, SimpleNamespace
from typing import Any

import openai
import pytest
from evaluation_helpers import WITH_REFERENCE, case, goal, rows, run_cases, summary, write_cases
from fake_openai_server import FakeOpenAI, Reply
from gate_helpers import gate, policy

from tracebridge.evaluation._dollars import dollars
from tracebridge.evaluation.budget import Budget, BudgetedJudge, Estimate, Price
from tracebridge.evaluation.cache import CacheError, ResultCache
from tracebridge.evaluation.cli import _go, _Terminated, _Termination
from tracebridge.metrics import AgentGoalAccuracyWithReference, OpenAIJudge
from tracebridge.metrics.base import MetricResult
from tracebridge.sample import MultiTurnSample

PRICED = ("--price", "judge-model=1000,1000")
"""100 + 20 tokens (the fake server's usage) cost $0.12 at this price."""


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}


def start_run(path: Path, out: Path, base_url: str,
              sigterm: Any = signal.SIG_DFL) -> subprocess.Popen[str]:
    """``tracebridge run`` in another process, one job at a time, SIGTERM as the system
    leaves it to a process (the default), or as ``sigterm`` says."""
    return subprocess.Popen(
        [sys.executable, "-m", "tracebridge", "run", str(path), "--out", str(out), "--metric",
         WITH_REFERENCE, "--model", "judge-model", "--base-url", base_url, *PRICED,
         "--retries", "0", "--concurrency", "1", "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment(),
        preexec_fn=lambda: signal.signal(signal.SIGTERM, sigterm))


def terminate_in_flight(tmp_path: Path, server: FakeOpenAI) -> tuple[Path, Path, int, str, str]:
    """A run of a and b sent SIGTERM while b's request is in flight: (case file, RUN_DIR,
    exit status, stdout, stderr)."""
    server.add(goal(True), Reply(content=goal(True), sleep=30.0))
    path = write_cases(tmp_path, [case("a"), case("b")])
    out = tmp_path / "run"
    process = start_run(path, out, server.base_url)
    try:
        deadline = time.monotonic() + 60
        while len(server.requests) < 2:
            assert process.poll() is None, process.communicate(timeout=30)
            assert time.monotonic() < deadline, "the second request was never sent"
            time.sleep(0.05)
        time.sleep(0.3)  # the request is at the server, its job in flight
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    return path, out, process.returncode, stdout, stderr


# --- 1. SIGTERM is taken as Ctrl-C -----------------------------------------------------------


def test_sigterm_records_the_request_in_flight_and_exits_143(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    _, out, code, stdout, stderr = terminate_in_flight(tmp_path, server)
    assert (code, stdout) == (143, "")
    assert stderr == (f"tracebridge run: terminated (SIGTERM); {out} keeps what was written "
                      "(run again to resume)\n")
    found = summary(out)
    assert (found["status"], found["stopped"], found["unsettled"]) == (
        "running", "interrupted: 1 of 2 case(s) settled; run again on the same RUN_DIR to "
        "resume", ["b"])
    assert found["usage"] == {"requests": 2, "prompt_tokens": 100, "completion_tokens": 20,
                              "total_tokens": 120, "requests_without_usage": 1}
    assert found["cost"] is None
    assert [(row["case_id"], row["usage"]["requests_without_usage"])
            for row in rows(out, "spent.jsonl")] == [("b", 1)]


def test_a_second_sigterm_before_the_run_started_changes_nothing() -> None:
    termination = _Termination()
    with pytest.raises(_Terminated):
        termination(signal.SIGTERM, None)
    try:
        termination(signal.SIGTERM, None)  # the first is being honoured
    except _Terminated:  # a KeyboardInterrupt: pytest would take it as its own Ctrl-C
        pytest.fail("a second SIGTERM raised _Terminated again")
    assert termination.received


def test_a_sigterm_after_the_run_ended_stops_nothing() -> None:
    async def main() -> tuple[bool, bool]:
        termination = _Termination()

        async def run() -> None:
            termination.attach()
            termination.detach()  # the run's task is ending

        task = asyncio.create_task(run())
        await task
        termination(signal.SIGTERM, None)
        await asyncio.sleep(0)
        return task.cancelled(), termination.received

    assert asyncio.run(main()) == (False, False)


def test_a_second_sigterm_during_the_run_does_not_cancel_its_cleanup_again() -> None:
    # the first cancels the run's task, which then writes what an interrupted run leaves;
    # a second (timeout -k, signals sent to the process group) must not cut that short
    async def main() -> str:
        termination = _Termination()
        attached, cleaning, go_on = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def run() -> str:
            termination.attach()
            attached.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cleaning.set()
                await go_on.wait()  # the cleanup awaits, as closing the judge's client does
                return "cleaned up"
            return "not cancelled"

        task = asyncio.create_task(run())
        await attached.wait()
        termination(signal.SIGTERM, None)
        await cleaning.wait()
        termination(signal.SIGTERM, None)
        for _ in range(3):  # what the handler scheduled on the loop runs
            await asyncio.sleep(0)
        go_on.set()
        try:
            return await task
        except asyncio.CancelledError:
            return "the cleanup was cancelled"

    assert asyncio.run(main()) == "cleaned up"


def test_a_sigterm_once_the_runs_loop_is_closed_stops_nothing() -> None:
    # the loop the run's task ran in is closed: nothing to cancel there (a signal after the
    # run would otherwise reach a closed loop)
    closed: list[str] = []
    runner = SimpleNamespace(
        run=lambda: asyncio.sleep(0, result={"status": "complete"}),
        judge=SimpleNamespace(), cache=SimpleNamespace(close=lambda: closed.append("cache")))
    termination = _Termination()
    assert asyncio.run(_go(runner, termination)) == {"status": "complete"}  # type: ignore[arg-type]
    assert closed == ["cache"]
    termination(signal.SIGTERM, None)
    assert not termination.received


def test_a_run_started_with_sigterm_ignored_ignores_it(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    # as Ctrl-C ignored by the parent stays ignored: the run goes on to its end
    server.add(goal(True), Reply(content=goal(True), sleep=1.5))
    out = tmp_path / "run"
    process = start_run(write_cases(tmp_path, [case("a"), case("b")]), out, server.base_url,
                        sigterm=signal.SIG_IGN)
    try:
        deadline = time.monotonic() + 60
        while len(server.requests) < 2:
            assert process.poll() is None, process.communicate(timeout=30)
            assert time.monotonic() < deadline, "the second request was never sent"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert (process.returncode, stderr) == (0, "")
    assert stdout.startswith("complete: 2 passed;")
    assert summary(out)["status"] == "complete"


def test_a_run_resumed_after_sigterm_does_not_know_its_cost(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path, out, code, _, _ = terminate_in_flight(tmp_path, server)
    assert code == 143
    server.add(goal(True))
    assert run_cases(path, out, server.base_url, *PRICED)[0] == 0
    found = summary(out)
    assert (found["status"], found["cost"]) == ("complete", None)
    assert found["usage"] == {"requests": 3, "prompt_tokens": 200, "completion_tokens": 40,
                              "total_tokens": 240, "requests_without_usage": 1}
    # the three requests the server saw are all counted: the cut-off one is never free
    assert len(server.requests) == 3
    code, blockers, _ = gate(out, policy(tmp_path, 'max_cost = 0.24\n[slices.tickets]\n'
                                         'max_failures = 0\n'))
    assert (code, [line.split(":", 1)[0] for line in blockers]) == (2, ["cost_unknown"])


def test_sigterm_before_the_run_started_says_nothing_was_written(tmp_path: Path) -> None:
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
        # the check module's folder first, then the PYTHONPATH this test runs under (the
        # tracebridge under test)
        env={**environment(), "PYTHONPATH": os.pathsep.join(
            filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))},
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "importing").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)  # the check module is being imported
        stdout, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert (process.returncode, stdout) == (143, "")
    assert err == ("tracebridge run: terminated (SIGTERM) before the run started; nothing was "
                   f"written to {out}\n")
    assert not out.exists()


def test_the_sigterm_handler_before_the_run_is_put_back(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    seen: list[int] = []

    def before(signum: int, frame: FrameType | None) -> None:
        seen.append(signum)

    previous = signal.signal(signal.SIGTERM, before)
    try:
        server.add(goal(True))
        path = write_cases(tmp_path, [case("a")])
        assert run_cases(path, tmp_path / "run", server.base_url)[0] == 0
        assert signal.getsignal(signal.SIGTERM) is before
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == []


# --- 2. dollar amounts in refusals and blockers ----------------------------------------------


@pytest.mark.parametrize(("limit", "amounts", "shown"), [
    (0.0066369, (Fraction(6637, 10**6), 0.0066369), ("$0.0066369", "$0.006637", "$0.0066369")),
    (0.0015399, (0.00154,), ("$0.0015399", "$0.00154")),
    (0.00003, (8.1e-05,), ("$0.00003", "$0.000081")),
    (0.00663701, (0.00663702,), ("$0.00663701", "$0.00663702")),
    (0.1, (0.12,), ("$0.1", "$0.12")),
    (1.99, (Fraction(2), 1.99), ("$1.99", "$2", "$1.99")),
    (1e-05, (0.0,), ("$0.00001", "$0")),
], ids=["estimate", "spent", "cheap", "close", "round", "whole", "tiny"])
def test_amounts_never_read_as_a_limit_they_differ_from(
    limit: float, amounts: tuple[Fraction | float, ...], shown: tuple[str, ...]
) -> None:
    assert dollars(limit, *amounts) == shown


def test_the_refusal_tells_the_estimate_from_the_limit() -> None:
    work = [Estimate(1, 1000, 200, 0.006637)]
    assert Budget(max_cost=0.0066369).fits(work) == (
        "the planned work costs an estimated $0.006637; $0.0066369 of the limit of "
        "$0.0066369 is left")
    assert Budget(max_cost=0.006637).fits(work) is None


async def test_the_budget_stop_tells_the_next_request_from_what_is_left(
    server: FakeOpenAI
) -> None:
    # one request's estimate at this price is more than the limit, given to 7 decimals
    budget = Budget(max_cost=0.0000105, prices={"judge-model": Price(0.1, 0.1)})
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    judge = OpenAIJudge(client=client, model="judge-model")
    try:
        metric = AgentGoalAccuracyWithReference(BudgetedJudge(judge, budget, "judge-model"))
        sample = MultiTurnSample.model_validate(
            {"messages": [{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello"}],
             "reference": "a greeting"})
        result = await metric.ascore(sample)
    finally:
        await judge.aclose()
    assert result.error is not None
    stop = result.error.split("budget exhausted: ", 1)[1]
    said, left = stop.split(" (estimated) and ")
    needed = said.removeprefix("the next request may cost up to $")
    assert Fraction(needed) > Fraction("0.0000105")
    assert left == "$0.0000105 of the limit of $0.0000105 is left"
    assert server.requests == []


@pytest.mark.parametrize(("price", "limit", "line"), [
    ("judge-model=1000,1000", "0.11999",
     "cost_over_limit: run: $0.12 spent, over the limit of $0.11999"),
    ("judge-model=0.15,0.60", "0.00002",
     "cost_over_limit: run: $0.000027 spent, over the limit of $0.00002"),
], ids=["close", "cheap"])
def test_the_cost_blocker_tells_the_cost_from_the_limit(
    tmp_path: Path, server: FakeOpenAI, price: str, limit: str, line: str
) -> None:
    server.add(goal(True))
    path = write_cases(tmp_path, [case("a")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url, "--price", price)[0] == 0
    code, blockers, _ = gate(out, policy(tmp_path, f"max_cost = {limit}\n[slices.tickets]\n"
                                         "max_failures = 0\n"))
    assert (code, blockers[:1]) == (2, [line])


# --- 3. a cache hit answers the job's own question -------------------------------------------


def fill_cache(tmp_path: Path, server: FakeOpenAI) -> tuple[Path, list[str]]:
    """A cache holding a's result (one request); its path and the flags that use it."""
    cache = tmp_path / "cache.sqlite"
    flags = ["--cache", str(cache)]
    server.add(goal(True))
    path = write_cases(tmp_path, [case("a")])
    assert run_cases(path, tmp_path / "first", server.base_url, *flags)[0] == 0
    return path, flags


def edit_stored(cache: Path, field: str, value: str) -> str:
    """Set ``field`` of the one stored result to ``value``; returns its key."""
    db = sqlite3.connect(cache)
    key, stored = db.execute("SELECT key, value FROM results").fetchone()
    data = json.loads(stored)
    data[field] = value
    db.execute("UPDATE results SET value = ? WHERE key = ?", (json.dumps(data), key))
    db.commit()
    db.close()
    return str(key)


@pytest.mark.parametrize(("field", "value"), [
    ("name", "other_metric"),
    ("metric_version", "0.0.0"),
    ("transcript_hash", "tb1:deadbeef"),
])
def test_a_hit_for_another_question_is_a_damaged_cache(
    tmp_path: Path, server: FakeOpenAI, field: str, value: str
) -> None:
    path, flags = fill_cache(tmp_path, server)
    cache = Path(flags[1])
    wanted = rows(tmp_path / "first", "results.jsonl")[0][field]
    key = edit_stored(cache, field, value)
    out = tmp_path / "second"
    code, stdout, err = run_cases(path, out, server.base_url, *flags)
    assert (code, stdout) == (2, "")
    assert err == (f"tracebridge run: cache {cache}: the stored result for key {key} does not "
                   f"match its key ({field} is {value!r}, asked for {wanted!r}); delete the "
                   "file\n")
    assert len(server.requests) == 1  # nothing asked again, nothing taken from the cache
    assert not (out / "results.jsonl").exists() or rows(out, "results.jsonl") == []


def test_get_checks_the_fields_it_is_asked_for(tmp_path: Path) -> None:
    result = MetricResult(name="m", value=1.0, metric_version="1", transcript_hash="tb1:00")
    key = "0" * 64
    asked = {"name": "m", "metric_version": "1", "transcript_hash": "tb1:00"}
    with ResultCache(tmp_path / "c.sqlite") as cache:
        cache.put(key, result)
        hit = cache.get(key, asked)
        assert hit is not None
        assert hit.value == 1.0
        assert cache.get(key) is not None  # asked nothing: the schema alone is checked
        with pytest.raises(CacheError) as caught:
            cache.get(key, {**asked, "transcript_hash": "tb1:01"})
    assert str(caught.value) == (
        f"cache {tmp_path / 'c.sqlite'}: the stored result for key {key} does not match its "
        "key (transcript_hash is 'tb1:00', asked for 'tb1:01'); delete the file")


def test_the_dollars_examples_run() -> None:
    import doctest

    from tracebridge.evaluation import _dollars

    failed, attempted = doctest.testmod(_dollars)
    assert (failed, attempted) == (0, 2)


# --- opening a new cache that another process is opening at the same moment -----------------


def test_a_cache_found_locked_where_sqlite_does_not_wait_is_opened_on_a_later_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two processes turning a new file to WAL each hold the lock the other needs: SQLite
    # tells one of them at once, without waiting (the race the process test met once)
    import sqlite3

    from tracebridge.evaluation import cache as cache_module

    opened = cache_module.ResultCache._connect_once
    tries: list[float] = []

    def locked_twice(self: Any, timeout: float) -> Any:
        tries.append(timeout)
        if len(tries) < 3:
            raise cache_module._Locked(sqlite3.OperationalError("database is locked"))
        return opened(self, timeout)

    monkeypatch.setattr(cache_module.ResultCache, "_connect_once", locked_twice)
    with ResultCache(tmp_path / "cache.sqlite", timeout=5.0) as cache:
        assert cache.get("0" * 64) is None
    assert tries == [5.0, 5.0, 5.0]


def test_a_cache_locked_past_its_timeout_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from tracebridge.evaluation import cache as cache_module

    def always_locked(self: Any, timeout: float) -> Any:
        raise cache_module._Locked(sqlite3.OperationalError("database is locked"))

    monkeypatch.setattr(cache_module.ResultCache, "_connect_once", always_locked)
    path = tmp_path / "cache.sqlite"
    with pytest.raises(CacheError) as caught:
        ResultCache(path, timeout=0.05)
    assert str(caught.value) == (
        f"cache {path}: cannot open it: database is locked (another connection held it for "
        "longer than the 0.05 s timeout; try again once it is released)")
