"""Standard input named twice under two names (``- /dev/stdin``) is refused by ``sample``
before anything is read; an estimate of more dollars than a float holds is a cost unknown,
not an ``OverflowError``; ``gate``, ``calibrate`` and ``report`` write what a damaged run
directory holds (a metric name) with its control characters as escapes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import CALL, CHAT, run
from evaluation_helpers import case, goal, run_cases, summary, write_cases
from fake_openai_server import FakeOpenAI, Reply
from pydantic import BaseModel

from tracebridge.evaluation._estimate import Estimate, Price, estimate_chat

RECORDS = json.dumps(CHAT) + "\n" + json.dumps(CALL) + "\n"
ONCE = "it can be read only once; give it once"
LINUX_NAMES = pytest.mark.skipif(not os.path.exists("/proc/self/fd/0"),
                                 reason="/dev/fd/0 and /proc/self/fd/0 name standard input here")


def _sample(*argv: str, stdin: str | Path = RECORDS) -> tuple[int, str, str]:
    """``tracebridge sample *argv`` in a process of its own, its standard input a pipe
    holding ``stdin`` (or the file ``stdin``, as ``< FILE`` gives it)."""
    command = [sys.executable, "-m", "tracebridge", "sample", *argv, "--from", "openai_chat"]
    if isinstance(stdin, Path):
        with stdin.open("rb") as opened:
            done = subprocess.run(command, stdin=opened, capture_output=True, timeout=60)
    else:
        done = subprocess.run(command, input=stdin.encode(), capture_output=True, timeout=60)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


# --- 1. standard input named twice ----------------------------------------------------------


@LINUX_NAMES
@pytest.mark.parametrize(("files", "said"), [
    (["-", "/dev/stdin"], "- and /dev/stdin are both"),
    (["/dev/stdin", "/dev/fd/0"], "/dev/stdin and /dev/fd/0 are both"),
    (["-", "/proc/self/fd/0"], "- and /proc/self/fd/0 are both"),
    (["-", "/dev/stdin", "/dev/fd/0"], "-, /dev/stdin and /dev/fd/0 are all"),
])
def test_sample_refuses_standard_input_named_twice_before_reading_it(
    files: list[str], said: str
) -> None:
    """Before: every record written, then '/dev/stdin is empty', exit 2."""
    assert _sample(*files) == (
        2, "", f"tracebridge: {said} standard input, given as FILE: {ONCE}\n")


@LINUX_NAMES
@pytest.mark.parametrize(("argv", "references", "file"), [
    (["/dev/stdin", "--references", "-"], "-", "/dev/stdin"),
    (["-", "--references", "/proc/self/fd/0"], "/proc/self/fd/0", "-"),
])
def test_sample_refuses_standard_input_as_traces_and_references_under_two_names(
    argv: list[str], references: str, file: str
) -> None:
    assert _sample(*argv, stdin=json.dumps({"id": 1, "reference": "x"}) + "\n") == (
        2, "", f"tracebridge: --references {references} and FILE {file} both read standard "
        "input, which can be read only once; give a file for one\n")


@LINUX_NAMES
def test_a_file_standard_input_reads_is_read_again_under_another_name(tmp_path: Path) -> None:
    """``- /dev/stdin < FILE``: a regular file opens again from its start under another name,
    so both read it whole, as a file named twice is; and two names of the file, neither of
    them ``-``, are two files (4842363 refused both, saying it could be read only once)."""
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(CHAT) + "\n")
    os.link(traces, tmp_path / "hard.jsonl")
    for names in (["-", "/dev/stdin"], [str(traces), str(tmp_path / "hard.jsonl")]):
        code, out, err = _sample(*names, stdin=traces)
        assert (code, err) == (0, "")
        ids = [json.loads(line)["metadata"]["id"] for line in out.splitlines()]
        assert ids == [f"{name}:1" for name in names]


@LINUX_NAMES
def test_sample_refused_for_standard_input_named_twice_leaves_out_and_errors_alone(
    tmp_path: Path,
) -> None:
    out_path = tmp_path / "out.jsonl"
    out_path.write_text("old\n")
    code, out, err = _sample("-", "/dev/stdin", "-o", str(out_path),
                             "--errors", str(tmp_path / "errors.jsonl"))
    assert (code, out) == (2, "")
    assert err == f"tracebridge: - and /dev/stdin are both standard input, given as FILE: {ONCE}\n"
    assert [path.name for path in tmp_path.iterdir()] == ["out.jsonl"]
    assert out_path.read_text() == "old\n"


@LINUX_NAMES
def test_standard_input_under_another_name_once_is_read() -> None:
    code, out, err = _sample("/dev/stdin")
    assert (code, err) == (0, "")
    assert [json.loads(line)["metadata"] for line in out.splitlines()] == [{"id": 1}, {"id": 2}]


def test_a_file_besides_standard_input_is_read(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    traces.write_text(RECORDS)
    code, out, err = _sample("-", str(traces))
    assert (code, err) == (0, "")
    assert [json.loads(line)["metadata"]["id"] for line in out.splitlines()] == [
        "-:1", "-:2", f"{traces}:1", f"{traces}:2"]


# --- 2. an estimate of more dollars than a float holds --------------------------------------


class Verdict(BaseModel):
    """An answer the judge is asked for."""

    achieved: bool


ABSURD = Price(1.7e308, 1.7e308)
"""A price a float holds, at which a prompt of a million tokens costs more than one does."""


def _prompt(characters: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": "judge"}, {"role": "user", "content": "é" * characters}]


def test_an_estimate_of_more_dollars_than_a_float_holds_has_its_cost_unknown() -> None:
    """Before: OverflowError."""
    assert estimate_chat(_prompt(1_100_000), Verdict, ABSURD) == Estimate(
        1, 1_100_106, 13, None, overflow=True)


def test_an_estimate_a_float_holds_keeps_its_cost() -> None:
    assert estimate_chat(_prompt(1_050_000), Verdict, ABSURD) == Estimate(
        1, 1_050_106, 13, 1.7852023e308)


def _huge_case(tmp_path: Path) -> Path:
    """A case whose request is estimated at about 1.2 million tokens."""
    return write_cases(tmp_path, [case("c1", reference="é" * 1_200_000)])


def test_a_run_whose_estimate_is_more_dollars_than_a_float_holds_goes_on_without_a_limit(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """Before: exit 70 (OverflowError), summary.json left running, no request sent."""
    out = tmp_path / "run"
    server.add(Reply(content=goal(True), prompt_tokens=100, completion_tokens=20))
    code, stdout, err = run_cases(_huge_case(tmp_path), out, server.base_url,
                                  "--price", "judge-model=1.7e308,1.7e308")
    assert (code, err) == (0, "")
    assert stdout == (f"complete: 1 passed; judge: 1 request(s), 100 + 20 tokens, "
                      f"${2.04e304:.4f}; {out}/summary.json\n")  # 120 tokens at the price
    written = summary(out)
    assert (written["status"], written["cost"]) == ("complete", 2.04e304)
    assert len(server.requests) == 1


def test_a_run_whose_estimate_is_more_dollars_than_a_float_holds_is_refused_under_a_limit(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    """Before: exit 70 (OverflowError), summary.json left running."""
    out = tmp_path / "run"
    code, stdout, err = run_cases(_huge_case(tmp_path), out, server.base_url,
                                  "--price", "judge-model=1.7e308,1.7e308", "--max-cost", "1")
    reason = ("refused: the estimate does not fit the budget: the planned work costs more "
              "dollars than a number here holds (1 of 1 requests, at their price) and a cost "
              "limit is set (--allow-partial starts it anyway)")
    assert (code, err) == (3, f"tracebridge run: stopped: {reason}\n")
    assert stdout == (f"refused: 1 unrun; judge: 0 request(s), 0 + 0 tokens, $0.0000; "
                      f"{out}/summary.json\n")
    written = summary(out)
    assert (written["status"], written["stopped"], written["cost"]) == ("refused", reason, 0.0)
    assert server.requests == []


async def test_on_ray_a_request_of_more_dollars_than_a_float_holds_asks_for_no_lease() -> None:
    """Before: the worker asked the keeper for leases of no cost, none of which covered the
    request, without end."""
    from tracebridge.evaluation.budget import BudgetExhausted
    from tracebridge.metrics.base import Usage
    from tracebridge.ray_data._lease import Allowances, Lease, LeasingJudge, Limits

    limits = Limits(max_cost=1.0, prices=(("judge-model", ABSURD),))
    books = Allowances(limits, workers=1)
    asked: list[float] = []

    async def lease(tokens: int, cost: float) -> Lease | str:
        asked.append(cost)
        await asyncio.sleep(0)  # the keeper answers later, as an actor does
        return books.lease(tokens, cost)

    class Unused:
        async def ask(self, request: object) -> object:
            raise AssertionError("never asked")

    leasing = LeasingJudge(Unused(), limits, lease, "judge-model")  # type: ignore[arg-type]
    with pytest.raises(BudgetExhausted) as raised:
        await asyncio.wait_for(leasing.enter(_prompt(1_100_000), Verdict), 10)
    assert raised.value.reason == ("the next request may cost more dollars than a number "
                                   "here holds (estimated) and a cost limit is set")
    assert (asked, raised.value.usage) == ([], Usage())


async def test_on_ray_a_request_beyond_a_float_goes_ahead_without_a_cost_limit() -> None:
    """Only a request limit: the request is leased and sent, as outside Ray (before the review
    fix: refused, saying a cost limit was set)."""
    from tracebridge.ray_data._lease import Allowances, Lease, LeasingJudge, Limits

    limits = Limits(max_requests=5, prices=(("judge-model", ABSURD),))
    books = Allowances(limits, workers=1)

    async def lease(tokens: int, cost: float) -> Lease | str:
        await asyncio.sleep(0)
        return books.lease(tokens, cost)

    class Unused:
        async def ask(self, request: object) -> object:
            raise AssertionError("never asked")

    leasing = LeasingJudge(Unused(), limits, lease, "judge-model")  # type: ignore[arg-type]
    reservation = await asyncio.wait_for(leasing.enter(_prompt(1_100_000), Verdict), 10)
    assert reservation.estimate.overflow
    assert leasing.leased == Lease(2, 2 * 1_100_119, 0.0)  # a share of the 5 left


def test_without_a_cost_limit_the_keeper_leases_no_dollars() -> None:
    """16 requests at a price a float holds may cost past one (before: OverflowError)."""
    from tracebridge.ray_data._lease import Allowances, Lease, Limits

    books = Allowances(Limits(), workers=1)
    assert books.lease(10, 1.7e308) == Lease(16, 160, 0.0)


def test_a_gate_usage_error_is_one_line_with_its_words_escaped(tmp_path: Path) -> None:
    """Before: the control characters of the word went to the terminal as they were."""
    done = subprocess.run([sys.executable, "-m", "tracebridge", "gate", "run", "--policy", "p",
                           "--bad\nline\x1b[2J"], cwd=tmp_path, stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        4, b"", "tracebridge gate: error: unrecognized arguments: --bad\\nline\\u001b[2J\n")


# --- 3. gate, calibrate and report on a damaged run directory -------------------------------

EVIL = "evil\nFAKE LINE\x1b[2J"


def _damaged_run(tmp_path: Path, server: FakeOpenAI) -> Path:
    """A finished run whose cases.jsonl gives a value for a metric named ``EVIL`` that
    results.jsonl has no row for."""
    labelled = case("k1", human_adjudication={"goal_achieved": True, "reason": "checked"})
    out = tmp_path / "run"
    server.add(Reply(content=goal(True)))
    assert run_cases(write_cases(tmp_path, [labelled]), out, server.base_url)[0] == 0
    lines = (out / "cases.jsonl").read_text().splitlines()
    row = json.loads(lines[-1])
    row["values"][EVIL] = 1.0
    (out / "cases.jsonl").write_text("\n".join([*lines, json.dumps(row)]) + "\n")
    return out


@pytest.mark.parametrize("command", ["calibrate", "gate", "report"])
def test_a_damaged_run_directory_is_told_in_one_line_with_its_metric_name_escaped(
    tmp_path: Path, server: FakeOpenAI, command: str
) -> None:
    """Before: the metric name's newline and escape sequence were written as they are."""
    out = _damaged_run(tmp_path, server)
    policy = tmp_path / "policy.toml"
    policy.write_text("")
    extra = {"calibrate": [], "gate": ["--policy", str(policy)],
             "report": ["-o", str(tmp_path / "report.html")]}[command]
    assert run(command, str(out), *extra) == (4, "", (
        f"tracebridge {command}: {out}/results.jsonl has no result for case 'k1' and "
        "evil\\nFAKE LINE\\u001b[2J, which cases.jsonl (line 2) gives the value 1.0: the run "
        "directory is damaged (a file deleted, cut short or replaced); run again on it to redo "
        "what is missing, or use a new --out\n"))
