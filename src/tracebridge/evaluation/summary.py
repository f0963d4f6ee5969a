"""``summary.json``: what produced the run, what came of each case, what it cost, and what did
not run and why."""

from __future__ import annotations

import dataclasses
import platform
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .. import __version__
from ._dollars import finite
from .outcome import STATES

if TYPE_CHECKING:
    from ..metrics.base import Usage
    from .cases import CaseSet
    from .record import Spend
    from .runner import Runner

__all__ = ["header", "planned", "summary"]


def now() -> str:
    """The time, UTC, ISO 8601 to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def header(
    case_file: str,
    manifest_hash: str,
    cases: int,
    metrics: dict[str, str],
    judge: dict[str, Any] | None,
    pass_threshold: float = 1.0,
    checks: Sequence[str] = (),
    planned_cases: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The start of ``summary.json``, written when the run starts (``status: running``).

    ``metrics``: each metric's name and ``metric_version``; ``judge``: its name and every
    request setting (None without a judge); ``pass_threshold`` and ``checks`` (the
    ``package.module:function`` names of the user checks, in order), which decide the states.
    A run resumes only where these match. ``planned_cases`` (``planned``): the slices and
    control roles of the case file, so that a reader of a run not yet finished tells a case
    not settled yet from one that is not in the run. ``started_at`` is now; a resumed run
    keeps the one its ``summary.json`` holds (``Runner``).
    """
    return {
        "tracebridge": __version__,
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "case_file": case_file,
        "manifest_hash": manifest_hash,
        "cases": cases,
        "metrics": metrics,
        "judge": judge,
        "pass_threshold": pass_threshold,
        "checks": list(checks),
        "planned": dict(planned_cases) if planned_cases is not None else None,
        "started_at": now(),
    }


def planned(cases: CaseSet) -> dict[str, Any]:
    """The case file's slices and control roles, each with its number of cases."""
    slices = Counter(case.case.slice or "" for case in cases.cases)
    controls = Counter(case.case.control_role.value for case in cases.cases
                       if case.case.control_role is not None)
    return {"slices": dict(sorted(slices.items())), "controls": dict(sorted(controls.items()))}


def summary(runner: Runner, rows: Sequence[dict[str, Any]],
            left: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The whole ``summary.json`` once the run is over. ``left``: the cases with work still
    to do (``errored`` or ``unrun``), whatever their state (a failed case can have some)."""
    left = {} if left is None else left
    counts = Counter(row["state"] for row in rows)
    slices: dict[str, Counter[str]] = {}
    for row in rows:
        slices.setdefault(row["slice"] or "", Counter())[row["state"]] += 1
    usage = runner.record.usage
    spend = runner.record.spend
    # each request at the price it was sent at; one that reported no tokens, or was sent
    # without a price, cost an unknown amount: never counted as free
    unknown = usage.requests_without_usage or spend.unpriced
    cost = None if unknown else finite(spend.known)
    budget = runner.budget
    return {
        **runner.header,
        "finished_at": now(),
        "status": runner.status,
        "stopped": runner.stopped,
        "counts": {state: counts.get(state, 0) for state in STATES},
        "slices": {
            name: {state: found.get(state, 0) for state in STATES}
            for name, found in sorted(slices.items())
        },
        "controls": [
            {"case_id": row["case_id"], **row["control"], "state": row["state"]}
            for row in rows if row["control"] is not None
        ],
        "usage": usage.model_dump(mode="json"),
        "refused_requests": spend.refused,
        "unpriced_requests": spend.unpriced,
        "cost": cost,
        "cost_note": _cost_note(usage, spend),
        "budget": {
            "max_requests": budget.max_requests,
            "max_tokens": budget.max_tokens,
            "max_cost": budget.max_cost,
            "spent_this_run": dataclasses.asdict(budget.spent),
            "remaining": dataclasses.asdict(budget.remaining),
        },
        "unrun": [{"case_id": row["case_id"], "reasons": row["reasons"]}
                  for row in rows if _left(row, left) == "unrun"],
        "errored": [{"case_id": row["case_id"], "reasons": row["reasons"]}
                    for row in rows if _left(row, left) == "errored"],
    }


def _left(row: dict[str, Any], left: Mapping[str, str]) -> str | None:
    state: str = row["state"]
    return state if state in ("errored", "unrun") else left.get(row["case_id"])


def _cost_note(usage: Usage, spend: Spend) -> str | None:
    """Why the cost is unknown, and what the requests that can be priced cost, or None."""
    if spend.unpriced and spend.unpriced == usage.requests:
        return "no --price for the judge model: cost unknown"
    unknown = []
    if spend.unpriced:
        unknown.append(f"{spend.unpriced} request(s) were sent without a --price for the "
                       "judge model")
    if usage.requests_without_usage:
        unknown.append(f"{usage.requests_without_usage} request(s) reported no token usage")
    known = finite(spend.known)
    if not unknown:
        return None if known is not None else _TOO_LARGE
    if known is None:
        return f"{'; '.join(unknown)}: cost unknown"
    which = "priced requests" if spend.unpriced else "requests"
    return (f"{'; '.join(unknown)}: cost unknown (the {which} that reported it cost "
            f"${known:.4f})")


_TOO_LARGE = "the cost is more dollars than a number here holds: cost unknown"
