"""Evaluation runs: a directory holding a file the run writes but no run is refused, and an
empty path flag is a usage error; a transcript given as a whole sample object with
references is a bad case; ``expect`` ``equals`` compares typed JSON (numbers by value); an
interrupt is taken while the run prepares, and one after the run finished reports the
finished run; a resume with the same checks in another order resumes; an empty gate or
report output is refused; an async check is refused when loaded; the budget and cache
flags' messages."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from evaluation_helpers import case, run_cases, summary, write_cases
from fake_openai_server import FakeOpenAI

from tracebridge.evaluation._dollars import dollars
from tracebridge.evaluation.cases import Case, CaseSet, load_cases
from tracebridge.evaluation.checks import UserCheck, check_case, check_expectations
from tracebridge.evaluation.record import RunRecord
from tracebridge.evaluation.runner import Runner

CALLS = [{"name": "create_ticket", "args": {"category": "billing"}}]
"""The reference calls of ``case``'s transcript (so ``tool_call_f1`` scores it 1.0)."""


def _scored(case_id: str, **fields: Any) -> dict[str, Any]:
    return case(case_id, reference_tool_calls=CALLS, **fields)


def _run(cases: Path, out: str | Path, *flags: str) -> tuple[int, str, str]:
    return run("run", str(cases), "--out", str(out), "--metric", "tool_call_f1", "--no-cache",
               *flags)


def _module(folder: Path, name: str, text: str) -> None:
    (folder / f"{name}.py").write_text(text)


# --- 1. a directory that holds a file the run writes, but no run ----------------------------


@pytest.mark.parametrize("name", ["cases.jsonl", "spent.jsonl", "results.jsonl"])
def test_a_directory_holding_a_run_file_but_no_run_is_refused_and_nothing_is_written(
    tmp_path: Path, name: str
) -> None:
    out = tmp_path / "evals"
    out.mkdir()
    theirs = out / name
    theirs.write_text('{"case_id": "mine-1"}\n{"case_id": "mine-2"}\n')
    cases = write_cases(tmp_path, [_scored("c1")], "smoke.jsonl")
    code, stdout, err = _run(cases, out)
    assert (code, stdout, err) == (
        2, "", f"tracebridge run: {out} holds {name} but no summary.json: not a run directory "
        "this version can resume; use a new --out\n")
    assert theirs.read_text() == '{"case_id": "mine-1"}\n{"case_id": "mine-2"}\n'
    assert sorted(path.name for path in out.iterdir()) == [name]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--out", ""), "--out is empty: give the run directory"),
        (("--out", "run", "--cache", ""), "--cache is empty: give the cache file (or --no-cache)"),
    ],
)
def test_an_empty_out_or_cache_is_a_usage_error_naming_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cases.jsonl").write_text(json.dumps(_scored("c1")) + "\n")
    before = (tmp_path / "cases.jsonl").read_text()
    code, stdout, err = run("run", "other.jsonl", "--metric", "tool_call_f1", *flags)
    assert (code, stdout, err) == (2, "", f"tracebridge run: {message}\n")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["cases.jsonl"]
    assert (tmp_path / "cases.jsonl").read_text() == before


# --- 2. a transcript that is a whole sample object ------------------------------------------


def _sample_object(**fields: Any) -> dict[str, Any]:
    return {"messages": [{"type": "human", "content": "Open a ticket."},
                         {"type": "ai", "content": "Done."}], **fields}


def test_a_sample_object_transcript_with_references_is_a_bad_case_naming_them(
    tmp_path: Path,
) -> None:
    cases = write_cases(tmp_path, [
        case("refs", transcript=_sample_object(
            reference="Something else", reference_tool_calls=[{"name": "do", "args": {}}],
            reference_topics=None, rubrics={"role": "pirate"}, metadata={"id": "x9"})),
        case("calls", transcript=_sample_object(reference_tool_calls=[])),
        case("plain", transcript=_sample_object(reference=None, rubrics=None, metadata={})),
    ])
    code, stdout, err = _run(cases, tmp_path / "run")
    assert (code, stdout) == (1, "")
    assert err == (
        f"tracebridge run: {cases}: line 1 (case refs): transcript: the sample object's "
        "reference, reference_tool_calls, rubrics are not read from a transcript; "
        "give them as case fields, or leave them out of the transcript\n"
        f"tracebridge run: {cases}: line 2 (case calls): transcript: the sample object's "
        "reference_tool_calls is not read from a transcript; give it as case fields, or "
        "leave it out of the transcript\n"
        "tracebridge run: 2 bad case record(s); nothing ran\n")
    assert not (tmp_path / "run").exists()


def test_a_sample_object_transcript_with_its_messages_only_is_read(tmp_path: Path) -> None:
    cases = write_cases(tmp_path, [
        case("plain", transcript=_sample_object(reference=None, rubrics=None, metadata={}))])
    loaded = load_cases(str(cases)).cases[0]
    assert (loaded.format, loaded.transcript_error) == ("tracebridge", None)
    assert [message.content for message in loaded.sample().messages] == ["Open a ticket.",
                                                                         "Done."]


# --- 3. expect equals: typed JSON ------------------------------------------------------------


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        (10.0, 10),
        (10, 10.0),
        (-0.0, 0),
        ({"n": 1.0, "m": [2.0, {"k": -0.0}]}, {"m": [2, {"k": 0}], "n": 1}),
        (True, True),
        (None, None),
    ],
    ids=["float-int", "int-float", "negative-zero", "nested", "boolean", "null"],
)
def test_equals_is_met_by_the_same_json_value_numbers_by_value(
    evidence: Any, expected: Any
) -> None:
    checked = Case.model_validate({"case_id": "a", "transcript": [],
                                   "domain_evidence": {"x": evidence},
                                   "expect": {"x": {"equals": expected}}})
    assert check_expectations(checked) == []


@pytest.mark.parametrize(
    ("evidence", "expected", "reason"),
    [
        (1, True, "expect x: expected true, got 1"),
        (False, 0, "expect x: expected 0, got false"),
        ("10", 10, 'expect x: expected 10, got "10"'),
        ([1, 2], [2, 1], "expect x: expected [2,1], got [1,2]"),
        ({"n": 1}, {"n": 1, "m": None}, 'expect x: expected {"m":null,"n":1}, got {"n":1}'),
        (10.5, 10, "expect x: expected 10, got 10.5"),
    ],
    ids=["bool-int", "int-bool", "string-number", "array-order", "missing-key", "other"],
)
def test_equals_is_not_met_by_another_json_value(evidence: Any, expected: Any,
                                                  reason: str) -> None:
    checked = Case.model_validate({"case_id": "a", "transcript": [],
                                   "domain_evidence": {"x": evidence},
                                   "expect": {"x": {"equals": expected}}})
    assert check_expectations(checked) == [reason]


def test_a_float_amount_meets_an_integer_expectation_in_a_run(tmp_path: Path) -> None:
    cases = write_cases(tmp_path, [_scored("c1", domain_evidence={"amount": 10.0},
                                           expect={"amount": {"equals": 10}})])
    out = tmp_path / "run"
    code, stdout, err = _run(cases, out)
    assert (code, err) == (0, "")
    assert stdout == (f"complete: 1 passed; judge: 0 request(s), 0 + 0 tokens, $0.0000; "
                      f"{out}/summary.json\n")


# --- 4. interrupts while the run prepares, and after it finished ------------------------------

_SIGNALLING_CHECK = """\
import os, signal
LOG = {log!r}

def check(case):
    with open(LOG, "a") as log:
        log.write(case.case_id + "\\n")
    if case.case_id == "c3":
        os.kill(os.getpid(), signal.{signal})
    return []
"""

_SIGNAL_AFTER_FINISH = """\
import os, signal
from tracebridge.evaluation import record

_finish = record.RunRecord.finish

def _finish_then_signal(self, cases, summary):
    _finish(self, cases, summary)
    os.kill(os.getpid(), signal.{signal})

record.RunRecord.finish = _finish_then_signal

def check(case):
    return []
"""


def _subprocess_run(tmp_path: Path, module: str, cases: Path,
                    out: Path) -> tuple[int, str, str]:
    """``tracebridge run`` in another process with the check ``module``, as started from a
    terminal (Ctrl-C raises KeyboardInterrupt), bounded by a timeout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.run(
        [sys.executable, "-c", "import signal, sys\n"
         "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
         "from tracebridge.cli import main\n"
         "sys.exit(main(sys.argv[1:]))",
         "run", str(cases), "--out", str(out), "--metric", "tool_call_f1", "--no-cache",
         "--checks", f"{module}:check"],
        capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    return process.returncode, process.stdout, process.stderr


@pytest.mark.parametrize(
    ("signal_name", "code", "how"),
    [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated (SIGTERM)")],
)
def test_an_interrupt_while_the_run_prepares_is_taken_within_ten_cases(
    tmp_path: Path, signal_name: str, code: int, how: str
) -> None:
    log = tmp_path / "checked.txt"
    module = f"s47_prep_{signal_name.lower()}"
    _module(tmp_path, module, _SIGNALLING_CHECK.format(log=str(log), signal=signal_name))
    cases = write_cases(tmp_path, [_scored(f"c{number}") for number in range(200)])
    out = tmp_path / "run"
    assert _subprocess_run(tmp_path, module, cases, out) == (
        code, "", f"tracebridge run: {how}; {out} keeps what was written (run again to "
        "resume)\n")
    # the signal came in the check of c3; the loop had its turn before c10
    assert log.read_text().split() == [f"c{number}" for number in range(10)]
    written = summary(out)
    assert (written["status"], written["stopped"], written["unsettled"]) == (
        "running", "interrupted: 0 of 200 case(s) settled; run again on the same RUN_DIR to "
        "resume", [f"c{number}" for number in range(200)])


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_an_interrupt_after_the_run_finished_reports_the_finished_run(
    tmp_path: Path, signal_name: str
) -> None:
    module = f"s47_after_{signal_name.lower()}"
    _module(tmp_path, module, _SIGNAL_AFTER_FINISH.format(signal=signal_name))
    cases = write_cases(tmp_path, [_scored("c1"), _scored("c2")])
    out = tmp_path / "run"
    assert _subprocess_run(tmp_path, module, cases, out) == (
        0, f"complete: 2 passed; judge: 0 request(s), 0 + 0 tokens, $0.0000; "
        f"{out}/summary.json\n", "")
    assert summary(out)["status"] == "complete"


# --- 5. the same checks in another order ----------------------------------------------------


def test_a_resume_with_the_same_checks_in_another_order_or_repeated_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _module(tmp_path, "s47_order", "def one(case):\n    return []\n\n"
            "def two(case):\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cases = write_cases(tmp_path, [_scored("c1")])
    out = tmp_path / "run"
    first = ("--checks", "s47_order:one", "--checks", "s47_order:two")
    assert _run(cases, out, *first)[0] == 0
    again = ("--checks", "s47_order:two", "--checks", "s47_order:one",
             "--checks", "s47_order:two")
    code, _, err = _run(cases, out, *again)
    assert (code, err) == (0, "")
    assert summary(out)["checks"] == ["s47_order:two", "s47_order:one"]
    code, _, err = _run(cases, out, "--checks", "s47_order:two")
    assert (code, err) == (2, f"tracebridge run: {out} holds a run with another set of user "
                              "checks (--checks); resuming would mix two runs: use a new "
                              "--out\n")


def test_a_check_named_twice_runs_once(tmp_path: Path) -> None:
    calls: list[str] = []

    def counted(case: Case) -> list[str]:
        calls.append(case.case_id)
        return ["no"]

    loaded = _loaded(tmp_path, [_scored("c1")])
    checks = [UserCheck("m:counted", counted)] * 2
    runner = Runner(loaded, ["tool_call_f1"], RunRecord(tmp_path / "run"), user_checks=checks)
    assert [check.name for check in runner.user_checks] == ["m:counted"]
    assert check_case(loaded.cases[0], ["tool_call_f1"], runner.user_checks) == [
        "check m:counted: no"]
    assert calls == ["c1"]


def _loaded(folder: Path, records: list[dict[str, Any]]) -> CaseSet:
    return load_cases(str(write_cases(folder, records)))


# --- 6. an empty gate or report output ------------------------------------------------------


def _finished_run(tmp_path: Path) -> Path:
    cases = write_cases(tmp_path, [_scored("c1")])
    out = tmp_path / "run"
    assert _run(cases, out)[0] == 0
    return out


@pytest.mark.parametrize("flag", ["--junit", "--markdown"])
def test_gate_refuses_an_empty_output_file(tmp_path: Path, flag: str) -> None:
    out = _finished_run(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text("max_evaluator_errors = 0\n")
    code, stdout, err = run("gate", str(out), "--policy", str(policy), flag, "")
    assert (code, stdout, err) == (
        4, "", f"tracebridge gate: {flag} is empty: give a file, or - for standard output\n")


def test_report_refuses_an_empty_output_file(tmp_path: Path) -> None:
    out = _finished_run(tmp_path)
    code, stdout, err = run("report", str(out), "-o", "")
    assert (code, stdout, err) == (
        4, "", "tracebridge report: -o is empty: give a file, or - for standard output\n")


# --- 7. an async check ----------------------------------------------------------------------


def test_an_async_check_is_refused_when_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _module(tmp_path, "s47_async", "async def coro(case):\n    return ['async']\n\n"
            "class Called:\n    async def __call__(self, case):\n        return []\n\n"
            "called = Called()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    cases = write_cases(tmp_path, [_scored("c1")])
    for name in ("coro", "called"):
        out = tmp_path / name
        code, stdout, err = _run(cases, out, "--checks", f"s47_async:{name}")
        assert (code, stdout, err) == (
            2, "", f"tracebridge run: --checks s47_async:{name}: {name} is an async function; "
            "a check is a plain function of the case returning a list of problems\n")
        assert not out.exists()


def test_a_check_returning_a_coroutine_is_a_reason_and_nothing_warns(tmp_path: Path) -> None:
    async def later(case: Case) -> list[str]:
        return []

    def returns_coroutine(case: Case) -> Any:
        return later(case)

    loaded = _loaded(tmp_path, [_scored("c1")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reasons = check_case(loaded.cases[0], ["tool_call_f1"],
                             [UserCheck("m:returns_coroutine", returns_coroutine)])
        gc.collect()
    assert reasons == ["check m:returns_coroutine returned coroutine; expected a list of "
                       "problems (strings)"]
    assert [str(warning.message) for warning in caught] == []


# --- 8. flag messages ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-1"])
def test_max_cost_must_be_a_finite_number_zero_or_more(tmp_path: Path, value: str) -> None:
    cases = write_cases(tmp_path, [_scored("c1")])
    code, stdout, err = _run(cases, tmp_path / "run", f"--max-cost={value}")
    shown = str(float(value))
    assert (code, stdout, err) == (
        2, "", f"tracebridge run: --max-cost must be a finite number, 0 or more, got {shown}\n")


def test_a_negative_zero_limit_reads_as_zero() -> None:
    assert dollars(-0.0, Fraction(0), Fraction(1, 1000)) == ("$0", "$0", "$0.001")


def test_a_negative_zero_cost_limit_reads_as_zero_in_the_refusal(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    cases = write_cases(tmp_path, [case("c1")])
    out = tmp_path / "run"
    code, _, err = run_cases(cases, out, server.base_url, "--max-cost", "-0.0",
                             "--price", "judge-model=1,1")
    assert code == 3
    assert "$-0" not in err
    assert summary(out)["stopped"].endswith("of the limit of $0 is left (--allow-partial "
                                            "starts it anyway)")
    assert server.requests == []


def test_two_prices_for_one_model_are_refused(tmp_path: Path) -> None:
    cases = write_cases(tmp_path, [_scored("c1")])
    code, stdout, err = _run(cases, tmp_path / "run", "--price", "m1=1,1", "--price",
                             "other=3,3", "--price", "m1 =2,2")
    assert (code, stdout, err) == (
        2, "", "tracebridge run: --price m1=1,1 and --price m1 =2,2 both price m1; give one "
        "price per model\n")
    assert not (tmp_path / "run").exists()


def test_a_directory_as_cache_is_told_to_be_a_directory(tmp_path: Path) -> None:
    cases = write_cases(tmp_path, [_scored("c1")])
    folder = tmp_path / "cachedir"
    folder.mkdir()
    code, stdout, err = run("run", str(cases), "--out", str(tmp_path / "run"), "--metric",
                            "tool_call_f1", "--cache", str(folder))
    assert (code, stdout, err) == (
        2, "", f"tracebridge run: cache {folder}: is a directory; give the path of a file\n")
    assert list(folder.iterdir()) == []
