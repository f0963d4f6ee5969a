"""The command line, s42.

1. ``sample``: a document whose ``id`` is neither a string nor a whole number (``3.0``,
   ``true``, an object) took its line number as id, without a word, and so another trace's
   reference. It is refused now, exit 2, as ``--id PATH`` and the references file refuse it;
   only an absent or ``null`` ``id`` falls back to the number.
2. A standard error that is closed (``2>&-``) or full (``2>/dev/full``) made a valid input
   exit 1 with no output (the notice raised, and so did the error line after it), and every
   error exit 1. What is said on stderr is now said if it can be; the run and its exit status
   are as they would have been.
3. ``sample --allow-pending`` (and ``convert SAMPLE --to tracebridge --allow-pending``)
   refused a trace ending on an unanswered call, pointing at the flag given. The sample is
   made now, as the API makes it.
4. ``gate`` and ``calibrate`` whose stdout could not be written exited 2 (for the gate,
   "incomplete": a decision never made); they exit 4 now, as for ``--junit`` that cannot be
   written. A reader that went away stays 141.
5. A trace that every candidate format refuses with the same code at the same message, each
   naming the place in its own words, was an ``ambiguous trace`` (exit 2); it is invalid now
   (exit 1), with the first format's refusal.
6. ``run`` on a case file with no case said ``0 bad case record(s)`` and exited 1; it says the
   file holds no cases and exits 2, as ``score`` does.
7. ``report -o -`` and ``gate --junit - / --markdown -`` wrote a file named ``-``; ``-`` is
   standard output now, as for ``convert``, ``sample`` and ``score``. Their write failures
   read ``cannot write FILE: reason``.
8. ``convert --to llama_index`` wrote a tool-argument key holding a lone surrogate as U+FFFD
   replacement characters, exit 0 (the object's JSON dump replaces a dict field's own key
   without an error); it is refused now as a nested key is, at its message.
"""

from __future__ import annotations

import errno
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import CALL, run

from tracebridge.cli import main, to_json
from tracebridge.errors import TraceError
from tracebridge.registry import detect_format

SCRIPT = str(Path(sys.executable).with_name("tracebridge"))
"""The console script pip generated for this environment."""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


class _FullStream(io.StringIO):
    """A stream on a full disk: every write fails."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def _closed_stream() -> io.StringIO:
    stream = io.StringIO()
    stream.close()
    return stream


def _three_chats(tmp_path: Path) -> Path:
    lines = [json.dumps([{"role": "user", "content": f"hi {n}"},
                         {"role": "assistant", "content": "ok"}]) for n in range(3)]
    return write(tmp_path / "t3.jsonl", "\n".join(lines) + "\n")


# --- 1. a document id that is no id ---------------------------------------------------------


@pytest.mark.parametrize(("value", "shown"), [
    (3.0, "3.0"), (True, "True"), ({"a": 1}, "{'a': 1}"), (2.5, "2.5"),
])
def test_a_document_id_that_is_no_string_or_whole_number_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: Any, shown: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "idf.jsonl", json.dumps(
        {"id": value, "t": [{"role": "user", "content": "question"}]}) + "\n")
    code, out, err = run("sample", "idf.jsonl", "--at", "t", "--from", "openai_chat")
    assert (code, out) == (2, "")
    assert err == (f"tracebridge: idf.jsonl: line 1: id: an id must be a string or a whole "
                   f"number, got {shown} (--id PATH takes the id from elsewhere)\n")


def test_a_float_id_no_longer_takes_another_traces_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "idf.jsonl",
          '{"id":3.0,"t":[{"role":"user","content":"question three"}]}\n'
          '{"id":1.0,"t":[{"role":"user","content":"question one"}]}\n')
    write(tmp_path / "rf2.jsonl", '{"id":1,"reference":"answer for question one"}\n'
                                  '{"id":3,"reference":"answer for question three"}\n')
    code, out, err = run("sample", "idf.jsonl", "--at", "t", "--from", "openai_chat",
                         "--references", "rf2.jsonl", "--keep-going")
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        "tracebridge: idf.jsonl: line 1: id: an id must be a string or a whole number, got "
        "3.0 (--id PATH takes the id from elsewhere)",
        "tracebridge: idf.jsonl: line 2: id: an id must be a string or a whole number, got "
        "1.0 (--id PATH takes the id from elsewhere)",
        "tracebridge: 2 reference(s) in rf2.jsonl matched no trace: '1', '3'",
        "0 ok, 2 failed",
    ]


def test_a_null_document_id_still_falls_back_to_the_line_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "idn.jsonl", '{"id":null,"t":[{"role":"user","content":"q"}]}\n')
    code, out, err = run("sample", "idn.jsonl", "--at", "t", "--from", "openai_chat")
    assert (code, err) == (0, "")
    assert json.loads(out)["metadata"] == {"id": 1}


# --- 2. a standard error that is closed or full ----------------------------------------------


@pytest.mark.parametrize("stderr", [_FullStream, _closed_stream], ids=["full", "closed"])
def test_a_valid_input_is_read_whatever_standard_error_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    _three_chats(tmp_path)
    out = io.StringIO()
    code = main(["validate", "t3.jsonl"], stdin=io.StringIO(), stdout=out, stderr=stderr())
    assert (code, out.getvalue()) == (0, "line 1: ok: 2 messages (openai_chat)\n"
                                         "line 2: ok: 2 messages (openai_chat)\n"
                                         "line 3: ok: 2 messages (openai_chat)\n")


@pytest.mark.parametrize("stderr", [_FullStream, _closed_stream], ids=["full", "closed"])
def test_convert_to_a_file_is_written_whatever_standard_error_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    _three_chats(tmp_path)
    out = io.StringIO()
    code = main(["convert", "t3.jsonl", "--to", "openai_chat", "-o", "o.jsonl"],
                stdin=io.StringIO(), stdout=out, stderr=stderr())
    assert (code, out.getvalue()) == (0, "")
    assert (tmp_path / "o.jsonl").read_text() == (tmp_path / "t3.jsonl").read_text()


@pytest.mark.parametrize("stderr", [_FullStream, _closed_stream], ids=["full", "closed"])
@pytest.mark.parametrize(("argv", "expected"), [
    (["validate", "nosuch.json"], 2),
    (["show", "bad.json", "--from", "openai_chat"], 1),
    (["run", "empty.jsonl", "--out", "runE", "--metric", "tool_call_f1", "--no-cache"], 2),
    (["score", "empty.jsonl", "--metric", "tool_call_f1"], 2),
])
def test_error_exits_keep_their_codes_whatever_standard_error_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: Any, argv: list[str],
    expected: int
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "bad.json", '[{"role": "robot", "content": "x"}]')
    write(tmp_path / "empty.jsonl", "")
    out = io.StringIO()
    code = main(argv, stdin=io.StringIO(), stdout=out, stderr=stderr())
    assert (code, out.getvalue()) == (expected, "")


def _closed_stderr() -> None:
    os.close(2)


def test_the_console_script_with_standard_error_closed(tmp_path: Path) -> None:
    _three_chats(tmp_path)
    done = subprocess.run([SCRIPT, "validate", "t3.jsonl"], cwd=tmp_path, stdout=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, preexec_fn=_closed_stderr, timeout=120)
    assert (done.returncode, done.stdout.decode()) == (0, "line 1: ok: 2 messages (openai_chat)\n"
                                                          "line 2: ok: 2 messages (openai_chat)\n"
                                                          "line 3: ok: 2 messages (openai_chat)\n")
    done = subprocess.run([SCRIPT, "validate", "nosuch.json"], cwd=tmp_path,
                          stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          preexec_fn=_closed_stderr, timeout=120)
    assert (done.returncode, done.stdout.decode()) == (2, "")


# --- 3. --allow-pending in sample and in a sample converted to tracebridge ----------------------

PENDING = [
    {"role": "user", "content": "a"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
]
PENDING_MESSAGES = [
    {"type": "human", "content": "a", "name": None, "id": None, "metadata": {}},
    {"type": "ai", "content": "", "tool_calls": [
        {"name": "f", "args": {}, "id": "c1", "invalid_args": None, "kind": "function",
         "metadata": {}}],
     "name": None, "citations": [], "audio": None, "id": None, "metadata": {}},
]


def test_sample_allow_pending_makes_the_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pend.json", json.dumps(PENDING))
    code, out, err = run("sample", "pend.json", "--from", "openai_chat", "--allow-pending")
    assert (code, err) == (0, "")
    messages = [*PENDING_MESSAGES[:1],
                {**PENDING_MESSAGES[1], "metadata": {"openai_chat": {"content": "null"}}}]
    assert json.loads(out) == {
        "messages": messages, "reference": None, "reference_tool_calls": None,
        "reference_topics": None, "rubrics": None, "metadata": {"id": 1},
    }


@pytest.mark.parametrize("flag", [["--allow-pending"],
                                  ["--from-option", "allow_pending=true"]])
def test_a_pending_sample_converts_to_tracebridge_with_allow_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pend_sample.json", json.dumps(
        {"messages": PENDING_MESSAGES, "reference": "r"}))
    code, out, err = run("convert", "pend_sample.json", "--from", "tracebridge", *flag,
                         "--to", "tracebridge")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "messages": PENDING_MESSAGES, "reference": "r", "reference_tool_calls": None,
        "reference_topics": None, "rubrics": None, "metadata": {},
    }


def test_a_pending_sample_without_the_flag_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pend_sample.json", json.dumps(
        {"messages": PENDING_MESSAGES, "reference": "r"}))
    code, out, err = run("convert", "pend_sample.json", "--from", "tracebridge",
                         "--to", "tracebridge")
    assert (code, out) == (1, "")
    assert err == ("tracebridge: invalid trace: tracebridge: messages[1].tool_calls[0]: tool "
                   "call 'f' (id 'c1') has no result before the conversation ends "
                   "(--allow-pending accepts a trace cut mid-tool) [unanswered_tool_call]\n")


# --- 4 and 7. gate, calibrate and report outputs ------------------------------------------------

CASE = {"slice": "s1", "reference_version": "v1",
        "reference_tool_calls": [{"name": "f", "args": {"a": 1}}]}
BLOCKER = "slice_over_limit: s1: 1 failed case(s), over the limit of 0 (c0)"
DECISION = "tracebridge gate: quality failed (exit 1): 1 blocker(s)"


def _transcript(a: int) -> list[dict[str, Any]]:
    return [{"role": "human", "content": "do it"},
            {"role": "ai", "content": "", "tool_calls": [
                {"name": "f", "args": {"a": a}, "call_id": "c1"}]},
            {"role": "tool", "call_id": "c1", "content": "ok"},
            {"role": "ai", "content": "done"}]


@pytest.fixture
def gated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished run in ``tmp_path/run`` whose gate fails on quality (exit 1), and
    ``policy.toml``; the current directory is ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    cases = [{"case_id": f"c{a}", **CASE, "transcript": _transcript(a)} for a in (0, 1)]
    write(tmp_path / "cases.jsonl", "".join(json.dumps(case) + "\n" for case in cases))
    write(tmp_path / "policy.toml", "max_unrun = 0\n[slices.s1]\nmax_failures = 0\n")
    code, _, err = run("run", "cases.jsonl", "--out", "run", "--metric", "tool_call_f1",
                       "--no-cache")
    assert (code, err) == (0, "")
    return tmp_path


def _full_stdout(*argv: str, cwd: Path) -> tuple[int, str]:
    """``tracebridge *argv`` with stdout on ``/dev/full``: (exit status, stderr)."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([SCRIPT, *argv], cwd=cwd, stdout=full, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, timeout=120)
    return done.returncode, done.stderr.decode()


def test_gate_whose_stdout_cannot_be_written_is_unusable_not_incomplete(gated: Path) -> None:
    assert _full_stdout("gate", "run", "--policy", "policy.toml", cwd=gated) == (
        4, "tracebridge gate: cannot write standard output: [Errno 28] No space left on "
           "device\n")


@pytest.mark.parametrize("flags", [[], ["--json"]])
def test_calibrate_whose_stdout_cannot_be_written_exits_4(gated: Path, flags: list[str]) -> None:
    assert _full_stdout("calibrate", "run", *flags, cwd=gated) == (
        4, "tracebridge calibrate: cannot write standard output: [Errno 28] No space left on "
           "device\n")


def test_gate_stdout_failing_in_process_exits_4(gated: Path) -> None:
    err = io.StringIO()
    code = main(["gate", "run", "--policy", "policy.toml"], stdin=io.StringIO(),
                stdout=_FullStream(), stderr=err)
    assert (code, err.getvalue()) == (4, "tracebridge gate: [Errno 28] No space left on device\n")


def test_gate_markdown_dash_is_standard_output(gated: Path) -> None:
    code, out, err = run("gate", "run", "--policy", "policy.toml", "--markdown", "m.md")
    assert (code, out, err) == (1, BLOCKER + "\n", DECISION + "\n")
    code, out, err = run("gate", "run", "--policy", "policy.toml", "--markdown", "-")
    assert (code, out, err) == (1, (gated / "m.md").read_text(), DECISION + "\n")
    assert not (gated / "-").exists()


def test_gate_junit_dash_is_standard_output(gated: Path) -> None:
    code, out, err = run("gate", "run", "--policy", "policy.toml", "--junit", "j.xml")
    assert (code, out, err) == (1, BLOCKER + "\n", DECISION + "\n")
    code, out, err = run("gate", "run", "--policy", "policy.toml", "--junit", "-")
    assert (code, out, err) == (1, (gated / "j.xml").read_text(), DECISION + "\n")
    assert not (gated / "-").exists()


def test_gate_refuses_both_documents_on_standard_output(gated: Path) -> None:
    code, out, err = run("gate", "run", "--policy", "policy.toml", "--junit", "-",
                         "--markdown", "-")
    assert (code, out, err) == (4, "", "tracebridge gate: --junit - and --markdown - both name "
                                       "standard output; give a file for one\n")


def test_report_dash_is_standard_output(gated: Path) -> None:
    code, out, err = run("report", "run", "-o", "r.html")
    assert (code, out, err) == (0, "", "tracebridge report: wrote r.html\n")
    code, out, err = run("report", "run", "-o", "-")
    assert (code, out, err) == (0, (gated / "r.html").read_text(),
                                "tracebridge report: wrote standard output\n")
    assert not (gated / "-").exists()


def test_write_failures_name_the_file(gated: Path) -> None:
    code, out, err = run("gate", "run", "--policy", "policy.toml", "--markdown", "no/m.md")
    assert (code, out, err) == (4, "", "tracebridge gate: cannot write no/m.md: [Errno 2] No "
                                       "such file or directory\n")
    code, out, err = run("report", "run", "-o", "/dev/full")
    assert (code, out, err) == (4, "", "tracebridge report: cannot write /dev/full: [Errno 28] "
                                       "No space left on device\n")


# --- 5. refused the same way by every candidate format ------------------------------------------


@pytest.mark.parametrize(("value", "said"), [
    ("NaN", "nan is not a finite number"), ("1e999", "inf is not a finite number"),
])
def test_a_trace_every_candidate_refuses_alike_is_invalid_not_ambiguous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "t.json", '[{"role":"user","content":"a","metadata":{"x":' + value + '}}]')
    code, out, err = run("validate", "t.json")
    assert (code, out) == (1, "invalid: unserializable_value at messages[0].metadata.x: "
                              f"openai_chat: messages[0].metadata.x: {said} "
                              "[unserializable_value]\n")
    assert err == ("tracebridge: reading t.json as openai_chat (told from its shape; --from "
                   "to choose)\n")


def test_detect_format_raises_the_first_refusal() -> None:
    deep: Any = "x"
    for _ in range(130):
        deep = {"a": deep}
    with pytest.raises(TraceError) as caught:
        detect_format([{"role": "user", "content": "a", "metadata": deep}])
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "unserializable_value", 0, "messages[0].metadata")


# --- 6. run on a case file with no case --------------------------------------------------------


@pytest.mark.parametrize(("name", "text"), [("empty.json", ""), ("blank.jsonl", "\n\n  \n")])
def test_run_on_a_file_with_no_case_is_unusable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / name, text)
    code, out, err = run("run", name, "--out", "runE", "--metric", "tool_call_f1", "--no-cache")
    assert (code, out, err) == (2, "", f"tracebridge run: {name} holds no cases\n")
    assert not (tmp_path / "runE").exists()


# --- 8. a lone surrogate in a key of an object format's dump -----------------------------------


def _surrogate_key_trace(args: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "human", "content": "x"},
            {"type": "ai", "content": "", "tool_calls": [{"name": "f", "id": "c1", "args": args}]},
            {"type": "tool", "content": "r", "tool_call_id": "c1"}]


@pytest.mark.parametrize("args", [{"\ud800k": "v"}, {"\udc00": "v", "a": 1}])
def test_convert_to_llama_index_refuses_a_key_holding_a_lone_surrogate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: dict[str, Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "surr_in.json", json.dumps(_surrogate_key_trace(args)))
    code, out, err = run("convert", "--from", "tracebridge", "--to", "llama_index",
                         "surr_in.json")
    key = next(iter(args))
    shown = key.replace("\udc00", "\ufffd" * 3).replace("\ud800", "\ufffd" * 3)
    assert (code, out) == (1, "")
    assert err == (
        "tracebridge: cannot write llama_index: llama_index: messages[1].tool_calls[0].args: "
        f"the key {key!r} holds a lone surrogate, which LlamaIndex's JSON dump writes as "
        f"{shown!a} (or cannot write at all); the ChatMessage would not read back "
        "[not_representable]\n")


def test_to_json_refuses_a_top_level_surrogate_key_at_its_message() -> None:
    # from_messages refuses writing such a key (test_llama_index_fixes_s48): ChatMessage
    # objects built by the caller still reach to_json with it
    from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock

    written = [
        ChatMessage(role="user", content="x"),
        ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id="c1", tool_name="f", tool_kwargs={"\udc00": "v"})]),
        ChatMessage(role="tool", content="r", additional_kwargs={"tool_call_id": "c1"}),
    ]
    with pytest.raises(TraceError) as caught:
        to_json("llama_index", written)
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, "messages[1]")


def test_a_key_holding_its_own_replacement_character_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "fffd.json", json.dumps(_surrogate_key_trace({"\ufffdk": "v"})))
    code, out, err = run("convert", "--from", "tracebridge", "--to", "llama_index", "fffd.json")
    assert (code, err) == (0, "")
    assert json.loads(out)[1]["blocks"][1]["tool_kwargs"] == {"\ufffdk": "v"}


def test_calls_still_convert_to_llama_index() -> None:
    code, out, err = run("convert", "-", "--from", "openai_chat", "--to", "llama_index",
                         stdin=json.dumps(CALL))
    assert (code, err) == (0, "")
    assert json.loads(out)[1]["blocks"][1]["tool_kwargs"] == {"city": "Paris"}


# --- review: standard error on a full device, with Python's own buffering ----------------------
# Without PYTHONUNBUFFERED, a failed write stays in standard error's buffer, and the
# interpreter's flush at exit failed on it: every run exited 120.

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")


def _buffered_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    return env


def _full_stderr(*argv: str, cwd: Path) -> tuple[int, str]:
    """``tracebridge *argv`` with stderr on ``/dev/full``, as a shell runs it (Python's
    buffering on): (exit status, stdout)."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([SCRIPT, *argv], cwd=cwd, stdout=subprocess.PIPE, stderr=full,
                              stdin=subprocess.DEVNULL, env=_buffered_env(), timeout=120)
    return done.returncode, done.stdout.decode()


@needs_dev_full
@pytest.mark.parametrize(("argv", "expected"), [
    (["validate", "t3.jsonl"], (0, "line 1: ok: 2 messages (openai_chat)\n"
                                   "line 2: ok: 2 messages (openai_chat)\n"
                                   "line 3: ok: 2 messages (openai_chat)\n")),
    (["validate", "bad.json", "--from", "openai_chat"],
     (1, "invalid: unknown_role at messages[0].role: openai_chat: messages[0].role: unknown "
         "role 'robot'; accepted roles: system, developer, user, assistant, tool, function "
         "[unknown_role]\n")),
    (["validate", "nosuch.json"], (2, "")),
    (["validate", "--frm", "x", "t3.jsonl"], (2, "")),
    (["convert", "bad.json", "--from", "openai_chat", "--to", "langchain", "--keep-going"],
     (1, "")),
], ids=["valid", "invalid", "missing", "usage", "keep-going"])
def test_exit_codes_hold_with_standard_error_full_and_buffered(
    tmp_path: Path, argv: list[str], expected: tuple[int, str]
) -> None:
    _three_chats(tmp_path)
    write(tmp_path / "bad.json", '[{"role": "robot", "content": "x"}]')
    assert _full_stderr(*argv, cwd=tmp_path) == expected


@needs_dev_full
def test_an_interrupted_run_exits_130_with_standard_error_full(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        process = subprocess.Popen(
            [SCRIPT, "convert", "-", "--from", "openai_chat", "--to", "langchain", "-o",
             "out.jsonl"], cwd=tmp_path, env=_buffered_env(), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=full, text=True,
            # Ctrl-C reaches the command even where this test runs as a background job
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert process.stdin is not None
    process.stdin.write(json.dumps([{"role": "user", "content": "hi"}]) + "\n")
    process.stdin.flush()  # and kept open: the command waits for more
    deadline = time.monotonic() + 30
    while not any(p.name.endswith(".partial") for p in tmp_path.iterdir()):
        assert time.monotonic() < deadline, "the command never started writing"
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=30)
    assert (process.returncode, out) == (130, "")
    assert list(tmp_path.iterdir()) == []


def test_a_full_standard_error_is_let_go_of_after_its_first_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is left in the process's standard error would fail again at exit: it is no
    longer the process's standard error once a write failed."""
    monkeypatch.chdir(tmp_path)
    full = _FullStream()
    monkeypatch.setattr(sys, "stderr", full)
    code = main(["validate", "nosuch.json"], stdin=io.StringIO(), stdout=io.StringIO())
    assert (code, sys.stderr) == (2, None)


# --- review: gate documents that are both standard output -------------------------------------


def _gate_to_file(gated: Path, *flags: str) -> tuple[int, str, str]:
    """``tracebridge gate`` with stdout redirected to ``out.txt``: (exit status, what
    ``out.txt`` holds, stderr)."""
    with open(gated / "out.txt", "w") as out:
        done = subprocess.run([SCRIPT, "gate", "run", "--policy", "policy.toml", *flags],
                              cwd=gated, stdout=out, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, timeout=120)
    return done.returncode, (gated / "out.txt").read_text(), done.stderr.decode()


@pytest.mark.parametrize("flags", [
    ["--junit", "-", "--markdown", "/dev/stdout"],
    ["--junit", "/dev/stdout", "--markdown", "-"],
    ["--junit", "-", "--markdown", "/proc/self/fd/1"],
    ["--markdown", "out.txt", "--junit", "-"],
], ids=["dash-devstdout", "devstdout-dash", "dash-procfd", "redirected-file-dash"])
def test_gate_refuses_two_documents_on_standard_output_however_named(
    gated: Path, flags: list[str]
) -> None:
    if not os.path.exists("/proc/self/fd/1"):
        pytest.skip("no /proc/self/fd")
    junit = flags[flags.index("--junit") + 1]
    markdown = flags[flags.index("--markdown") + 1]
    assert _gate_to_file(gated, *flags) == (
        4, "", f"tracebridge gate: --junit {junit} and --markdown {markdown} both name "
               "standard output; give a file for one\n")


def test_gate_writes_one_document_on_standard_output_beside_a_file(gated: Path) -> None:
    code, out, err = _gate_to_file(gated, "--junit", "-", "--markdown", "m.md")
    assert (code, err) == (1, DECISION + "\n")
    assert out == run("gate", "run", "--policy", "policy.toml", "--junit", "-")[1]
    assert (gated / "m.md").read_text() == run(
        "gate", "run", "--policy", "policy.toml", "--markdown", "-")[1]


# --- review: the code of a document id that is no id --------------------------------------------


def _errors_row(tmp_path: Path, *flags: str) -> tuple[int, str, dict[str, Any]]:
    write(tmp_path / "ids.jsonl", json.dumps(
        {"id": 1.5, "metadata": {"x": 2.5}, "t": [{"role": "user", "content": "q"}]}) + "\n")
    code, _, err = run("sample", "ids.jsonl", "--at", "t", "--from", "openai_chat",
                       "--keep-going", "--errors", "e.jsonl", *flags)
    return code, err, json.loads((tmp_path / "e.jsonl").read_text())


def test_a_document_id_that_is_no_id_is_a_malformed_record_in_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    message = ("id: an id must be a string or a whole number, got 1.5 (--id PATH takes the id "
               "from elsewhere)")
    assert _errors_row(tmp_path) == (1, f"tracebridge: ids.jsonl: line 1: {message}\n"
                                        "0 ok, 1 failed\n", {
        "file": "ids.jsonl", "line": 1, "code": "malformed_event", "index": None,
        "path": None, "source": None, "message": message})


def test_an_id_path_that_is_no_id_has_the_same_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    message = "--id metadata.x: an id must be a string or a whole number, got 2.5"
    assert _errors_row(tmp_path, "--id", "metadata.x") == (
        1, f"tracebridge: ids.jsonl: line 1: {message}\n0 ok, 1 failed\n", {
            "file": "ids.jsonl", "line": 1, "code": "malformed_event", "index": None,
            "path": None, "source": None, "message": message})


def test_an_id_path_with_nothing_there_is_still_no_such_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    message = "--id metadata.y: there is no 'y' here"
    assert _errors_row(tmp_path, "--id", "metadata.y") == (
        1, f"tracebridge: ids.jsonl: line 1: {message}\n0 ok, 1 failed\n", {
            "file": "ids.jsonl", "line": 1, "code": "no_such_path", "index": None,
            "path": None, "source": None, "message": message})


# --- review: a pending sample is scored with --allow-pending ----------------------------------


def _pending_sample(tmp_path: Path) -> None:
    write(tmp_path / "pend.json", json.dumps(PENDING))
    code, out, err = run("sample", "pend.json", "--from", "openai_chat", "--allow-pending")
    assert (code, err) == (0, "")
    write(tmp_path / "s.jsonl", out)


def test_score_allow_pending_scores_a_pending_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _pending_sample(tmp_path)
    code, out, err = run("score", "s.jsonl", "--metric", "tool_call_f1", "--allow-pending")
    assert (code, err) == (0, "metric        scored  unscorable  errors  mean  min  max\n"
                              "tool_call_f1       0           1       0     -    -    -\n")
    result = json.loads(out)
    assert (result["line"], result["id"], result["name"], result["value"], result["error"]) == (
        1, 1, "tool_call_f1", None,
        "the sample has no reference_tool_calls (None); give [] to expect no calls")


def test_score_of_a_pending_sample_names_the_flag_it_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _pending_sample(tmp_path)
    code, out, err = run("score", "s.jsonl", "--metric", "tool_call_f1")
    assert (code, out) == (1, "")
    assert err.splitlines()[0] == (
        "tracebridge score: invalid sample: s.jsonl: line 1: messages[1].tool_calls[0]: tool "
        "call 'f' (id 'c1') has no result before the conversation ends (--allow-pending "
        "accepts a trace cut mid-tool) [unanswered_tool_call]")


@pytest.mark.parametrize("command", ["validate", "convert", "show", "sample"])
@pytest.mark.parametrize("order", ["flag-first", "option-first"])
def test_allow_pending_and_its_option_false_are_refused_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, order: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "one.json", '[{"role": "user", "content": "a"}]')
    both = ["--allow-pending", "--from-option", "allow_pending=false"]
    if order == "option-first":
        both = both[1:] + both[:1]
    extra = ["--to", "swarm"] if command == "convert" else []
    code, out, err = run(command, "one.json", "--from", "openai_chat", *extra, *both)
    assert (code, out) == (2, "")
    assert err == ("tracebridge: --allow-pending and --from-option allow_pending=false say "
                   "the opposite: give one of them\n")


@pytest.mark.parametrize("name", ["/dev/stdout", "/proc/self/fd/1"])
def test_a_document_on_standard_output_by_another_name_is_all_it_holds(
    gated: Path, name: str
) -> None:
    """As with ``-``: the blocker lines are not written beside (or over) the document."""
    if not os.path.exists(name):
        pytest.skip(f"no {name}")
    code, out, err = _gate_to_file(gated, "--junit", name)
    assert (code, err) == (1, DECISION + "\n")
    assert out == run("gate", "run", "--policy", "policy.toml", "--junit", "-")[1]
