"""What the gate writes for CI: JUnit XML (one test per case and metric) and a Markdown summary.

JUnit: one ``<testsuite>`` per slice and one ``<testcase classname=CASE_ID name=METRIC>`` per
case and metric it was to be scored with (a case scored with none, a ``duplicate_side_effect``
control, has one test named ``checks``); on a run not finished, a suite ``(unsettled)`` with a
skipped test ``unsettled`` per case not settled yet (one for the run, ``classname=run``, when
``summary.json`` does not list them: a killed run); then a suite ``gate`` with one test,
``decision``, failed with every blocker when the gate does not pass. A test is:

* a **failure** when the case failed on that metric (its reason names the metric), when its
  evidence contradicts it (blocked by ``expect`` or a user check's problem), when it is a
  control that came out otherwise than expected, or when it is in review (the case's state,
  or a reason naming the metric in a case that failed on another) and review blocks;
* an **error** when its judge or provider failed on that metric, or the case is blocked for
  missing evidence (its transcript, its references, a user check that could not run);
* **skipped** when the metric has no result (unrun: why is the message), or when the case
  errored or went unrun on another metric (its value is in the message);
* passed otherwise (a case in review that does not block carries its reasons in
  ``system-out``).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from ..metrics.cli import verdict
from .gate import Decision, one_line, receipt_reason, slice_name
from .outcome import STATES, review_reasons
from .policy import Policy
from .rundir import CaseRow, RunDir

__all__ = ["Test", "junit_xml", "markdown", "tests_of", "unsettled_tests"]

Kind = Literal["passed", "failure", "error", "skipped"]
UNSETTLED = "the run has not finished: no state yet (resume it)"
_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Test:
    """One JUnit test: a case and a metric, and what became of it."""

    case: CaseRow
    metric: str
    kind: Kind
    type: str
    """The failure's or error's type (empty for a pass)."""
    message: str


def tests_of(run: RunDir, policy: Policy) -> list[Test]:
    """Every (case, metric) test of the run, in case order."""
    found = []
    for row in run.cases:
        for metric in run.metrics_of(row) or ["checks"]:
            kind, kind_type, message = _mapped(run, policy, row, metric)
            found.append(Test(row, metric, kind, kind_type, message))
    return found


def _mapped(run: RunDir, policy: Policy, row: CaseRow,
            metric: str) -> tuple[Kind, str, str]:
    reasons = "; ".join(row.reasons)
    if row.state == "blocked":
        if all(receipt_reason(reason) for reason in row.reasons):
            return "failure", "receipt_not_verified", reasons
        return "error", "missing_evidence", reasons
    result = run.result_of(row, metric)
    if result is not None and result.value is None and verdict(result) == "error":
        return "error", "evaluator_error", result.error or ""
    if row.control is not None and row.control.as_expected is not None:
        if row.control.as_expected:
            return "passed", "", reasons
        return "failure", "control_failed", reasons
    if result is None:
        return "skipped", "unrun", reasons or "not run"
    if row.state in ("errored", "unrun"):
        return "skipped", row.state, f"{metric} = {result.value}; the case {row.state}: {reasons}"
    if row.state == "review":
        if policy.review_blocks:
            return "failure", "review_required", reasons
        return "passed", "", reasons
    if row.state == "failed":
        mine = [reason for reason in row.reasons if reason.startswith(f"{metric} = ")]
        if mine:
            return "failure", "failed", "; ".join(mine)
        # the case failed on another metric; this one may still be in review
        review = [reason for reason in review_reasons(row.reasons, run.metrics_of(row))
                  if f"{metric} " in reason]
        if review:
            said = "; ".join(review)
            return ("failure", "review_required", said) if policy.review_blocks else (
                "passed", "", said)
    return "passed", "", ""


def junit_xml(run: RunDir, policy: Policy, decision: Decision) -> str:
    """The JUnit XML document."""
    tests = tests_of(run, policy)
    root = ET.Element("testsuites", name="tracebridge gate")
    suites: dict[str, list[Test]] = {}
    for test in tests:
        suites.setdefault(slice_name(test.case) or "(no slice)", []).append(test)
    for name, members in suites.items():
        suite = ET.SubElement(root, "testsuite", name=_text(name))
        for test in members:
            _testcase(suite, test.case.case_id, test.metric, test.kind, test.type, test.message)
        _count(suite, [test.kind for test in members])
    unsettled = unsettled_tests(run)
    skip: Kind = "skipped"
    if unsettled:
        suite = ET.SubElement(root, "testsuite", name="(unsettled)")
        for classname, message in unsettled:
            _testcase(suite, classname, "unsettled", "skipped", "", message)
        _count(suite, [skip] * len(unsettled))
    passed = decision.exit_code == 0
    gate: Kind = "passed" if passed else "failure"
    suite = ET.SubElement(root, "testsuite", name="gate")
    _testcase(suite, "gate", "decision", gate, "" if passed else decision.name,
              "\n".join(map(str, decision.blockers)))
    _count(suite, [gate])
    _count(root, [*(test.kind for test in tests), *([skip] * len(unsettled)), gate])
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def unsettled_tests(run: RunDir) -> list[tuple[str, str]]:
    """A skipped test (classname, message) for each case the run has not settled yet, by the
    ids ``summary.json`` lists (an interrupted run); one for the run, saying how many, when it
    lists none (a killed run)."""
    if run.unsettled == 0:
        return []
    settled = {row.case_id for row in run.cases}
    listed = run.raw_summary.get("unsettled")
    if isinstance(listed, list) and all(isinstance(case_id, str) for case_id in listed):
        named = [case_id for case_id in listed if case_id not in settled]
        if len(named) == run.unsettled:
            return [(case_id, UNSETTLED) for case_id in named]
    return [("run", f"the run has not finished: {run.unsettled} case(s) have no state yet "
                    "(resume it)")]


def _testcase(suite: ET.Element, classname: str, name: str, kind: Kind, kind_type: str,
              message: str) -> None:
    case = ET.SubElement(suite, "testcase", classname=_text(classname), name=_text(name))
    if kind != "passed":
        child = ET.SubElement(case, kind, message=_text(_line(message)))
        if kind != "skipped":
            child.set("type", kind_type)
            child.text = _text(message)
    elif message:
        ET.SubElement(case, "system-out").text = _text(message)


def _count(element: ET.Element, kinds_of_tests: list[Kind]) -> None:
    kinds: Counter[str] = Counter(kinds_of_tests)
    element.set("tests", str(len(kinds_of_tests)))
    for kind, attribute in (("failure", "failures"), ("error", "errors"),
                            ("skipped", "skipped")):
        element.set(attribute, str(kinds[kind]))


def _text(value: str) -> str:
    """``value`` with what XML 1.0 cannot hold written as ``\\uXXXX``."""
    return _NOT_XML.sub(lambda found: f"\\u{ord(found.group()):04x}", value)


def _line(value: str) -> str:
    first = value.split("\n", 1)[0]
    return first if len(first) <= 500 else first[:497] + "..."


# --- Markdown --------------------------------------------------------------------------------


def markdown(run: RunDir, policy: Policy, decision: Decision) -> str:
    """A summary for a CI job page (GitHub's ``$GITHUB_STEP_SUMMARY``)."""
    summary = run.summary
    cost = "unknown" if summary.cost is None else f"${summary.cost:.4f}"
    judge = (summary.judge or {}).get("model") or (summary.judge or {}).get("name") or "none"
    lines = [
        f"## tracebridge gate: {decision.name} (exit {decision.exit_code})",
        "",
        f"Run {_md(str(run.path))}: {summary.cases} case(s){_unsettled_said(run)}, "
        f"status {_md(summary.status)}, judge {_md(str(judge))}, cost {cost}, manifest "
        f"`{summary.manifest_hash}`.",
        "",
    ]
    if decision.blockers:
        lines += [f"### Blockers ({len(decision.blockers)})", ""]
        lines += [f"- `{b.kind}` {_md(b.subject)}: {_md(b.message)}" for b in decision.blockers]
    else:
        lines.append("No blockers.")
    lines += _slice_table(run, policy)
    lines += _control_table(run)
    return "\n".join(lines) + "\n"


def _unsettled_said(run: RunDir) -> str:
    return "" if run.unsettled == 0 else (f", {run.unsettled} unsettled (the run has not "
                                          "finished)")


def _slice_table(run: RunDir, policy: Policy) -> list[str]:
    """The counts per slice; on a run not finished, a column of the cases not settled yet,
    and the slices of the case file with none settled (``planned``)."""
    planned = run.summary.planned
    partial = not run.finished and planned is not None
    counts: dict[str, Counter[str]] = {}
    for row in run.cases:
        counts.setdefault(slice_name(row), Counter())[row.state] += 1
    if partial:
        assert planned is not None
        for name in planned.slices:
            counts.setdefault(name, Counter())
    columns = [*STATES, "unsettled"] if partial else list(STATES)
    lines = ["", "### Slices", "", "| slice | " + " | ".join(columns) + " | failure limit |",
             "|---|" + "---:|" * len(columns) + "---:|"]
    for name, found in sorted(counts.items()):
        if partial:
            assert planned is not None
            found["unsettled"] = max(planned.slices.get(name, 0) - sum(found.values()), 0)
        limit = policy.slices.get(name)
        lines.append(f"| {_md(name or '(no slice)')} | "
                     + " | ".join(str(found[state]) for state in columns)
                     + f" | {'no policy' if limit is None else limit.max_failures} |")
    return lines


def _control_table(run: RunDir) -> list[str]:
    """The controls settled, then a row for each control of the case file not settled yet
    (``planned``: its role is known, its case not)."""
    controls = [row for row in run.cases if row.control is not None]
    settled: Counter[str] = Counter()
    lines = []
    for row in controls:
        assert row.control is not None
        settled[row.control.role] += 1
        ok = {True: "yes", False: "**no**", None: f"not known ({row.state})"}
        lines.append(f"| {_md(row.case_id)} | {row.control.role} | {row.control.expected} "
                     f"| {row.control.outcome or '-'} | {ok[row.control.as_expected]} |")
    planned = run.summary.planned
    if not run.finished and planned is not None:
        for role, count in sorted(planned.controls.items()):
            lines += [f"| (unsettled) | {role} | - | - | not known (unsettled) |"
                      ] * max(count - settled[role], 0)
    if not lines:
        return []
    return ["", "### Controls", "", "| case | role | expected | came out | as expected |",
            "|---|---|---|---|---|", *lines]


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def _md(text: str) -> str:
    """``text`` as literal Markdown on one line (a control character written as its escape,
    as on the gate's standard output)."""
    return _MD_SPECIAL.sub(r"\\\1", one_line(text))
