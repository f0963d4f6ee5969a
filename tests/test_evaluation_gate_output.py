"""``tracebridge gate --junit`` and ``--markdown``: the JUnit XML parsed back, the Markdown
exact."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from evaluation_helpers import WITH_REFERENCE, WITHOUT_REFERENCE, case, control, goal
from fake_openai_server import FakeOpenAI, Reply
from gate_helpers import gate, make_run, policy

POLICY = ("max_evaluator_errors = 1\nmax_unrun = 1\n"
          "[slices.tickets]\nmax_failures = 0\n[slices.other]\nmax_failures = 0\n")


@pytest.fixture
def mixed(tmp_path: Path, server: FakeOpenAI) -> Path:
    """Every state, a control, two slices and a case id XML must escape."""
    cases = [
        control("ctl", "positive"),
        case("pass"),
        case("fail"),
        case("blocked-expect", expect={"ticket_id": {"present": True}}),
        case("blocked-reference", reference_version=None),
        case("err<&>\"'"),
        case("review", human_adjudication={"goal_achieved": False}),
        case("unrun", slice="other"),
    ]
    # the control (with both goal metrics), then each case with, then without reference
    replies: list[Reply | str] = [
        goal(True), goal(True),
        goal(True), goal(True),
        goal(False), goal(False),
        Reply(status=500), goal(True),
        goal(True), goal(True),
    ]
    return make_run(tmp_path, server, cases, replies, "--max-requests", "10", "--allow-partial",
                    metrics=(WITH_REFERENCE, WITHOUT_REFERENCE))


def test_junit_one_test_per_case_and_metric(tmp_path: Path, mixed: Path) -> None:
    junit = tmp_path / "gate.xml"
    code, lines, _ = gate(mixed, policy(tmp_path, POLICY), "--junit", str(junit))
    assert code == 1
    root = ET.parse(junit).getroot()  # parses: well-formed XML
    assert root.tag == "testsuites"
    found = {}
    for suite in root.iter("testsuite"):
        for test in suite.iter("testcase"):
            children = list(test)
            kind = children[0].tag if children and children[0].tag != "system-out" else "passed"
            found[(suite.get("name"), test.get("classname"), test.get("name"))] = (
                kind, children[0].get("type") if children else None)
    w, wo = WITH_REFERENCE, WITHOUT_REFERENCE
    assert found == {
        ("tickets", "ctl", w): ("passed", None),
        ("tickets", "ctl", wo): ("passed", None),
        ("tickets", "pass", w): ("passed", None),
        ("tickets", "pass", wo): ("passed", None),
        ("tickets", "fail", w): ("failure", "failed"),
        ("tickets", "fail", wo): ("failure", "failed"),
        ("tickets", "blocked-expect", w): ("failure", "receipt_not_verified"),
        ("tickets", "blocked-expect", wo): ("failure", "receipt_not_verified"),
        ("tickets", "blocked-reference", w): ("error", "missing_evidence"),
        ("tickets", "blocked-reference", wo): ("error", "missing_evidence"),
        ("tickets", "err<&>\"'", w): ("error", "evaluator_error"),
        ("tickets", "err<&>\"'", wo): ("skipped", None),
        ("tickets", "review", w): ("failure", "review_required"),
        ("tickets", "review", wo): ("failure", "review_required"),
        ("other", "unrun", w): ("skipped", None),
        ("other", "unrun", wo): ("skipped", None),
        ("gate", "gate", "decision"): ("failure", "quality failed"),
    }
    assert [(s.get("name"), s.get("tests"), s.get("failures"), s.get("errors"),
             s.get("skipped")) for s in root.iter("testsuite")] == [
        ("tickets", "14", "6", "3", "1"), ("other", "2", "0", "0", "2"),
        ("gate", "1", "1", "0", "0")]
    assert (root.get("tests"), root.get("failures"), root.get("errors"),
            root.get("skipped")) == ("17", "7", "3", "3")
    decision = root.find("testsuite[@name='gate']/testcase/failure")
    assert decision is not None
    assert decision.text == "\n".join(lines)
    unrun = root.find("testsuite[@name='other']/testcase/skipped")
    assert unrun is not None
    reasons = {json.loads(line)["case_id"]: json.loads(line)["reasons"]
               for line in (mixed / "cases.jsonl").read_text().splitlines()}
    assert unrun.get("message") == "; ".join(reasons["unrun"])
    failed = root.find("testsuite[@name='tickets']/testcase[@classname='fail']/failure")
    assert failed is not None
    assert failed.get("message") == f"{WITH_REFERENCE} = 0.0 (below 1.0)"


def test_junit_of_a_passing_run(tmp_path: Path, server: FakeOpenAI) -> None:
    out = make_run(tmp_path, server, [case("a")], [goal(True)])
    junit = tmp_path / "gate.xml"
    code, _, _ = gate(out, policy(tmp_path, "[slices.tickets]\nmax_failures = 0\n"),
                      "--junit", str(junit))
    assert code == 0
    root = ET.parse(junit).getroot()
    assert [(t.get("classname"), t.get("name"), list(t)) for t in root.iter("testcase")] == [
        ("a", WITH_REFERENCE, []), ("gate", "decision", [])]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "0", "0")


def test_markdown_summary(tmp_path: Path, mixed: Path) -> None:
    page = tmp_path / "summary.md"
    code, lines, _ = gate(mixed, policy(tmp_path, POLICY), "--markdown", str(page))
    assert code == 1
    assert lines == [
        "missing_evidence: blocked-reference: reference: the case has no reference_version (a "
        "metric of this run reads its references)",
        "receipt_not_verified: blocked-expect: expect ticket_id: expected present, but "
        "domain_evidence has no such field",
        f"review_required: review: {WITH_REFERENCE} says achieved; the human label says not "
        "achieved",
        f"review_required: review: {WITHOUT_REFERENCE} says achieved; the human label says not "
        "achieved",
        "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (fail)",
    ]
    summary = json.loads((mixed / "summary.json").read_text())
    text = page.read_text()
    assert text == "\n".join([
        "## tracebridge gate: quality failed (exit 1)",
        "",
        f"Run {str(mixed).replace('_', chr(92) + '_')}: 8 case(s), status incomplete, judge "
        f"judge-model, cost unknown, manifest `{summary['manifest_hash']}`.",
        "",
        "### Blockers (5)",
        "",
        "- `missing_evidence` blocked-reference: reference: the case has no reference\\_version "
        "(a metric of this run reads its references)",
        "- `receipt_not_verified` blocked-expect: expect ticket\\_id: expected present, but "
        "domain\\_evidence has no such field",
        f"- `review_required` review: {WITH_REFERENCE.replace('_', chr(92) + '_')} says "
        "achieved; the human label says not achieved",
        f"- `review_required` review: {WITHOUT_REFERENCE.replace('_', chr(92) + '_')} says "
        "achieved; the human label says not achieved",
        "- `slice_over_limit` tickets: 1 failed case(s), over the limit of 0 (fail)",
        "",
        "### Slices",
        "",
        "| slice | passed | failed | blocked | errored | unrun | review | failure limit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        "| other | 0 | 0 | 0 | 0 | 1 | 0 | 0 |",
        "| tickets | 2 | 1 | 2 | 1 | 0 | 1 | 0 |",
        "",
        "### Controls",
        "",
        "| case | role | expected | came out | as expected |",
        "|---|---|---|---|---|",
        "| ctl | positive | achieved | achieved | yes |",
        "",
    ])
