"""Case files, goal verdicts and ``tracebridge run`` in process, for the evaluation tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from cli_helpers import run

WITH_REFERENCE = "agent_goal_accuracy_with_reference"
WITHOUT_REFERENCE = "agent_goal_accuracy_without_reference"

TICKET: list[dict[str, Any]] = [
    {"role": "human", "content": "Open a ticket for the double charge."},
    {"role": "ai", "content": "Opening it now.", "tool_calls": [
        {"name": "create_ticket", "args": {"category": "billing"}, "call_id": "call-1"}]},
    {"role": "tool", "call_id": "call-1", "content": '{"ticket_id": "T-1"}'},
    {"role": "ai", "content": "Your ticket T-1 is open."},
]
"""A role/call_id transcript in which the ticket is created."""


def case(case_id: str, **fields: Any) -> dict[str, Any]:
    """A case with a good transcript and a versioned reference, ``fields`` on top."""
    return {
        "case_id": case_id,
        "slice": "tickets",
        "transcript": copy.deepcopy(TICKET),
        "reference": "One billing ticket is created and its ID is returned.",
        "reference_version": "v1",
        **fields,
    }


def control(case_id: str, role: str, **fields: Any) -> dict[str, Any]:
    return case(case_id, control_role=role, **fields)


def write_cases(tmp_path: Path, cases: list[dict[str, Any]], name: str = "cases.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(item) + "\n" for item in cases))
    return path


def goal(achieved: bool, reason: str = "per the tool results") -> str:
    return json.dumps({"user_goal": "a billing ticket", "end_state": "as the tools say",
                       "reason": reason, "achieved": achieved})


def run_cases(path: Path, out: Path, base_url: str, *extra: str,
              metrics: tuple[str, ...] = (WITH_REFERENCE,)) -> tuple[int, str, str]:
    """``tracebridge run`` on ``path`` with the fake judge, one job at a time, no cache."""
    flags = [flag for name in metrics for flag in ("--metric", name)]
    defaults = ["--concurrency", "1", "--no-cache"] if "--cache" not in extra else [
        "--concurrency", "1"]
    return run("run", str(path), "--out", str(out), *flags, "--model", "judge-model",
               "--base-url", base_url, "--retries", "0", *defaults, *extra)


def rows(out: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / name).read_text().splitlines()]


def states(out: Path) -> dict[str, str]:
    return {row["case_id"]: row["state"] for row in rows(out, "cases.jsonl")}


def summary(out: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return loaded
