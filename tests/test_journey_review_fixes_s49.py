"""The seams between commands, once more: ``convert`` says OUT's line numbers are not FILE's
whenever a record moved (after a blank line as after a failed record); a case does not take
``allow_pending`` (its conversation must be complete) and a case cut mid-tool is not told to
set it; the hint about spans of several conversations says to name the format too when the
case did not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import CALL, CHAT, run
from evaluation_helpers import goal, run_cases, states, write_cases
from fake_openai_server import FakeOpenAI
from test_journey_fixes_s49 import ORPHAN, ORPHANED, TWO_SESSIONS

from tracebridge.evaluation.cases import load_cases
from tracebridge.messages import AIMessage, HumanMessage

PENDING = [{"role": "user", "content": "hi"},
           {"role": "assistant", "content": None, "tool_calls": [
               {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
"""A Chat Completions conversation cut mid-tool."""


def _notice(out: str, file: str, number: str = "line number") -> str:
    left_out = ("element for a failed record" if number == "element number"
                else "line for a failed record or a blank line")
    return (f"tracebridge: {out} has no {left_out} of {file}: a record after one has another "
            f"{number} there than in {file}, so ids by {number} (as sample --references "
            f"matches them) do not carry over; run sample on {file}")


def _ids(samples: str) -> list[Any]:
    return [json.loads(line)["metadata"]["id"] for line in samples.splitlines()]


# --- convert: a record at another line of OUT than of FILE -----------------------------------


def test_a_blank_line_before_a_record_gives_the_notice(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps(CHAT) + "\n\n" + json.dumps(CALL) + "\n")
    out = tmp_path / "out.jsonl"
    code, stdout, err = run("convert", str(traces), "--from", "openai_chat", "--to",
                            "openai_chat", "-o", str(out))
    assert (code, stdout) == (0, "")
    assert err.splitlines() == [_notice(str(out), str(traces))]
    # what the notice is about: sample numbers FILE's records 1 and 3, OUT's 1 and 2
    assert _ids(run("sample", "--from", "openai_chat", str(traces))[1]) == [1, 3]
    assert _ids(run("sample", "--from", "openai_chat", str(out))[1]) == [1, 2]


def test_a_line_of_spaces_before_a_record_gives_the_notice() -> None:
    code, stdout, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                            "--keep-going",
                            stdin=json.dumps(CHAT) + "\n  \t\n" + json.dumps(CALL) + "\n")
    assert code == 0
    assert [json.loads(line) for line in stdout.splitlines()] == [CHAT, CALL]
    assert err.splitlines() == ["2 ok, 0 failed",
                                _notice("standard output", "standard input")]


def test_blank_lines_before_a_single_document_give_the_notice(tmp_path: Path) -> None:
    """``sample`` gives a document of its own the line it starts on: 3 here, 1 in OUT."""
    trace = tmp_path / "one.json"
    trace.write_text("\n\n" + json.dumps(CHAT) + "\n")
    code, stdout, err = run("convert", str(trace), "--from", "openai_chat", "--to",
                            "openai_chat")
    assert code == 0
    assert json.loads(stdout) == CHAT
    assert err.splitlines() == [_notice("standard output", str(trace))]


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(CHAT) + "\n" + json.dumps(CALL) + "\n\n\n",  # blank lines after the last
        json.dumps(CHAT) + "\n" + json.dumps(CALL),  # no newline at the end
    ],
)
def test_no_notice_when_every_record_keeps_its_line(text: str) -> None:
    code, stdout, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                            "--keep-going", stdin=text)
    assert code == 0
    assert [json.loads(line) for line in stdout.splitlines()] == [CHAT, CALL]
    assert err == "2 ok, 0 failed\n"


def test_a_failed_record_and_a_blank_line_give_one_notice() -> None:
    code, stdout, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                            "--keep-going",
                            stdin=json.dumps(ORPHAN) + "\n\n" + json.dumps(CHAT) + "\n")
    assert code == 1
    assert [json.loads(line) for line in stdout.splitlines()] == [CHAT]
    assert err.splitlines() == [f"tracebridge: -: line 1: {ORPHANED}", "1 ok, 1 failed",
                                _notice("standard output", "standard input")]


def test_an_array_notice_names_element_numbers() -> None:
    code, stdout, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                            "--keep-going", stdin=json.dumps([ORPHAN, CHAT], indent=2))
    assert code == 1
    assert json.loads(stdout) == [CHAT]
    assert err.splitlines() == [f"tracebridge: -: element 1 (line 2): {ORPHANED}",
                                "1 ok, 1 failed",
                                _notice("standard output", "standard input", "element number")]


def test_an_array_over_several_lines_keeps_its_element_numbers() -> None:
    """An array's records are numbered by element: the lines they stand on do not count."""
    code, stdout, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                            stdin="\n\n" + json.dumps([CHAT, CALL], indent=2))
    assert code == 0
    assert json.loads(stdout) == [CHAT, CALL]
    assert err == ""


# --- a case does not take allow_pending ------------------------------------------------------


def _case(case_id: str, transcript: Any, **fields: Any) -> dict[str, Any]:
    return {"case_id": case_id, "transcript": transcript, "reference": "The user's request "
            "is done.", "reference_version": "v1", **fields}


@pytest.mark.parametrize("value", [True, False])
def test_allow_pending_in_source_options_is_a_bad_case_record(
    tmp_path: Path, server: FakeOpenAI, value: bool
) -> None:
    path = write_cases(tmp_path, [_case("p", PENDING, source="openai_chat",
                                        source_options={"allow_pending": value})])
    code, _, err = run_cases(path, tmp_path / "run", server.base_url)
    assert code == 1
    assert err.splitlines() == [
        f"tracebridge run: {path}: line 1 (case p): source_options: allow_pending is not a "
        "case option: a case's conversation must be complete (one cut mid-tool is blocked by "
        "the conversation rules)",
        "tracebridge run: 1 bad case record(s); nothing ran"]
    assert not (tmp_path / "run").exists()
    assert server.requests == []


def test_the_options_a_case_is_told_leave_out_allow_pending(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [
        _case("o", TWO_SESSIONS, source="otel", source_options={"sesion_id": "s-2"}),
        _case("c", CHAT, source="openai_chat", source_options={"drop": True})])
    code, _, err = run_cases(path, tmp_path / "run", server.base_url)
    assert code == 1
    assert err.splitlines() == [
        f"tracebridge run: {path}: line 1 (case o): source_options: 'sesion_id' is not an "
        "option of otel; it takes: trace_id, session_id, span_id",
        f"tracebridge run: {path}: line 2 (case c): source_options: 'drop' is not an option "
        "of openai_chat; it takes: none (this format takes no options)",
        "tracebridge run: 2 bad case record(s); nothing ran"]


def test_a_case_cut_mid_tool_is_blocked_without_advice_it_cannot_follow(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [_case("p", PENDING, source="openai_chat")])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 0
    assert err == (
        f"tracebridge run: {path}: line 1 (case p): the transcript cannot be used: "
        "openai_chat: messages[1].tool_calls[0]: tool call 'f' (id 'c1') has no result before "
        "the conversation ends [unanswered_tool_call]; the case is blocked\n")
    assert states(out) == {"p": "blocked"}
    assert server.requests == []


def test_a_detected_format_cut_mid_tool_has_no_allow_pending_hint(tmp_path: Path) -> None:
    path = write_cases(tmp_path, [_case("p", PENDING)])
    [loaded] = load_cases(str(path)).cases
    error = loaded.transcript_error
    assert error is not None
    assert (type(error).__name__, error.code, error.index, error.path, error.source) == (
        "TraceError", "unanswered_tool_call", 1, "messages[1].tool_calls[0]", "openai_chat")
    assert error.detail == ("tool call 'f' (id 'c1') has no result before the conversation "
                            "ends")


# --- the filter hint of a case whose format was told from its shape ------------------------


def test_spans_of_a_detected_format_are_told_to_name_it_with_the_filter(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    path = write_cases(tmp_path, [_case("a", TWO_SESSIONS)])
    out = tmp_path / "run"
    code, _, err = run_cases(path, out, server.base_url)
    assert code == 0
    assert err.endswith(
        "session_id=s-2; a case gives the filter as source_options and names its format, "
        '"source": "otel", such as {"trace_id": "..."} [ambiguous_trace]; the case is '
        "blocked\n")
    assert err.count("\n") == 1
    assert states(out) == {"a": "blocked"}


def test_following_the_hint_of_a_detected_format_reads_one_conversation(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    server.add(goal(True))
    path = write_cases(tmp_path, [_case("a", TWO_SESSIONS, source="otel", source_options={
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"})])
    [loaded] = load_cases(str(path)).cases
    assert loaded.messages == [HumanMessage(content="Close my account."),
                               AIMessage(content="Your account is closed.")]
    code, _, err = run_cases(path, tmp_path / "run", server.base_url)
    assert (code, err) == (0, "")
    assert states(tmp_path / "run") == {"a": "passed"}
