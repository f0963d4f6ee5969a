"""Real run directories (``tracebridge run`` against the fake judge) and policies, for the
gate, calibration and report tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from cli_helpers import run
from evaluation_helpers import TICKET, WITH_REFERENCE, run_cases, write_cases
from fake_openai_server import FakeOpenAI, Reply

LONGER: list[dict[str, Any]] = [
    *copy.deepcopy(TICKET),
    {"role": "human", "content": "Thanks. Will I get an email?"},
    {"role": "ai", "content": "Yes, a confirmation for T-1 is on its way."},
]
"""A six-message role/call_id transcript (TICKET has four)."""


def make_run(tmp_path: Path, server: FakeOpenAI, cases: list[dict[str, Any]],
             replies: list[Reply | str], *flags: str,
             metrics: tuple[str, ...] = (WITH_REFERENCE,), name: str = "run") -> Path:
    """``tracebridge run`` on ``cases`` with the fake judge answering ``replies`` in order
    (one job at a time: controls, critical cases, the rest, each metric in turn)."""
    folder = tmp_path / name
    folder.mkdir()
    server.add(*replies)
    path = write_cases(folder, cases)
    out = folder / "out"
    code, _, err = run_cases(path, out, server.base_url, *flags, metrics=metrics)
    assert code in (0, 3, 4), err  # complete, incomplete, a control came out otherwise
    assert not server.script, "every scripted reply is used"
    return out


def policy(tmp_path: Path, text: str, name: str = "policy.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def gate(run_dir: Path, policy_path: Path, *flags: str) -> tuple[int, list[str], str]:
    """``tracebridge gate``: (exit status, the blocker lines, stderr)."""
    code, out, err = run("gate", str(run_dir), "--policy", str(policy_path), *flags)
    return code, out.splitlines(), err


def edit_rows(path: Path, change: Any) -> None:
    """Rewrite a JSONL file of the run record, ``change(row)`` applied to each row."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(change(row)) + "\n" for row in rows))


REPORT_POLICY = ("max_evaluator_errors = 0\n"
                 "[slices.tickets]\nmax_failures = 0\n[slices.refunds]\nmax_failures = 1\n")
FAILED_TOOL: list[dict[str, Any]] = [
    {"role": "human", "content": "Refund order 7 <b>now</b>."},
    {"role": "ai", "content": "Refunding.", "tool_calls": [
        {"name": "refund", "args": {"order": 7}, "call_id": "call-9"}]},
    {"role": "tool", "call_id": "call-9", "content": "refund service down", "is_error": True},
    {"role": "ai", "content": "Your refund is done."},
]
"""A role/call_id transcript whose tool failed and whose agent claimed success anyway."""


def report_run(tmp_path: Path, server: FakeOpenAI) -> tuple[Path, Path]:
    """A run for the report: a control, every state, two slices, a label to escape; returns
    (RUN_DIR, policy)."""
    from evaluation_helpers import case, control, goal

    cases = [
        control("ctl", "positive"),
        case("pass"),
        case("fail", slice="refunds", transcript=copy.deepcopy(FAILED_TOOL),
             human_adjudication={"goal_achieved": False,
                                 "reason": "no refund: <script>alert(1)</script>"}),
        case("blocked", expect={"ticket_id": {"present": True}}),
        case("review", human_adjudication={"goal_achieved": False, "reason": "T-1 is a dup"}),
        case("errored", slice="refunds"),
        case("later", slice="refunds"),
    ]
    replies: list[Reply | str] = [goal(True), goal(True), goal(False, "the tool failed"),
                                  goal(True, "T-1 was created"), Reply(status=500)]
    out = make_run(tmp_path, server, cases, replies, "--max-requests", "5", "--allow-partial")
    return out, policy(tmp_path, REPORT_POLICY, "report-policy.toml")
