"""``tracebridge gate``: every blocker and every exit status, on real run directories.

Each row runs ``tracebridge run`` against the fake judge, then the gate under a policy, and
states the exact blocker lines (sorted) and the exit status. Lines that quote what the run
recorded (a provider's error, the budget's words) are built from the record itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from evaluation_helpers import TICKET, WITH_REFERENCE, WITHOUT_REFERENCE, case, control, goal
from fake_openai_server import FakeOpenAI, Reply
from gate_helpers import edit_rows, gate, make_run, policy

from tracebridge.evaluation.gate import KINDS, decide
from tracebridge.evaluation.policy import Policy
from tracebridge.evaluation.rundir import read_run

TICKETS = "[slices.tickets]\nmax_failures = 0\n"
OUTAGE = Reply(status=500)


def reasons(out: Path, case_id: str) -> str:
    for line in (out / "cases.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["case_id"] == case_id:
            return "; ".join(row["reasons"])
    raise AssertionError(case_id)


@dataclass
class Row:
    """One gate decision: a run, a policy, the blocker lines and the exit status."""

    cases: list[dict[str, Any]]
    replies: list[Reply | str]
    policy: str
    code: int
    lines: list[str] | Callable[[Path], list[str]]
    flags: tuple[str, ...] = ()
    metrics: tuple[str, ...] = (WITH_REFERENCE,)
    edit: Callable[[Path], None] | None = None
    kinds: set[str] = field(default_factory=set)
    """The blocker kinds the row covers (every kind is covered by some row)."""


def _non_binary(out: Path) -> None:
    def half(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "value": 0.5} if row["case_id"] == "a" else row

    edit_rows(out / "results.jsonl", half)


def _still_running(out: Path) -> None:
    summary = json.loads((out / "summary.json").read_text())
    (out / "summary.json").write_text(json.dumps({**summary, "status": "running"}))


def _one_row_lost(out: Path) -> None:
    lines = (out / "cases.jsonl").read_text().splitlines()
    (out / "cases.jsonl").write_text(lines[0] + "\n")


def user_check(item: Any) -> list[str]:
    """A --checks function: a problem when the evidence shows two tickets."""
    return [f"{len(item.domain_evidence['ticket_ids'])} tickets for one request"] if len(
        item.domain_evidence.get("ticket_ids", [])) > 1 else []


def broken_check(item: Any) -> list[str]:
    raise RuntimeError("the ticket service is down")


CHECKS = ("--checks", f"{__name__}:user_check", "--checks", f"{__name__}:broken_check")

ROWS: dict[str, Row] = {
    "passed": Row([case("a")], [goal(True)], TICKETS, 0, []),
    "failures within the slice's limit": Row(
        [case("a"), case("b")], [goal(False), goal(True)],
        "[slices.tickets]\nmax_failures = 1\n", 0, []),
    "slice over its failure limit": Row(
        [case("a"), case("b"), case("c")], [goal(False), goal(True), goal(False)],
        "[slices.tickets]\nmax_failures = 1\n", 1,
        ["slice_over_limit: tickets: 2 failed case(s), over the limit of 1 (a, c)"],
        kinds={"slice_over_limit"}),
    "a receipt not verified (a failed expect)": Row(
        [case("a", domain_evidence={"ticket_id": None}, expect={"ticket_id": {"present": True}})],
        [], TICKETS, 1,
        ["receipt_not_verified: a: expect ticket_id: expected present, but domain_evidence has "
         "null"], kinds={"receipt_not_verified"}),
    "a user check's problem is a receipt, a check that cannot run is missing evidence": Row(
        [case("a", domain_evidence={"ticket_ids": ["T-1", "T-2"]})], [], TICKETS, 1,
        [f"missing_evidence: a: check {__name__}:broken_check raised RuntimeError: the ticket "
         "service is down",
         f"receipt_not_verified: a: check {__name__}:user_check: 2 tickets for one request"],
        flags=CHECKS, kinds={"missing_evidence", "receipt_not_verified"}),
    "a case missing required evidence": Row(
        [case("a", reference_version=None), case("b", session_id="s-2"), case("c")],
        [goal(True), goal(True)],
        'required_evidence = ["session_id"]\n' + TICKETS, 2,
        ["missing_evidence: a: reference: the case has no reference_version (a metric of this "
         "run reads its references)",
         "missing_evidence: a: session_id is missing (the policy requires it)",
         "missing_evidence: c: session_id is missing (the policy requires it)"],
        kinds={"missing_evidence"}),
    "a slice with no policy": Row(
        [case("a"), case("b", slice="refunds"), case("c", slice=None)],
        [goal(True), goal(True), goal(True)], TICKETS, 3,
        ['slice_no_policy: (no slice): 1 case(s) and no [slices.""] in the policy',
         "slice_no_policy: refunds: 1 case(s) and no [slices.refunds] in the policy"],
        kinds={"slice_no_policy"}),
    "a required slice with no case": Row(
        [case("a")], [goal(True)], 'required_slices = ["refunds", "tickets"]\n' + TICKETS, 2,
        ["slice_missing: refunds: a required slice with no case in the run"],
        kinds={"slice_missing"}),
    "a value outside a binary metric's {0, 1}": Row(
        [case("a"), case("b")], [goal(True), goal(True)], TICKETS, 3,
        ["non_binary_value: a: agent_goal_accuracy_with_reference = 0.5, outside a binary "
         "metric's {0, 1}"], edit=_non_binary, kinds={"non_binary_value"}),
    "too many evaluator errors (a provider outage): incomplete, not failed": Row(
        [case("a"), case("b"), case("c")], [OUTAGE, goal(True), OUTAGE],
        "max_evaluator_errors = 1\n" + TICKETS, 2,
        ["evaluator_errors: run: 2 evaluator error(s), over the limit of 1 (a, c)"],
        kinds={"evaluator_errors"}),
    "evaluator errors within the limit": Row(
        [case("a"), case("b")], [OUTAGE, goal(True)], "max_evaluator_errors = 1\n" + TICKETS,
        0, []),
    "a critical case errored": Row(
        [case("a"), case("b", critical=True)], [OUTAGE, goal(True)],
        "max_evaluator_errors = 5\n" + TICKETS, 2,
        lambda out: [f"critical_unrun: b: a critical case errored: {reasons(out, 'b')}"],
        kinds={"critical_unrun"}),
    "the budget boundary: critical and other cases unrun": Row(
        [case("a"), case("b", critical=True), case("c"), case("d", critical=True)],
        [goal(True)], TICKETS, 2,
        lambda out: ["cases_unrun: run: 2 case(s) unrun, over the limit of 0 (a, c)",
                     f"critical_unrun: d: a critical case unrun: {reasons(out, 'd')}"],
        flags=("--max-requests", "1", "--allow-partial"),
        kinds={"cases_unrun", "critical_unrun"}),
    "unrun cases within the limit": Row(
        [case("a"), case("b")], [goal(True)], "max_unrun = 1\n" + TICKETS, 0, [],
        flags=("--max-requests", "1", "--allow-partial")),
    "the estimate refused the run": Row(
        [case("a"), case("b")], [], TICKETS, 2,
        ["cases_unrun: run: 2 case(s) unrun, over the limit of 0 (a, b)"],
        flags=("--max-requests", "1")),
    "the cost boundary crossed": Row(
        [case("a")], [Reply(content=goal(True), prompt_tokens=1000, completion_tokens=100)],
        "max_cost = 0.001\n" + TICKETS, 2,
        ["cost_over_limit: run: $0.003 spent, over the limit of $0.001"],
        flags=("--price", "judge-model=2,10"), kinds={"cost_over_limit"}),
    "within the cost limit": Row(
        [case("a")], [Reply(content=goal(True), prompt_tokens=1000, completion_tokens=100)],
        "max_cost = 0.003\n" + TICKETS, 0, [], flags=("--price", "judge-model=2,10")),
    "a cost limit and a run that does not know its cost": Row(
        [case("a")], [goal(True)], "max_cost = 1.0\n" + TICKETS, 2,
        ["cost_unknown: run: the policy limits the cost and the run does not know its cost "
         "(its requests were sent without a --price for the judge model: run it again in a "
         "new --out with one)"], kinds={"cost_unknown"}),
    "a failed control": Row(
        [control("p", "positive")], [goal(False)], TICKETS, 1,
        ["control_failed: p: control positive: expected achieved, came out not_achieved"],
        kinds={"control_failed"}),
    "a missing control": Row(
        [control("p", "positive")], [goal(True)],
        'required_controls = ["positive", "negative_false_claim"]\n' + TICKETS, 2,
        ["control_missing: negative_false_claim: no control with this role in the run"],
        kinds={"control_missing"}),
    "a control the provider could not score": Row(
        [control("p", "positive")], [OUTAGE], "max_evaluator_errors = 1\n" + TICKETS, 2,
        lambda out: [f"control_unrun: p: the control errored, so the judge is not proven: "
                     f"{reasons(out, 'p')}"], kinds={"control_unrun"}),
    "a duplicate side effect blocked by its check passes as a control": Row(
        [control("dup", "duplicate_side_effect", domain_evidence={"ticket_ids": ["T-1", "T-1"]},
                 expect={"ticket_ids": {"count": 1}})], [],
        'required_controls = ["duplicate_side_effect"]\n' + TICKETS, 0, []),
    "review required": Row(
        [case("a", human_adjudication={"goal_achieved": True})], [goal(False)], TICKETS, 3,
        [f"review_required: a: {WITH_REFERENCE} says not achieved; the human label says "
         "achieved"], kinds={"review_required"}),
    "review that the policy lets through": Row(
        [case("a", human_adjudication={"goal_achieved": True})], [goal(False)],
        "review_blocks = false\n" + TICKETS, 0, []),
    "with- and without-reference disagree": Row(
        [case("a")], [goal(True), goal(False)], TICKETS, 3,
        [f"review_required: a: {WITH_REFERENCE} says achieved; {WITHOUT_REFERENCE} says not "
         "achieved"], metrics=(WITH_REFERENCE, WITHOUT_REFERENCE)),
    "a run that has not finished": Row(
        [case("a")], [goal(True)], TICKETS, 2,
        ["run_not_finished: run: the run has not finished (status running): run it again on "
         "the same RUN_DIR to resume"], edit=_still_running, kinds={"run_not_finished"}),
    "cases.jsonl short of the run's cases": Row(
        [case("a"), case("b")], [goal(True), goal(True)], TICKETS, 2,
        ["run_not_finished: run: cases.jsonl holds 1 of the run's 2 cases"], edit=_one_row_lost,
        kinds={"run_not_finished"}),
    # precedence: quality failed > incomplete > review required > passed
    "a failure and an outage: quality failed": Row(
        [case("a"), case("b")], [goal(False), OUTAGE], TICKETS, 1,
        ["evaluator_errors: run: 1 evaluator error(s), over the limit of 0 (b)",
         "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (a)"]),
    "an outage and a review: incomplete": Row(
        [case("a", human_adjudication={"goal_achieved": True}), case("b")], [goal(False), OUTAGE],
        TICKETS, 2,
        ["evaluator_errors: run: 1 evaluator error(s), over the limit of 0 (b)",
         f"review_required: a: {WITH_REFERENCE} says not achieved; the human label says "
         "achieved"]),
    "only outages: incomplete, never a quality failure": Row(
        [case("a"), case("b")], [OUTAGE, OUTAGE], TICKETS, 2,
        ["evaluator_errors: run: 2 evaluator error(s), over the limit of 0 (a, b)"]),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_gate_decision(name: str, tmp_path: Path, server: FakeOpenAI) -> None:
    row = ROWS[name]
    out = make_run(tmp_path, server, row.cases, row.replies, *row.flags, metrics=row.metrics)
    if row.edit is not None:
        row.edit(out)
    lines = row.lines(out) if callable(row.lines) else row.lines
    code, printed, err = gate(out, policy(tmp_path, row.policy))
    assert (printed, code) == (lines, row.code)
    assert printed == sorted(printed)
    decision = {0: "passed", 1: "quality failed", 2: "incomplete", 3: "review required"}
    assert err == f"tracebridge gate: {decision[code]} (exit {code}): {len(lines)} blocker(s)\n"


def test_every_blocker_kind_has_a_row() -> None:
    covered = set().union(*(row.kinds for row in ROWS.values()))
    assert covered == set(KINDS)
    for row in ROWS.values():  # and each row states the kinds it yields
        lines = [] if callable(row.lines) else row.lines
        assert {line.split(":")[0] for line in lines} <= row.kinds | {
            "evaluator_errors", "slice_over_limit", "review_required", "cases_unrun"}


def test_every_exit_status_has_a_row() -> None:
    assert {row.code for row in ROWS.values()} == {0, 1, 2, 3}


def test_the_decision_from_python(tmp_path: Path, server: FakeOpenAI) -> None:
    out = make_run(tmp_path, server, [case("a"), case("b")], [goal(False), OUTAGE])
    decision = decide(read_run(out), Policy.model_validate({"slices": {"tickets": {
        "max_failures": 0}}, "max_evaluator_errors": 1}))
    assert (decision.exit_code, decision.name) == (1, "quality failed")
    assert [str(b) for b in decision.blockers] == [
        "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (a)"]


# --- what the gate cannot use: exit 4, one line ------------------------------------------------


@pytest.fixture
def good_run(tmp_path: Path, server: FakeOpenAI) -> Path:
    return make_run(tmp_path, server, [case("a")], [goal(True)])


@pytest.mark.parametrize(("text", "message"), [
    ("max_failures = 1\n", "policy.toml: max_failures: Extra inputs are not permitted"),
    ("[slices.tickets]\n", "policy.toml: slices.tickets.max_failures: Field required"),
    ("[slices.tickets]\nmax_failures = -1\n",
     "policy.toml: slices.tickets.max_failures: Input should be greater than or equal to 0"),
    ('required_controls = ["positiv"]\n',
     "policy.toml: required_controls.0: Input should be 'positive', 'negative_failed_tool', "
     "'negative_false_claim', 'partial_goal', 'goal_shift', 'cancellation' or "
     "'duplicate_side_effect'"),
    ("[slices.tickets\n", "policy.toml: not TOML: Expected ']' at the end of a table "
     "declaration (at line 1, column 16)"),
])
def test_an_unusable_policy_is_one_line_and_exit_4(
        tmp_path: Path, good_run: Path, text: str, message: str) -> None:
    path = policy(tmp_path, text)
    code, out, err = run("gate", str(good_run), "--policy", str(path))
    assert (code, out) == (4, "")
    assert err == f"tracebridge gate: {tmp_path}/{message}\n"


def test_an_unusable_run_dir_is_one_line_and_exit_4(tmp_path: Path, good_run: Path) -> None:
    path = policy(tmp_path, TICKETS)
    code, _, err = run("gate", str(tmp_path / "nowhere"), "--policy", str(path))
    assert (code, err) == (4, f"tracebridge gate: {tmp_path}/nowhere is not a run directory "
                              "(no such directory)\n")
    (good_run / "cases.jsonl").write_text('{"case_id": "a"}\n')
    code, _, err = run("gate", str(good_run), "--policy", str(path))
    assert (code, err) == (4, f"tracebridge gate: {good_run}/cases.jsonl: line 1: line: Field "
                              "required\n")
    (good_run / "summary.json").write_text("{")
    code, _, err = run("gate", str(good_run), "--policy", str(path))
    assert code == 4
    assert err.startswith(f"tracebridge gate: cannot read {good_run}/summary.json: ")
    assert err.count("\n") == 1


def test_bytes_that_are_not_text_are_one_line_and_exit_4(tmp_path: Path, good_run: Path) -> None:
    binary = tmp_path / "policy.toml"
    binary.write_bytes(b"\x80\xb0 not text")
    code, out, err = run("gate", str(good_run), "--policy", str(binary))
    assert (code, out) == (4, "")
    assert err == f"tracebridge gate: {binary}: not UTF-8 text: invalid start byte\n"
    path = policy(tmp_path, TICKETS)
    (good_run / "cases.jsonl").write_bytes(b"\xb0\n")
    code, _, err = run("gate", str(good_run), "--policy", str(path))
    assert (code, err) == (4, f"tracebridge gate: {good_run}/cases.jsonl: not UTF-8 text: "
                              "invalid start byte\n")


def test_a_flag_missing_exits_4(good_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:  # argparse's exit, as a process would see it
        run("gate", str(good_run))
    assert stopped.value.code == 4
    assert capsys.readouterr().err.endswith(
        "tracebridge gate: error: the following arguments are required: --policy\n")


def test_a_line_cut_by_a_kill_is_left_out(tmp_path: Path, server: FakeOpenAI) -> None:
    out = make_run(tmp_path, server, [case("a"), case("b")], [goal(True), goal(False)])
    text = (out / "results.jsonl").read_text()
    last = text.splitlines()[-1]
    (out / "results.jsonl").write_text(text + last[: len(last) // 2])  # no newline: cut
    run_dir = read_run(out)
    assert sorted(run_dir.results) == [("a", WITH_REFERENCE), ("b", WITH_REFERENCE)]


def test_the_transcript_of_every_helper_case_is_four_messages() -> None:
    assert len(TICKET) == 4  # the calibration's length buckets rely on it


def test_the_docs_list_every_blocker_with_its_exit_status() -> None:
    docs = (Path(__file__).parents[1] / "docs" / "gate.md").read_text(encoding="utf-8")
    listed = {}
    for line in docs.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`") and cells[2].isdigit():
            listed[cells[0].strip("`")] = int(cells[2])
    assert listed == KINDS
