"""tracebridge run: an unusable flag is told before the case file is read; a resume with
another set of metrics is refused naming the flag."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run
from evaluation_helpers import write_cases

_BOGUS = {"case_id": "a", "transcript": [{"role": "human", "content": "hi"}], "bogus": 1}
_ORPHAN = {"case_id": "b", "transcript": [{"role": "human", "content": "hi"},
                                          {"role": "tool", "call_id": "x", "content": "r"}]}


def _run(cases: Path, out: Path, *flags: str) -> tuple[int, str, str]:
    return run("run", str(cases), "--out", str(out), "--metric", "tool_call_f1", "--no-cache",
               *flags)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--concurrency", "0"), "--concurrency must be 1 or more, got 0"),
        (("--retries", "-1"), "--retries must be 0 or more, got -1"),
        (("--timeout", "0"), "--timeout must be a finite number more than 0, got 0.0"),
        (("--pass-threshold", "1.5"), "--pass-threshold must be from 0 to 1, got 1.5"),
        (("--max-requests", "-1"), "--max-requests must be 0 or more, got -1"),
        (("--max-tokens", "-5"), "--max-tokens must be 0 or more, got -5"),
        (("--max-cost", "nan"), "--max-cost must be a finite number, 0 or more, got nan"),
        (("--metric", "role_adherence"), "--model is required for judged metrics (role_adherence)"),
        (("--metric", "role_adherence", "--model", "m", "--api-key-env", "TB_TEST_NO_SUCH_KEY"),
         "set TB_TEST_NO_SUCH_KEY to the API key (or use --api-key-env)"),
        (("--metric", "role_adherence", "--model", "m", "--base-url", "http://127.0.0.1:9",
          "--max-cost", "1", "--price", "other=1,2"),
         "a cost limit needs the price of the judge model m: give it as m=INPUT,OUTPUT "
         "(dollars per million tokens)"),
    ],
)
@pytest.mark.parametrize("record", [_BOGUS, _ORPHAN], ids=["bad record", "blocked transcript"])
def test_an_unusable_flag_is_told_before_the_case_file_is_read(
    tmp_path: Path, flags: tuple[str, ...], message: str, record: dict[str, object]
) -> None:
    cases = write_cases(tmp_path, [record])
    out = tmp_path / "run"
    code, stdout, err = _run(cases, out, *flags)
    assert (code, stdout, err) == (2, "", f"tracebridge run: {message}\n")
    assert not out.exists()


def test_a_resume_with_another_set_of_metrics_is_refused_naming_the_flag(
    tmp_path: Path,
) -> None:
    cases = write_cases(tmp_path, [{"case_id": "a", "transcript": [
        {"role": "human", "content": "hi"}, {"role": "ai", "content": "hello"}]}])
    out = tmp_path / "run"
    assert _run(cases, out)[0] == 0
    code, stdout, err = _run(cases, out, "--metric", "tool_call_accuracy")
    assert (code, stdout, err) == (
        2, "", f"tracebridge run: {out} holds a run with another set of metrics (--metric) or "
        "metric versions; resuming would mix two runs: use a new --out\n")
