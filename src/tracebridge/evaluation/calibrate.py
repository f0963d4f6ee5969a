"""Calibration: how the goal verdicts of a run compare with its human labels.

Only cases with ``human_adjudication`` count, and only the goal metrics
(``agent_goal_accuracy_with_reference``, ``agent_goal_accuracy_without_reference``): the human
label says whether the goal was achieved, which is what they score (1 achieved, 0 not). Per
metric, for all cases (``(all)``), per slice and per conversation-length bucket:

``count``               labelled cases the metric was to score
``no_result``           of those, with no result (blocked, even when an earlier invocation
                        left one, or unrun)
``evaluator_errors``    a result with no value because the judge or provider failed
``unscorable``          a result with no value for another reason (nothing to judge)
``non_binary``          a value other than 0 or 1
``scored``              the rest: a verdict to compare
``both_achieved``, ``false_achievements`` (judge 1, human 0), ``false_failures`` (judge 0,
human 1), ``both_not_achieved``: the confusion table of the scored cases
``agreement``           both_achieved + both_not_achieved; ``agreement_rate`` its share of
                        ``scored`` (null when nothing was scored)
``kappa``               Cohen's kappa of judge and human over the scored cases:
                        (p_o - p_e) / (1 - p_e), p_o the agreement rate, p_e the agreement
                        expected by chance from each side's share of "achieved". Null when
                        nothing was scored, and when p_e = 1 (both sides gave every case one
                        and the same label: kappa is undefined there, agreement says 1.0).
                        When both sides are constant but differ, p_e = 0 and kappa = 0.

``with_vs_without`` (when the run has both goal metrics), per slice and per length: ``both``
labelled cases where both gave a 0/1 verdict, ``disagree`` how many of those differ,
``disagreement_rate``, and in the disagreements which side the human label took
(``with_reference_right``, ``without_reference_right``).

Conversation length is the number of messages of the case's typed conversation, in buckets
``1-4``, ``5-8``, ``9-16``, ``17-32``, ``33+`` (``unreadable`` when the transcript could not be
read).

A run not finished (``running``, or cases with no row in ``cases.jsonl``) gives figures of its
settled cases only: ``finished`` is false, ``settled_cases`` and ``unsettled_cases`` say how
many, ``unsettled_labelled_cases`` how many labelled cases have no verdict yet, and the tables
open with that line (the command exits 2, as the gate does on such a run).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

from ..metrics.cli import verdict
from .cases import CaseSet
from .gate import one_line, slice_name
from .outcome import GOAL_METRICS, WITH_REFERENCE, WITHOUT_REFERENCE
from .rundir import CaseRow, RunDir

__all__ = ["ALL", "BUCKETS", "calibrate", "cohen_kappa", "length_bucket", "tables"]

ALL = "(all)"
BUCKETS: tuple[tuple[int, int | None], ...] = ((1, 4), (5, 8), (9, 16), (17, 32), (33, None))
"""Conversation-length buckets, in messages (inclusive; None: no upper bound)."""
UNREADABLE = "unreadable"
CONFUSION = ("both_achieved", "false_achievements", "false_failures", "both_not_achieved")


def length_bucket(messages: int | None) -> str:
    """The bucket of a conversation of ``messages`` messages (None: unreadable)."""
    if messages is None:
        return UNREADABLE
    for low, high in BUCKETS:
        if high is None or messages <= high:
            return f"{low}-{high}" if high is not None else f"{low}+"
    raise AssertionError("the last bucket has no upper bound")


def bucket_names() -> list[str]:
    return [length_bucket(low) for low, _ in BUCKETS] + [UNREADABLE]


def cohen_kappa(judge: list[bool], human: list[bool]) -> float | None:
    """Cohen's kappa of two raters' binary labels (None when undefined: see the module)."""
    n = len(judge)
    if n == 0:
        return None
    observed = Fraction(sum(j == h for j, h in zip(judge, human, strict=True)), n)
    yes = Fraction(sum(judge), n) * Fraction(sum(human), n)
    no = Fraction(n - sum(judge), n) * Fraction(n - sum(human), n)
    chance = yes + no
    if chance == 1:
        return None
    return float((observed - chance) / (1 - chance))


def calibrate(run: RunDir, cases: CaseSet) -> dict[str, Any]:
    """The calibration figures of ``run`` (its case file gives the conversation lengths)."""
    sizes = {case.case_id: None if case.messages is None else len(case.messages)
             for case in cases.cases}
    labelled = [row for row in run.cases if row.human_goal_achieved is not None]
    metrics = [name for name in run.metric_names if name in GOAL_METRICS]
    slices = sorted({slice_name(row) for row in labelled})

    def groups(figures: Callable[[list[CaseRow]], dict[str, Any]]) -> dict[str, Any]:
        return {
            "slices": {ALL: figures(labelled),
                       **{name or "(no slice)": figures(
                           [r for r in labelled if slice_name(r) == name]) for name in slices}},
            "lengths": {bucket: figures(members) for bucket in bucket_names()
                        if (members := [r for r in labelled
                                        if length_bucket(sizes.get(r.case_id)) == bucket])},
        }

    both = WITH_REFERENCE in metrics and WITHOUT_REFERENCE in metrics
    settled = {row.case_id for row in run.cases}
    return {
        "run": str(run.path),
        "finished": run.finished,
        "settled_cases": len(run.cases),
        "unsettled_cases": run.unsettled,
        "unsettled_labelled_cases": sum(
            1 for case in cases.cases
            if case.case_id not in settled and case.case.human_adjudication is not None
            and case.case.human_adjudication.goal_achieved is not None),
        "labelled_cases": len(labelled),
        "length_buckets": bucket_names(),
        "metrics": {name: groups(functools.partial(_figures, run, name)) for name in metrics},
        "with_vs_without": groups(functools.partial(_disagreement, run)) if both else None,
    }


def _figures(run: RunDir, metric: str, rows: list[CaseRow]) -> dict[str, Any]:
    counts = dict.fromkeys(("count", "no_result", "evaluator_errors", "unscorable",
                            "non_binary", "scored", *CONFUSION), 0)
    judge: list[bool] = []
    human: list[bool] = []
    for row in rows:
        if metric not in run.metrics_of(row):
            continue
        counts["count"] += 1
        result = run.result_of(row, metric)
        if result is None:
            counts["no_result"] += 1
        elif result.value is None:
            counts["evaluator_errors" if verdict(result) == "error" else "unscorable"] += 1
        elif result.value not in (0.0, 1.0):
            counts["non_binary"] += 1
        else:
            said, truth = result.value == 1.0, bool(row.human_goal_achieved)
            judge.append(said)
            human.append(truth)
            counts[CONFUSION[(0 if said else 2) + (0 if truth else 1)]] += 1
    counts["scored"] = len(judge)
    agreement = counts["both_achieved"] + counts["both_not_achieved"]
    return {
        **counts,
        "agreement": agreement,
        "agreement_rate": _rate(agreement, len(judge)),
        "kappa": cohen_kappa(judge, human),
    }


def _disagreement(run: RunDir, rows: list[CaseRow]) -> dict[str, Any]:
    both = disagree = with_right = without_right = 0
    for row in rows:
        values = [run.result_of(row, name) for name in (WITH_REFERENCE, WITHOUT_REFERENCE)]
        if any(r is None or r.value not in (0.0, 1.0) for r in values):
            continue
        both += 1
        with_said, without_said = (r.value == 1.0 for r in values if r is not None)
        if with_said != without_said:
            disagree += 1
            with_right += with_said == row.human_goal_achieved
            without_right += without_said == row.human_goal_achieved
    return {"both": both, "disagree": disagree, "disagreement_rate": _rate(disagree, both),
            "with_reference_right": with_right, "without_reference_right": without_right}


def _rate(part: int, whole: int) -> float | None:
    return None if whole == 0 else part / whole


# --- the tables ------------------------------------------------------------------------------

_METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("count", "count"), ("scored", "scored"), ("agree", "agreement"), ("rate", "agreement_rate"),
    ("false ach.", "false_achievements"), ("false fail.", "false_failures"),
    ("eval. errors", "evaluator_errors"), ("kappa", "kappa"),
)
_PAIR_COLUMNS: tuple[tuple[str, str], ...] = (
    ("both", "both"), ("disagree", "disagree"), ("rate", "disagreement_rate"),
    ("with ref. right", "with_reference_right"),
    ("without ref. right", "without_reference_right"),
)


def tables(calibration: dict[str, Any]) -> str:
    """The calibration as plain-text tables."""
    head = "" if calibration["finished"] else unfinished_line(calibration) + "\n"
    if not calibration["labelled_cases"]:
        which = "settled case" if head else "case"
        return f"{head}no {which} of the run has a human label: nothing to calibrate\n"
    if not calibration["metrics"]:
        return head + "the run has no goal metric: nothing to compare with the human labels\n"
    parts = [head, f"{calibration['labelled_cases']} labelled case(s)\n"]
    sections = [(name, _METRIC_COLUMNS, groups)
                for name, groups in calibration["metrics"].items()]
    if calibration["with_vs_without"] is not None:
        sections.append(("with- vs without-reference", _PAIR_COLUMNS,
                         calibration["with_vs_without"]))
    for title, columns, groups in sections:
        for key, label, said in (("slices", "slice", "slice"),
                                 ("lengths", "messages", "conversation length (messages)")):
            parts.append(f"\n{title}, per {said}\n")
            parts.append(_table([label, *(c for c, _ in columns)],
                                ([one_line(name), *(_cell(figures[f]) for _, f in columns)]
                                 for name, figures in groups[key].items())))
    return "".join(parts)


def unfinished_line(calibration: dict[str, Any]) -> str:
    """What an unfinished run's figures are (one line)."""
    settled, unsettled = calibration["settled_cases"], calibration["unsettled_cases"]
    return (f"the run has not finished: {settled} of {settled + unsettled} case(s) settled, "
            f"{unsettled} unsettled ({calibration['unsettled_labelled_cases']} of them "
            "labelled); these figures are of the settled cases only, not the run's "
            "(resume it)")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _table(header: list[str], rows: Iterable[list[str]]) -> str:
    body = [header, *rows]
    widths = [max(len(row[i]) for row in body) for i in range(len(header))]
    return "".join(
        "  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i])
                  for i, cell in enumerate(row)).rstrip() + "\n"
        for row in body
    )
