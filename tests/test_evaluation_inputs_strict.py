"""Evaluation inputs that would make a gate pass or a count wrong are refused.

A policy's counts and switches were read in pydantic's lax mode: ``max_unrun = true`` was a
limit of 1 and the gate passed a run with a case unrun. ``--pass-threshold nan`` passed every
case (no value is below NaN). A slice named ``(all)`` or ``(no slice)`` took the place of the
calibration row of every case, or of cases without a slice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run
from evaluation_helpers import case, write_cases

from tracebridge.evaluation.cases import CaseFileError, load_cases
from tracebridge.evaluation.policy import PolicyError, load_policy
from tracebridge.evaluation.record import RunRecord
from tracebridge.evaluation.runner import Runner, RunSettings, UsageError


@pytest.mark.parametrize(("text", "field"), [
    ("max_unrun = true", "max_unrun"),
    ("max_evaluator_errors = false", "max_evaluator_errors"),
    ("review_blocks = 1", "review_blocks"),
    ("max_cost = true", "max_cost"),
    ("max_cost = nan", "max_cost"),
    ("[slices.tickets]\nmax_failures = true", "slices.tickets.max_failures"),
])
def test_a_policy_value_of_another_type_is_refused(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(PolicyError) as caught:
        load_policy(str(path))
    assert str(caught.value).startswith(f"{path}: {field}: ")


def test_a_policy_of_the_right_types_is_read(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text('max_unrun = 1\nreview_blocks = false\nmax_cost = 2\n'
                    'required_controls = ["positive"]\n[slices.tickets]\nmax_failures = 0\n',
                    encoding="utf-8")
    policy = load_policy(str(path))
    assert (policy.max_unrun, policy.review_blocks, policy.max_cost) == (1, False, 2.0)
    assert policy.slices["tickets"].max_failures == 0


@pytest.mark.parametrize("threshold", [float("nan"), -0.1, 1.5])
def test_a_pass_threshold_outside_zero_to_one_is_refused(tmp_path: Path, threshold: float) -> None:
    cases = load_cases(str(write_cases(tmp_path, [case("a")])))
    with pytest.raises(UsageError, match="pass_threshold must be from 0 to 1"):
        Runner(cases, ["tool_call_accuracy"], RunRecord(str(tmp_path / "run")),
               settings=RunSettings(pass_threshold=threshold))


def test_the_command_refuses_a_nan_pass_threshold(tmp_path: Path) -> None:
    path = write_cases(tmp_path, [case("a")])
    code, _, err = run("run", str(path), "--out", str(tmp_path / "run"), "--metric",
                       "tool_call_accuracy", "--no-cache", "--pass-threshold", "nan")
    assert (code, err) == (2, "tracebridge run: --pass-threshold must be from 0 to 1, got nan\n")


@pytest.mark.parametrize("name", ["(all)", "(no slice)"])
def test_a_slice_named_as_a_calibration_row_is_refused(tmp_path: Path, name: str) -> None:
    path = write_cases(tmp_path, [case("a", slice=name)])
    with pytest.raises(CaseFileError) as caught:
        load_cases(str(path))
    assert "names the calibration row" in str(caught.value)
    # the same case under another slice name is read
    assert load_cases(str(write_cases(tmp_path, [case("a", slice="x")]))).cases[0].case.slice == "x"
