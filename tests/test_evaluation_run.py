"""``tracebridge run``: states, the budget boundary, provider outages and the run record."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from cli_helpers import run
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

from tracebridge import __version__


def five(tmp_path: Path) -> Path:
    return write_cases(tmp_path, [case(f"c{i}", slice="even" if i % 2 == 0 else "odd")
                                  for i in range(5)])


# --- states ---------------------------------------------------------------------------------


def test_passed_failed_and_review(tmp_path: Path, server: FakeOpenAI) -> None:
    label = {"human_adjudication": {"goal_achieved": True}}
    # per case, with reference then without
    server.add(goal(True), goal(True), goal(False), goal(True), goal(True), goal(False))
    path = write_cases(tmp_path, [case("yes"), case("no"), case("judge-vs-human", **label)])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url,
                           metrics=(WITH_REFERENCE, WITHOUT_REFERENCE))
    assert code == 0
    [yes, no, disagree] = rows(out, "cases.jsonl")
    assert (yes["state"], yes["reasons"]) == ("passed", [])
    assert yes["values"] == {WITH_REFERENCE: 1.0, WITHOUT_REFERENCE: 1.0}
    assert (no["state"], no["reasons"]) == ("review", [
        f"{WITH_REFERENCE} says not achieved; {WITHOUT_REFERENCE} says achieved"])
    assert (disagree["state"], disagree["reasons"]) == ("review", [
        f"{WITHOUT_REFERENCE} says not achieved; the human label says achieved",
        f"{WITH_REFERENCE} says achieved; {WITHOUT_REFERENCE} says not achieved"])


def test_a_value_below_the_threshold_fails_the_case(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(goal(False))
    path = write_cases(tmp_path, [case("no")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url)
    assert code == 0  # the run is complete; deciding on failures is the gate's job
    [row] = rows(out, "cases.jsonl")
    assert (row["state"], row["reasons"]) == ("failed", [f"{WITH_REFERENCE} = 0.0 (below 1.0)"])


def test_the_record_says_what_ran_and_with_what(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(Reply(content=goal(True), prompt_tokens=1000, completion_tokens=100),
               Reply(content=goal(False), prompt_tokens=1000, completion_tokens=100))
    path = write_cases(tmp_path, [case("a", slice="x"), case("b", slice="y")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url, "--price", "judge-model=2,10")
    assert code == 0
    record = summary(out)
    assert record["tracebridge"] == __version__
    assert record["python"].split()[0] in ("CPython", "PyPy")
    assert record["metrics"] == {WITH_REFERENCE: "1+prompt.2+render.6"}
    assert record["judge"]["model"] == "judge-model"
    assert record["judge"]["temperature"] == 0
    assert record["manifest_hash"].startswith("sha256:")
    assert record["counts"] == {"passed": 1, "failed": 1, "blocked": 0, "errored": 0,
                                "unrun": 0, "review": 0}
    assert record["slices"]["x"]["passed"] == 1
    assert record["slices"]["y"]["failed"] == 1
    assert record["usage"] == {"requests": 2, "prompt_tokens": 2000, "completion_tokens": 200,
                               "total_tokens": 2200, "requests_without_usage": 0}
    assert record["cost"] == pytest.approx(2000 * 2 / 1e6 + 200 * 10 / 1e6)
    assert (record["status"], record["unrun"], record["errored"]) == ("complete", [], [])
    [a, _b] = rows(out, "results.jsonl")
    assert (a["case_id"], a["name"], a["value"], a["cached"]) == ("a", WITH_REFERENCE, 1.0, None)
    [case_a, _] = rows(out, "cases.jsonl")
    assert case_a["source_hash"].startswith("sha256:")
    assert case_a["transcript_hash"] == a["transcript_hash"]


# --- the budget -------------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", ["1", "3"])
def test_the_budget_boundary_n_requests_allowed_n_sent_the_rest_unrun(
    tmp_path: Path, server: FakeOpenAI, concurrency: str
) -> None:
    server.add(*[goal(True)] * 5)
    out = tmp_path / "run"
    code, _, err = run_cases(five(tmp_path), out, server.base_url, "--max-requests", "2",
                             "--allow-partial", "--concurrency", concurrency)
    assert code == 3
    assert len(server.requests) == 2
    assert list(states(out).values()).count("passed") == 2
    assert list(states(out).values()).count("unrun") == 3
    record = summary(out)
    assert record["status"] == "incomplete"
    assert record["stopped"].startswith("budget: ")
    assert "of the limit of 2" in record["stopped"]
    assert len(record["unrun"]) == 3
    assert all(item["reasons"][0].startswith(f"{WITH_REFERENCE}: budget: ")
               for item in record["unrun"])
    assert record["budget"]["spent_this_run"]["requests"] == 2
    assert err.startswith("tracebridge run: stopped: budget: ")


def test_the_estimate_refuses_a_run_the_budget_cannot_cover(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    out = tmp_path / "run"
    code, stdout, err = run_cases(five(tmp_path), out, server.base_url, "--max-requests", "4")
    assert (code, len(server.requests)) == (3, 0)
    assert set(states(out).values()) == {"unrun"}
    record = summary(out)
    assert record["status"] == "refused"
    assert record["stopped"] == (
        "refused: the estimate does not fit the budget: the planned work needs 5 judge "
        "requests; 4 of the limit of 4 are left (--allow-partial starts it anyway)")
    assert stdout.startswith("refused: 5 unrun; judge: 0 request(s)")
    assert err == f"tracebridge run: stopped: {record['stopped']}\n"


def test_the_estimate_counts_tokens_from_the_rendered_prompt(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    out = tmp_path / "run"
    code, _, _ = run_cases(five(tmp_path), out, server.base_url, "--max-tokens", "100")
    assert (code, len(server.requests)) == (3, 0)
    assert "the planned work needs an estimated" in summary(out)["stopped"]


def test_a_cost_limit_needs_the_models_price(tmp_path: Path, server: FakeOpenAI) -> None:
    code, _, err = run_cases(five(tmp_path), tmp_path / "run", server.base_url,
                             "--max-cost", "1")
    assert code == 2
    assert err.startswith("tracebridge run: a cost limit needs the price of the judge model "
                          "judge-model: give it as judge-model=INPUT,OUTPUT")


def test_a_budget_that_fits_runs_everything(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(*[goal(True)] * 5)
    out = tmp_path / "run"
    code, _, _ = run_cases(five(tmp_path), out, server.base_url, "--max-requests", "5",
                           "--max-cost", "10", "--price", "judge-model=1,1")
    assert (code, len(server.requests)) == (0, 5)
    assert summary(out)["budget"]["remaining"]["requests"] == 0


# --- failures of the judge ---------------------------------------------------------------------


def test_a_provider_outage_is_errored_and_incomplete_never_a_failure(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(*[Reply(status=503)] * 5)
    out = tmp_path / "run"
    code, stdout, _ = run_cases(five(tmp_path), out, server.base_url)
    assert code == 3
    assert set(states(out).values()) == {"errored"}
    record = summary(out)
    assert record["status"] == "incomplete"
    assert record["counts"]["failed"] == 0
    assert record["counts"]["errored"] == 5
    assert record["errored"][0]["reasons"][0].startswith(
        f"{WITH_REFERENCE}: the judge request failed: InternalServerError")
    assert stdout.startswith("incomplete: 5 errored;")


def test_an_outage_during_the_controls_stops_the_run(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(Reply(status=500))
    path = write_cases(tmp_path, [case("ctl", control_role="positive"), case("later")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url)
    assert (code, len(server.requests)) == (3, 1)
    assert states(out) == {"ctl": "errored", "later": "unrun"}
    record = summary(out)
    assert record["status"] == "controls_incomplete"
    assert record["stopped"].startswith("controls_incomplete: ctl errored")


def test_an_http_retry_is_a_request_and_counts(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(Reply(status=503), goal(True))
    path = write_cases(tmp_path, [case("a")])
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url, "--retries", "1")
    assert (code, len(server.requests)) == (0, 2)
    assert summary(out)["usage"]["requests"] == 2


# --- the command line --------------------------------------------------------------------------


def test_a_bad_case_file_exits_1_listing_every_bad_case(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [case("a"), case("a"), case("b", control_role="nope")])
    code, _, err = run_cases(path, tmp_path / "run", server.base_url)
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == f"tracebridge run: {path}: line 2 (case a): duplicate case_id (first on " \
                       "line 1)"
    assert lines[1].startswith(f"tracebridge run: {path}: line 3 (case b): control_role: ")
    assert lines[2] == "tracebridge run: 2 bad case record(s); nothing ran"
    assert not (tmp_path / "run").exists()


def test_a_broken_transcript_is_told_and_blocked(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(goal(True))
    transcript = [{"role": "human", "content": "hi"}, {"role": "robot", "content": "beep"}]
    path = write_cases(tmp_path, [case("odd", transcript=transcript), case("ok")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 0
    assert err == (f"tracebridge run: {path}: line 1 (case odd): the transcript cannot be "
                   "used: roles: transcript[1].role: unknown role 'robot'; expected one of "
                   "human, ai, tool, system [unknown_role]; the case is blocked\n")
    assert states(out) == {"odd": "blocked", "ok": "passed"}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--concurrency", "0"), "--concurrency must be 1 or more, got 0"),
        (("--retries", "-1"), "--retries must be 0 or more, got -1"),
        (("--timeout", "0"), "--timeout must be a finite number more than 0, got 0.0"),
        (("--price", "judge-model"), "a price is MODEL=INPUT,OUTPUT"),
        (("--checks", "nope"), "--checks nope: expected package.module:function"),
    ],
)
def test_unusable_requests_exit_2_in_one_line(
    tmp_path: Path, server: FakeOpenAI, flags: tuple[str, ...], message: str
) -> None:
    code, _, err = run_cases(five(tmp_path), tmp_path / "run", server.base_url, *flags)
    assert code == 2
    assert err.startswith(f"tracebridge run: {message}")
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_judged_metrics_need_a_model(tmp_path: Path) -> None:
    code, _, err = run("run", str(five(tmp_path)), "--out", str(tmp_path / "run"),
                       "--metric", WITH_REFERENCE, "--no-cache")
    assert code == 2
    assert err == (f"tracebridge run: --model is required for judged metrics "
                   f"({WITH_REFERENCE})\n")


def test_a_missing_case_file_exits_2(tmp_path: Path, server: FakeOpenAI) -> None:
    code, _, err = run_cases(tmp_path / "nope.jsonl", tmp_path / "run", server.base_url)
    assert code == 2
    assert err.startswith(f"tracebridge run: cannot read {tmp_path / 'nope.jsonl'}: ")


def test_results_rows_are_metric_results(tmp_path: Path, server: FakeOpenAI) -> None:
    from tracebridge.metrics import MetricResult

    server.add(goal(True))
    out = tmp_path / "run"
    run_cases(write_cases(tmp_path, [case("a")]), out, server.base_url)
    [row] = rows(out, "results.jsonl")
    result = MetricResult.model_validate({k: v for k, v in row.items() if k not in (
        "case_id", "cached", "price", "refused_requests")})
    assert result.value == 1.0
    assert json.loads((out / "summary.json").read_text())["status"] == "complete"


def test_an_empty_api_key_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    code, _, err = run("run", str(five(tmp_path)), "--out", str(tmp_path / "run"),
                       "--metric", WITH_REFERENCE, "--model", "m", "--no-cache")
    assert code == 2
    assert err == "tracebridge run: set OPENAI_API_KEY to the API key (or use --api-key-env)\n"


def test_cases_jsonl_is_written_as_cases_settle(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(goal(True), Reply(content=goal(True), sleep=60))
    path = write_cases(tmp_path, [case("blocked", reference=None), case("a"), case("b")])
    out = tmp_path / "run"
    thread = threading.Thread(target=run, args=(
        "run", str(path), "--out", str(out), "--metric", WITH_REFERENCE, "--model", "m",
        "--base-url", server.base_url, "--retries", "0", "--concurrency", "1", "--no-cache",
        "--timeout", "3"), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while len(server.requests) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # b is in flight: the blocked case and a are already in cases.jsonl
        assert [(r["case_id"], r["state"]) for r in rows(out, "cases.jsonl")] == [
            ("blocked", "blocked"), ("a", "passed")]
    finally:
        thread.join(timeout=30)
    assert states(out) == {"blocked": "blocked", "a": "passed", "b": "errored"}
    assert rows(out, "cases.jsonl")[2]["reasons"][0].startswith(
        f"{WITH_REFERENCE}: the judge request failed: APITimeoutError")


async def test_the_runner_from_python(tmp_path: Path, server: FakeOpenAI) -> None:
    import openai

    from tracebridge.evaluation.budget import Budget
    from tracebridge.evaluation.cache import ResultCache
    from tracebridge.evaluation.cases import load_cases
    from tracebridge.evaluation.record import RunRecord
    from tracebridge.evaluation.runner import Runner, RunSettings
    from tracebridge.metrics import OpenAIJudge

    server.add(goal(True), goal(False))
    cases = load_cases(str(write_cases(tmp_path, [case("a"), case("b", critical=True)])))
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    judge = OpenAIJudge(client, "judge-model")
    with ResultCache(tmp_path / "cache.sqlite") as cache:
        runner = Runner(cases, [WITH_REFERENCE], RunRecord(tmp_path / "run"), judge=judge,
                        model="judge-model", budget=Budget(max_requests=2), cache=cache,
                        settings=RunSettings(concurrency=1))  # the script answers in order
        result = await runner.run()
    await judge.aclose()
    assert (result["status"], result["counts"]["passed"], result["counts"]["failed"]) == (
        "complete", 1, 1)
    assert states(tmp_path / "run") == {"a": "failed", "b": "passed"}  # b, critical, first
    assert result["judge"]["model"] == "judge-model"
    assert result["case_file"] == str(tmp_path / "cases.jsonl")


def test_a_metric_that_gives_no_value_puts_the_case_up_for_review(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [case("no-role")])  # no system message, no rubrics["role"]
    out = tmp_path / "run"
    code, _, _ = run_cases(path, out, server.base_url, metrics=("role_adherence",))
    assert (code, len(server.requests)) == (0, 0)
    [row] = rows(out, "cases.jsonl")
    assert (row["state"], row["reasons"]) == ("review", [
        'role_adherence gave no value: no role to adhere to: the sample has no system message '
        'text and no rubrics["role"]'])


def test_a_lone_surrogate_reaches_the_judge_as_an_error_not_as_a_changed_prompt(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    # JSON text may hold a lone surrogate as an escape (a pair cut by a broken producer): the
    # transcript is read, hashed and recorded, but a UTF-8 request body cannot carry it; no
    # request is sent, so the sample is unscorable (like one that lacks what the metric needs)
    # and the case goes up for review
    server.add(goal(True))
    broken = case("cut", reference="One billing ticket is created.")
    broken["transcript"][0]["content"] += " \ud83c"
    path = write_cases(tmp_path, [broken])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--cache", str(tmp_path / "c.db"))
    assert (code, err, server.requests) == (0, "", [])
    [row] = rows(out, "cases.jsonl")
    [reason] = row["reasons"]
    assert (row["state"], row["values"]) == ("review", {WITH_REFERENCE: None})
    assert reason.startswith(
        f"{WITH_REFERENCE} gave no value: the judge request was not sent: its prompt holds a "
        "lone surrogate U+D83C at character ")
    assert reason.endswith(", which UTF-8 cannot carry")
    assert row["transcript_hash"].startswith("tb1:")


def test_a_lone_surrogate_in_tool_arguments_is_scored_and_recorded(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    cut = {"category": "billing \ud83c"}
    broken = case("cut", reference_tool_calls=[{"name": "create_ticket", "args": cut}])
    broken["transcript"][1]["tool_calls"][0]["args"] = cut
    path = write_cases(tmp_path, [broken])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--cache", str(tmp_path / "c.db"),
                             metrics=("tool_call_f1",))
    assert (code, err) == (0, "")
    [row] = rows(out, "cases.jsonl")
    assert (row["state"], row["values"]) == ("passed", {"tool_call_f1": 1.0})
    [result] = rows(out, "results.jsonl")  # written back as the JSON escape it was read from
    assert result["details"]["matched"] == [
        {"predicted": 0, "message_index": 1, "name": "create_ticket", "args": cut}]
    assert "billing \\ud83c" in (out / "results.jsonl").read_text()
