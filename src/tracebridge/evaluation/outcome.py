"""A case's state once its checks and results are in, and what a control came out as.

States: ``blocked`` (a deterministic check failed; no judge was asked), ``failed`` (a metric's
value is below the pass threshold, and final), ``errored`` (a judge or provider failed on one of
its metrics: never a goal failure), ``unrun`` (some metric did not run, and why), ``review`` (a
person must look: the judge disagrees with the human label, the with- and without-reference goal
verdicts disagree, or a metric gave no value) and ``passed`` (every metric's value is at least
the pass threshold).

A failure comes before errored, unrun and review because it is final: the work still missing
can only add failures. Its reasons come first, then those of the work still open. A goal
metric's value is final only when every goal metric of the case has a value, they agree, and
they agree with the human label: a goal verdict in review is not yet a failure.

A control is ``passed`` when it came out as its role expects and ``failed`` otherwise;
``control`` says what was expected and what came out. A control expected not to reach its goal
may also come out blocked by the evidence checks (an ``expect`` not met, a problem a user check
found): the evidence itself shows the goal was not reached. A user check that raised (or
returned something other than a list of problems) is not evidence: the control came out
``blocked``. A ``duplicate_side_effect`` control must be blocked by the evidence checks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..metrics.base import MetricResult
from ..metrics.cli import verdict
from .cases import ACHIEVED_ROLES, LABELLED_ROLES, NOT_ACHIEVED_ROLES, ControlRole, LoadedCase
from .checks import receipt_reason

__all__ = [
    "GOAL_METRICS",
    "STATES",
    "State",
    "case_row",
    "expected_outcome",
    "review_reasons",
]

State = Literal["passed", "failed", "blocked", "errored", "unrun", "review"]
STATES: tuple[State, ...] = ("passed", "failed", "blocked", "errored", "unrun", "review")
WITH_REFERENCE = "agent_goal_accuracy_with_reference"
WITHOUT_REFERENCE = "agent_goal_accuracy_without_reference"
GOAL_METRICS: tuple[str, ...] = (WITH_REFERENCE, WITHOUT_REFERENCE)
"""The metrics whose value says whether the goal was achieved (1.0) or not (0.0)."""

Outcome = Literal[
    "achieved", "not_achieved", "blocked_by_evidence", "blocked", "disagree", "not_blocked"
]
"""What a control came out as. ``blocked_by_evidence``: only ``expect`` or the problems user
checks found blocked it (the evidence shows the goal was not reached); ``blocked``: the case
itself is unusable (its transcript, its references) or a user check could not say (it raised,
or returned something other than a list of problems)."""


def expected_outcome(case: LoadedCase) -> Outcome:
    """What a control must come out as (a ``not_achieved`` control may also be
    ``blocked_by_evidence``)."""
    role = case.case.control_role
    assert role is not None
    if role in ACHIEVED_ROLES:
        return "achieved"
    if role in NOT_ACHIEVED_ROLES:
        return "not_achieved"
    if role in LABELLED_ROLES:
        label = case.case.human_adjudication
        assert label is not None  # loading requires it
        return "achieved" if label.goal_achieved else "not_achieved"
    assert role is ControlRole.DUPLICATE_SIDE_EFFECT
    return "blocked_by_evidence"


def case_row(
    case: LoadedCase,
    metrics: Sequence[str],
    *,
    blocked: Sequence[str],
    results: Mapping[str, MetricResult],
    unrun: Mapping[str, str],
    threshold: float,
) -> dict[str, Any]:
    """The case's ``cases.jsonl`` row. ``metrics``: the metrics the case was to be scored
    with; ``unrun``: why a metric with no result did not run. A case of a JSON list has its
    ``element`` (1-based) after its ``line``, as the command line's records have."""
    state, reasons = _state(case, metrics, blocked, results, unrun, threshold)
    control = None
    if case.case.control_role is not None:
        state, reasons, control = _control(case, metrics, state, reasons, results, blocked)
    label = case.case.human_adjudication
    place: dict[str, int] = {"line": case.line}
    if case.element is not None:  # a case of a JSON list (its cases may share a line)
        place["element"] = case.element
    return {
        "case_id": case.case_id,
        **place,
        "slice": case.case.slice,
        "critical": case.case.critical,
        "state": state,
        "reasons": reasons,
        "control": control,
        "values": {name: results[name].value for name in metrics if name in results},
        "human_goal_achieved": None if label is None else label.goal_achieved,
        "source_hash": case.source_hash,
        "transcript_hash": case.transcript_hash,
        "format": case.format,
        "reference_version": case.case.reference_version,
        "session_id": case.case.session_id,
    }


def _state(
    case: LoadedCase,
    metrics: Sequence[str],
    blocked: Sequence[str],
    results: Mapping[str, MetricResult],
    unrun: Mapping[str, str],
    threshold: float,
) -> tuple[State, list[str]]:
    if blocked:
        return "blocked", list(blocked)
    missing = [f"{name}: {unrun.get(name, 'not run')}" for name in metrics if name not in results]
    errored = [f"{name}: {results[name].error}" for name in metrics
               if name in results and verdict(results[name]) == "error"]
    review = [f"{name} gave no value: {results[name].error}" for name in metrics
              if name in results and results[name].value is None
              and verdict(results[name]) != "error"]
    goals = _goal_verdicts(metrics, results)
    label = case.case.human_adjudication
    contested = False
    if label is not None:
        disagree = [f"{name} says {_said(achieved)}; the human label says "
                    f"{_said(label.goal_achieved)}"
                    for name, achieved in goals.items() if achieved != label.goal_achieved]
        review += disagree
        contested = bool(disagree)
    if len(set(goals.values())) > 1:
        review.append(f"{WITH_REFERENCE} says {_said(goals[WITH_REFERENCE])}; "
                      f"{WITHOUT_REFERENCE} says {_said(goals[WITHOUT_REFERENCE])}")
        contested = True
    # a goal verdict is final once every goal metric has one and nothing contests it
    goals_final = not contested and len(goals) == sum(name in GOAL_METRICS for name in metrics)
    failing = [f"{name} = {value} (below {threshold})" for name in metrics
               if name in results and (value := results[name].value) is not None
               and value < threshold and (goals_final or name not in GOAL_METRICS)]
    if failing:  # final: what is still open can only add failures, said after them
        return "failed", failing + errored + missing + review
    if errored:
        return "errored", errored + missing
    if missing:
        return "unrun", missing
    if review:
        return "review", review
    return "passed", []


def review_reasons(reasons: Sequence[str], metrics: Sequence[str]) -> list[str]:
    """The reasons of a case row that ask a person to look (a failed case says them after
    its failures): a goal verdict against the human label or the other goal metric, or a
    metric that gave no value."""
    starts = tuple(f"{name}{said}" for name in metrics for said in (" says ", " gave no value: "))
    return [reason for reason in reasons if reason.startswith(starts)]


def _goal_verdicts(
    metrics: Sequence[str], results: Mapping[str, MetricResult]
) -> dict[str, bool]:
    return {
        name: value == 1.0
        for name in GOAL_METRICS
        if name in metrics and name in results and (value := results[name].value) is not None
    }


def _said(achieved: bool) -> str:
    return "achieved" if achieved else "not achieved"


def _control(
    case: LoadedCase,
    metrics: Sequence[str],
    state: State,
    reasons: list[str],
    results: Mapping[str, MetricResult],
    blocked: Sequence[str],
) -> tuple[State, list[str], dict[str, Any]]:
    role = case.case.control_role
    assert role is not None
    expected = expected_outcome(case)
    control: dict[str, Any] = {"role": role.value, "expected": expected, "outcome": None,
                               "as_expected": None}
    if blocked:
        by_evidence = all(receipt_reason(reason) for reason in blocked)
        outcome: Outcome = "blocked_by_evidence" if by_evidence else "blocked"
    elif expected == "blocked_by_evidence":
        outcome = "not_blocked"
    elif state in ("errored", "unrun"):
        return state, reasons, control  # not known: the run says so, it does not guess
    else:
        goals = set(_goal_verdicts(metrics, results).values())
        outcome = "disagree" if len(goals) != 1 else (
            "achieved" if goals.pop() else "not_achieved")
    as_expected = outcome == expected or (
        expected == "not_achieved" and outcome == "blocked_by_evidence")
    control["outcome"] = outcome
    control["as_expected"] = as_expected
    if as_expected:  # what blocked it stays said; a value below the threshold is expected
        return "passed", list(blocked), control
    said = {"not_blocked": "no deterministic check blocked it (a goal score is not enough)",
            "disagree": "the goal metrics disagree or gave no value"}.get(outcome, outcome)
    return "failed", [f"control {role.value}: expected {expected}, came out {said}",
                      *reasons], control
