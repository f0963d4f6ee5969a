"""The release gate: a run directory and a policy in, a decision and its blockers out.

Each blocker has a kind, and each kind one exit status:

===  =====================  ==============================================================
 1   quality failed         ``slice_over_limit``, ``receipt_not_verified``, ``control_failed``
 2   incomplete             ``missing_evidence``, ``evaluator_errors``, ``critical_unrun``,
                            ``cases_unrun``, ``cost_over_limit``, ``cost_unknown``,
                            ``control_missing``, ``control_unrun``, ``slice_missing``,
                            ``run_not_finished``
 3   review required       ``review_required``, ``slice_no_policy``, ``non_binary_value``
===  =====================  ==============================================================

With blockers of several kinds the exit status is the first that applies in the order 1, 2, 3
(0 only with no blocker at all). A quality failure is final: the work still missing can only
add failures, never take one away (a case with a failure is ``failed`` even when another of
its metrics errored, went unrun or is in review; that open work still gives its own
blockers). An incomplete run comes before review: finish the run
(resume it, fix the provider, raise the budget) before people spend time on the cases in
review, since the rest may fail it anyway. Review is last but is never a pass: an ambiguity
(a disagreement, a slice the policy does not cover, a value a binary metric cannot have) needs
a person. A provider outage only ever gives ``evaluator_errors``, ``critical_unrun`` or
``cases_unrun``: never a quality failure.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from ..metrics.cli import verdict
from ._dollars import dollars
from .checks import receipt_reason
from .outcome import GOAL_METRICS, review_reasons
from .policy import Policy
from .rundir import CaseRow, RunDir, blocked

__all__ = [
    "EXIT_INCOMPLETE",
    "EXIT_PASSED",
    "EXIT_QUALITY",
    "EXIT_REVIEW",
    "KINDS",
    "Blocker",
    "Decision",
    "decide",
    "one_line",
    "receipt_reason",
    "slice_name",
    "work_left",
]

EXIT_PASSED, EXIT_QUALITY, EXIT_INCOMPLETE, EXIT_REVIEW = 0, 1, 2, 3
PRECEDENCE = (EXIT_QUALITY, EXIT_INCOMPLETE, EXIT_REVIEW)
DECISIONS = {EXIT_PASSED: "passed", EXIT_QUALITY: "quality failed",
             EXIT_INCOMPLETE: "incomplete", EXIT_REVIEW: "review required"}

KINDS: dict[str, int] = {
    "control_failed": EXIT_QUALITY,
    "receipt_not_verified": EXIT_QUALITY,
    "slice_over_limit": EXIT_QUALITY,
    "cases_unrun": EXIT_INCOMPLETE,
    "control_missing": EXIT_INCOMPLETE,
    "control_unrun": EXIT_INCOMPLETE,
    "cost_over_limit": EXIT_INCOMPLETE,
    "cost_unknown": EXIT_INCOMPLETE,
    "critical_unrun": EXIT_INCOMPLETE,
    "evaluator_errors": EXIT_INCOMPLETE,
    "missing_evidence": EXIT_INCOMPLETE,
    "run_not_finished": EXIT_INCOMPLETE,
    "slice_missing": EXIT_INCOMPLETE,
    "non_binary_value": EXIT_REVIEW,
    "review_required": EXIT_REVIEW,
    "slice_no_policy": EXIT_REVIEW,
}
"""Every kind of blocker and the exit status it gives."""

_LISTED = 10
"""Case ids named in a limit's blocker line before "and N more"."""


@dataclass(frozen=True, order=True)
class Blocker:
    """One reason the run does not pass: ``kind: subject: message``."""

    kind: str
    subject: str
    message: str

    @property
    def exit_code(self) -> int:
        return KINDS[self.kind]

    def __str__(self) -> str:
        return one_line(f"{self.kind}: {self.subject}: {self.message}")


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str) -> str:
    """``text`` with its control characters (a newline or carriage return in a case id, a
    slice or a reason) written as escapes (``\\n``, ``\\r``, ``\\u001b``): a blocker is one
    line whatever its case holds."""
    return _CONTROL.sub(
        lambda found: _NAMED.get(found.group(), f"\\u{ord(found.group()):04x}"), text)


@dataclass(frozen=True)
class Decision:
    """The gate's decision: an exit status and every blocker, sorted."""

    exit_code: int
    blockers: list[Blocker]

    @property
    def name(self) -> str:
        """``passed``, ``quality failed``, ``incomplete`` or ``review required``."""
        return DECISIONS[self.exit_code]


def decide(run: RunDir, policy: Policy) -> Decision:
    """The decision on ``run`` under ``policy``."""
    blockers = sorted(set(_blockers(run, policy)))
    found = {blocker.exit_code for blocker in blockers}
    code = next((code for code in PRECEDENCE if code in found), EXIT_PASSED)
    return Decision(code, blockers)


def slice_name(row: CaseRow) -> str:
    """The slice a case counts in (``""`` for none, as ``summary.json`` names it)."""
    return row.slice or ""


def _blockers(run: RunDir, policy: Policy) -> Iterator[Blocker]:
    yield from _run_finished(run)
    yield from _slices(run, policy)
    for row in run.cases:
        yield from _case(run, row, policy)
    yield from _controls(run, policy)
    yield from _unrun(run, policy)
    yield from _evaluator(run, policy)
    yield from _cost(run, policy)


def _run_finished(run: RunDir) -> Iterator[Blocker]:
    status = run.summary.status
    if status == "running":
        yield Blocker("run_not_finished", "run", "the run has not finished (status running): "
                      "run it again on the same RUN_DIR to resume")
    if len(run.cases) != run.summary.cases:
        yield Blocker("run_not_finished", "run", f"cases.jsonl holds {len(run.cases)} of the "
                      f"run's {run.summary.cases} cases")


def _slices(run: RunDir, policy: Policy) -> Iterator[Blocker]:
    members: dict[str, list[CaseRow]] = defaultdict(list)
    for row in run.cases:
        members[slice_name(row)].append(row)
    for name, rows in members.items():
        limits = policy.slices.get(name)
        if limits is None:
            yield Blocker("slice_no_policy", _shown(name), f"{len(rows)} case(s) and no "
                          f"[slices.{_toml_key(name)}] in the policy")
            continue
        failed = [row.case_id for row in rows if row.state == "failed" and row.control is None]
        if len(failed) > limits.max_failures:
            yield Blocker("slice_over_limit", _shown(name),
                          f"{len(failed)} failed case(s), over the limit of "
                          f"{limits.max_failures} ({_ids(failed)})")
    for name in policy.required_slices:
        # a slice of the case file whose cases have not settled is not missing: the run
        # is not finished (``run_not_finished``)
        if name not in members and not run.planned_but_unsettled("slices", name):
            yield Blocker("slice_missing", _shown(name), "a required slice with no case in "
                          "the run")


def _case(run: RunDir, row: CaseRow, policy: Policy) -> Iterator[Blocker]:
    for name in policy.required_evidence:
        if getattr(row, name) is None:
            yield Blocker("missing_evidence", row.case_id, f"{name} is missing (the policy "
                          "requires it)")
    if row.state == "blocked":
        for reason in row.reasons:
            kind = "receipt_not_verified" if receipt_reason(reason) else "missing_evidence"
            yield Blocker(kind, row.case_id, reason)
    elif row.control is not None and row.control.outcome in ("blocked", "blocked_by_evidence"):
        # a control the checks blocked: what blocked it follows the control's own line when
        # it came out wrong; a check's own failure is no evidence either way
        checked = row.reasons[1:] if row.control.as_expected is False else row.reasons
        for reason in checked:
            if not receipt_reason(reason):
                yield Blocker("missing_evidence", row.case_id, reason)
    if policy.review_blocks and row.state in ("review", "failed"):
        review = row.reasons if row.state == "review" else review_reasons(
            row.reasons, run.metrics_of(row))
        for reason in review:
            yield Blocker("review_required", row.case_id, reason)
    left = work_left(run, row) if row.critical and row.control is None else None
    if left is not None:
        state = row.state if row.state == left else f"failed and is incomplete ({left})"
        yield Blocker("critical_unrun", row.case_id, f"a critical case {state}: "
                      + "; ".join(row.reasons))


def work_left(run: RunDir, row: CaseRow) -> str | None:
    """``errored`` or ``unrun`` when a metric of the case (not blocked) has no value for a
    failed request or has no result, whatever its state (a failed case may have some: its
    failure is said first), else None."""
    if row.state in ("errored", "unrun"):
        return row.state
    if row.state == "blocked":
        return None
    found = [run.results.get((row.case_id, name)) for name in run.metrics_of(row)]
    if any(result is not None and result.value is None and verdict(result) == "error"
           for result in found):
        return "errored"
    return "unrun" if None in found else None


def _controls(run: RunDir, policy: Policy) -> Iterator[Blocker]:
    roles = set()
    for row in run.cases:
        if row.control is None:
            continue
        roles.add(row.control.role)
        if row.control.as_expected is False:
            said = row.reasons[0] if row.reasons else (
                f"expected {row.control.expected}, came out {row.control.outcome}")
            yield Blocker("control_failed", row.case_id, said)
        elif row.control.as_expected is None:
            yield Blocker("control_unrun", row.case_id, f"the control {row.state}, so the judge "
                          "is not proven: " + "; ".join(row.reasons))
    for role in policy.required_controls:
        if role.value not in roles and not run.planned_but_unsettled("controls", role.value):
            yield Blocker("control_missing", role.value, "no control with this role in the run")


def _unrun(run: RunDir, policy: Policy) -> Iterator[Blocker]:
    unrun = [row.case_id for row in run.cases
             if row.control is None and not row.critical and work_left(run, row) == "unrun"]
    if len(unrun) > policy.max_unrun:
        yield Blocker("cases_unrun", "run", f"{len(unrun)} case(s) unrun, over the limit of "
                      f"{policy.max_unrun} ({_ids(unrun)})")


def _evaluator(run: RunDir, policy: Policy) -> Iterator[Blocker]:
    binary = set(GOAL_METRICS) | set(policy.binary_metrics)
    stale = {row.case_id for row in run.cases if blocked(row)}  # no verdict of this run
    errors = []
    for (case_id, name), result in run.results.items():
        if case_id in stale:
            continue
        if result.value is None and verdict(result) == "error":
            errors.append(case_id if len(run.metric_names) == 1 else f"{case_id} {name}")
        if name in binary and result.value is not None and result.value not in (0.0, 1.0):
            yield Blocker("non_binary_value", case_id, f"{name} = {result.value}, outside a "
                          "binary metric's {0, 1}")
    if len(errors) > policy.max_evaluator_errors:
        yield Blocker("evaluator_errors", "run", f"{len(errors)} evaluator error(s), over the "
                      f"limit of {policy.max_evaluator_errors} ({_ids(errors)})")


def _cost(run: RunDir, policy: Policy) -> Iterator[Blocker]:
    if policy.max_cost is None:
        return
    cost, unknown = run.summary.cost, run.summary.cost_unknown
    if unknown is not None or cost is None:
        yield Blocker("cost_unknown", "run", "the policy limits the cost and the run does not "
                      f"know its cost ({unknown})")
    elif cost > policy.max_cost:
        limit, spent = dollars(policy.max_cost, cost)
        yield Blocker("cost_over_limit", "run", f"{spent} spent, over the limit of {limit}")


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:_LISTED])
    return shown if len(ids) <= _LISTED else f"{shown} and {len(ids) - _LISTED} more"


def _shown(name: str) -> str:
    return name if name else "(no slice)"


def _toml_key(name: str) -> str:
    bare = name and all(c.isalnum() or c in "-_" for c in name)
    return name if bare else '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
