"""``tracebridge calibrate``: the figures of a small labelled run, computed by hand.

The run (both goal metrics; W = with reference, WO = without, H = the human label):

=====  =======  ========  ===  ====  =====
case   slice    messages  H    W     WO
=====  =======  ========  ===  ====  =====
a      tickets  4         1    1     1
b      tickets  4         0    1     0      false achievement (W)
c      tickets  4         1    0     0      false failure (W and WO)
d      refunds  6         0    0     0
e      refunds  6         1    1     1
f      refunds  6         0    err   0      evaluator error (W)
g      tickets  4         -    1     1      no label: not counted
h      solo     4         1    1     1      one case: kappa undefined
=====  =======  ========  ===  ====  =====

W, all: scored 6 (a b c d e h); both achieved 3, false achievements 1, false failures 1, both
not achieved 1; agreement 4/6; judge "achieved" 4/6, human 4/6, so p_e = 16/36 + 4/36 = 5/9
and kappa = (6/9 - 5/9) / (4/9) = 1/4.
W, tickets (a b c): p_o = 1/3, p_e = 4/9 + 1/9 = 5/9, kappa = (3/9 - 5/9) / (4/9) = -1/2.
W, refunds (d e; f errored): p_o = 1, p_e = 1/4 + 1/4 = 1/2, kappa = 1.
W, solo (h): both sides say "achieved" of every case: p_e = 1, kappa undefined (None).
W, 1-4 messages (a b c h): p_o = 1/2, p_e = 9/16 + 1/16 = 5/8, kappa = (4/8 - 5/8) / (3/8) = -1/3.
WO, all (a..f, h): both achieved 3, false failures 1 (c), both not achieved 3; p_o = 6/7;
judge 3/7, human 4/7: p_e = 12/49 + 12/49 = 24/49, kappa = (42/49 - 24/49) / (25/49) = 18/25.
W vs WO (both valued: a b c d e h): they disagree on b only, where WO sides with the human.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from evaluation_helpers import WITH_REFERENCE, WITHOUT_REFERENCE, case, goal
from fake_openai_server import FakeOpenAI, Reply
from gate_helpers import LONGER, make_run

from tracebridge.evaluation.calibrate import cohen_kappa, length_bucket

W, WO = WITH_REFERENCE, WITHOUT_REFERENCE


def labelled(case_id: str, slice_name: str, human: bool | None, *,
             longer: bool = False) -> dict[str, Any]:
    fields: dict[str, Any] = {"slice": slice_name}
    if human is not None:
        fields["human_adjudication"] = {"goal_achieved": human, "reason": f"{case_id} checked"}
    if longer:
        fields["transcript"] = copy.deepcopy(LONGER)
    return case(case_id, **fields)


@pytest.fixture
def calibration_run(tmp_path: Path, server: FakeOpenAI) -> Path:
    cases = [
        labelled("a", "tickets", True), labelled("b", "tickets", False),
        labelled("c", "tickets", True), labelled("d", "refunds", False, longer=True),
        labelled("e", "refunds", True, longer=True), labelled("f", "refunds", False, longer=True),
        labelled("g", "tickets", None), labelled("h", "solo", True),
    ]
    replies: list[Reply | str] = [
        goal(True), goal(True), goal(True), goal(False), goal(False), goal(False),
        goal(False), goal(False), goal(True), goal(True), Reply(status=500), goal(False),
        goal(True), goal(True), goal(True), goal(True),
    ]
    return make_run(tmp_path, server, cases, replies, metrics=(W, WO))


def figures(count: int, scored: int, confusion: tuple[int, int, int, int], kappa: float | None,
            *, errors: int = 0) -> dict[str, Any]:
    both, false_ach, false_fail, neither = confusion
    agreement = both + neither
    return {"count": count, "no_result": 0, "evaluator_errors": errors, "unscorable": 0,
            "non_binary": 0, "scored": scored, "both_achieved": both,
            "false_achievements": false_ach, "false_failures": false_fail,
            "both_not_achieved": neither, "agreement": agreement,
            "agreement_rate": agreement / scored if scored else None, "kappa": kappa}


def pair(both: int, disagree: int, with_right: int, without_right: int) -> dict[str, Any]:
    return {"both": both, "disagree": disagree, "disagreement_rate": disagree / both,
            "with_reference_right": with_right, "without_reference_right": without_right}


def test_calibration_figures_by_hand(calibration_run: Path) -> None:
    code, out, err = run("calibrate", str(calibration_run), "--json")
    assert (code, err) == (0, "")
    found = json.loads(out)
    refunds_w = figures(3, 2, (1, 0, 0, 1), 1.0, errors=1)
    assert found["labelled_cases"] == 7
    assert found["length_buckets"] == ["1-4", "5-8", "9-16", "17-32", "33+", "unreadable"]
    assert found["metrics"][W] == {
        "slices": {
            "(all)": figures(7, 6, (3, 1, 1, 1), 0.25, errors=1),
            "refunds": refunds_w,
            "solo": figures(1, 1, (1, 0, 0, 0), None),
            "tickets": figures(3, 3, (1, 1, 1, 0), -0.5),
        },
        "lengths": {"1-4": figures(4, 4, (2, 1, 1, 0), -1 / 3), "5-8": refunds_w},
    }
    assert found["metrics"][WO]["slices"]["(all)"] == figures(7, 7, (3, 0, 1, 3), 0.72)
    assert found["metrics"][WO]["slices"]["refunds"] == figures(3, 3, (1, 0, 0, 2), 1.0)
    assert found["with_vs_without"] == {
        "slices": {"(all)": pair(6, 1, 0, 1), "refunds": pair(2, 0, 0, 0),
                   "solo": pair(1, 0, 0, 0), "tickets": pair(3, 1, 0, 1)},
        "lengths": {"1-4": pair(4, 1, 0, 1), "5-8": pair(2, 0, 0, 0)},
    }


def test_calibration_tables(calibration_run: Path) -> None:
    code, out, _ = run("calibrate", str(calibration_run))
    assert code == 0
    assert out.split("\n\n")[:3] == [
        "7 labelled case(s)",
        f"{W}, per slice\n"
        "slice    count  scored  agree   rate  false ach.  false fail.  eval. errors   kappa\n"
        "(all)        7       6      4  0.667           1            1             1   0.250\n"
        "refunds      3       2      2  1.000           0            0             1   1.000\n"
        "solo         1       1      1  1.000           0            0             0       -\n"
        "tickets      3       3      1  0.333           1            1             0  -0.500",
        f"{W}, per conversation length (messages)\n"
        "messages  count  scored  agree   rate  false ach.  false fail.  eval. errors   kappa\n"
        "1-4           4       4      2  0.500           1            1             0  -0.333\n"
        "5-8           3       2      2  1.000           0            0             1   1.000",
    ]
    assert out.endswith(
        "with- vs without-reference, per conversation length (messages)\n"
        "messages  both  disagree   rate  with ref. right  without ref. right\n"
        "1-4          4         1  0.250                0                   1\n"
        "5-8          2         0  0.000                0                   0\n")


@pytest.mark.parametrize(("judge", "human", "kappa"), [
    ([], [], None),  # nothing scored
    ([True, True], [True, True], None),  # p_e = 1: undefined
    ([False] * 3, [False] * 3, None),
    ([True, True], [False, False], 0.0),  # both constant, opposite: p_e = 0
    ([True, False, True, False], [True, False, True, False], 1.0),
    ([True, False], [False, True], -1.0),
    # 50 items: 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no: p_o = 0.7, p_e = 0.5, kappa = 0.4
    ([True] * 25 + [False] * 25, [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15, 0.4),
])
def test_cohen_kappa(judge: list[bool], human: list[bool], kappa: float | None) -> None:
    assert cohen_kappa(judge, human) == kappa  # exact: computed in fractions


@pytest.mark.parametrize(("messages", "bucket"), [
    (None, "unreadable"), (1, "1-4"), (4, "1-4"), (5, "5-8"), (8, "5-8"), (9, "9-16"),
    (16, "9-16"), (17, "17-32"), (32, "17-32"), (33, "33+"), (500, "33+"),
])
def test_length_buckets(messages: int | None, bucket: str) -> None:
    assert length_bucket(messages) == bucket


def test_no_labels_and_a_changed_case_file(tmp_path: Path, server: FakeOpenAI) -> None:
    out = make_run(tmp_path, server, [case("a")], [goal(True)])
    assert run("calibrate", str(out)) == (
        0, "no case of the run has a human label: nothing to calibrate\n", "")
    case_file = tmp_path / "run" / "cases.jsonl"
    moved = tmp_path / "moved.jsonl"
    moved.write_text(case_file.read_text())
    case_file.write_text(case_file.read_text().replace('"v1"', '"v2"'))
    code, _, err = run("calibrate", str(out))
    assert code == 4
    assert err.startswith(f"tracebridge calibrate: the case file {case_file} is not the one "
                          "this run read (manifest sha256:")
    assert err.endswith("; give the run's case file with --cases\n")
    assert run("calibrate", str(out), "--cases", str(moved))[0] == 0


@pytest.mark.parametrize("view", ["calibrate", "report"])
def test_a_case_file_gone_since_the_run_is_exit_4_in_one_line(
    tmp_path: Path, server: FakeOpenAI, view: str
) -> None:
    # before, calibrate and report said "tracebridge: cannot read ..." and exited 2
    out = make_run(tmp_path, server, [case("a")], [goal(True)])
    case_file = tmp_path / "run" / "cases.jsonl"
    case_file.unlink()
    flags = ["-o", str(tmp_path / "page.html")] if view == "report" else []
    code, _, err = run(view, str(out), *flags)
    assert code == 4
    assert err == (f"tracebridge {view}: the case file {case_file} cannot be read: cannot read "
                   f"{case_file}: [Errno 2] No such file or directory: '{case_file}'; give the "
                   "run's case file with --cases\n")
