"""--keep-going, --errors, all-or-nothing output files, detection once per file, interruptions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import CALL, CHAT, run

ORPHAN = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "?"}]
MIXED = "\n".join([json.dumps(CHAT), json.dumps(CALL), "{oops", json.dumps(ORPHAN),
                   json.dumps(CALL)]) + "\n"


NOT_JSON = ("-: line 3: not valid JSON: Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)")
ORPHANED = ("-: line 4: invalid trace: openai_chat: messages[1].tool_call_id: tool result "
            "answers nothing: no AIMessage comes before it [orphan_tool_result]")


def test_keep_going_writes_every_good_record_and_reports_each_bad_one(tmp_path: Path) -> None:
    errors = tmp_path / "errors.jsonl"
    code, out, err = run("convert", "-", "--to", "openai_chat", "--keep-going",
                         "--errors", str(errors), stdin=MIXED)
    assert code == 1
    assert [json.loads(line) for line in out.splitlines()] == [CHAT, CALL, CALL]
    assert err.splitlines() == [
        "tracebridge: reading - as openai_chat (told from its first 4 records; --from to choose)",
        f"tracebridge: {NOT_JSON}",
        f"tracebridge: {ORPHANED}",
        "3 ok, 2 failed",
        "tracebridge: standard output has no line for a failed record or a blank line of "
        "standard input: a record after one has another line number there than in standard input, "
        "so ids by line number (as sample "
        "--references matches them) do not carry over; run sample on standard input",
    ]
    assert [json.loads(line) for line in errors.read_text().splitlines()] == [
        {"file": "-", "line": 3, "code": "not_json", "index": None, "path": None, "source": None,
         "message": NOT_JSON.split(": line 3: ")[1]},
        {"file": "-", "line": 4, "code": "orphan_tool_result", "index": 1,
         "path": "messages[1].tool_call_id", "source": "openai_chat",
         "message": ORPHANED.split("invalid trace: ")[1]},
    ]


def test_keep_going_with_nothing_wrong_exits_0_with_the_count() -> None:
    code, _, err = run("validate", "-", "--from", "openai_chat", "--keep-going",
                       stdin=json.dumps(CHAT) + "\n" + json.dumps(CALL) + "\n")
    assert (code, err) == (0, "2 ok, 0 failed\n")


def test_validate_and_show_keep_going() -> None:
    code, out, err = run("validate", "-", "--from", "openai_chat", "--keep-going", stdin=MIXED)
    assert code == 1
    assert out.splitlines() == [
        "line 1: ok: 2 messages (openai_chat)",
        "line 2: ok: 4 messages (openai_chat)",
        "line 4: invalid: orphan_tool_result at messages[1].tool_call_id: openai_chat: "
        "messages[1].tool_call_id: tool result answers nothing: no AIMessage comes before it "
        "[orphan_tool_result]",
        "line 5: ok: 4 messages (openai_chat)",
    ]
    assert err.splitlines() == [f"tracebridge: {NOT_JSON}", "3 ok, 2 failed"]
    code, out, err = run("show", "-", "--from", "openai_chat", "--keep-going", stdin=MIXED)
    assert code == 1
    assert [line for line in out.splitlines() if line.startswith("#")] == [
        "# line 1", "# line 2", "# line 5"
    ]
    assert err.splitlines()[-1] == "3 ok, 2 failed"


def test_without_keep_going_the_output_file_is_all_or_nothing(tmp_path: Path) -> None:
    out_path = tmp_path / "out.jsonl"
    out_path.write_text("what was there before\n", encoding="utf-8")
    bad = "\n".join([json.dumps(CHAT), json.dumps(ORPHAN), json.dumps(CHAT)]) + "\n"
    code, out, err = run("convert", "-", "--from", "openai_chat", "--to", "tracebridge",
                         "-o", str(out_path), stdin=bad)
    assert (code, out) == (1, "")
    assert err.startswith("tracebridge: -: line 2: invalid trace: openai_chat: ")
    assert out_path.read_text(encoding="utf-8") == "what was there before\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]  # no temporary left

    good = json.dumps(CHAT) + "\n" + json.dumps(CALL) + "\n"
    assert run("convert", "-", "--from", "openai_chat", "--to", "openai_chat", "-o",
               str(out_path), stdin=good) == (0, "", "")
    assert [json.loads(line) for line in out_path.read_text().splitlines()] == [CHAT, CALL]
    umask = os.umask(0)
    os.umask(umask)
    assert out_path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_without_keep_going_errors_file_holds_the_failure_that_stopped_the_run(
    tmp_path: Path,
) -> None:
    errors = tmp_path / "errors.jsonl"
    code, out, err = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                         "--errors", str(errors), stdin=MIXED)
    assert (code, err) == (2, f"tracebridge: {NOT_JSON}\n")
    assert [json.loads(line) for line in out.splitlines()] == [CHAT, CALL]
    assert [json.loads(line) for line in errors.read_text().splitlines()] == [
        {"file": "-", "line": 3, "code": "not_json", "index": None, "path": None, "source": None,
         "message": NOT_JSON.split(": line 3: ")[1]},
    ]


def test_with_keep_going_the_output_file_holds_the_good_records(tmp_path: Path) -> None:
    out_path = tmp_path / "out.jsonl"
    code, _, _ = run("convert", "-", "--from", "openai_chat", "--to", "openai_chat",
                     "--keep-going", "-o", str(out_path), stdin=MIXED)
    assert code == 1
    assert [json.loads(line) for line in out_path.read_text().splitlines()] == [CHAT, CALL, CALL]


def test_an_interrupted_conversion_leaves_no_output_file(tmp_path: Path) -> None:
    out_path = tmp_path / "out.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "tracebridge", "convert", "-", "--from", "openai_chat", "--to",
         "langchain", "-o", str(out_path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # Ctrl-C reaches the command as it would from a terminal, even where this test
        # runs as a background job (which starts with SIGINT ignored, and passes that on).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdin is not None
    process.stdin.write(json.dumps(CHAT) + "\n" + json.dumps(CALL) + "\n")
    process.stdin.flush()  # and keep stdin open: the command waits for more
    deadline = time.monotonic() + 30
    while not any(p.name.endswith(".partial") for p in tmp_path.iterdir()):
        assert time.monotonic() < deadline, "the command never started writing"
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert (process.returncode, err) == (130, "tracebridge: interrupted\n")
    assert list(tmp_path.iterdir()) == []


def test_a_closed_pipe_ends_the_command_quietly() -> None:
    done = subprocess.run(
        f"{sys.executable} -m tracebridge formats | head -1", shell=True, capture_output=True,
        text=True, timeout=60,
    )
    assert done.stdout.startswith("tracebridge ")
    assert done.stderr == ""
    many = json.dumps(CHAT) + "\n"
    done = subprocess.run(
        f"{sys.executable} -m tracebridge show - --from openai_chat | head -1; "
        f"echo ${{PIPESTATUS[0]}}",
        shell=True, executable="/bin/bash", input=many * 20000, capture_output=True,
        text=True, timeout=120,
    )
    assert (done.stdout, done.stderr) == ("# line 1\n141\n", "")


# --- detection, once per file ------------------------------------------------------------------


def test_a_plain_chat_file_is_told_once_from_its_first_records() -> None:
    lines = [json.dumps(CHAT)] * 3 + [json.dumps(CALL)]
    code, out, err = run("validate", "-", stdin="\n".join(lines) + "\n")
    assert code == 0
    assert err == ("tracebridge: reading - as openai_chat (told from its first 4 records; "
                   "--from to choose)\n")
    assert out.splitlines()[-1] == "line 4: ok: 4 messages (openai_chat)"


def test_a_file_of_two_formats_is_refused_naming_both_lines() -> None:
    pairs = [{"input": "hi", "actual_output": "hello"}]
    assert run("validate", "-", stdin=json.dumps(CALL) + "\n" + json.dumps(pairs) + "\n") == (
        2, "", "tracebridge: -: line 1 has the shape of openai_chat, line 2 of galtea; one "
        "file holds one format: pass --from FORMAT\n"
    )


def test_an_undetectable_first_record_names_its_line() -> None:
    code, _, err = run("validate", "-", stdin='{"x": 1}\n{"y": 2}\n')
    assert code == 2
    assert err == ("tracebridge: -: line 1: cannot tell the format of this dict: it matches none "
                   "of tracebridge, openai_chat, swarm, langchain, llama_index, galtea, "
                   "openai_responses, openai_agents, otel, llama_index_events; "
                   "pass --from FORMAT\n")


def test_records_that_cannot_be_read_do_not_decide_the_format() -> None:
    code, out, err = run("validate", "-", "--keep-going",
                         stdin="{broken\n" + json.dumps(CALL) + "\n")
    assert code == 1
    assert out == "line 2: ok: 4 messages (openai_chat)\n"
    assert err.splitlines()[0] == ("tracebridge: reading - as openai_chat (told from line 2; "
                                   "--from to choose)")


# --- LlamaIndex event streams --------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
EVENT_FILES = sorted(p for p in (ROOT / "golden_traces" / "llama_index").glob("*.json")
                     if "events" in json.loads(p.read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", EVENT_FILES, ids=lambda p: p.stem)
def test_llama_index_event_streams_are_read_from_the_command_line(path: Path) -> None:
    expected = json.loads(path.read_text(encoding="utf-8"))["expected_events"]
    for told in ([], ["--from", "llama_index_events"]):
        code, out, err = run("convert", str(path), "--at", "events", *told, "--to",
                             "tracebridge")
        assert code == 0, err
        assert json.loads(out) == expected
    assert err == ""


def test_an_invalid_event_stream_says_which_event() -> None:
    path = ROOT / "golden_traces" / "llama_index" / "invalid" / "unknown_event_type.json"
    code, out, err = run("validate", str(path), "--at", "events", "--from", "llama_index_events")
    assert code == 1
    assert out.startswith("invalid: unknown_role at events[3].event: llama_index: ")
    assert err == ""
