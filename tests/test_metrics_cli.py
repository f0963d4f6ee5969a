"""``tracebridge score``: the metrics CLI module, called directly and through the command."""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai_server import FakeOpenAI, Reply

from tracebridge import AIMessage, HumanMessage, MultiTurnSample, ToolCall, ToolMessage
from tracebridge.metrics.cli import configure, run

EXACT = MultiTurnSample(
    messages=[
        HumanMessage(content="weather in Paris?"),
        AIMessage(tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"}, id="c1")]),
        ToolMessage(content="18 C", tool_call_id="c1"),
        AIMessage(content="18 C"),
    ],
    reference_tool_calls=[ToolCall(name="get_weather", args={"city": "Paris"})],
)
HALF = EXACT.model_copy(
    update={"reference_tool_calls": [ToolCall(name="get_weather", args={"city": "Rome"}),
                                     ToolCall(name="get_uv", args={})]}
)


def dataset(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def score(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="tracebridge score")
    configure(parser)
    out, err = io.StringIO(), io.StringIO()
    code = run(parser.parse_args(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_scores_a_dataset_and_writes_one_result_per_line(tmp_path: Path) -> None:
    path = dataset(tmp_path, EXACT.model_dump_json(), "", HALF.model_dump_json())
    out_path = tmp_path / "scores.jsonl"
    code, out, err = score(
        str(path), "--metric", "tool_call_accuracy", "--metric", "tool_call_f1",
        "-o", str(out_path),
    )
    assert (code, err) == (0, "")
    assert out == (
        "metric              scored  unscorable  errors    mean     min     max\n"
        "tool_call_accuracy       2           0       0  0.5000  0.0000  1.0000\n"
        "tool_call_f1             2           0       0  0.5000  0.0000  1.0000\n"
    )
    rows = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [(r["line"], r["name"], r["value"]) for r in rows] == [
        (1, "tool_call_accuracy", 1.0),
        (1, "tool_call_f1", 1.0),
        (3, "tool_call_accuracy", 0.0),
        (3, "tool_call_f1", 0.0),
    ]
    assert rows[0]["transcript_hash"] == EXACT.transcript_hash()
    assert set(rows[0]) == {
        "line", "name", "value", "reason", "details", "error", "metric_version", "judge",
        "usage", "transcript_hash",
    }


def test_without_output_results_go_to_stdout_and_the_summary_to_stderr(tmp_path: Path) -> None:
    path = dataset(tmp_path, EXACT.model_dump_json())
    code, out, err = score(str(path), "-m", "tool_call_accuracy_unordered")
    assert code == 0
    [row] = [json.loads(line) for line in out.splitlines()]
    assert (row["name"], row["value"]) == ("tool_call_accuracy_unordered", 1.0)
    assert err.splitlines()[0].split() == [
        "metric", "scored", "unscorable", "errors", "mean", "min", "max"
    ]


def test_a_sample_without_a_reference_is_unscorable_not_a_failure(tmp_path: Path) -> None:
    bare = EXACT.model_copy(update={"reference_tool_calls": None})
    code, out, err = score(str(dataset(tmp_path, bare.model_dump_json())), "-m", "tool_call_f1")
    assert code == 0
    assert json.loads(out)["error"].startswith("the sample has no reference_tool_calls")
    # unscorable (the data lacks a reference) is counted apart from errors (a judge failed)
    assert err.splitlines()[1].split() == ["tool_call_f1", "0", "1", "0", "-", "-", "-"]


def test_judged_metrics_use_the_model_and_base_url(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.add(json.dumps({"user_goal": "g", "end_state": "e", "reason": "done", "achieved": True}))
    path = dataset(tmp_path, EXACT.model_dump_json())
    code, out, err = score(
        str(path), "-m", "agent_goal_accuracy_without_reference", "--model", "judge-model",
        "--base-url", server.base_url,
    )
    assert (code, err.splitlines()[1].split()[:3]) == (
        0, ["agent_goal_accuracy_without_reference", "1", "0"]
    )
    row = json.loads(out)
    assert (row["value"], row["reason"], row["judge"]) == (
        1.0, "done", f"judge-model @ {server.base_url}/"
    )
    assert row["usage"]["total_tokens"] == 120
    assert server.requests[0]["model"] == "judge-model"


def test_a_judge_failure_is_an_error_row_and_exit_3_counting_every_request_sent(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = dataset(tmp_path, EXACT.model_dump_json())
    code, out, err = score(
        str(path), "-m", "conversation_completeness", "--model", "m", "--base-url",
        server.base_url,
    )
    assert code == 3
    row = json.loads(out)
    assert row["error"] == (
        "the judge request failed: InternalServerError: Error code: 500 - no scripted reply left"
    )
    # the client retried the 500 twice on its own: three requests reached the server
    assert len(server.requests) == 3
    assert (row["usage"]["requests"], row["usage"]["requests_without_usage"]) == (3, 3)
    assert err.splitlines()[1].split() == [
        "conversation_completeness", "0", "0", "1", "-", "-", "-"
    ]
    assert err.splitlines()[2] == (
        "judge: 3 request(s) sent, retries included; 0 prompt + 0 completion tokens "
        "(3 request(s) reported no usage)"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-m", "role_adherence"],
         "tracebridge score: --model is required for judged metrics (role_adherence)\n"),
        (["-m", "role_adherence", "--model", "m"],
         "tracebridge score: set OPENAI_API_KEY to the API key (or use --api-key-env)\n"),
        (["-m", "tool_call_f1", "--max-concurrency", "0"],
         "tracebridge score: --max-concurrency must be 1 or more, got 0\n"),
    ],
)
def test_unusable_requests_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = dataset(tmp_path, EXACT.model_dump_json())
    assert score(str(path), *argv) == (2, "", message)


def test_bad_input_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    code, _, err = score(str(missing), "-m", "tool_call_f1")
    assert code == 2
    assert err.startswith(f"tracebridge score: cannot read {missing}: [Errno 2]")

    empty = dataset(tmp_path)
    assert score(str(empty), "-m", "tool_call_f1") == (
        2, "", f"tracebridge score: {empty} holds no samples: expected one MultiTurnSample "
        "JSON per line\n"
    )

    broken_json = dataset(tmp_path, EXACT.model_dump_json(), '{"messages": [')
    code, _, err = score(str(broken_json), "-m", "tool_call_f1")
    assert code == 2
    assert err.startswith(f"tracebridge score: {broken_json}: line 2: not valid JSON: ")


def test_invalid_samples_exit_1_and_say_where(tmp_path: Path) -> None:
    orphan = {"messages": [{"type": "human", "content": "hi"},
                           {"type": "tool", "content": "18 C", "tool_call_id": "x"}]}
    path = dataset(tmp_path, json.dumps(orphan))
    code, out, err = score(str(path), "-m", "tool_call_f1")
    assert (code, out) == (1, "")
    assert err.startswith(f"tracebridge score: invalid sample: {path}: line 1: messages[1]")
    assert err.endswith("[orphan_tool_result]\n")

    wrong_field = {"messages": [{"type": "human", "content": "hi"}], "reference_topics": "x"}
    path = dataset(tmp_path, json.dumps(wrong_field))
    assert score(str(path), "-m", "tool_call_f1") == (
        1, "", f"tracebridge score: invalid sample: {path}: line 1: reference_topics: Input "
        "should be a valid list (got str 'x') [malformed_event]\n"
    )


def test_an_unknown_metric_is_refused_by_the_parser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        score(str(dataset(tmp_path, EXACT.model_dump_json())), "-m", "bleu")
    assert exited.value.code == 2
    assert "invalid choice: 'bleu'" in capsys.readouterr().err


def test_python_m_tracebridge_score(tmp_path: Path) -> None:
    path = dataset(tmp_path, EXACT.model_dump_json(), HALF.model_dump_json())
    out_path = tmp_path / "scores.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "tracebridge", "score", str(path), "-m", "tool_call_accuracy",
         "-o", str(out_path)],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[1].split() == [
        "tool_call_accuracy", "2", "0", "0", "0.5000", "0.0000", "1.0000"
    ]
    assert len(out_path.read_text().splitlines()) == 2

    bad = dataset(tmp_path, "[1, 2")
    done = subprocess.run(
        [sys.executable, "-m", "tracebridge", "score", str(bad), "-m", "tool_call_f1"],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("tracebridge score: ")


def test_every_metric_name_is_documented() -> None:
    from tracebridge.metrics.cli import DETERMINISTIC, JUDGED

    docs = (Path(__file__).parents[1] / "docs" / "metrics.md").read_text(encoding="utf-8")
    missing = [name for name in [*DETERMINISTIC, *JUDGED] if f"`{name}`" not in docs]
    assert missing == []


# --- streaming, interruption, what the summary separates -------------------------------------


def test_samples_are_read_from_standard_input(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser(prog="tracebridge score")
    configure(parser)
    out, err = io.StringIO(), io.StringIO()
    stdin = io.StringIO(EXACT.model_dump_json() + "\n" + HALF.model_dump_json() + "\n")
    code = run(parser.parse_args(["-", "-m", "tool_call_f1"]), stdin=stdin, stdout=out,
               stderr=err)
    assert code == 0
    assert [json.loads(line)["value"] for line in out.getvalue().splitlines()] == [1.0, 0.0]


def test_a_json_array_of_samples_is_a_dataset_too(tmp_path: Path) -> None:
    path = tmp_path / "samples.json"
    path.write_text("[" + EXACT.model_dump_json() + ",\n" + HALF.model_dump_json() + "]",
                    encoding="utf-8")
    code, out, _ = score(str(path), "-m", "tool_call_f1")
    assert code == 0
    assert [(r["line"], r["value"]) for r in map(json.loads, out.splitlines())] == [
        (1, 1.0), (2, 0.0)
    ]


def test_keep_going_skips_an_invalid_sample_and_exits_1(tmp_path: Path) -> None:
    orphan = {"messages": [{"type": "human", "content": "hi"},
                           {"type": "tool", "content": "18 C", "tool_call_id": "x"}]}
    path = dataset(tmp_path, EXACT.model_dump_json(), json.dumps(orphan), "{oops",
                   HALF.model_dump_json())
    code, out, err = score(str(path), "-m", "tool_call_f1", "--keep-going")
    assert code == 1
    assert [json.loads(line)["line"] for line in out.splitlines()] == [1, 4]
    lines = err.splitlines()
    assert lines[0].startswith(f"tracebridge score: invalid sample: {path}: line 2: messages[1]")
    assert lines[1].startswith(f"tracebridge score: {path}: line 3: not valid JSON: ")
    assert lines[-1] == "2 invalid sample(s) skipped"


def test_without_keep_going_an_invalid_sample_stops_after_what_was_scored(tmp_path: Path) -> None:
    path = dataset(tmp_path, EXACT.model_dump_json(), "{oops", HALF.model_dump_json())
    code, out, err = score(str(path), "-m", "tool_call_f1")
    assert code == 2
    assert [json.loads(line)["line"] for line in out.splitlines()] == [1]
    assert err.splitlines()[0].startswith(f"tracebridge score: {path}: line 2: not valid JSON")


def test_a_judged_metric_without_its_reference_is_unscorable_and_sends_nothing(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = dataset(tmp_path, EXACT.model_dump_json())
    code, out, err = score(str(path), "-m", "agent_goal_accuracy_with_reference", "--model",
                           "m", "--base-url", server.base_url)
    assert code == 0
    assert json.loads(out)["error"] == (
        "the sample has no reference (the expected outcome, in words)"
    )
    assert err.splitlines()[1].split() == [
        "agent_goal_accuracy_with_reference", "0", "1", "0", "-", "-", "-"
    ]
    assert server.requests == []


def test_retried_requests_that_end_in_an_answer_are_counted(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.add(Reply(status=500),
               json.dumps({"user_goal": "g", "end_state": "e", "reason": "ok", "achieved": True}))
    path = dataset(tmp_path, EXACT.model_dump_json())
    code, out, err = score(str(path), "-m", "agent_goal_accuracy_without_reference", "--model",
                           "m", "--base-url", server.base_url)
    assert code == 0
    usage = json.loads(out)["usage"]
    assert len(server.requests) == 2
    assert (usage["requests"], usage["requests_without_usage"], usage["prompt_tokens"]) == (
        2, 1, 100
    )
    assert err.splitlines()[-1] == (
        "judge: 2 request(s) sent, retries included; 100 prompt + 20 completion tokens "
        "(1 request(s) reported no usage)"
    )


def test_ctrl_c_keeps_every_result_written_so_far(tmp_path: Path, server: FakeOpenAI) -> None:
    verdict = json.dumps({"user_goal": "g", "end_state": "e", "reason": "ok", "achieved": True})
    server.add(verdict, Reply(content=verdict, sleep=60))  # the second sample never answers
    path = dataset(tmp_path, EXACT.model_dump_json(), HALF.model_dump_json())
    out_path = tmp_path / "scores.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    process = subprocess.Popen(
        [sys.executable, "-m", "tracebridge", "score", str(path), "-m",
         "agent_goal_accuracy_without_reference", "--model", "m", "--base-url",
         server.base_url, "--max-concurrency", "1", "-o", str(out_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        # Ctrl-C reaches the command as it would from a terminal, even where this test
        # runs as a background job (which starts with SIGINT ignored, and passes that on).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    # written and flushed while the run goes on: the first result is there before the end
    while not (out_path.exists() and out_path.read_text().count("\n") == 1):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no result was written"
        time.sleep(0.05)
    while len(server.requests) < 2:
        assert time.monotonic() < deadline, "the second request was never sent"
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert (process.returncode, stdout) == (130, "")
    assert stderr == f"tracebridge score: interrupted; 1 result(s) written to {out_path}\n"
    [row] = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert (row["line"], row["value"]) == (1, 1.0)


def test_a_bare_conversation_is_not_a_sample_and_the_error_says_how_to_make_one(
    tmp_path: Path,
) -> None:
    path = dataset(tmp_path, json.dumps([{"type": "human", "content": "hi"}]))
    assert score(str(path), "-m", "tool_call_f1") == (
        1, "", f"tracebridge score: invalid sample: {path}: line 1: expected a MultiTurnSample "
        "object, got a list; make samples from traces with: tracebridge sample FILE "
        "[--references REFS.jsonl]\n"
    )
