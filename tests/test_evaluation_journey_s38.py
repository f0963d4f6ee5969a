"""User-journey audit s38 of ``tracebridge run / gate / calibrate / report``, against the fake
judge on 127.0.0.1: a deterministic metric at the budget boundary, a run interrupted mid-request
(what gate, calibrate and report say of it, and what the in-flight request cost), a LlamaIndex
event stream as a case transcript, and a ``--checks`` module that is not on the import path."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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

from tracebridge.evaluation.cases import load_cases

# --- 1. the budget boundary leaves a deterministic metric its result ------------------------

CREATE = [{"name": "create_ticket", "args": {"category": "billing"}}]


def wrong_tool() -> dict[str, Any]:
    item = case("wrong-tool", reference_tool_calls=CREATE)
    item["transcript"][1]["tool_calls"][0]["name"] = "delete_ticket"
    return item


def test_a_deterministic_metric_past_the_budget_boundary_is_scored_and_fails(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True))  # the control's one request: the limit of 1 is then reached
    path = write_cases(tmp_path, [control("ctl", "positive", reference_tool_calls=CREATE),
                                  wrong_tool()])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--max-requests", "1",
                             "--allow-partial", metrics=(WITH_REFERENCE, "tool_call_f1"))
    assert code == 3, err  # the goal metric of wrong-tool is still unrun: incomplete
    assert len(server.requests) == 1
    assert states(out) == {"ctl": "passed", "wrong-tool": "failed"}
    row = rows(out, "cases.jsonl")[1]
    assert row["reasons"] == [
        "tool_call_f1 = 0.0 (below 1.0)",
        f"{WITH_REFERENCE}: budget: the planned work needs 1 judge requests; 0 of the limit "
        "of 1 are left",
    ]
    assert row["values"] == {"tool_call_f1": 0.0}
    assert [item["case_id"] for item in summary(out)["unrun"]] == ["wrong-tool"]
    policy = tmp_path / "policy.toml"
    policy.write_text("max_unrun = 0\n[slices.tickets]\nmax_failures = 0\n")
    code, stdout, err = run("gate", str(out), "--policy", str(policy))
    assert code == 1, err  # quality failed: a real failure is never hidden as unrun
    assert stdout.splitlines() == [
        "cases_unrun: run: 1 case(s) unrun, over the limit of 0 (wrong-tool)",
        "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (wrong-tool)",
    ]
    assert err == "tracebridge gate: quality failed (exit 1): 2 blocker(s)\n"


def test_a_refused_run_still_leaves_the_deterministic_metric_unrun(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """The estimate's refusal stops the whole run before it starts: nothing is scored."""
    path = write_cases(tmp_path, [wrong_tool()])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url, "--max-requests", "0",
                             metrics=(WITH_REFERENCE, "tool_call_f1"))
    assert code == 3, err
    assert states(out) == {"wrong-tool": "unrun"}
    assert server.requests == []


# --- 2 and 4. a run interrupted mid-request -------------------------------------------------

LABEL = {"goal_achieved": True, "reason": "the ticket is open"}
POLICY = """max_cost = 1.0
required_slices = ["a", "b"]
required_controls = ["positive", "duplicate_side_effect"]
[slices.a]
max_failures = 0
[slices.b]
max_failures = 0
"""


def interrupted_cases() -> list[dict[str, Any]]:
    return [
        control("dup", "duplicate_side_effect", slice="a",
                domain_evidence={"ids": [1, 2]}, expect={"ids": {"count": 1}},
                human_adjudication={"goal_achieved": False, "reason": "two"}),
        control("pos", "positive", slice="a", human_adjudication=LABEL),
        case("other", slice="b", human_adjudication=LABEL),
    ]


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}


def run_command(path: Path, out: Path, base_url: str) -> list[str]:
    return [sys.executable, "-m", "tracebridge", "run", str(path), "--out", str(out),
            "--metric", WITH_REFERENCE, "--model", "judge-model", "--base-url", base_url,
            "--price", "judge-model=1,1", "--retries", "0", "--concurrency", "1", "--no-cache"]


def interrupt(tmp_path: Path, server: FakeOpenAI) -> tuple[Path, Path]:
    """Run the three cases and send SIGINT while the second request (``other``) is in
    flight at the server; the run exits 130."""
    server.add(goal(True), Reply(content=goal(True), sleep=4.0))
    path = write_cases(tmp_path, interrupted_cases())
    out = tmp_path / "run"
    process = subprocess.Popen(
        run_command(path, out, server.base_url), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=environment(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while len(server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(server.requests) == 2
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    return path, out


def test_an_interrupted_run_records_what_settled_and_the_request_in_flight(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path, out = interrupt(tmp_path, server)
    found = summary(out)
    assert found["status"] == "running"
    assert found["stopped"] == ("interrupted: 2 of 3 case(s) settled; run again on the same "
                                "RUN_DIR to resume")
    assert found["counts"] == {"passed": 2, "failed": 0, "blocked": 0, "errored": 0,
                               "unrun": 0, "review": 0}
    assert found["unsettled"] == ["other"]
    assert found["planned"] == {"slices": {"a": 2, "b": 1},
                                "controls": {"duplicate_side_effect": 1, "positive": 1}}
    # the request cut off reached the server: counted, of unknown size, so the cost is unknown
    assert found["usage"] == {"requests": 2, "prompt_tokens": 100, "completion_tokens": 20,
                              "total_tokens": 120, "requests_without_usage": 1}
    assert found["cost"] is None
    assert found["cost_note"] == ("1 request(s) reported no token usage: cost unknown (the "
                                  "requests that reported it cost $0.0001)")
    assert rows(out, "spent.jsonl") == [{"case_id": "other", "name": WITH_REFERENCE, "usage": {
        "requests": 1, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0,
        "requests_without_usage": 1}, "price": {"input_per_million": 1.0,
                                                "output_per_million": 1.0},
        "refused_requests": 0}]
    # resumed: the request sent before the interruption stays in the run's usage
    server.add(goal(True))
    resumed = subprocess.run(run_command(path, out, server.base_url), capture_output=True,
                             text=True, timeout=120, env=environment())
    assert resumed.returncode == 0, resumed.stderr
    assert len(server.requests) == 3
    found = summary(out)
    assert found["status"] == "complete"
    assert found["usage"]["requests"] == 3
    assert found["usage"]["requests_without_usage"] == 1
    assert found["cost"] is None


def test_the_gate_on_an_interrupted_run_says_only_what_is_true(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    _, out = interrupt(tmp_path, server)
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    code, stdout, err = run("gate", str(out), "--policy", str(policy))
    assert code == 2, err
    assert err == "tracebridge gate: incomplete (exit 2): 3 blocker(s)\n"
    lines = stdout.splitlines()
    # no control_missing (positive is in the case file), no slice_missing (b has a case), and
    # the cost is unknown for the request cut off, not for want of --price
    assert lines == [
        "cost_unknown: run: the policy limits the cost and the run does not know its cost "
        "(1 judge request(s) reported no token usage)",
        "run_not_finished: run: cases.jsonl holds 2 of the run's 3 cases",
        "run_not_finished: run: the run has not finished (status running): run it again on "
        "the same RUN_DIR to resume",
    ]


def test_calibrate_on_an_interrupted_run_says_the_figures_are_partial_and_exits_2(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    _, out = interrupt(tmp_path, server)
    said = ("the run has not finished: 2 of 3 case(s) settled, 1 unsettled (1 of them "
            "labelled); these figures are of the settled cases only, not the run's (resume it)")
    code, stdout, err = run("calibrate", str(out))
    assert code == 2
    assert stdout.splitlines()[:2] == [said, "2 labelled case(s)"]
    assert err == f"tracebridge calibrate: {said}\n"
    code, stdout, _ = run("calibrate", str(out), "--json")
    assert code == 2
    figures = json.loads(stdout)
    assert (figures["finished"], figures["settled_cases"], figures["unsettled_cases"],
            figures["unsettled_labelled_cases"], figures["labelled_cases"]) == (
        False, 2, 1, 1, 2)


def test_the_report_on_an_interrupted_run_counts_the_settled_and_lists_the_unsettled(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    _, out = interrupt(tmp_path, server)
    page_path = tmp_path / "report.html"
    code, _, err = run("report", str(out), "-o", str(page_path))
    assert code == 0, err
    page = page_path.read_text()
    assert ('id="fact-cases">3: 2 passed, 0 failed, 0 blocked, 0 errored, 0 unrun, 0 review, '
            "1 unsettled (the run has not finished)</dd>") in page
    assert ('id="fact-cost">unknown (1 judge request(s) reported no token usage)</dd>'
            in page)
    assert "<h3 id=\"not-scored\">Errored, unrun and unsettled (1)</h3>" in page
    assert ("<tr><td>other</td><td>unsettled</td><td>the run has not finished: no state yet "
            "(resume it)</td></tr>") in page


def test_a_killed_run_with_no_usage_recorded_does_not_ask_for_price(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """A run killed before it could write anything leaves the ``running`` header: the gate
    says it has not finished, and no slice or control of the case file is missing."""
    server.add(goal(True), goal(True))
    path = write_cases(tmp_path, interrupted_cases())
    out = tmp_path / "run"
    assert subprocess.run(run_command(path, out, server.base_url), capture_output=True,
                          timeout=120, env=environment()).returncode == 0
    header = {k: v for k, v in summary(out).items()
              if k not in ("finished_at", "status", "stopped", "counts", "slices", "controls",
                           "usage", "cost", "cost_note", "budget", "unrun", "errored")}
    (out / "summary.json").write_text(json.dumps({**header, "status": "running"}))
    (out / "cases.jsonl").write_text("")
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    code, stdout, err = run("gate", str(out), "--policy", str(policy))
    assert code == 2
    assert err == "tracebridge gate: incomplete (exit 2): 3 blocker(s)\n"
    assert stdout.splitlines() == [
        "cost_unknown: run: the policy limits the cost and the run does not know its cost "
        "(the run has not finished and recorded no usage yet: resume it)",
        "run_not_finished: run: cases.jsonl holds 0 of the run's 3 cases",
        "run_not_finished: run: the run has not finished (status running): run it again on "
        "the same RUN_DIR to resume",
    ]


# --- 3. a LlamaIndex AgentWorkflow event stream as a case transcript ------------------------


def _message(role: str, blocks: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    return {"role": role, "additional_kwargs": kwargs, "blocks": blocks}


def _text(text: str) -> dict[str, Any]:
    return {"block_type": "text", "text": text}


CALL = {"block_type": "tool_call", "tool_call_id": "li-2", "tool_name": "lookup_order",
        "tool_kwargs": {"order_id": "X-9"}}
CALLS = [{"tool_id": "li-2", "tool_name": "lookup_order", "tool_kwargs": {"order_id": "X-9"}}]
ASKED = [_message("system", [_text("Help with orders.")]),
         _message("user", [_text("Where is order X-9?")])]
SORRY = _message("assistant", [_text("Sorry, I could not reach the order database.")])
EVENTS: list[dict[str, Any]] = [
    {"event": "AgentInput", "data": {"input": ASKED, "current_agent_name": "Agent"}},
    {"event": "AgentOutput", "data": {
        "response": _message("assistant", [CALL]), "structured_response": None,
        "current_agent_name": "Agent", "tool_calls": CALLS, "retry_messages": []}},
    {"event": "ToolCall", "data": {"tool_name": "lookup_order",
                                   "tool_kwargs": {"order_id": "X-9"}, "tool_id": "li-2"}},
    {"event": "ToolCallResult", "data": {
        "tool_name": "lookup_order", "tool_kwargs": {"order_id": "X-9"}, "tool_id": "li-2",
        "tool_output": {"blocks": [_text("order database timeout")],
                        "tool_name": "lookup_order", "raw_input": {"order_id": "X-9"},
                        "raw_output": "order database timeout", "is_error": True},
        "return_direct": False}},
    {"event": "AgentInput", "data": {"input": [
        *ASKED, _message("assistant", [CALL]),
        _message("tool", [_text("order database timeout")], tool_call_id="li-2")],
        "current_agent_name": "Agent"}},
    {"event": "AgentOutput", "data": {
        "response": SORRY, "structured_response": None, "current_agent_name": "Agent",
        "tool_calls": CALLS, "retry_messages": []}},
    {"event": "StopEvent", "data": {"result": {
        "response": SORRY, "structured_response": None, "current_agent_name": "Agent",
        "tool_calls": CALLS, "retry_messages": []}}},
]
"""A real FunctionAgent run (its tool failed), as ``convert --from auto`` reads it."""


@pytest.mark.parametrize("source", [None, "llama_index_events"])
def test_a_llama_index_event_stream_is_a_case_transcript(
    tmp_path: Path, source: str | None
) -> None:
    item = {"case_id": "c1", "transcript": EVENTS, "reference": "order status",
            "reference_version": "v1",
            "reference_tool_calls": [{"name": "lookup_order", "args": {"order_id": "X-9"}}]}
    if source is not None:
        item["source"] = source
    path = write_cases(tmp_path, [item])
    loaded = load_cases(str(path)).cases[0]
    assert loaded.transcript_error is None
    assert loaded.format == "llama_index_events"
    assert loaded.messages is not None
    assert [message.type for message in loaded.messages] == [
        "system", "human", "ai", "tool", "ai"]
    out = tmp_path / "run"
    code, _, err = run("run", str(path), "--out", str(out), "--metric", "tool_call_f1",
                       "--no-cache")
    assert code == 0, err
    assert states(out) == {"c1": "passed"}
    assert rows(out, "cases.jsonl")[0]["format"] == "llama_index_events"


def test_a_transcript_of_no_known_shape_names_every_source(tmp_path: Path) -> None:
    path = write_cases(tmp_path, [{"case_id": "c1", "transcript": [{"x": 1}],
                                   "reference": "r", "reference_version": "v1"}])
    loaded = load_cases(str(path)).cases[0]
    assert str(loaded.transcript_error).endswith(
        ", llama_index_events; pass source=<format>")


# --- 5. a --checks module that is not on the import path -------------------------------------


def test_a_checks_module_not_on_the_import_path_says_how_to_put_it_there(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "journey_s38_checks.py").write_text("def ok(case):\n    return []\n")
    monkeypatch.chdir(tmp_path)
    path = write_cases(tmp_path, [case("a")])
    code, _, err = run("run", str(path), "--out", str(tmp_path / "run"), "--metric",
                       "tool_call_f1", "--no-cache", "--checks", "journey_s38_checks:ok")
    assert code == 2
    assert err == (
        "tracebridge run: --checks journey_s38_checks:ok: cannot import journey_s38_checks: "
        "No module named 'journey_s38_checks'; the module must be importable: put its "
        "directory on the import path (PYTHONPATH=. for a module in the current directory) "
        "or install it\n")


def test_a_checks_module_whose_own_import_is_missing_gets_no_path_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "journey_s38_broken.py").write_text("import journey_s38_absent\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write_cases(tmp_path, [case("a")])
    code, _, err = run("run", str(path), "--out", str(tmp_path / "run"), "--metric",
                       "tool_call_f1", "--no-cache", "--checks", "journey_s38_broken:ok")
    assert code == 2
    assert err == ("tracebridge run: --checks journey_s38_broken:ok: cannot import "
                   "journey_s38_broken: No module named 'journey_s38_absent'\n")


def test_the_checks_help_says_the_module_must_be_importable() -> None:
    shown = subprocess.run([sys.executable, "-m", "tracebridge", "run", "--help"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0
    assert "PYTHONPATH=. for a module in the current directory" in " ".join(
        shown.stdout.split())
