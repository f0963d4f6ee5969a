"""The runner's use of the result cache (two processes, a miss when the question changes) and
resuming a run on its RUN_DIR, after a SIGKILL too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from evaluation_helpers import (
    WITH_REFERENCE,
    WITHOUT_REFERENCE,
    case,
    goal,
    rows,
    run_cases,
    states,
    summary,
    write_cases,
)
from fake_openai_server import FakeOpenAI, Reply


def command(path: Path, out: Path, base_url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tracebridge", "run", str(path), "--out", str(out),
            "--metric", WITH_REFERENCE, "--model", "judge-model", "--base-url", base_url,
            "--retries", "0", "--concurrency", "1", *extra]


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}


# --- the cache ------------------------------------------------------------------------------


def test_a_result_is_served_from_the_cache_in_another_process(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), goal(False))
    other = case("b")
    other["transcript"][0]["content"] = "Open a ticket for the late parcel."
    path = write_cases(tmp_path, [case("a"), other])  # two questions, two keys
    cache = tmp_path / "cache.sqlite"
    first = subprocess.run(command(path, tmp_path / "one", server.base_url, "--cache",
                                   str(cache)), capture_output=True, text=True, timeout=120,
                           env=environment())
    assert first.returncode == 0, first.stderr
    assert len(server.requests) == 2
    second = subprocess.run(command(path, tmp_path / "two", server.base_url, "--cache",
                                    str(cache)), capture_output=True, text=True, timeout=120,
                            env=environment())
    assert second.returncode == 0, second.stderr
    assert len(server.requests) == 2  # nothing more was asked
    fresh, cached = rows(tmp_path / "one", "results.jsonl"), rows(tmp_path / "two",
                                                                  "results.jsonl")
    assert [row["cached"] for row in fresh] == [None, None]
    for before, after in zip(fresh, cached, strict=True):
        assert after["cached"]["key"] == after["details"]["cached"]["key"]
        assert len(after["cached"]["key"]) == 64
        assert after["cached"]["stored_at"]
        assert (after["value"], after["reason"]) == (before["value"], before["reason"])
    assert states(tmp_path / "two") == {"a": "passed", "b": "failed"}
    assert summary(tmp_path / "two")["usage"]["requests"] == 0  # a hit costs nothing


@pytest.mark.parametrize(
    "change",
    ["model", "reference", "transcript", "metric", "temperature_endpoint"],
)
def test_a_changed_question_misses_the_cache(
    tmp_path: Path, server: FakeOpenAI, change: str
) -> None:
    cache = ["--cache", str(tmp_path / "cache.sqlite")]
    server.add(goal(True), goal(True))
    path = write_cases(tmp_path, [case("a")], "one.jsonl")
    assert run_cases(path, tmp_path / "one", server.base_url, *cache)[0] == 0
    assert len(server.requests) == 1
    metrics: tuple[str, ...] = (WITH_REFERENCE,)
    base_url, extra = server.base_url, list(cache)
    if change == "model":
        extra += ["--model", "another-model"]
    elif change == "reference":
        path = write_cases(tmp_path, [case("a", reference="Two tickets.")], "two.jsonl")
    elif change == "transcript":
        item = case("a")
        item["transcript"][0]["content"] = "Open a ticket for the late parcel."
        path = write_cases(tmp_path, [item], "two.jsonl")
    elif change == "metric":  # a without-reference result never answers a with-reference one
        metrics = (WITHOUT_REFERENCE,)
    else:  # the same server under another address is another endpoint
        base_url = base_url.replace("127.0.0.1", "localhost")
    code, _, err = run_cases(path, tmp_path / "two", base_url, *extra, metrics=metrics)
    assert code == 0, err
    assert len(server.requests) == 2
    assert rows(tmp_path / "two", "results.jsonl")[0]["cached"] is None


def test_errors_are_not_cached(tmp_path: Path, server: FakeOpenAI) -> None:
    cache = ["--cache", str(tmp_path / "cache.sqlite")]
    server.add(Reply(status=500), goal(True))
    path = write_cases(tmp_path, [case("a")])
    assert run_cases(path, tmp_path / "one", server.base_url, *cache)[0] == 3
    assert run_cases(path, tmp_path / "two", server.base_url, *cache)[0] == 0
    assert len(server.requests) == 2


def test_a_damaged_cache_is_a_one_line_error(tmp_path: Path, server: FakeOpenAI) -> None:
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"this is not a database at all" * 100)
    code, _, err = run_cases(write_cases(tmp_path, [case("a")]), tmp_path / "run",
                             server.base_url, "--cache", str(cache))
    assert code == 2
    assert err.startswith(f"tracebridge run: cache {cache}: ")
    assert err.count("\n") == 1
    assert len(server.requests) == 0


# --- resuming -------------------------------------------------------------------------------


def test_running_again_keeps_done_work_and_runs_only_what_is_missing(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), Reply(status=500), goal(True))
    path = write_cases(tmp_path, [case("a"), case("b"), case("c")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url)[0] == 3
    assert states(out) == {"a": "passed", "b": "errored", "c": "passed"}
    server.add(goal(False))
    code, _, _ = run_cases(path, out, server.base_url)
    assert code == 0
    assert len(server.requests) == 4  # only b was asked again
    assert states(out) == {"a": "passed", "b": "failed", "c": "passed"}
    assert [row["case_id"] for row in rows(out, "results.jsonl")] == ["a", "b", "c", "b"]
    assert summary(out)["usage"]["requests"] == 4  # the failed request cost too


def test_resuming_is_refused_for_another_case_set(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(goal(True))
    out = tmp_path / "run"
    assert run_cases(write_cases(tmp_path, [case("a")]), out, server.base_url)[0] == 0
    code, _, err = run_cases(write_cases(tmp_path, [case("a"), case("b")]), out,
                             server.base_url)
    assert code == 2
    assert err == (f"tracebridge run: {out} holds a run with another manifest hash; resuming "
                   "would mix two runs: use a new --out\n")
    code, _, err = run_cases(write_cases(tmp_path, [case("a")]), out, server.base_url,
                             "--model", "other")
    assert code == 2
    assert "holds a run with another judge" in err


def test_a_line_cut_short_by_a_kill_is_dropped_and_its_job_runs_again(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), goal(True))
    path = write_cases(tmp_path, [case("a"), case("b")])
    out = tmp_path / "run"
    assert run_cases(path, out, server.base_url)[0] == 0
    results = out / "results.jsonl"
    first, second = results.read_text().splitlines()
    results.write_text(first + "\n" + second[: len(second) // 2])
    server.add(goal(False))
    assert run_cases(path, out, server.base_url)[0] == 0
    assert len(server.requests) == 3
    assert [row["case_id"] for row in rows(out, "results.jsonl")] == ["a", "b"]
    assert states(out) == {"a": "passed", "b": "failed"}


def test_resume_after_sigkill_loses_at_most_the_request_in_flight(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), Reply(content=goal(True), sleep=60))  # the second never answers
    path = write_cases(tmp_path, [case("a"), case("b"), case("c")])
    out = tmp_path / "run"
    process = subprocess.Popen(command(path, out, server.base_url, "--no-cache"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment())
    try:
        deadline = time.monotonic() + 60
        results = out / "results.jsonl"
        # written and flushed as produced: the first result is there while b is in flight
        while not (results.exists() and results.read_text().count("\n") == 1
                   and len(server.requests) == 2):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the run never got to its second request"
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert json.loads((out / "summary.json").read_text())["status"] == "running"
    assert [row["case_id"] for row in rows(out, "results.jsonl")] == ["a"]

    server.add(goal(True), goal(False))
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 0, err
    assert len(server.requests) == 4  # b, which was in flight, and c; a was kept
    assert [row["case_id"] for row in rows(out, "results.jsonl")] == ["a", "b", "c"]
    assert states(out) == {"a": "passed", "b": "passed", "c": "failed"}
    assert summary(out)["status"] == "complete"


def test_ctrl_c_exits_130_and_the_run_resumes(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(goal(True), Reply(content=goal(True), sleep=60))
    path = write_cases(tmp_path, [case("a"), case("b")])
    out = tmp_path / "run"
    process = subprocess.Popen(
        command(path, out, server.base_url, "--no-cache"), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=environment(),
        # Ctrl-C reaches the command as from a terminal, even where the suite runs as a
        # background job (which starts with SIGINT ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while len(server.requests) < 2:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the second request was never sent"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate(timeout=30)
    assert (process.returncode, stdout) == (130, "")
    assert stderr == (f"tracebridge run: interrupted; {out} keeps what was written (run again "
                      "to resume)\n")
    assert [row["case_id"] for row in rows(out, "results.jsonl")] == ["a"]
    server.add(goal(True))
    assert run_cases(path, out, server.base_url)[0] == 0
    assert states(out) == {"a": "passed", "b": "passed"}


def test_the_cache_is_consulted_before_the_budget(tmp_path: Path, server: FakeOpenAI) -> None:
    cache = ["--cache", str(tmp_path / "cache.sqlite")]
    server.add(goal(True))
    path = write_cases(tmp_path, [case("a")])
    assert run_cases(path, tmp_path / "one", server.base_url, *cache)[0] == 0
    code, _, _ = run_cases(path, tmp_path / "two", server.base_url, *cache,
                           "--max-requests", "0")
    assert (code, len(server.requests)) == (0, 1)  # answered from the cache: nothing to fit
    assert states(tmp_path / "two") == {"a": "passed"}


def test_what_a_job_stopped_by_the_budget_spent_is_counted_after_a_resume(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    # The first answer is not JSON; its retry does not fit the budget, so the job ends with
    # no result. Its request was counted in memory only, and a resume (which sums what the
    # run directory holds) lost it: the gate's max_cost could pass a run that went over.
    path, out = write_cases(tmp_path, [case("a")]), tmp_path / "run"
    server.add("not json")
    code, _, _ = run_cases(path, out, server.base_url, "--retries", "1", "--max-requests", "1",
                           "--allow-partial")
    first = json.loads((out / "summary.json").read_text())
    assert (code, first["status"], first["usage"]["requests"]) == (3, "incomplete", 1)
    server.add(goal(True))
    assert run_cases(path, out, server.base_url)[0] == 0
    resumed = json.loads((out / "summary.json").read_text())
    assert (len(server.requests), resumed["usage"]["requests"]) == (2, 2)
    assert [row["name"] for row in rows(out, "spent.jsonl")] == [WITH_REFERENCE]
