"""Cases of a JSON list, and traces of a JSON array read on Ray, are told apart by their
element number, as the command line tells the traces of an array apart: ``json.dump`` writes
the whole list on one line, where every record would otherwise be ``line 1``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from evaluation_helpers import TICKET, case, control, goal, rows, run_cases, write_cases
from fake_openai_server import FakeOpenAI

from tracebridge.evaluation.cases import CaseFileError, load_cases

ROBOT = [{"role": "human", "content": "hi"}, {"role": "robot", "content": "beep"}]
"""A transcript that breaks the conversation rules (an unknown role)."""
UNKNOWN_ROLE = ("the transcript cannot be used: roles: transcript[1].role: unknown role "
                "'robot'; expected one of human, ai, tool, system [unknown_role]; the case is "
                "blocked")


def one_line(tmp_path: Path, cases: list[Any], name: str = "cases.json") -> Path:
    """``cases`` as ``json.dump`` writes them: a JSON list on one line."""
    path = tmp_path / name
    path.write_text(json.dumps(cases))
    return path


# --- loading ----------------------------------------------------------------------------------


def test_every_bad_case_of_a_one_line_list_is_told_by_its_element(tmp_path: Path) -> None:
    path = one_line(tmp_path, [case("a"), case("a"), control("b", "sideways"), 5,
                               {"transcript": TICKET}, case("c", surprise=1)])
    with pytest.raises(CaseFileError) as raised:
        load_cases(str(path))
    assert [str(problem) for problem in raised.value.problems] == [
        "element 2 (line 1) (case a): duplicate case_id (first at element 1 (line 1))",
        "element 3 (line 1) (case b): control_role: unknown control_role 'sideways'; expected "
        "one of positive, negative_failed_tool, negative_false_claim, partial_goal, goal_shift, "
        "cancellation, duplicate_side_effect",
        "element 4 (line 1): expected a case object, got int",
        "element 5 (line 1): case_id: Field required",
        "element 6 (line 1) (case c): surprise: Extra inputs are not permitted",
    ]
    assert [(p.line, p.element) for p in raised.value.problems] == [
        (1, 2), (1, 3), (1, 4), (1, 5), (1, 6)]
    assert str(raised.value) == (f"{path}: element 2 (line 1) (case a): duplicate case_id "
                                 "(first at element 1 (line 1)) (and 4 more)")


def test_cases_of_a_list_keep_their_element_and_line(tmp_path: Path) -> None:
    flat = load_cases(str(one_line(tmp_path, [case("a"), case("b")])))
    assert [(c.case_id, c.line, c.element, c.place()) for c in flat.cases] == [
        ("a", 1, 1, "element 1 (line 1)"), ("b", 1, 2, "element 2 (line 1)")]
    indented = tmp_path / "indented.json"
    indented.write_text(json.dumps([case("a"), case("b")], indent=1))
    assert [(c.line, c.element) for c in load_cases(str(indented)).cases] == [(2, 1), (36, 2)]


def test_jsonl_cases_and_a_single_case_keep_line_numbers_only(tmp_path: Path) -> None:
    lines = write_cases(tmp_path, [case("a"), case("b")])
    assert [(c.line, c.element, c.place()) for c in load_cases(str(lines)).cases] == [
        (1, None, "line 1"), (2, None, "line 2")]
    single = tmp_path / "single.json"
    single.write_text(json.dumps(case("a"), indent=1))
    assert [(c.line, c.element, c.place()) for c in load_cases(str(single)).cases] == [
        (1, None, "line 1")]
    twice = write_cases(tmp_path, [case("a"), case("a")], name="twice.jsonl")
    with pytest.raises(CaseFileError) as raised:
        load_cases(str(twice))
    assert [str(p) for p in raised.value.problems] == [
        "line 2 (case a): duplicate case_id (first on line 1)"]
    assert raised.value.problems[0].element is None


# --- tracebridge run --------------------------------------------------------------------------


def test_an_id_is_taken_by_its_first_record_even_a_bad_one(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in [
        case("a", critical="false"), case("a"), case("b"), case("b", critical="no"),
    ]))
    with pytest.raises(CaseFileError) as caught:
        load_cases(str(path))
    assert [str(problem) for problem in caught.value.problems] == [
        "line 1 (case a): critical: Input should be a valid boolean",
        "line 2 (case a): duplicate case_id (first on line 1)",
        "line 4 (case b): duplicate case_id (first on line 3)",
        "line 4 (case b): critical: Input should be a valid boolean",
    ]


def test_run_names_the_bad_cases_of_a_list_by_element(tmp_path: Path, server: FakeOpenAI) -> None:
    path = one_line(tmp_path, [case("a"), case("a"), case("b", control_role="nope")])
    code, _, err = run_cases(path, tmp_path / "run", server.base_url)
    assert code == 1
    assert err.splitlines() == [
        f"tracebridge run: {path}: element 2 (line 1) (case a): duplicate case_id (first at "
        "element 1 (line 1))",
        f"tracebridge run: {path}: element 3 (line 1) (case b): control_role: unknown "
        "control_role 'nope'; expected one of positive, negative_failed_tool, "
        "negative_false_claim, partial_goal, goal_shift, cancellation, duplicate_side_effect",
        "tracebridge run: 2 bad case record(s); nothing ran",
    ]


def test_a_run_over_a_list_records_each_cases_element(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True), goal(False))
    path = one_line(tmp_path, [case("odd", transcript=ROBOT), case("ok"), case("no")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 0
    assert err == f"tracebridge run: {path}: element 1 (line 1) (case odd): {UNKNOWN_ROLE}\n"
    assert [{key: row[key] for key in list(row)[:4]} for row in rows(out, "cases.jsonl")] == [
        {"case_id": "odd", "line": 1, "element": 1, "slice": "tickets"},
        {"case_id": "ok", "line": 1, "element": 2, "slice": "tickets"},
        {"case_id": "no", "line": 1, "element": 3, "slice": "tickets"},
    ]
    # the readers of the run take the rows as they are
    policy = tmp_path / "policy.toml"
    policy.write_text("[slices.tickets]\nmax_failures = 0\n")
    assert run("gate", str(out), "--policy", str(policy)) == (
        1,
        "missing_evidence: odd: conversation rules: roles: transcript[1].role: unknown role "
        "'robot'; expected one of human, ai, tool, system [unknown_role]\n"
        "slice_over_limit: tickets: 1 failed case(s), over the limit of 0 (no)\n",
        "tracebridge gate: quality failed (exit 1): 2 blocker(s)\n",
    )
    report = tmp_path / "report.html"
    assert run("report", str(out), "-o", str(report)) == (
        0, "", f"tracebridge report: wrote {report}\n")


def test_a_run_over_jsonl_records_no_element(tmp_path: Path, server: FakeOpenAI) -> None:
    server.add(goal(True))
    path = write_cases(tmp_path, [case("odd", transcript=ROBOT), case("ok")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 0
    assert err == f"tracebridge run: {path}: line 1 (case odd): {UNKNOWN_ROLE}\n"
    assert [list(row)[:3] for row in rows(out, "cases.jsonl")] == [
        ["case_id", "line", "slice"], ["case_id", "line", "slice"]]


# --- Ray Data ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    pytest.importorskip("ray")
    import ray

    from tracebridge.ray_data import init_local

    init_local(num_cpus=2)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.ray
def test_read_traces_numbers_the_records_of_an_array(tmp_path: Path, cluster: None) -> None:
    from ray_helpers import chat, sample, write_jsonl

    from tracebridge.ray_data import convert_batch, read_traces

    array = tmp_path / "a.json"
    array.write_text(json.dumps([chat("Lima"), chat("Kyiv"), [{"role": "robot"}]]))
    lines = write_jsonl(tmp_path / "t.jsonl", [chat("Oslo"), chat("Rome")])
    single = tmp_path / "one.json"
    single.write_text(json.dumps(chat("Bern"), indent=1))
    ds = read_traces([array, lines, single])
    assert ds.schema().names == ["record", "file", "line", "element", "source", "problem_code",
                                 "problem"]
    converted = ds.map_batches(convert_batch, fn_kwargs={"target": "tracebridge"},
                               batch_format="pyarrow").take_all()
    placed = sorted((Path(r["file"]).name, r["line"], r["element"] or 0, r["error_code"])
                    for r in converted)
    assert placed == [("a.json", 1, 1, None), ("a.json", 1, 2, None),
                      ("a.json", 1, 3, "unknown_role"), ("one.json", 1, 0, None),
                      ("t.jsonl", 1, 0, None), ("t.jsonl", 2, 0, None)]
    assert {(Path(r["file"]).name, r["element"]) for r in converted
            if r["file"] != str(array)} == {("t.jsonl", None), ("one.json", None)}
    samples = tmp_path / "samples.json"
    samples.write_text(json.dumps([sample("Lima"), sample("Kyiv")]))
    rows = sorted(read_traces(samples, source="sample").take_all(),
                  key=lambda row: row["element"])
    assert [(row["line"], row["element"], row["source"]) for row in rows] == [
        (1, 1, "sample"), (1, 2, "sample")]
    assert json.loads(rows[1]["record"]) == sample("Kyiv")
